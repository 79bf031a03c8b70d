/* Counters of the HTTP transport's /metrics (Prometheus text format 0.0.4): runs by
 * language and outcome, their durations, HTTP responses by status, runs per tenant. Every
 * function takes a NULL metrics (stdio keeps none). Owner: metrics.c. */
#pragma once

#include <stddef.h>
#include <stdint.h>

typedef struct mcp_metrics mcp_metrics;

typedef enum mcp_outcome {
        MCP_OUTCOME_OK,                 /* exit status 0 */
        MCP_OUTCOME_ERROR,              /* another status, a signal, or no sandbox */
        MCP_OUTCOME_TIMEOUT,
        MCP_OUTCOME_OOM,
        MCP_OUTCOME_CANCELLED,          /* by the client, or its connection went away */
        MCP_OUTCOME_N,
} mcp_outcome;

/* "ok", "error", "timeout", "oom", "cancelled" (/metrics and the audit log). */
const char *mcp_outcome_name(mcp_outcome o);

/* The gauges, read when /metrics is asked. */
typedef struct mcp_gauges {
        unsigned runs_running, runs_queued;
        size_t http_sessions, sandbox_sessions;
} mcp_gauges;

int mcp_metrics_new(mcp_metrics **ret);
mcp_metrics *mcp_metrics_free(mcp_metrics *m);
/* A run that ended; tenant may be NULL. duration_ms is not observed for cancelled runs. */
void mcp_metrics_run(mcp_metrics *m, const char *language, mcp_outcome outcome,
                     uint64_t duration_ms, const char *tenant);
void mcp_metrics_http(mcp_metrics *m, unsigned status);
/* The exposition, malloc'd. */
int mcp_metrics_format(const mcp_metrics *m, const mcp_gauges *g, char **ret, size_t *ret_len);
