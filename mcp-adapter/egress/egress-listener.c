/* The egress listener's two ends (see egress-listener.h). */
#include "egress/egress-listener.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int
egress_listener_bind(unsigned port)
{
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t) port),
                                  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        int one = 1;
        if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
            bind(fd, (struct sockaddr *) &sa, sizeof sa) < 0 || listen(fd, SOMAXCONN) < 0) {
                int e = errno;
                if (fd >= 0)
                        close(fd);
                return -e;
        }
        return fd;
}

int
egress_listener_send(int lfd, const char *path)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        char byte = 'L';
        struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(sizeof(int))];
        } ctl;
        struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
                              .msg_controllen = sizeof ctl.buf };
        memset(&ctl, 0, sizeof ctl);
        struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &lfd, sizeof lfd);
        int r = 0;
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (strlen(path) >= sizeof sa.sun_path)
                r = -ENAMETOOLONG;
        else
                strcpy(sa.sun_path, path);
        if (r == 0 && (fd < 0 || connect(fd, (struct sockaddr *) &sa, sizeof sa) < 0 ||
                       sendmsg(fd, &msg, MSG_NOSIGNAL) != 1))
                r = -errno;
        if (fd >= 0)
                close(fd);
        close(lfd);
        return r;
}

static int
sockopt(int fd, int opt)
{
        int v = -1;
        socklen_t len = sizeof v;
        return getsockopt(fd, SOL_SOCKET, opt, &v, &len) < 0 ? -1 : v;
}

int
egress_listener_recv(int conn, int *ret)
{
        char byte;
        struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(4 * sizeof(int))];
        } ctl;
        struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
                              .msg_controllen = sizeof ctl.buf };
        ssize_t n = recvmsg(conn, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
        if (n < 0)
                return errno == EINTR ? -EAGAIN : -errno;
        /* Every fd that came is ours to close; exactly one, a listening TCP socket, is kept. */
        int got = -1, extra = 0;
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
                if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
                        continue;
                for (size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
                        int fd;
                        memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
                        if (got < 0) {
                                got = fd;
                        } else {
                                close(fd);
                                extra++;
                        }
                }
        }
        int domain = got >= 0 ? sockopt(got, SO_DOMAIN) : -1;
        bool ok = n == 1 && got >= 0 && extra == 0 && !(msg.msg_flags & MSG_CTRUNC) &&
                  (domain == AF_INET || domain == AF_INET6) && sockopt(got, SO_TYPE) == SOCK_STREAM &&
                  sockopt(got, SO_PROTOCOL) == IPPROTO_TCP && sockopt(got, SO_ACCEPTCONN) == 1;
        if (!ok) {
                if (got >= 0)
                        close(got);
                return -EPROTO;
        }
        *ret = got;
        return 0;
}
