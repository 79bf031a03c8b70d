/* mcp-adapter/base/loop.c: timer order, cancellation (also from a callback), fd removal while a
 * batch is dispatched, exit codes, and timers that cannot starve fds. Every test runs
 * under a guard timer so that a broken loop fails instead of hanging. */
#include <errno.h>
#include <fcntl.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "tests/lib/tap.h"
#include "base/loop.h"
#include "oci/macros.h"

#define GUARD_USEC 5000000
#define GUARD_CODE 99

static int
guard_fired(mcp_loop *loop, void *data)
{
        (void) data;
        mcp_loop_exit(loop, GUARD_CODE);
        return 0;
}

/* A loop with a guard: returns the loop, or NULL. */
static mcp_loop *
new_loop(void)
{
        mcp_loop *l = NULL;
        if (mcp_loop_new(&l) < 0)
                return NULL;
        if (mcp_loop_add_timer(l, GUARD_USEC, guard_fired, NULL, NULL) < 0) {
                mcp_loop_free(l);
                return NULL;
        }
        return l;
}

typedef struct order_ctx {
        int seen[8];
        int n;
        int exit_after;
} order_ctx;

typedef struct order_item {
        order_ctx *ctx;
        int tag;
} order_item;

static int
record(mcp_loop *loop, void *data)
{
        order_item *it = data;
        it->ctx->seen[it->ctx->n++] = it->tag;
        if (it->ctx->n == it->ctx->exit_after)
                mcp_loop_exit(loop, 0);
        return 0;
}

TEST(timers_fire_in_deadline_order)
{
        _cleanup_loop_ mcp_loop *l = new_loop();
        ASSERT_NOT_NULL(l);
        order_ctx ctx = { .exit_after = 4 };
        order_item items[4] = { { &ctx, 30 }, { &ctx, 10 }, { &ctx, 20 }, { &ctx, 0 } };
        ASSERT_OK(mcp_loop_add_timer(l, 30000, record, &items[0], NULL));
        ASSERT_OK(mcp_loop_add_timer(l, 10000, record, &items[1], NULL));
        ASSERT_OK(mcp_loop_add_timer(l, 20000, record, &items[2], NULL));
        ASSERT_OK(mcp_loop_add_timer(l, 0, record, &items[3], NULL));
        ASSERT_EQ_INT(mcp_loop_run(l), 0);
        ASSERT_EQ_INT(ctx.n, 4);
        ASSERT_EQ_INT(ctx.seen[0], 0);
        ASSERT_EQ_INT(ctx.seen[1], 10);
        ASSERT_EQ_INT(ctx.seen[2], 20);
        ASSERT_EQ_INT(ctx.seen[3], 30);
}

TEST(cancelled_timer_never_fires)
{
        _cleanup_loop_ mcp_loop *l = new_loop();
        ASSERT_NOT_NULL(l);
        order_ctx ctx = { .exit_after = 1 };
        order_item a = { &ctx, 1 }, b = { &ctx, 2 };
        mcp_timer *t = NULL;
        ASSERT_OK(mcp_loop_add_timer(l, 1000, record, &a, &t));
        ASSERT_OK(mcp_loop_add_timer(l, 20000, record, &b, NULL));
        mcp_timer_cancel(l, t);
        ASSERT_EQ_INT(mcp_loop_run(l), 0);
        ASSERT_EQ_INT(ctx.n, 1);
        ASSERT_EQ_INT(ctx.seen[0], 2);
}

typedef struct cancel_ctx {
        mcp_timer *victim;
        int fired_victim;
} cancel_ctx;

static int
victim_fn(mcp_loop *loop, void *data)
{
        (void) loop;
        ((cancel_ctx *) data)->fired_victim++;
        return 0;
}

static int
killer_fn(mcp_loop *loop, void *data)
{
        cancel_ctx *c = data;
        mcp_timer_cancel(loop, c->victim);
        return 0;
}

static int
exit_fn(mcp_loop *loop, void *data)
{
        (void) data;
        mcp_loop_exit(loop, 0);
        return 0;
}

/* Both timers are due in the same dispatch round: the first cancels the second. */
TEST(timer_cancelled_by_an_earlier_callback_in_the_same_round)
{
        _cleanup_loop_ mcp_loop *l = new_loop();
        ASSERT_NOT_NULL(l);
        cancel_ctx c = { 0 };
        ASSERT_OK(mcp_loop_add_timer(l, 2000, killer_fn, &c, NULL));
        ASSERT_OK(mcp_loop_add_timer(l, 2001, victim_fn, &c, &c.victim));
        ASSERT_OK(mcp_loop_add_timer(l, 30000, exit_fn, NULL, NULL));
        /* Make sure both are due before the loop looks at them. */
        usleep(5000);
        ASSERT_EQ_INT(mcp_loop_run(l), 0);
        ASSERT_EQ_INT(c.fired_victim, 0);
}

static int
self_cancel(mcp_loop *loop, void *data)
{
        mcp_timer **self = data;
        /* Cancelling the timer being dispatched is harmless (freed after the callback). */
        mcp_timer_cancel(loop, *self);
        mcp_loop_exit(loop, 7);
        return 0;
}

TEST(timer_cancelling_itself)
{
        _cleanup_loop_ mcp_loop *l = new_loop();
        ASSERT_NOT_NULL(l);
        mcp_timer *t = NULL;
        ASSERT_OK(mcp_loop_add_timer(l, 0, self_cancel, &t, &t));
        ASSERT_EQ_INT(mcp_loop_run(l), 7);
}

typedef struct fd_ctx {
        int a[2], b[2];
        int calls_a, calls_b, calls_new;
        int new_pipe[2];
} fd_ctx;

static int
on_new(mcp_loop *loop, int fd, uint32_t events, void *data)
{
        (void) loop, (void) fd, (void) events;
        ((fd_ctx *) data)->calls_new++;
        return 0;
}

/* Whichever of the two readable pipes is dispatched first removes and closes the other
 * and puts a new (empty) pipe in its place, likely on the same fd number. */
static int
on_pipe(mcp_loop *loop, int fd, uint32_t events, void *data)
{
        (void) events;
        fd_ctx *c = data;
        int other;
        if (fd == c->a[0]) {
                c->calls_a++;
                other = c->b[0];
        } else {
                c->calls_b++;
                other = c->a[0];
        }
        mcp_loop_del_io(loop, other);
        close(other);
        if (pipe2(c->new_pipe, O_CLOEXEC) == 0)
                (void) mcp_loop_add_io(loop, c->new_pipe[0], EPOLLIN, on_new, c);
        if (fd == c->a[0])
                c->b[0] = -1;
        else
                c->a[0] = -1;
        mcp_loop_del_io(loop, fd);
        (void) mcp_loop_add_timer(loop, 20000, exit_fn, NULL, NULL);
        return 0;
}

TEST(fd_removed_during_dispatch_gets_no_callback)
{
        _cleanup_loop_ mcp_loop *l = new_loop();
        ASSERT_NOT_NULL(l);
        fd_ctx c = { .new_pipe = { -1, -1 } };
        ASSERT_OK(pipe2(c.a, O_CLOEXEC));
        ASSERT_OK(pipe2(c.b, O_CLOEXEC));
        ASSERT_EQ_INT(write(c.a[1], "x", 1), 1);
        ASSERT_EQ_INT(write(c.b[1], "y", 1), 1);
        ASSERT_OK(mcp_loop_add_io(l, c.a[0], EPOLLIN, on_pipe, &c));
        ASSERT_OK(mcp_loop_add_io(l, c.b[0], EPOLLIN, on_pipe, &c));
        ASSERT_EQ_INT(mcp_loop_run(l), 0);
        ASSERT_EQ_INT(c.calls_a + c.calls_b, 1);
        ASSERT_EQ_INT(c.calls_new, 0);
        int fds[] = { c.a[0], c.a[1], c.b[0], c.b[1], c.new_pipe[0], c.new_pipe[1] };
        for (size_t i = 0; i < ARRAY_SIZE(fds); i++)
                if (fds[i] >= 0)
                        close(fds[i]);
}

static int
fail_io(mcp_loop *loop, int fd, uint32_t events, void *data)
{
        (void) loop, (void) fd, (void) events, (void) data;
        return -EPROTO;
}

TEST(callback_error_stops_the_loop)
{
        _cleanup_loop_ mcp_loop *l = new_loop();
        ASSERT_NOT_NULL(l);
        int p[2];
        ASSERT_OK(pipe2(p, O_CLOEXEC));
        ASSERT_EQ_INT(write(p[1], "x", 1), 1);
        ASSERT_OK(mcp_loop_add_io(l, p[0], EPOLLIN, fail_io, NULL));
        ASSERT_EQ_INT(mcp_loop_add_io(l, p[0], EPOLLIN, fail_io, NULL), -EEXIST);
        ASSERT_EQ_INT(mcp_loop_run(l), -EPROTO);
        mcp_loop_del_io(l, p[0]);
        close(p[0]);
        close(p[1]);
}

typedef struct starve_ctx {
        int timer_runs;
        bool io_ran;
} starve_ctx;

static int
rearm(mcp_loop *loop, void *data)
{
        starve_ctx *c = data;
        c->timer_runs++;
        return mcp_loop_add_timer(loop, 0, rearm, c, NULL);
}

static int
io_exit(mcp_loop *loop, int fd, uint32_t events, void *data)
{
        (void) fd, (void) events;
        ((starve_ctx *) data)->io_ran = true;
        mcp_loop_exit(loop, 0);
        return 0;
}

TEST(zero_timers_do_not_starve_fds)
{
        _cleanup_loop_ mcp_loop *l = new_loop();
        ASSERT_NOT_NULL(l);
        starve_ctx c = { 0 };
        int p[2];
        ASSERT_OK(pipe2(p, O_CLOEXEC));
        ASSERT_EQ_INT(write(p[1], "x", 1), 1);
        ASSERT_OK(mcp_loop_add_timer(l, 0, rearm, &c, NULL));
        ASSERT_OK(mcp_loop_add_io(l, p[0], EPOLLIN, io_exit, &c));
        ASSERT_EQ_INT(mcp_loop_run(l), 0);
        ASSERT_TRUE(c.io_ran);
        mcp_loop_del_io(l, p[0]);
        close(p[0]);
        close(p[1]);
}

TEST(clocks_advance)
{
        uint64_t a = mcp_now_usec();
        usleep(2000);
        uint64_t b = mcp_now_usec();
        ASSERT_TRUE(b >= a + 2000);
        /* after 2020-01-01 */
        ASSERT_TRUE(mcp_wallclock_usec() > UINT64_C(1577836800000000));
}

int
main(void)
{
        RUN(timers_fire_in_deadline_order);
        RUN(cancelled_timer_never_fires);
        RUN(timer_cancelled_by_an_earlier_callback_in_the_same_round);
        RUN(timer_cancelling_itself);
        RUN(fd_removed_during_dispatch_gets_no_callback);
        RUN(callback_error_stops_the_loop);
        RUN(zero_timers_do_not_starve_fds);
        RUN(clocks_advance);
        return tap_done();
}
