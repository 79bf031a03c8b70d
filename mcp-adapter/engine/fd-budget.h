/* File descriptors: msp-mcp raises its soft RLIMIT_NOFILE to the hard limit at start, and
 * one accountant splits that limit so that what a sandbox can make msp-mcp open (its egress
 * proxy's client and upstream connections) never takes the fds the server itself needs to
 * accept an HTTP client, answer /healthz or start a run. Owner: fd-budget.c; asked by
 * proxy.c (every fd it takes), http.c (libmicrohttpd's connection limit), main.c.
 *
 * The split of the limit L, decided once at start:
 *   reserve  64, plus 32 per --max-concurrent run and 2 per --max-sessions session: the
 *            listener, the event loop, the logs, the resolver, each run's pipes, log files,
 *            namespace and handover fds, each session's workspace; never handed out;
 *   http     with --listen, libmicrohttpd's connection limit: a quarter of the rest, at most
 *            1024 (each connection is one fd);
 *   pool     the rest, shared by the runs' egress proxies: one fd per client connection and
 *            one per upstream connection, at most --run-fds for one run and --tenant-fds for
 *            the runs of one tenant at once (0: half the pool with --listen, all of it on
 *            stdio). A proxy whose budget is spent closes the new connection at once. */
#pragma once

#include <stdbool.h>
#include <stdio.h>

#include "config.h"
#include "oci/err.h"

#define MCP_FDS_RESERVE_BASE 64u
#define MCP_FDS_PER_RUN_FIXED 32u
#define MCP_FDS_PER_SESSION 2u
#define MCP_FDS_HTTP_MAX 1024u
#define MCP_FDS_RUN_DEFAULT 512u

typedef struct mcp_fds_tenant mcp_fds_tenant;

typedef struct mcp_fds {
        unsigned limit;                 /* the soft RLIMIT_NOFILE now */
        unsigned started_with;          /* the soft limit msp-mcp was started with */
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

/* Raises the soft limit to the hard one and splits it (cfg: --max-concurrent,
 * --max-sessions, --listen, --run-fds, --tenant-fds). -EMFILE naming the numbers when the
 * limit cannot hold the reserve and a pool. */
int mcp_fds_init(mcp_fds *f, const mcp_config *cfg, msp_err *err);
void mcp_fds_done(mcp_fds *f);
/* A run's share, charged to tenant (NULL: the stdio caller). -ENOMEM. */
int mcp_fds_share_open(mcp_fds *f, const char *tenant, mcp_fds_share *ret);
/* Gives back what the share still holds. */
void mcp_fds_share_close(mcp_fds_share *s);
/* One more fd for the share: false when the run's, its tenant's or the pool's budget is
 * spent; why says which. */
bool mcp_fds_take(mcp_fds_share *s, char *why, size_t size);
void mcp_fds_give(mcp_fds_share *s);
/* --check: the limits and the split, one line. */
void mcp_fds_check(const mcp_config *cfg, FILE *out);
