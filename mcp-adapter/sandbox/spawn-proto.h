/* The spawn service's wire format: how msp-mcp asks a sandbox's pid 1 (msp-sandbox-init
 * --serve) to start a program inside the running sandbox, and how the init answers.
 * Owner: spawn-proto.c (libc only, no allocation: also linked into the static
 * msp-sandbox-init; the msp-mcp end is spawn-client.h).
 *
 * Why a service in pid 1: a session's programs must run inside its one long-lived
 * sandbox, and entering it from outside (`msp exec`, setns) costs about three times a
 * bare fork and exec; a fork by a process already inside costs no more than the fork.
 *
 * Transport: a unix SOCK_SEQPACKET socket. Every message is one datagram, so a request
 * with its fds arrives whole in one recvmsg (or not at all) and the init never keeps a
 * half-read request: a truncated one is malformed, not "more to come".
 * Both ends are on one host: integers are in the host's byte order.
 *
 * One connection = one program:
 *   client -> init   REQUEST     header + strings, with exactly 3 fds (SCM_RIGHTS): the
 *                                program's stdin, stdout, stderr
 *   init -> client   STARTED     value = the program's pid (in the sandbox's pid namespace)
 *   client -> init   SIGNAL      value = a signal for the program's process group (optional,
 *                                any number of times while it runs)
 *   init -> client   EXITED      value = its exit code       } exactly one of these, then
 *                    SIGNALED    value = the signal that ended it } the init closes
 * The client closing the connection before the status kills the program's process group
 * (SIGKILL). Processes the program leaves behind in its group keep running once it has
 * exited (background jobs of a session). A first message SHUTDOWN (instead of REQUEST)
 * makes the init kill everything and exit.
 *
 * One connection = one TCP connection into the sandbox (a port its programs listen on):
 *   client -> init   CONNECT         value = a TCP port, 1..65535
 *   init -> client   CONNECTED       with exactly 1 fd (SCM_RIGHTS): a TCP socket of the
 *                                    sandbox's network namespace, non-blocking, connecting
 *                                    (or connected) to 127.0.0.1:port: the client waits for
 *                                    POLLOUT and reads SO_ERROR
 *                    CONNECT_FAILED  value = the errno of socket() or connect()
 *                                    (ECONNREFUSED: nothing listens there)
 * then the init closes the connection. It never waits for the TCP handshake and keeps
 * nothing of it: the socket is sent and closed in the same step. A port out of range
 * closes the connection without an answer, as any malformed message does. The socket is
 * pid 1's, so it sees only what the sandbox's namespace has (its `lo`): this reaches the
 * sandbox's own servers and no other network.
 *
 * REQUEST: struct spawn_request_head, then `strings_len` bytes of NUL-terminated strings,
 * in order: cwd (absolute), argc arguments, envc "NAME=value" entries. Bounds, all checked
 * by the decoder: 1 <= argc <= SPAWN_ARGC_MAX, envc <= SPAWN_ENVC_MAX, the whole message
 * <= SPAWN_MSG_MAX; the strings exactly fill strings_len, with no NUL missing or extra.
 * Any other message, size or fd count is malformed: the init closes that connection (and
 * kills the program, if one runs) and goes on serving the others.
 *
 * The program runs as the init's own uid, in a new session and process group (setsid),
 * with the three fds as 0, 1, 2 and no other fd, the signal mask and dispositions the init
 * was started with, argv[0] looked up in the request's PATH when it has no '/'. When exec
 * fails the program's "exit code" is 127 (not found) or 126 (any other failure), with a
 * line on its stderr, as a shell reports it. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define SPAWN_MAGIC 0x3150534du         /* "MSP1" in little-endian memory */
#define SPAWN_MSG_MAX (64 * 1024)
#define SPAWN_ARGC_MAX 1024
#define SPAWN_ENVC_MAX 1024

enum spawn_kind {
        SPAWN_REQUEST = 1,
        SPAWN_SHUTDOWN = 2,
        SPAWN_SIGNAL = 3,
        SPAWN_STARTED = 4,
        SPAWN_EXITED = 5,
        SPAWN_SIGNALED = 6,
        SPAWN_CONNECT = 7,
        SPAWN_CONNECTED = 8,
        SPAWN_CONNECT_FAILED = 9,
};

struct spawn_request_head {
        uint32_t magic;
        uint32_t kind;          /* SPAWN_REQUEST */
        uint16_t argc;
        uint16_t envc;
        uint32_t strings_len;
};

/* Every other message: SHUTDOWN, SIGNAL, STARTED, EXITED, SIGNALED, CONNECT, CONNECTED,
 * CONNECT_FAILED. */
struct spawn_msg {
        uint32_t magic;
        uint32_t kind;
        int32_t value;
};

/* A decoded request; its strings point into the buffer it was decoded from. */
struct spawn_request {
        const char *cwd;
        char *argv[SPAWN_ARGC_MAX + 1];         /* NULL-terminated */
        char *envp[SPAWN_ENVC_MAX + 1];         /* NULL-terminated */
};

/* The REQUEST message for argv (NULL-terminated, at least one), envp (NULL-terminated)
 * and cwd into buf: its length, or -E2BIG (beyond a bound or buf), -EINVAL (no argv[0],
 * a relative or empty cwd). */
ssize_t spawn_request_encode(char *buf, size_t size, const char *const *argv,
                             const char *const *envp, const char *cwd);
/* Decodes the REQUEST message buf[0..len) in place into *req: 0, or -EPROTO (malformed). */
int spawn_request_decode(char *buf, size_t len, struct spawn_request *req);
/* A fixed-size message, encoded; len is its size: 0 with *msg filled, or -EPROTO. */
int spawn_msg_decode(const void *buf, size_t len, struct spawn_msg *msg);
struct spawn_msg spawn_msg_make(enum spawn_kind kind, int32_t value);
/* The TCP port of a decoded CONNECT message: 1..65535, or -EPROTO (another kind, a value
 * out of range). */
int spawn_connect_port(const struct spawn_msg *msg);

/* Sends the n-byte message buf on the seqpacket socket fd, with fds[0..nfds) attached
 * when nfds > 0 (nfds <= 3). 0 or -errno (-EMSGSIZE: too long for the socket). */
int spawn_send(int fd, const void *buf, size_t n, const int *fds, size_t nfds);
