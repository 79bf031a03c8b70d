#include "lib/sync.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

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

/* One message. A side that exits with a message of ours unread (the init failing before it
 * reads GO) resets the channel: the kernel reports ECONNRESET once, ahead of the messages
 * that side sent before (its RT_SYNC_ERROR saying why), which the next call returns. */
static ssize_t
recv_msg(int fd, struct msghdr *mh)
{
        bool reset = false;

        for (;;) {
                ssize_t n = recvmsg(fd, mh, MSG_CMSG_CLOEXEC);
                if (n >= 0)
                        return n;
                if (errno == ECONNRESET && !reset)
                        reset = true;
                else if (errno != EINTR)
                        return -1;
        }
}

int
rt_sync_recv(int fd, rt_sync_msg *msg, msp_err *err)
{
        struct iovec iov = { .iov_base = msg, .iov_len = sizeof *msg };
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

        memset(msg, 0, sizeof *msg);
        ssize_t n = recv_msg(fd, &mh);
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
rt_sync_error_of(const rt_sync_msg *msg, msp_err *err)
{
        return msp_err_set(err, msg->err.errnum > 0 ? msg->err.errnum : EIO, "%s", msg->err.msg);
}

/* An RT_SYNC_ERROR into err, anything but `type` refused naming `from`. */
static int
expect_type(const rt_sync_msg *msg, rt_sync_type type, const char *from, msp_err *err)
{
        if (msg->type == RT_SYNC_ERROR)
                return rt_sync_error_of(msg, err);
        if (msg->type != (uint32_t) type)
                return msp_err_set(err, EPROTO, "unexpected message %u from %s (expected %u)",
                                   msg->type, from, (unsigned) type);
        return 0;
}

int
rt_sync_expect(int fd, rt_sync_type type, rt_sync_msg *msg, msp_err *err)
{
        int r = rt_sync_recv(fd, msg, err);

        return r < 0 ? r : expect_type(msg, type, "the container init", err);
}

int
rt_sync_send_fds(int fd, rt_sync_type type, const char *text, const int *fds, size_t n)
{
        rt_sync_msg m = { .type = type };
        char control[CMSG_SPACE(sizeof(int) * RT_SYNC_MAX_FDS)] = { 0 };
        struct iovec iov = { .iov_base = &m };
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

        if (n > RT_SYNC_MAX_FDS)
                return -E2BIG;
        snprintf(m.err.msg, sizeof m.err.msg, "%s", text ? text : "");
        iov.iov_len = offsetof(rt_sync_msg, err.msg) + strlen(m.err.msg) + 1;
        if (n) {
                mh.msg_control = control;
                mh.msg_controllen = CMSG_SPACE(sizeof(int) * n);
                struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
                c->cmsg_level = SOL_SOCKET;
                c->cmsg_type = SCM_RIGHTS;
                c->cmsg_len = CMSG_LEN(sizeof(int) * n);
                memcpy(CMSG_DATA(c), fds, sizeof(int) * n);
        }
        for (;;) {
                if (sendmsg(fd, &mh, MSG_NOSIGNAL) >= 0)
                        return 0;
                if (errno != EINTR)
                        return -errno;
        }
}

int
rt_sync_expect_fds(int fd, rt_sync_type type, rt_sync_msg *msg, int *fds, size_t max,
                   size_t *ret_n, msp_err *err)
{
        char control[CMSG_SPACE(sizeof(int) * RT_SYNC_MAX_FDS)];
        struct iovec iov = { .iov_base = msg, .iov_len = sizeof *msg };
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control,
                             .msg_controllen = sizeof control };
        ssize_t n;
        size_t got = 0;

        *ret_n = 0;
        memset(msg, 0, sizeof *msg);
        n = recv_msg(fd, &mh);
        if (n < 0)
                return msp_err_sys(err, errno, "read from the runtime");
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
                if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
                        continue;
                size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
                for (size_t i = 0; i < k; i++) {
                        int f;
                        memcpy(&f, CMSG_DATA(c) + i * sizeof(int), sizeof f);
                        if (got < max && msg->type == (uint32_t) type)
                                fds[got++] = f;
                        else
                                close(f);
                }
        }
        if (n == 0)
                return msp_err_set(err, EPIPE, "the runtime exited during setup");
        if ((size_t) n < offsetof(rt_sync_msg, err) || (mh.msg_flags & MSG_CTRUNC)) {
                for (size_t i = 0; i < got; i++)
                        close(fds[i]);
                return msp_err_set(err, EPROTO, "bad message from the runtime");
        }
        msg->err.msg[sizeof msg->err.msg - 1] = '\0';
        int r = expect_type(msg, type, "the runtime", err);
        if (r < 0)
                return r;
        *ret_n = got;
        return 0;
}
