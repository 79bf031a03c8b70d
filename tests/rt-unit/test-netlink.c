/* rt_netlink_loopback_up in a fresh network namespace. */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/netlink.h"

#include "tests/lib/tap.h"

static short
lo_flags(void)
{
        struct ifreq ifr = { 0 };
        int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

        CHECK(s >= 0);
        snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "lo");
        CHECK(ioctl(s, SIOCGIFFLAGS, &ifr) == 0);
        close(s);
        return ifr.ifr_flags;
}

static void
test_loopback_up(void)
{
        msp_err e;

        CHECK(unshare(CLONE_NEWNET) == 0);
        CHECK(!(lo_flags() & IFF_UP));
        CHECK_OK(rt_netlink_loopback_up(&e), e);
        CHECK(lo_flags() & IFF_UP);
        /* idempotent */
        CHECK_OK(rt_netlink_loopback_up(&e), e);

        /* and it carries traffic: a TCP connect to ourselves over 127.0.0.1 */
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t len = sizeof sa;
        int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        int c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        CHECK(l >= 0 && c >= 0);
        CHECK(bind(l, (struct sockaddr *) &sa, sizeof sa) == 0 && listen(l, 1) == 0);
        CHECK(getsockname(l, (struct sockaddr *) &sa, &len) == 0);
        CHECK(connect(c, (struct sockaddr *) &sa, sizeof sa) == 0);
        close(c);
        close(l);
}

static void
test_unprivileged_fails_cleanly(void)
{
        msp_err e;

        CHECK(unshare(CLONE_NEWNET) == 0);
        CHECK(setresuid(65534, 65534, 65534) == 0);
        CHECK_ERR(rt_netlink_loopback_up(&e), e, EPERM, "set lo up: Operation not permitted");
}

int
main(void)
{
        static const tap_fork_test tests[] = {
                { "lo is brought up in a new netns", test_loopback_up },
                { "without CAP_NET_ADMIN: a clear error", test_unprivileged_fails_cleanly },
        };
        if (geteuid() != 0) {
                printf("1..0 # SKIP needs root\n");
                return 0;
        }
        return tap_run_table(tests, ARRAY_SIZE(tests));
}
