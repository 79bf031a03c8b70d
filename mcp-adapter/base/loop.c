/* The event loop: epoll over registered fds and one timerfd that serves a sorted list of
 * one-shot timers. Removed fds and timers are never called again, even when the removal
 * happens while a batch from epoll_wait() is being dispatched: an fd's record is only
 * marked dead and freed after the batch. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "base/loop.h"
#include "oci/oci.h"

#define MAX_EVENTS 64

typedef struct mcp_io {
        int fd;
        uint32_t events;
        mcp_io_fn fn;
        void *data;
        bool dead;
        struct mcp_io *next_dead;
} mcp_io;

struct mcp_timer {
        uint64_t deadline;              /* CLOCK_MONOTONIC usec */
        uint64_t seq;                   /* insertion order: ties fire in it */
        mcp_timer_fn fn;
        void *data;
        mcp_timer *prev, *next;
};

struct mcp_loop {
        int epfd;
        int tfd;
        mcp_io **by_fd;                 /* indexed by fd */
        size_t n_by_fd;
        mcp_io *dead;                   /* freed after the current batch */
        mcp_timer *timers;              /* sorted by (deadline, seq) */
        mcp_timer *firing;              /* the timer whose callback runs now */
        uint64_t next_seq;
        uint64_t armed;                 /* deadline the timerfd is set to; 0: disarmed */
        bool exiting;
        int exit_code;
};

uint64_t
mcp_now_usec(void)
{
        struct timespec ts;

        (void) clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000 + (uint64_t) ts.tv_nsec / 1000;
}

uint64_t
mcp_wallclock_usec(void)
{
        struct timespec ts;

        (void) clock_gettime(CLOCK_REALTIME, &ts);
        return (uint64_t) ts.tv_sec * 1000000 + (uint64_t) ts.tv_nsec / 1000;
}

int
mcp_loop_new(mcp_loop **ret)
{
        mcp_loop *l = calloc(1, sizeof(*l));

        if (!l)
                return -ENOMEM;
        l->epfd = epoll_create1(EPOLL_CLOEXEC);
        l->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
        if (l->epfd < 0 || l->tfd < 0) {
                int r = msp_negative_errno();
                mcp_loop_free(l);
                return r;
        }
        /* The timerfd is registered with a NULL record: dispatch recognises it by that. */
        struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL };
        if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, l->tfd, &ev) < 0) {
                int r = msp_negative_errno();
                mcp_loop_free(l);
                return r;
        }
        *ret = l;
        return 0;
}

static void
free_dead(mcp_loop *l)
{
        while (l->dead) {
                mcp_io *io = l->dead;
                l->dead = io->next_dead;
                free(io);
        }
}

mcp_loop *
mcp_loop_free(mcp_loop *l)
{
        if (!l)
                return NULL;
        for (size_t i = 0; i < l->n_by_fd; i++)
                free(l->by_fd[i]);
        free(l->by_fd);
        free_dead(l);
        while (l->timers) {
                mcp_timer *t = l->timers;
                l->timers = t->next;
                free(t);
        }
        if (l->epfd >= 0)
                close(l->epfd);
        if (l->tfd >= 0)
                close(l->tfd);
        free(l);
        return NULL;
}

int
mcp_loop_add_io(mcp_loop *l, int fd, uint32_t events, mcp_io_fn fn, void *data)
{
        if (fd < 0 || !fn)
                return -EINVAL;
        if ((size_t) fd >= l->n_by_fd) {
                size_t n = l->n_by_fd ? l->n_by_fd : 16;
                while (n <= (size_t) fd)
                        n *= 2;
                mcp_io **p = realloc(l->by_fd, n * sizeof(*p));
                if (!p)
                        return -ENOMEM;
                memset(p + l->n_by_fd, 0, (n - l->n_by_fd) * sizeof(*p));
                l->by_fd = p;
                l->n_by_fd = n;
        }
        if (l->by_fd[fd])
                return -EEXIST;
        mcp_io *io = calloc(1, sizeof(*io));
        if (!io)
                return -ENOMEM;
        *io = (mcp_io) { .fd = fd, .events = events, .fn = fn, .data = data };
        struct epoll_event ev = { .events = events, .data.ptr = io };
        if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
                int r = msp_negative_errno();
                free(io);
                return r;
        }
        l->by_fd[fd] = io;
        return 0;
}

int
mcp_loop_mod_io(mcp_loop *l, int fd, uint32_t events)
{
        if (fd < 0 || (size_t) fd >= l->n_by_fd || !l->by_fd[fd])
                return -ENOENT;
        mcp_io *io = l->by_fd[fd];
        if (io->events == events)
                return 0;
        struct epoll_event ev = { .events = events, .data.ptr = io };
        if (epoll_ctl(l->epfd, EPOLL_CTL_MOD, fd, &ev) < 0)
                return msp_negative_errno();
        io->events = events;
        return 0;
}

void
mcp_loop_close_io(mcp_loop *l, int *fd)
{
        if (*fd < 0)
                return;
        mcp_loop_del_io(l, *fd);
        close(*fd);
        *fd = -1;
}

void
mcp_loop_del_io(mcp_loop *l, int fd)
{
        if (fd < 0 || (size_t) fd >= l->n_by_fd || !l->by_fd[fd])
                return;
        mcp_io *io = l->by_fd[fd];
        /* The fd may already be closed (then epoll dropped it itself). */
        (void) epoll_ctl(l->epfd, EPOLL_CTL_DEL, fd, NULL);
        l->by_fd[fd] = NULL;
        io->dead = true;
        io->next_dead = l->dead;
        l->dead = io;
}

static void
arm(mcp_loop *l)
{
        uint64_t want = l->timers ? l->timers->deadline : 0;

        if (want == l->armed)
                return;
        /* An all-zero it_value disarms; deadlines are >= 1 usec so a due timer never does. */
        struct itimerspec its = { 0 };
        if (want) {
                its.it_value.tv_sec = (time_t) (want / 1000000);
                its.it_value.tv_nsec = (long) (want % 1000000) * 1000;
        }
        if (timerfd_settime(l->tfd, TFD_TIMER_ABSTIME, &its, NULL) == 0)
                l->armed = want;
}

int
mcp_loop_add_timer(mcp_loop *l, uint64_t usec, mcp_timer_fn fn, void *data, mcp_timer **ret)
{
        if (!fn)
                return -EINVAL;
        mcp_timer *t = calloc(1, sizeof(*t));
        if (!t)
                return -ENOMEM;
        uint64_t now = mcp_now_usec();
        t->deadline = usec > UINT64_MAX - now ? UINT64_MAX : now + usec;
        if (t->deadline == 0)
                t->deadline = 1;
        t->seq = l->next_seq++;
        t->fn = fn;
        t->data = data;

        /* Sorted insert; later timers are appended after equal deadlines. */
        mcp_timer **pp = &l->timers, *prev = NULL;
        while (*pp && (*pp)->deadline <= t->deadline) {
                prev = *pp;
                pp = &(*pp)->next;
        }
        t->next = *pp;
        t->prev = prev;
        if (*pp)
                (*pp)->prev = t;
        *pp = t;
        arm(l);
        if (ret)
                *ret = t;
        return 0;
}

static void
unlink_timer(mcp_loop *l, mcp_timer *t)
{
        if (t->prev)
                t->prev->next = t->next;
        else
                l->timers = t->next;
        if (t->next)
                t->next->prev = t->prev;
        t->prev = t->next = NULL;
}

void
mcp_timer_cancel(mcp_loop *l, mcp_timer *t)
{
        if (!t)
                return;
        /* Cancelling the timer whose callback runs: it is freed when the callback returns. */
        if (t == l->firing)
                return;
        unlink_timer(l, t);
        free(t);
        arm(l);
}

static int
dispatch_timers(mcp_loop *l)
{
        uint64_t expirations;
        (void) !read(l->tfd, &expirations, sizeof(expirations));
        l->armed = 0;   /* an absolute timer that fired is disarmed */

        /* Only timers that exist now and are due now: ones added by callbacks wait for the
         * next round, so a callback re-adding a zero timer cannot starve the fds. */
        uint64_t now = mcp_now_usec(), seq_limit = l->next_seq;
        int r = 0;
        while (r >= 0 && !l->exiting) {
                mcp_timer *t = l->timers;
                while (t && t->deadline <= now && t->seq >= seq_limit)
                        t = t->next;
                if (!t || t->deadline > now)
                        break;
                unlink_timer(l, t);
                l->firing = t;
                r = t->fn(l, t->data);
                l->firing = NULL;
                free(t);
        }
        arm(l);
        return r;
}

int
mcp_loop_run(mcp_loop *l)
{
        struct epoll_event evs[MAX_EVENTS];

        /* A loop may be run again after an exit (the engine's tests run it in steps). */
        l->exiting = false;
        while (!l->exiting) {
                int n = epoll_wait(l->epfd, evs, MAX_EVENTS, -1);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return msp_negative_errno();
                }
                for (int i = 0; i < n && !l->exiting; i++) {
                        mcp_io *io = evs[i].data.ptr;
                        int r;
                        if (!io)
                                r = dispatch_timers(l);
                        else if (io->dead)
                                continue;
                        else
                                r = io->fn(l, io->fd, evs[i].events, io->data);
                        if (r < 0) {
                                free_dead(l);
                                return r;
                        }
                }
                free_dead(l);
        }
        return l->exit_code;
}

void
mcp_loop_exit(mcp_loop *l, int code)
{
        l->exiting = true;
        l->exit_code = code;
}

bool
mcp_loop_exiting(const mcp_loop *l)
{
        return l->exiting;
}
