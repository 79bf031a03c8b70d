/* The event loop of msp-mcp: one thread, epoll over fds (stdin, stdout when it would block,
 * pipes of runs, pidfds of runtime children, a signalfd) and one timerfd that serves every
 * timer. Owner: loop.c.
 *
 * Callbacks may add and remove fds and timers, including the one being dispatched: removal
 * takes effect at once (a removed fd gets no further callback, even from the same
 * epoll_wait batch). */
#pragma once

#include <stdbool.h>
#include <stdint.h>

typedef struct mcp_loop mcp_loop;
typedef struct mcp_timer mcp_timer;

/* Return 0, or -errno to stop the loop: mcp_loop_run() then returns that value. */
typedef int (*mcp_io_fn)(mcp_loop *loop, int fd, uint32_t events, void *data);
typedef int (*mcp_timer_fn)(mcp_loop *loop, void *data);

int mcp_loop_new(mcp_loop **ret);
mcp_loop *mcp_loop_free(mcp_loop *loop);

/* events: EPOLLIN/EPOLLOUT/...; the loop never closes fd. */
int mcp_loop_add_io(mcp_loop *loop, int fd, uint32_t events, mcp_io_fn fn, void *data);
int mcp_loop_mod_io(mcp_loop *loop, int fd, uint32_t events);
void mcp_loop_del_io(mcp_loop *loop, int fd);
/* The watch of *fd removed, *fd closed and set to -1 (nothing when it is already -1). */
void mcp_loop_close_io(mcp_loop *loop, int *fd);

/* One-shot timer after usec on CLOCK_MONOTONIC. The timer is freed after it fires or when
 * cancelled; *ret (may be NULL) is only valid until then. */
int mcp_loop_add_timer(mcp_loop *loop, uint64_t usec, mcp_timer_fn fn, void *data,
                       mcp_timer **ret);
void mcp_timer_cancel(mcp_loop *loop, mcp_timer *timer);

/* Dispatch until mcp_loop_exit(); returns its code (or a callback's -errno). */
int mcp_loop_run(mcp_loop *loop);
void mcp_loop_exit(mcp_loop *loop, int code);
bool mcp_loop_exiting(const mcp_loop *loop);

/* CLOCK_MONOTONIC and CLOCK_REALTIME in microseconds. */
uint64_t mcp_now_usec(void);
uint64_t mcp_wallclock_usec(void);

static inline void
mcp_loop_freep(mcp_loop **l)
{
        if (*l)
                mcp_loop_free(*l);
}
#define _cleanup_loop_ __attribute__((cleanup(mcp_loop_freep)))
