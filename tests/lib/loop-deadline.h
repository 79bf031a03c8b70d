/* The bound on a test's loop: mcp_loop_run() until a callback exits the loop, or until
 * the deadline passes. An add-on to tests/lib/tap.h for the mcp-unit tests that drive
 * msp-mcp's loop. */
#pragma once

#include <errno.h>
#include <stdint.h>

#include "base/loop.h"

static int
test_deadline_passed(mcp_loop *loop, void *data)
{
        *(mcp_timer **) data = NULL;    /* freed after this returns */
        mcp_loop_exit(loop, -ETIMEDOUT);
        return 0;
}

/* mcp_loop_run()'s result, or -ETIMEDOUT after usec. */
static inline int
test_loop_run_within(mcp_loop *loop, uint64_t usec)
{
        mcp_timer *t = NULL;
        int r = mcp_loop_add_timer(loop, usec, test_deadline_passed, &t, &t);
        if (r < 0)
                return r;
        r = mcp_loop_run(loop);
        mcp_timer_cancel(loop, t);
        return r;
}
