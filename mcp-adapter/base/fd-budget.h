/* File descriptors: the process's soft RLIMIT_NOFILE raised to the hard limit at start,
 * and one accountant of that limit split by a plan its caller decides once (config-fds.c
 * from the flags), so that what a sandbox can make the server open (its egress proxy's
 * client and upstream connections) never takes the fds the server itself needs. Owner:
 * fd-budget.c; asked by proxy.c (every fd it takes), http.c (the HTTP share).
 *
 * The plan splits the limit into a reserve (never handed out), an HTTP share (each
 * connection is one fd) and a pool shared by the runs' egress proxies: one fd per client
 * connection and one per upstream connection, at most per_run for one run and per_tenant
 * for the runs of one tenant at once. A proxy whose budget is spent closes the new
 * connection at once. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "oci/oci.h"

typedef struct mcp_fds_plan {
        unsigned reserve, http, pool;   /* the split of the limit */
        unsigned per_run, per_tenant;   /* of the pool */
} mcp_fds_plan;

typedef struct mcp_fds_tenant mcp_fds_tenant;

typedef struct mcp_fds {
        unsigned limit;                 /* the soft RLIMIT_NOFILE now */
        unsigned started_with;          /* the soft limit the process was started with */
        unsigned reserve, http, pool;
        unsigned per_run, per_tenant;
        unsigned used;                  /* of the pool */
        mcp_fds_tenant *tenants;        /* with a share open or fds taken */
} mcp_fds;

/* One run's share of the pool (its proxy's). */
typedef struct mcp_fds_share {
        mcp_fds *fds;                   /* borrowed; NULL: no budget (unit tests) */
        mcp_fds_tenant *tenant;
        unsigned used;
} mcp_fds_share;

/* The soft and hard RLIMIT_NOFILE now, each at most 2^30: 0 or -errno. */
int mcp_fds_limits(unsigned *ret_soft, unsigned *ret_hard);
/* Raises the soft limit to the hard one: *ret_started_with the soft limit before, *ret_limit
 * the one now. */
int mcp_fds_raise(unsigned *ret_started_with, unsigned *ret_limit, msp_err *err);
/* The accountant of limit (raised from started_with) split by plan. */
void mcp_fds_init(mcp_fds *f, unsigned started_with, unsigned limit, const mcp_fds_plan *plan);
void mcp_fds_done(mcp_fds *f);
/* A run's share, charged to tenant (NULL: the stdio caller). -ENOMEM. */
int mcp_fds_share_open(mcp_fds *f, const char *tenant, mcp_fds_share *ret);
/* Gives back what the share still holds. */
void mcp_fds_share_close(mcp_fds_share *s);
/* One more fd for the share: false when the run's, its tenant's or the pool's budget is
 * spent; why says which. */
bool mcp_fds_take(mcp_fds_share *s, char *why, size_t size);
void mcp_fds_give(mcp_fds_share *s);
