/* The spawn service's client (see spawn-client.h). */
#include "sandbox/spawn-client.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
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
