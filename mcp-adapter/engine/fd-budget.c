/* The fd accountant (fd-budget.h). */
#include "engine/fd-budget.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "oci/macros.h"

struct mcp_fds_tenant {
        mcp_fds_tenant *next;
        unsigned used, shares;
        char name[];                    /* "" for the stdio caller */
};

typedef struct split {
        unsigned reserve, http, pool, per_run, per_tenant;
} split;

static unsigned
clamp_rlim(rlim_t v)
{
        return v == RLIM_INFINITY || v > (1u << 30) ? 1u << 30 : (unsigned) v;
}

static split
split_of(const mcp_config *cfg, unsigned limit)
{
        split s = { .reserve = MCP_FDS_RESERVE_BASE + MCP_FDS_PER_RUN_FIXED * cfg->max_concurrent +
                               MCP_FDS_PER_SESSION * cfg->max_sessions };
        unsigned rest = limit > s.reserve ? limit - s.reserve : 0;
        if (cfg->listen)
                s.http = rest / 4 < MCP_FDS_HTTP_MAX ? rest / 4 : MCP_FDS_HTTP_MAX;
        s.pool = rest - s.http;
        s.per_run = cfg->run_fds ? cfg->run_fds : MCP_FDS_RUN_DEFAULT;
        s.per_tenant = cfg->tenant_fds ? cfg->tenant_fds : cfg->listen ? s.pool / 2 : s.pool;
        if (s.per_run > s.pool)
                s.per_run = s.pool;
        if (s.per_tenant > s.pool)
                s.per_tenant = s.pool;
        return s;
}

int
mcp_fds_init(mcp_fds *f, const mcp_config *cfg, msp_err *err)
{
        *f = (mcp_fds){ 0 };
        struct rlimit rl;
        if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
                return msp_err_sys(err, errno, "getrlimit RLIMIT_NOFILE");
        f->started_with = clamp_rlim(rl.rlim_cur);
        if (rl.rlim_cur != rl.rlim_max) {
                rl.rlim_cur = rl.rlim_max;
                if (setrlimit(RLIMIT_NOFILE, &rl) < 0 && getrlimit(RLIMIT_NOFILE, &rl) < 0)
                        return msp_err_sys(err, errno, "getrlimit RLIMIT_NOFILE");
        }
        f->limit = clamp_rlim(rl.rlim_cur);
        split s = split_of(cfg, f->limit);
        /* At least a few HTTP clients and proxied connections beside the reserve. */
        if (f->limit < s.reserve + 64)
                return msp_err_set(err, EMFILE, "RLIMIT_NOFILE %u (hard) is too low: the server "
                                   "keeps %u fds for itself (--max-concurrent %u, --max-sessions "
                                   "%u) and needs 64 more; raise the hard limit or lower those",
                                   f->limit, s.reserve, cfg->max_concurrent, cfg->max_sessions);
        f->reserve = s.reserve;
        f->http = s.http;
        f->pool = s.pool;
        f->per_run = s.per_run;
        f->per_tenant = s.per_tenant;
        return 0;
}

void
mcp_fds_done(mcp_fds *f)
{
        while (f->tenants) {
                mcp_fds_tenant *t = f->tenants;
                f->tenants = t->next;
                free(t);
        }
}

int
mcp_fds_share_open(mcp_fds *f, const char *tenant, mcp_fds_share *ret)
{
        *ret = (mcp_fds_share){ .fds = f };
        if (!f)
                return 0;
        const char *name = tenant ? tenant : "";
        mcp_fds_tenant *t = f->tenants;
        while (t && strcmp(t->name, name) != 0)
                t = t->next;
        if (!t) {
                t = calloc(1, sizeof *t + strlen(name) + 1);
                if (!t)
                        return -ENOMEM;
                strcpy(t->name, name);
                t->next = f->tenants;
                f->tenants = t;
        }
        t->shares++;
        ret->tenant = t;
        return 0;
}

void
mcp_fds_share_close(mcp_fds_share *s)
{
        if (!s->fds || !s->tenant)
                return;
        while (s->used)
                mcp_fds_give(s);
        mcp_fds_tenant *t = s->tenant, **pp = &s->fds->tenants;
        s->tenant = NULL;
        if (--t->shares > 0)
                return;
        while (*pp != t)
                pp = &(*pp)->next;
        *pp = t->next;
        free(t);
}

bool
mcp_fds_take(mcp_fds_share *s, char *why, size_t size)
{
        mcp_fds *f = s->fds;
        if (!f)
                return true;
        if (s->used >= f->per_run)
                snprintf(why, size, "the run's fd budget (%u, --run-fds) is spent", f->per_run);
        else if (s->tenant->used >= f->per_tenant)
                snprintf(why, size, "the tenant's fd budget (%u, --tenant-fds) is spent",
                         f->per_tenant);
        else if (f->used >= f->pool)
                snprintf(why, size, "the server's fds for egress (%u) are spent", f->pool);
        else {
                s->used++;
                s->tenant->used++;
                f->used++;
                return true;
        }
        return false;
}

void
mcp_fds_give(mcp_fds_share *s)
{
        if (!s->fds || s->used == 0)
                return;
        s->used--;
        s->tenant->used--;
        s->fds->used--;
}

void
mcp_fds_check(const mcp_config *cfg, FILE *out)
{
        struct rlimit rl;
        if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
                return;
        unsigned limit = clamp_rlim(rl.rlim_max);
        split s = split_of(cfg, limit);
        bool ok = limit >= s.reserve + 64;
        fprintf(out, "%-8s %-14s RLIMIT_NOFILE soft %u, hard %u (the soft one is raised to it); "
                     "reserved %u, HTTP connections %u, egress proxies %u (per run %u, per tenant %u)\n",
                ok ? "ok" : "MISSING", "fds", clamp_rlim(rl.rlim_cur), limit, s.reserve, s.http,
                s.pool, s.per_run, s.per_tenant);
}
