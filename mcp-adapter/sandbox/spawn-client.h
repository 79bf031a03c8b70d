/* msp-mcp's end of the spawn service: a program started inside a running sandbox by its
 * pid 1 (msp-sandbox-init --serve; the wire format is spawn-proto.h). Owner:
 * spawn-client.c.
 *
 * For the event loop: spawn_client_start returns the connection, non-blocking; the loop
 * watches it for input and calls spawn_client_read, which yields STARTED (the pid), then
 * EXITED or SIGNALED (then the init closes its end). Closing the connection before that
 * kills the program's process group. */
#pragma once

#include <stdbool.h>

#include "oci/oci.h"
#include "sandbox/spawn-proto.h"

struct spawn_event {
        enum spawn_kind kind;   /* SPAWN_STARTED, SPAWN_EXITED or SPAWN_SIGNALED */
        int value;              /* the pid, the exit code, the signal */
};

/* Connects to the service listening at socket_path and asks it to run argv (envp, cwd:
 * see spawn-proto.h) with fds[0..2] as its stdin, stdout and stderr (they stay the
 * caller's to close). The connection (O_CLOEXEC, O_NONBLOCK), or -errno. */
int spawn_client_start(const char *socket_path, const char *const *argv, const char *const *envp,
                       const char *cwd, const int fds[3], msp_err *err);
/* Our ends of a program's stdio pipes: non-blocking, O_CLOEXEC, the caller's. */
struct spawn_pipes {
        int in;         /* -1 when the program's stdin is /dev/null */
        int out, err;
};

/* spawn_client_start with fresh pipes as the program's stdin (or /dev/null, when
 * stdin_pipe is false), stdout and stderr: the connection, and our ends in *ret (all -1
 * on failure). */
int spawn_client_start_piped(const char *socket_path, const char *const *argv,
                             const char *const *envp, const char *cwd, bool stdin_pipe,
                             struct spawn_pipes *ret, msp_err *err);
/* One event from the connection: 1 with *ev filled, 0 when none has arrived yet,
 * -ECONNRESET when the service closed it without a status (it could not start the
 * program, or it is stopping), -EPROTO on a message that is not one of the service's. */
int spawn_client_read(int conn, struct spawn_event *ev, msp_err *err);
/* Sends signal sig to the program's process group. 0 or -errno. */
int spawn_client_signal(int conn, int sig, msp_err *err);
/* A TCP socket connected or connecting to 127.0.0.1:port inside the sandbox whose
 * service listens at socket_path (a CONNECT, spawn-proto.h): 0 with *ret_fd (O_CLOEXEC,
 * O_NONBLOCK, the caller's; wait for POLLOUT, then SO_ERROR says how the connect ended),
 * or -errno: -ECONNREFUSED when nothing listens (as far as the handshake has come),
 * -EINVAL port 0, -ETIMEDOUT no answer within SPAWN_CONNECT_WAIT_MS, -ECONNRESET the
 * service closed without one, -EPROTO a reply that is not one. Waits for the answer only:
 * it never waits for the handshake. */
#define SPAWN_CONNECT_WAIT_MS 2000
int spawn_client_connect_port(const char *socket_path, uint16_t port, int *ret_fd, msp_err *err);
/* Tells the service at socket_path to kill everything it started and exit. 0 or -errno. */
int spawn_client_shutdown(const char *socket_path, msp_err *err);
