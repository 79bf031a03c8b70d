/* mcp-adapter/engine/runner.c with a stand-in runtime (a shell script that records its arguments):
 * the order of a run's end. The run's result handler (on_exit) comes first; a timer it
 * adds, as the HTTP transport does to send the response from the loop, fires before
 * `delete --force` is spawned (a spawn holds the loop until the child has exec'd); the
 * delete still follows, and on_gone after it. No root needed. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/lib/tap.h"
#include "base/loop.h"
#include "engine/runner.h"

static char dir[64];
static char runtime[128], calls[128], logfile[128];

typedef struct ends {
        mcp_procset *set;
        bool exited, timer_fired, gone;
        bool children_at_timer;         /* a child of the set existed when the timer fired */
        bool gone_before_timer;
} ends;

static int
after_exit(mcp_loop *loop, void *data)
{
        ends *e = data;
        (void) loop;
        e->timer_fired = true;
        e->children_at_timer = e->set->head != NULL;
        e->gone_before_timer = e->gone;
        return 0;
}

static void
run_exit(mcp_runner *r, void *data)
{
        ends *e = data;
        e->exited = true;
        (void) mcp_loop_add_timer(r->set->loop, 0, after_exit, e, NULL);
}

static void
run_gone(mcp_runner *r, void *data)
{
        ends *e = data;
        e->gone = true;
        mcp_loop_exit(r->set->loop, 0);
}

static int
guard(mcp_loop *loop, void *data)
{
        (void) data;
        mcp_loop_exit(loop, -ETIMEDOUT);
        return 0;
}

TEST(delete_spawned_after_the_exit_handlers_timer)
{
        mcp_loop *loop = NULL;
        ASSERT_EQ_INT(mcp_loop_new(&loop), 0);
        mcp_procset set = { .loop = loop };
        ends e = { .set = &set };
        mcp_runner r = { .runtime = runtime, .runtime_root = dir, .bundle = dir, .id = "r-1",
                         .log_path = logfile, .timeout_ms = 30000, .on_exit = run_exit,
                         .on_gone = run_gone, .data = &e };
        r.out = (mcp_capture) { .limit = 4096, .log_fd = -1 };
        r.err = (mcp_capture) { .limit = 4096, .log_fd = -1 };
        msp_err err = { 0 };
        ASSERT_EQ_INT(mcp_runner_start(&r, &set, &err), 0);
        ASSERT_EQ_INT(mcp_loop_add_timer(loop, 20000000, guard, NULL, NULL), 0);
        int rc = mcp_loop_run(loop);
        mcp_procset_wait_all(&set);
        mcp_runner_done(&r);
        mcp_loop_free(loop);
        ASSERT_EQ_INT(rc, 0);
        ASSERT_TRUE(e.exited);
        ASSERT_TRUE(e.timer_fired);
        ASSERT_FALSE(e.gone_before_timer);
        ASSERT_FALSE(e.children_at_timer);

        char buf[4096] = "";
        int fd = open(calls, O_RDONLY | O_CLOEXEC);
        ASSERT_TRUE(fd >= 0);
        ssize_t n = read(fd, buf, sizeof buf - 1);
        close(fd);
        buf[n > 0 ? n : 0] = '\0';
        char want[512];
        snprintf(want, sizeof want, "--root %s --log %s --log-format json run --keep --bundle %s r-1\n"
                 "--root %s delete --force r-1\n", dir, logfile, dir, dir);
        ASSERT_STREQ(buf, want);
}

int
main(void)
{
        signal(SIGPIPE, SIG_IGN);
        snprintf(dir, sizeof dir, "/tmp/mcp-runner-XXXXXX");
        if (!mkdtemp(dir)) {
                perror("mkdtemp");
                return 1;
        }
        snprintf(runtime, sizeof runtime, "%s/runtime", dir);
        snprintf(calls, sizeof calls, "%s/calls", dir);
        snprintf(logfile, sizeof logfile, "%s/log", dir);
        FILE *f = fopen(runtime, "we");
        if (!f) {
                perror(runtime);
                return 1;
        }
        fprintf(f, "#!/bin/sh\necho \"$*\" >> %s\n", calls);
        fclose(f);
        (void) chmod(runtime, 0700);

        RUN(delete_spawned_after_the_exit_handlers_timer);

        (void) unlink(runtime);
        (void) unlink(calls);
        (void) unlink(logfile);
        (void) rmdir(dir);
        return tap_done();
}
