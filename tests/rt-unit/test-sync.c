/* The parent <-> init channel (sync.c) when one side exits with a message of the other's
 * unread, as the init does when it fails before reading GO: the kernel resets the channel,
 * and the message the exited side sent first (why it failed) must still be what the reader
 * gets, not ECONNRESET. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "oci/macros.h"
#include "tests/lib/tap.h"
#include "lib/sync.h"

static msp_err e;

/* A channel on which `gone` sent an error, then closed with `reader`'s message unread. */
static void
reset_after_error(int fds[2], const char *why)
{
        msp_err sent = { .errnum = EINVAL };
        CHECK_OK(rt_sync_pair(fds, &e), e);
        snprintf(sent.msg, sizeof sent.msg, "%s", why);
        CHECK(rt_sync_send(fds[1], RT_SYNC_ERROR, 0, &sent) == 0);
        CHECK(rt_sync_send(fds[0], RT_SYNC_GO, 42, NULL) == 0);
        CHECK(close(fds[1]) == 0);
}

static void
test_recv_after_reset(void)
{
        int fds[2];
        rt_sync_msg msg;
        reset_after_error(fds, "linux.uidMappings[0]: 0 200000 65536 is not a mapping");
        /* What drive_init does after GO: the init's error, then its EOF. */
        CHECK_ERR(rt_sync_expect(fds[0], RT_SYNC_READY, &msg, &e), e, EINVAL,
                  "linux.uidMappings[0]: 0 200000 65536 is not a mapping");
        CHECK_ERR(rt_sync_recv(fds[0], &msg, &e), e, EPIPE, "the container init exited");
        close(fds[0]);
}

static void
test_expect_fds_after_reset(void)
{
        int fds[2], got[1];
        size_t n = 9;
        rt_sync_msg msg;
        reset_after_error(fds, "the runtime failed");
        CHECK_ERR(rt_sync_expect_fds(fds[0], RT_SYNC_CGROUP, &msg, got, 1, &n, &e), e, EINVAL,
                  "the runtime failed");
        CHECK(n == 0);
        close(fds[0]);
}

/* Without a message of the exited side, the reader still learns it is gone. */
static void
test_reset_without_message(void)
{
        int fds[2];
        rt_sync_msg msg;
        CHECK_OK(rt_sync_pair(fds, &e), e);
        CHECK(rt_sync_send(fds[0], RT_SYNC_GO, 1, NULL) == 0);
        CHECK(close(fds[1]) == 0);
        CHECK_ERR(rt_sync_recv(fds[0], &msg, &e), e, EPIPE, "the container init exited");
        close(fds[0]);
}

int
main(void)
{
        static const tap_fork_test tests[] = {
                { "recv: the error of a side that left ours unread", test_recv_after_reset },
                { "expect_fds: the same from the runtime's side", test_expect_fds_after_reset },
                { "recv: EOF of a side that left ours unread and said nothing", test_reset_without_message },
        };
        return tap_run_table(tests, ARRAY_SIZE(tests));
}
