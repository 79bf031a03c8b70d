#include "lib/relay.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define MEM_MAJOR 1

bool
rt_stdio_is_terminal(int fd)
{
        struct stat st;

        if (isatty(fd))
                return true;
        return fstat(fd, &st) == 0 && S_ISCHR(st.st_mode) && major(st.st_rdev) != MEM_MAJOR;
}

/* Field by field: the buffer needs no clearing (msp-mcp's path makes no link at all). */
static void
link_init(rt_relay_link *l, int from, bool own_from, int to, bool own_to)
{
        l->from = from;
        l->to = to;
        l->own_from = own_from;
        l->own_to = own_to;
        l->len = l->off = 0;
}

static void
close_end(int *fd, bool own)
{
        if (*fd >= 0 && own)
                close(*fd);
        *fd = -1;
}

static void
link_close(rt_relay_link *l)
{
        close_end(&l->from, l->own_from);
        close_end(&l->to, l->own_to);
        l->len = l->off = 0;
}

static bool
same_terminal(int a, int b)
{
        struct stat sa, sb;

        return fstat(a, &sa) == 0 && fstat(b, &sb) == 0 && S_ISCHR(sa.st_mode) &&
               S_ISCHR(sb.st_mode) && sa.st_rdev == sb.st_rdev;
}

/* A pipe for fd: the process's end in r->child[fd], ours (non-blocking: one slow side
 * must not stop the other) in the link. */
static int
relay_pipe(rt_stdio_relay *r, int fd, msp_err *err)
{
        int p[2];

        if (pipe2(p, O_CLOEXEC) < 0)
                return msp_err_sys(err, errno, "pipe for the process's fd %d", fd);
        int ours = fd == STDIN_FILENO ? p[1] : p[0];
        r->child[fd] = fd == STDIN_FILENO ? p[0] : p[1];
        if (fcntl(ours, F_SETFL, O_NONBLOCK) < 0) {
                close(ours);
                return msp_err_sys(err, errno, "set the relay pipe non-blocking");
        }
        if (fd == STDIN_FILENO)
                link_init(&r->link[fd], STDIN_FILENO, false, ours, true);
        else
                link_init(&r->link[fd], ours, true, fd, false);
        return 0;
}

int
rt_stdio_relay_open(rt_stdio_relay *r, msp_err *err)
{
        int rc;

        r->started = false;
        for (int fd = 0; fd < 3; fd++) {
                r->child[fd] = -1;
                link_init(&r->link[fd], -1, false, -1, false);
        }
        for (int fd = 0; fd < 3; fd++) {
                if (!rt_stdio_is_terminal(fd))
                        continue;
                if (fd == STDERR_FILENO && r->child[STDOUT_FILENO] >= 0 &&
                    same_terminal(STDOUT_FILENO, STDERR_FILENO)) {
                        r->child[fd] = fcntl(r->child[STDOUT_FILENO], F_DUPFD_CLOEXEC, 3);
                        rc = r->child[fd] < 0 ? msp_err_sys(err, errno, "dup the relay pipe") : 0;
                } else {
                        rc = relay_pipe(r, fd, err);
                }
                if (rc < 0) {
                        rt_stdio_relay_done(r);
                        return rc;
                }
        }
        return 0;
}

void
rt_stdio_relay_started(rt_stdio_relay *r)
{
        const struct sigaction ign = { .sa_handler = SIG_IGN };
        bool any = false;

        for (int fd = 0; fd < 3; fd++) {
                any = any || r->child[fd] >= 0;
                close_end(&r->child[fd], true);
        }
        if (any && !r->started && sigaction(SIGPIPE, &ign, &r->old_sigpipe) == 0)
                r->started = true;
}

void
rt_stdio_relay_pollfds(const rt_stdio_relay *r, struct pollfd *p)
{
        for (int i = 0; i < RT_RELAY_LINKS; i++) {
                const rt_relay_link *l = &r->link[i];
                p[i] = (struct pollfd) { .fd = -1 };
                if (l->len > l->off && l->to >= 0)
                        p[i] = (struct pollfd) { .fd = l->to, .events = POLLOUT };
                else if (l->from >= 0)
                        p[i] = (struct pollfd) { .fd = l->from, .events = POLLIN };
        }
}

/* Write what is buffered; the reader gone (EPIPE, EIO), the rest of the stream is
 * dropped: an output link keeps reading so that the process never blocks on a full
 * pipe; the input link ends (the process closed its stdin). */
static void
link_write(rt_relay_link *l, bool input)
{
        while (l->len > l->off && l->to >= 0) {
                ssize_t w = write(l->to, l->buf + l->off, l->len - l->off);
                if (w > 0) {
                        l->off += (size_t) w;
                        continue;
                }
                if (w < 0 && errno == EINTR)
                        continue;
                if (w < 0 && errno == EAGAIN)
                        return;
                if (input) {
                        link_close(l);
                        return;
                }
                close_end(&l->to, l->own_to);
        }
        l->len = l->off = 0;
}

/* One read; EOF (or an error) closes the link, and the input pipe with it, so that
 * the process sees its stdin end. */
static void
link_read(rt_relay_link *l)
{
        ssize_t n = read(l->from, l->buf, sizeof l->buf);

        if (n > 0) {
                l->len = (size_t) n;
                l->off = 0;
        } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
                link_close(l);
        }
}

void
rt_stdio_relay_handle(rt_stdio_relay *r, const struct pollfd *p)
{
        for (int i = 0; i < RT_RELAY_LINKS; i++) {
                rt_relay_link *l = &r->link[i];
                if (p[i].fd < 0 || !p[i].revents)
                        continue;
                if (l->len == l->off && l->from >= 0)
                        link_read(l);
                link_write(l, i == STDIN_FILENO);
        }
}

void
rt_stdio_relay_input_done(rt_stdio_relay *r)
{
        link_close(&r->link[STDIN_FILENO]);
}

bool
rt_stdio_relay_busy(const rt_stdio_relay *r)
{
        for (int i = STDOUT_FILENO; i < RT_RELAY_LINKS; i++)
                if (r->link[i].from >= 0)
                        return true;
        return false;
}

void
rt_stdio_relay_done(rt_stdio_relay *r)
{
        if (!r)
                return;
        for (int fd = 0; fd < 3; fd++) {
                close_end(&r->child[fd], true);
                link_close(&r->link[fd]);
        }
        if (r->started)
                (void) sigaction(SIGPIPE, &r->old_sigpipe, NULL);
        r->started = false;
}
