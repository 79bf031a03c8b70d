#include "sync.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

int
rt_sync_pair(int fds[2], msp_err *err)
{
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) < 0)
                return msp_err_sys(err, errno, "socketpair");
        return 0;
}

int
rt_sync_send(int fd, rt_sync_type type, int32_t value, const msp_err *payload)
{
        rt_sync_msg m = { .type = type, .value = value };
        size_t len = offsetof(rt_sync_msg, err);

        if (payload) {
                m.err.errnum = payload->errnum;
                snprintf(m.err.msg, sizeof m.err.msg, "%s", payload->msg);
                len = offsetof(rt_sync_msg, err.msg) + strlen(m.err.msg) + 1;
        }
        for (;;) {
                ssize_t w = send(fd, &m, len, MSG_NOSIGNAL);
                if (w >= 0)
                        return 0;
                if (errno != EINTR)
                        return -errno;
        }
}

int
rt_sync_recv(int fd, rt_sync_msg *msg, msp_err *err)
{
        ssize_t n;

        memset(msg, 0, sizeof *msg);
        do
                n = recv(fd, msg, sizeof *msg, MSG_CMSG_CLOEXEC);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return msp_err_sys(err, errno, "read from the container init");
        if (n == 0)
                return msp_err_set(err, EPIPE, "the container init exited during setup");
        if ((size_t) n < offsetof(rt_sync_msg, err))
                return msp_err_set(err, EPROTO, "short message from the container init");
        msg->err.msg[sizeof msg->err.msg - 1] = '\0';
        return 0;
}

int
rt_sync_expect(int fd, rt_sync_type type, rt_sync_msg *msg, msp_err *err)
{
        int r = rt_sync_recv(fd, msg, err);

        if (r < 0)
                return r;
        if (msg->type == RT_SYNC_ERROR) {
                int errnum = msg->err.errnum > 0 ? msg->err.errnum : EIO;
                return msp_err_set(err, errnum, "%s", msg->err.msg);
        }
        if (msg->type != (uint32_t) type)
                return msp_err_set(err, EPROTO, "unexpected message %u from the container init "
                                   "(expected %u)", msg->type, (unsigned) type);
        return 0;
}
