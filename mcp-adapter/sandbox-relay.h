/* The egress relay of msp-sandbox-init: a TCP listener on the sandbox's own loopback
 * whose connections are spliced, byte for byte, to the egress proxy's unix socket that
 * msp-mcp binds into the sandbox. Owner: sandbox-relay.c (linked into msp-sandbox-init
 * only: static, libc only, no allocation).
 *
 * The sandbox's network namespace has only `lo`; its programs reach the proxy through
 * HTTP_PROXY=http://127.0.0.1:PORT, and Landlock lets them connect to that port and no
 * other. The relay runs as a child of pid 1 (forked before the program) so that pid 1's
 * loop stays the plain signal loop; it dies with the namespace. */
#pragma once

/* Binds 127.0.0.1:port (before the program starts, so that the port is ready and no
 * program can take it); the listening fd, or -errno. */
int relay_listen(unsigned port);

/* Serves the listener forever, each connection to the unix socket at `target`. */
_Noreturn void relay_serve(int lfd, const char *target);
