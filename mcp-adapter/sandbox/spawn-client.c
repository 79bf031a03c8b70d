/* The spawn service's client (see spawn-client.h). */
#include "sandbox/spawn-client.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <sys/un.h>
#include <unistd.h>

/* A blocking connection to the service: connecting to a unix socket completes at once
 * (or fails when the backlog is full), so there is nothing to wait for. */
static int
connect_service(const char *path, msp_err *err)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        if (strlen(path) >= sizeof sa.sun_path)
                return msp_err_set(err, ENAMETOOLONG, "spawn service socket %s: path too long", path);
        strcpy(sa.sun_path, path);
        _cleanup_close_ int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return msp_err_sys(err, errno, "socket");
        if (connect(fd, (struct sockaddr *) &sa, sizeof sa) < 0)
                return msp_err_sys(err, errno, "connect to the spawn service at %s", path);
        return TAKE_FD(fd);
}

int
spawn_client_start(const char *socket_path, const char *const *argv, const char *const *envp,
                   const char *cwd, const int fds[3], msp_err *err)
{
        /* Heap, not stack: the largest request is 64 KiB. */
        _cleanup_free_ char *buf = malloc(SPAWN_MSG_MAX);
        if (!buf)
                return msp_err_sys(err, ENOMEM, "spawn request");
        ssize_t n = spawn_request_encode(buf, SPAWN_MSG_MAX, argv, envp, cwd);
        if (n == -E2BIG)
                return msp_err_set(err, E2BIG, "spawn request: more than %d arguments, %d "
                                   "environment entries or %d bytes", SPAWN_ARGC_MAX,
                                   SPAWN_ENVC_MAX, SPAWN_MSG_MAX);
        if (n < 0)
                return msp_err_set(err, (int) -n, "spawn request: no program or a relative cwd");
        _cleanup_close_ int fd = connect_service(socket_path, err);
        if (fd < 0)
                return fd;
        int r = spawn_send(fd, buf, (size_t) n, fds, 3);
        if (r < 0)
                return msp_err_sys(err, -r, "send the spawn request to %s", socket_path);
        int fl = fcntl(fd, F_GETFL);
        if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
                return msp_err_sys(err, errno, "spawn connection: O_NONBLOCK");
        return TAKE_FD(fd);
}

int
spawn_client_read(int conn, struct spawn_event *ev, msp_err *err)
{
        /* One byte more than a message, so that a longer one shows as such. */
        char buf[sizeof(struct spawn_msg) + 1];
        ssize_t n = recv(conn, buf, sizeof buf, MSG_DONTWAIT);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
                return 0;
        if (n < 0)
                return msp_err_sys(err, errno, "spawn connection");
        if (n == 0)
                return msp_err_set(err, ECONNRESET, "the spawn service closed the connection "
                                   "without the program's status");
        struct spawn_msg m;
        if (spawn_msg_decode(buf, (size_t) n, &m) < 0 ||
            (m.kind != SPAWN_STARTED && m.kind != SPAWN_EXITED && m.kind != SPAWN_SIGNALED))
                return msp_err_set(err, EPROTO, "spawn connection: not a message of the service");
        *ev = (struct spawn_event){ .kind = (enum spawn_kind) m.kind, .value = m.value };
        return 1;
}

int
spawn_client_signal(int conn, int sig, msp_err *err)
{
        struct spawn_msg m = spawn_msg_make(SPAWN_SIGNAL, sig);
        int r = spawn_send(conn, &m, sizeof m, NULL, 0);
        return r < 0 ? msp_err_sys(err, -r, "spawn connection: send signal %d", sig) : 0;
}

int
spawn_client_shutdown(const char *socket_path, msp_err *err)
{
        _cleanup_close_ int fd = connect_service(socket_path, err);
        if (fd < 0)
                return fd;
        struct spawn_msg m = spawn_msg_make(SPAWN_SHUTDOWN, 0);
        int r = spawn_send(fd, &m, sizeof m, NULL, 0);
        if (r < 0)
                return msp_err_sys(err, -r, "send shutdown to the spawn service at %s", socket_path);
        /* The service closes its end once it has killed everything: wait for that, so
         * that on return nothing it started runs. */
        char byte;
        while (recv(fd, &byte, 1, 0) < 0 && errno == EINTR)
                ;
        return 0;
}

static long long
now_ms(void)
{
        struct timespec ts;
        (void) clock_gettime(CLOCK_MONOTONIC, &ts);
        return (long long) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Waits until conn is readable or deadline (CLOCK_MONOTONIC ms): 1, 0 timed out, -errno. */
static int
wait_readable(int conn, long long deadline)
{
        for (;;) {
                long long left = deadline - now_ms();
                if (left <= 0)
                        return 0;
                struct pollfd p = { .fd = conn, .events = POLLIN };
                int r = poll(&p, 1, (int) left);
                if (r > 0)
                        return 1;
                if (r < 0 && errno != EINTR)
                        return -errno;
        }
}

/* The fds of a received message into fds[0..*n) (at most max; the rest closed). */
static void
take_fds(struct msghdr *msg, int *fds, size_t max, size_t *n)
{
        *n = 0;
        for (struct cmsghdr *c = CMSG_FIRSTHDR(msg); c; c = CMSG_NXTHDR(msg, c)) {
                if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
                        continue;
                for (size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
                        int fd;
                        memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
                        if (*n < max)
                                fds[(*n)++] = fd;
                        else
                                (void) close(fd);
                }
        }
}

int
spawn_client_connect_port(const char *socket_path, uint16_t port, int *ret_fd, msp_err *err)
{
        if (port == 0)
                return msp_err_set(err, EINVAL, "connect to port 0: not a TCP port");
        long long deadline = now_ms() + SPAWN_CONNECT_WAIT_MS;
        _cleanup_close_ int conn = connect_service(socket_path, err);
        if (conn < 0)
                return conn;
        struct spawn_msg m = spawn_msg_make(SPAWN_CONNECT, port);
        int r = spawn_send(conn, &m, sizeof m, NULL, 0);
        if (r < 0)
                return msp_err_sys(err, -r, "send connect to the spawn service at %s", socket_path);
        r = wait_readable(conn, deadline);
        if (r < 0)
                return msp_err_sys(err, -r, "spawn connection");
        if (r == 0)
                return msp_err_set(err, ETIMEDOUT, "port %u: the sandbox's init did not answer "
                                   "within %d ms", port, SPAWN_CONNECT_WAIT_MS);
        char buf[sizeof(struct spawn_msg) + 1];
        struct iovec iov = { .iov_base = buf, .iov_len = sizeof buf };
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(4 * sizeof(int))];
        } ctl;
        struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
                              .msg_controllen = sizeof ctl.buf };
        ssize_t n;
        while ((n = recvmsg(conn, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT)) < 0 && errno == EINTR)
                ;
        if (n < 0)
                return msp_err_sys(err, errno, "spawn connection");
        int fds[1] = { -1 };
        size_t nfds = 0;
        take_fds(&msg, fds, 1, &nfds);
        _cleanup_close_ int sock = nfds == 1 ? fds[0] : -1;
        if (n == 0)
                return msp_err_set(err, ECONNRESET, "port %u: the sandbox's init closed the "
                                   "connection without an answer", port);
        if (spawn_msg_decode(buf, (size_t) n, &m) < 0 || (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)))
                return msp_err_set(err, EPROTO, "spawn connection: not a message of the service");
        if (m.kind == SPAWN_CONNECT_FAILED && nfds == 0 && m.value > 0)
                return msp_err_sys(err, m.value, "connect to port %u in the sandbox", port);
        if (m.kind != SPAWN_CONNECTED || sock < 0)
                return msp_err_set(err, EPROTO, "spawn connection: not an answer to connect");
        /* A handshake already over (loopback often is by now): its failure said here. */
        struct pollfd p = { .fd = sock, .events = POLLOUT };
        int so = 0;
        socklen_t solen = sizeof so;
        if (poll(&p, 1, 0) == 1 && getsockopt(sock, SOL_SOCKET, SO_ERROR, &so, &solen) == 0 && so)
                return msp_err_sys(err, so, "connect to port %u in the sandbox", port);
        *ret_fd = TAKE_FD(sock);
        return 0;
}

static void
close_both(int p[2])
{
        for (int i = 0; i < 2; i++)
                if (p[i] >= 0)
                        close(p[i]);
}

int
spawn_client_start_piped(const char *socket_path, const char *const *argv,
                         const char *const *envp, const char *cwd, bool stdin_pipe,
                         struct spawn_pipes *ret, msp_err *err)
{
        int po[2] = { -1, -1 }, pe[2] = { -1, -1 }, pi[2] = { -1, -1 };
        int conn;
        *ret = (struct spawn_pipes){ .in = -1, .out = -1, .err = -1 };
        if (pipe2(po, O_CLOEXEC) < 0 || pipe2(pe, O_CLOEXEC) < 0 ||
            (stdin_pipe ? pipe2(pi, O_CLOEXEC) : (pi[0] = open("/dev/null", O_RDONLY | O_CLOEXEC))) < 0) {
                conn = msp_err_sys(err, errno, "pipe");
                goto out;
        }
        const int fds[3] = { pi[0], po[1], pe[1] };
        conn = spawn_client_start(socket_path, argv, envp, cwd, fds, err);
        if (conn < 0)
                goto out;
        *ret = (struct spawn_pipes){ .in = pi[1], .out = po[0], .err = pe[0] };
        pi[1] = po[0] = pe[0] = -1;
        (void) fcntl(ret->out, F_SETFL, O_NONBLOCK);
        (void) fcntl(ret->err, F_SETFL, O_NONBLOCK);
        if (ret->in >= 0)
                (void) fcntl(ret->in, F_SETFL, O_NONBLOCK);
out:
        close_both(po);
        close_both(pe);
        close_both(pi);
        return conn;
}
