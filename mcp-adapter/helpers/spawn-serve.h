/* msp-sandbox-init's spawn service (--serve FD): pid 1 starts the programs msp-mcp asks
 * for inside the running sandbox, one per connection on a listening unix seqpacket socket
 * (the wire format: sandbox/spawn-proto.h). Owner: spawn-serve.c (libc only, no
 * allocation: part of the static init). */
#pragma once

#include <signal.h>

/* Serves listen_fd until told to stop (a SHUTDOWN message, SIGTERM, SIGINT, SIGHUP or
 * SIGQUIT, or the listener hung up), then kills everything it started and returns the
 * init's exit code (0; 125 when it could not start serving). Every signal must be blocked
 * (they are taken from a signalfd); child_mask is the mask the programs get. */
int spawn_serve(int listen_fd, const sigset_t *child_mask);

/* "msp-sandbox-init: A B: strerror(e)" on stderr (e 0: none), write(2) only
 * (sandbox-init.c). */
void init_say(const char *a, const char *b, int e);
