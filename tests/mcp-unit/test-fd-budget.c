/* mcp-adapter/base/fd-budget.c and config-fds.c: the soft RLIMIT_NOFILE raised to the hard
 * one, the split of the limit (reserve, HTTP, the proxies' pool), and the run, tenant and
 * pool budgets each refusing the fd past it and taking it again once one is given back. */
#include <errno.h>
#include <string.h>
#include <sys/resource.h>

#include "tests/lib/tap.h"
#include "base/fd-budget.h"
#include "config.h"
#include "oci/macros.h"

static mcp_config
config(const char *listen, unsigned run_fds, unsigned tenant_fds)
{
        return (mcp_config){ .max_concurrent = 2, .max_sessions = 2, .listen = listen,
                             .run_fds = run_fds, .tenant_fds = tenant_fds };
}

TEST(raises_and_splits)
{
        struct rlimit rl;
        ASSERT_OK(getrlimit(RLIMIT_NOFILE, &rl) < 0 ? -errno : 0);
        if (rl.rlim_max < 1024) {
                tap_skip("raises_and_splits", "the hard RLIMIT_NOFILE is below 1024");
                return;
        }
        struct rlimit low = { .rlim_cur = 100, .rlim_max = 1024 };
        ASSERT_OK(setrlimit(RLIMIT_NOFILE, &low) < 0 ? -errno : 0);
        mcp_config cfg = config("127.0.0.1:0", 0, 0);
        mcp_fds f;
        msp_err err = { 0 };
        ASSERT_OK_ERR(mcp_config_fds_init(&cfg, &f, &err), err);
        ASSERT_EQ_U64(f.started_with, 100);
        ASSERT_EQ_U64(f.limit, 1024);
        ASSERT_OK(getrlimit(RLIMIT_NOFILE, &low) < 0 ? -errno : 0);
        ASSERT_EQ_U64(low.rlim_cur, 1024);
        /* 64 + 32 x 2 runs + 2 x 2 sessions; a quarter of the rest for HTTP. */
        ASSERT_EQ_U64(f.reserve, 132);
        ASSERT_EQ_U64(f.http, 223);
        ASSERT_EQ_U64(f.pool, 669);
        ASSERT_EQ_U64(f.per_run, 512);
        ASSERT_EQ_U64(f.per_tenant, 334);
        mcp_fds_done(&f);
        /* stdio: no HTTP share, one caller may have the whole pool. */
        cfg = config(NULL, 0, 0);
        ASSERT_OK_ERR(mcp_config_fds_init(&cfg, &f, &err), err);
        ASSERT_EQ_U64(f.http, 0);
        ASSERT_EQ_U64(f.pool, 892);
        ASSERT_EQ_U64(f.per_tenant, 892);
        mcp_fds_done(&f);
        /* Too low for the reserve: refused, naming the numbers. */
        cfg = config(NULL, 0, 0);
        cfg.max_concurrent = 40;
        ASSERT_EQ_INT(mcp_config_fds_init(&cfg, &f, &err), -EMFILE);
        ASSERT_TRUE(strstr(err.msg, "RLIMIT_NOFILE 1024 (hard) is too low") != NULL);
        (void) setrlimit(RLIMIT_NOFILE, &rl);
}

TEST(budgets)
{
        mcp_fds f = { .pool = 10, .per_run = 5, .per_tenant = 6 };
        mcp_fds_share a1, a2, b;
        char why[160];
        ASSERT_OK(mcp_fds_share_open(&f, "alice", &a1));
        ASSERT_OK(mcp_fds_share_open(&f, "alice", &a2));
        ASSERT_OK(mcp_fds_share_open(&f, NULL, &b));
        for (int i = 0; i < 5; i++)
                ASSERT_TRUE(mcp_fds_take(&a1, why, sizeof why));
        ASSERT_FALSE(mcp_fds_take(&a1, why, sizeof why));
        ASSERT_STREQ(why, "the run's fd budget (5, --run-fds) is spent");
        ASSERT_TRUE(mcp_fds_take(&a2, why, sizeof why));
        ASSERT_FALSE(mcp_fds_take(&a2, why, sizeof why));
        ASSERT_STREQ(why, "the tenant's fd budget (6, --tenant-fds) is spent");
        for (int i = 0; i < 4; i++)
                ASSERT_TRUE(mcp_fds_take(&b, why, sizeof why));
        ASSERT_FALSE(mcp_fds_take(&b, why, sizeof why));
        ASSERT_STREQ(why, "the server's fds for egress (10) are spent");
        ASSERT_EQ_U64(f.used, 10);
        /* Given back: taken again; a closed share returns everything it held. */
        mcp_fds_give(&a1);
        ASSERT_TRUE(mcp_fds_take(&a2, why, sizeof why));
        ASSERT_FALSE(mcp_fds_take(&b, why, sizeof why));
        mcp_fds_share_close(&a1);
        ASSERT_EQ_U64(f.used, 6);
        mcp_fds_share_close(&a2);
        mcp_fds_share_close(&b);
        ASSERT_EQ_U64(f.used, 0);
        ASSERT_NULL(f.tenants);
        /* No accountant (unit tests of the proxy): everything is taken. */
        mcp_fds_share none;
        ASSERT_OK(mcp_fds_share_open(NULL, "x", &none));
        ASSERT_TRUE(mcp_fds_take(&none, why, sizeof why));
        mcp_fds_share_close(&none);
}

int
main(void)
{
        RUN(raises_and_splits);
        RUN(budgets);
        return tap_done();
}
