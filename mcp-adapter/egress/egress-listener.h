/* The egress listener: the TCP socket on a sandbox's own loopback that its programs reach
 * the egress proxy through, made inside the sandbox and served by msp-mcp. Owner:
 * egress-listener.c (libc only, no allocation: also linked into the static
 * msp-sandbox-init).
 *
 * The sandbox's network namespace has only `lo`; its programs reach the proxy through
 * HTTP_PROXY=http://127.0.0.1:PORT, and Landlock lets them connect to that port and no
 * other. The init binds 127.0.0.1:PORT before the program starts (so the port is ready
 * and no program can take it) and hands the listening socket to msp-mcp over the unix
 * socket msp-mcp binds into the sandbox (SCM_RIGHTS), keeping no copy. A socket stays in
 * the network namespace it was made in, so msp-mcp accepts the sandbox's connections
 * itself: no relay process and no second copy of each byte between the program and the
 * proxy. */
#pragma once

/* Init side. Binds and listens on 127.0.0.1:port; the fd, or -errno. */
int egress_listener_bind(unsigned port);
/* Connects to the unix socket at `path` and sends `lfd` over it; closes lfd either way.
 * 0 or -errno. */
int egress_listener_send(int lfd, const char *path);

/* msp-mcp side. Receives the listener from `conn` (a connection accepted on the unix
 * socket): 0 with *ret a listening TCP socket of the inet families (O_CLOEXEC), -EAGAIN
 * when nothing has arrived yet, -EPROTO when what arrived is not such a socket, or -errno. */
int egress_listener_recv(int conn, int *ret);
