/* The fd accountant (fd-budget.h). */
#include "base/fd-budget.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "oci/oci.h"

struct mcp_fds_tenant {
        mcp_fds_tenant *next;
        unsigned used, shares;
        char name[];                    /* "" for the stdio caller */
};

static unsigned
clamp_rlim(rlim_t v)
{
        return v == RLIM_INFINITY || v > (1u << 30) ? 1u << 30 : (unsigned) v;
}

int
mcp_fds_limits(unsigned *ret_soft, unsigned *ret_hard)
{
        struct rlimit rl;
        if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
                return -errno;
        *ret_soft = clamp_rlim(rl.rlim_cur);
        *ret_hard = clamp_rlim(rl.rlim_max);
        return 0;
}

int
mcp_fds_raise(unsigned *ret_started_with, unsigned *ret_limit, msp_err *err)
{
        struct rlimit rl;
        if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
                return msp_err_sys(err, errno, "getrlimit RLIMIT_NOFILE");
        *ret_started_with = clamp_rlim(rl.rlim_cur);
        if (rl.rlim_cur != rl.rlim_max) {
                rl.rlim_cur = rl.rlim_max;
                if (setrlimit(RLIMIT_NOFILE, &rl) < 0 && getrlimit(RLIMIT_NOFILE, &rl) < 0)
                        return msp_err_sys(err, errno, "getrlimit RLIMIT_NOFILE");
        }
        *ret_limit = clamp_rlim(rl.rlim_cur);
        return 0;
}

void
mcp_fds_init(mcp_fds *f, unsigned started_with, unsigned limit, const mcp_fds_plan *plan)
{
        *f = (mcp_fds){
                .limit = limit,
                .started_with = started_with,
                .reserve = plan->reserve,
                .http = plan->http,
                .pool = plan->pool,
                .per_run = plan->per_run,
                .per_tenant = plan->per_tenant,
        };
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
