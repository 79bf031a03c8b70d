#include "lib/ttyproxy.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

int
rt_console_recv_master(int sockfd, int *ret_master, msp_err *err)
{
        char data[64];
        union {
                struct cmsghdr hdr;
                char buf[CMSG_SPACE(sizeof(int))];
        } control = { 0 };
        struct iovec iov = { .iov_base = data, .iov_len = sizeof data };
        struct msghdr msg = {
                .msg_iov = &iov,
                .msg_iovlen = 1,
                .msg_control = control.buf,
                .msg_controllen = sizeof control.buf,
        };
        ssize_t n;

        do
                n = recvmsg(sockfd, &msg, MSG_CMSG_CLOEXEC);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return msp_err_sys(err, errno, "receive the terminal from the container");
        struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
        if (!c || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
            c->cmsg_len != CMSG_LEN(sizeof(int)))
                return msp_err_set(err, EPROTO, "the container sent no terminal");
        memcpy(ret_master, CMSG_DATA(c), sizeof(int));
        return 0;
}

int
rt_ttyproxy_begin(rt_ttyproxy *p, int master, msp_err *err)
{
        struct termios raw;

        p->master = master;
        p->raw = false;
        p->saved = NULL;
        if (fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK) < 0)
                return msp_err_sys(err, errno, "set the terminal non-blocking");
        if (!isatty(STDIN_FILENO))
                return 0;
        p->saved = malloc(sizeof *p->saved);
        if (!p->saved)
                return msp_err_set(err, ENOMEM, "out of memory");
        if (tcgetattr(STDIN_FILENO, p->saved) < 0)
                return msp_err_sys(err, errno, "tcgetattr");
        raw = *p->saved;
        cfmakeraw(&raw);
        if (tcsetattr(STDIN_FILENO, TCSANOW, &raw) < 0)
                return msp_err_sys(err, errno, "tcsetattr");
        p->raw = true;
        rt_ttyproxy_resize(p);
        return 0;
}

void
rt_ttyproxy_resize(rt_ttyproxy *p)
{
        struct winsize ws;

        if (ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) == 0)
                (void) ioctl(p->master, TIOCSWINSZ, &ws);
}

static int
write_all(int fd, const char *buf, size_t len)
{
        while (len > 0) {
                ssize_t w = write(fd, buf, len);
                if (w < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                buf += w;
                len -= (size_t) w;
        }
        return 0;
}

int
rt_ttyproxy_pump_in(rt_ttyproxy *p)
{
        char buf[4096];
        ssize_t n = read(STDIN_FILENO, buf, sizeof buf);

        if (n <= 0)
                return n == 0 || (errno != EINTR && errno != EAGAIN) ? -EPIPE : 0;
        /* The master is non-blocking; a full pty buffer waits for the reader. */
        int flags = fcntl(p->master, F_GETFL);
        (void) fcntl(p->master, F_SETFL, flags & ~O_NONBLOCK);
        int r = write_all(p->master, buf, (size_t) n);
        (void) fcntl(p->master, F_SETFL, flags);
        return r < 0 ? -EPIPE : 0;
}

int
rt_ttyproxy_pump_out(rt_ttyproxy *p)
{
        char buf[8192];

        for (;;) {
                ssize_t n = read(p->master, buf, sizeof buf);
                if (n > 0) {
                        if (write_all(STDOUT_FILENO, buf, (size_t) n) < 0)
                                return -EPIPE;
                        continue;
                }
                if (n < 0 && (errno == EINTR))
                        continue;
                if (n < 0 && errno == EAGAIN)
                        return 0;
                /* EIO: every slave fd is closed. */
                return -EPIPE;
        }
}

void
rt_ttyproxy_done(rt_ttyproxy *p)
{
        if (p->raw && p->saved)
                (void) tcsetattr(STDIN_FILENO, TCSANOW, p->saved);
        free(p->saved);
        p->saved = NULL;
        if (p->master >= 0)
                close(p->master);
        p->master = -1;
}
