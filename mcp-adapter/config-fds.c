/* The fd accountant's plan from the flags (config.h): how much of RLIMIT_NOFILE the server
 * keeps for itself, how much HTTP gets and how much the runs' egress proxies share.
 *
 * The split of the limit L, decided once at start:
 *   reserve  64, plus 32 per --max-concurrent run and 2 per --max-sessions session: the
 *            listener, the event loop, the logs, the resolver, each run's pipes, log files,
 *            namespace and handover fds, each session's workspace; never handed out;
 *   http     with --listen, libmicrohttpd's connection limit: a quarter of the rest, at most
 *            1024 (each connection is one fd);
 *   pool     the rest, shared by the runs' egress proxies: at most --run-fds for one run and
 *            --tenant-fds for the runs of one tenant at once (0: half the pool with --listen,
 *            all of it on stdio). */
#include <errno.h>
#include <stdio.h>

#include "config.h"

#define FDS_RESERVE_BASE 64u
#define FDS_PER_RUN_FIXED 32u
#define FDS_PER_SESSION 2u
#define FDS_HTTP_MAX 1024u
#define FDS_RUN_DEFAULT 512u
/* At least a few HTTP clients and proxied connections beside the reserve. */
#define FDS_BEYOND_RESERVE 64u

mcp_fds_plan
mcp_config_fds_plan(const mcp_config *cfg, unsigned limit)
{
        mcp_fds_plan s = { .reserve = FDS_RESERVE_BASE + FDS_PER_RUN_FIXED * cfg->max_concurrent +
                                      FDS_PER_SESSION * cfg->max_sessions };
        unsigned rest = limit > s.reserve ? limit - s.reserve : 0;
        if (cfg->listen)
                s.http = rest / 4 < FDS_HTTP_MAX ? rest / 4 : FDS_HTTP_MAX;
        s.pool = rest - s.http;
        s.per_run = cfg->run_fds ? cfg->run_fds : FDS_RUN_DEFAULT;
        s.per_tenant = cfg->tenant_fds ? cfg->tenant_fds : cfg->listen ? s.pool / 2 : s.pool;
        if (s.per_run > s.pool)
                s.per_run = s.pool;
        if (s.per_tenant > s.pool)
                s.per_tenant = s.pool;
        return s;
}

int
mcp_config_fds_init(const mcp_config *cfg, mcp_fds *f, msp_err *err)
{
        unsigned started_with, limit;
        *f = (mcp_fds){ 0 };
        int r = mcp_fds_raise(&started_with, &limit, err);
        if (r < 0)
                return r;
        mcp_fds_plan s = mcp_config_fds_plan(cfg, limit);
        if (limit < s.reserve + FDS_BEYOND_RESERVE)
                return msp_err_set(err, EMFILE, "RLIMIT_NOFILE %u (hard) is too low: the server "
                                   "keeps %u fds for itself (--max-concurrent %u, --max-sessions "
                                   "%u) and needs %u more; raise the hard limit or lower those",
                                   limit, s.reserve, cfg->max_concurrent, cfg->max_sessions,
                                   FDS_BEYOND_RESERVE);
        mcp_fds_init(f, started_with, limit, &s);
        return 0;
}

void
mcp_config_fds_check(const mcp_config *cfg, FILE *out)
{
        unsigned soft, limit;
        if (mcp_fds_limits(&soft, &limit) < 0)
                return;
        mcp_fds_plan s = mcp_config_fds_plan(cfg, limit);
        bool ok = limit >= s.reserve + FDS_BEYOND_RESERVE;
        fprintf(out, "%-8s %-14s RLIMIT_NOFILE soft %u, hard %u (the soft one is raised to it); "
                     "reserved %u, HTTP connections %u, egress proxies %u (per run %u, per tenant %u)\n",
                ok ? "ok" : "MISSING", "fds", soft, limit, s.reserve, s.http,
                s.pool, s.per_run, s.per_tenant);
}
