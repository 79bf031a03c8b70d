/* /metrics (see metrics.h): small lists, since languages, status codes and tenants are few. */
#include "observe/metrics.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oci/oci.h"

static const char *const outcome_names[MCP_OUTCOME_N] = {
        [MCP_OUTCOME_OK] = "ok", [MCP_OUTCOME_ERROR] = "error", [MCP_OUTCOME_TIMEOUT] = "timeout",
        [MCP_OUTCOME_OOM] = "oom", [MCP_OUTCOME_CANCELLED] = "cancelled",
};

const char *
mcp_outcome_name(mcp_outcome o)
{
        return o < MCP_OUTCOME_N ? outcome_names[o] : "error";
}

/* Upper bounds of the duration histogram, in milliseconds. */
static const uint64_t bucket_ms[] = { 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000 };

typedef struct counter {
        char *name;                     /* a language, a tenant */
        uint64_t n[MCP_OUTCOME_N];
        struct counter *next;
} counter;

struct mcp_metrics {
        counter *languages, *tenants;
        uint64_t buckets[ARRAY_SIZE(bucket_ms)];
        uint64_t duration_count, duration_sum_ms;
        uint64_t status[600];
};

int
mcp_metrics_new(mcp_metrics **ret)
{
        *ret = calloc(1, sizeof **ret);
        return *ret ? 0 : -ENOMEM;
}

static void
free_list(counter *c)
{
        while (c) {
                counter *next = c->next;
                free(c->name);
                free(c);
                c = next;
        }
}

mcp_metrics *
mcp_metrics_free(mcp_metrics *m)
{
        if (m) {
                free_list(m->languages);
                free_list(m->tenants);
        }
        free(m);
        return NULL;
}

static counter *
counter_of(counter **list, const char *name)
{
        for (counter *c = *list; c; c = c->next)
                if (strcmp(c->name, name) == 0)
                        return c;
        counter *c = calloc(1, sizeof *c);
        if (!c || !(c->name = strdup(name))) {
                free(c);
                return NULL;
        }
        c->next = *list;
        *list = c;
        return c;
}

void
mcp_metrics_run(mcp_metrics *m, const char *language, mcp_outcome outcome, uint64_t duration_ms,
                const char *tenant)
{
        if (!m || outcome >= MCP_OUTCOME_N)
                return;
        counter *c = counter_of(&m->languages, language ? language : "");
        if (c)
                c->n[outcome]++;
        c = tenant ? counter_of(&m->tenants, tenant) : NULL;
        if (c)
                c->n[outcome]++;
        if (outcome == MCP_OUTCOME_CANCELLED)
                return;
        for (size_t i = 0; i < ARRAY_SIZE(bucket_ms); i++)
                if (duration_ms <= bucket_ms[i])
                        m->buckets[i]++;
        m->duration_count++;
        m->duration_sum_ms += duration_ms;
}

void
mcp_metrics_http(mcp_metrics *m, unsigned status)
{
        if (m && status < ARRAY_SIZE(m->status))
                m->status[status]++;
}

/* A label value: the names here are languages and tenants (no quotes or backslashes can
 * occur), escaped anyway as the format says. */
static void
label(FILE *f, const char *s)
{
        for (; *s; s++) {
                if (*s == '\\' || *s == '"')
                        fputc('\\', f);
                if (*s == '\n')
                        fputs("\\n", f);
                else
                        fputc(*s, f);
        }
}

static void
runs_by(FILE *f, const char *metric, const char *key, const counter *list)
{
        for (const counter *c = list; c; c = c->next)
                for (size_t o = 0; o < MCP_OUTCOME_N; o++) {
                        fprintf(f, "%s{%s=\"", metric, key);
                        label(f, c->name);
                        fprintf(f, "\",outcome=\"%s\"} %" PRIu64 "\n", outcome_names[o], c->n[o]);
                }
}

int
mcp_metrics_format(const mcp_metrics *m, const mcp_gauges *g, char **ret, size_t *ret_len)
{
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        if (!f)
                return -ENOMEM;
        fputs("# HELP msp_mcp_runs_total run_code runs that ended, by language and outcome.\n"
              "# TYPE msp_mcp_runs_total counter\n", f);
        runs_by(f, "msp_mcp_runs_total", "language", m->languages);
        fputs("# HELP msp_mcp_tenant_runs_total run_code runs that ended, by tenant and outcome.\n"
              "# TYPE msp_mcp_tenant_runs_total counter\n", f);
        runs_by(f, "msp_mcp_tenant_runs_total", "tenant", m->tenants);
        fputs("# HELP msp_mcp_run_duration_seconds Wall clock of the runs that were not cancelled.\n"
              "# TYPE msp_mcp_run_duration_seconds histogram\n", f);
        for (size_t i = 0; i < ARRAY_SIZE(bucket_ms); i++)
                fprintf(f, "msp_mcp_run_duration_seconds_bucket{le=\"%g\"} %" PRIu64 "\n",
                        (double) bucket_ms[i] / 1000, m->buckets[i]);
        fprintf(f, "msp_mcp_run_duration_seconds_bucket{le=\"+Inf\"} %" PRIu64 "\n"
                   "msp_mcp_run_duration_seconds_sum %.3f\n"
                   "msp_mcp_run_duration_seconds_count %" PRIu64 "\n",
                m->duration_count, (double) m->duration_sum_ms / 1000, m->duration_count);
        fputs("# HELP msp_mcp_http_responses_total HTTP responses, by status code.\n"
              "# TYPE msp_mcp_http_responses_total counter\n", f);
        for (size_t s = 0; s < ARRAY_SIZE(m->status); s++)
                if (m->status[s])
                        fprintf(f, "msp_mcp_http_responses_total{code=\"%zu\"} %" PRIu64 "\n", s, m->status[s]);
        fprintf(f, "# HELP msp_mcp_runs_running Sandboxes running now.\n"
                   "# TYPE msp_mcp_runs_running gauge\n"
                   "msp_mcp_runs_running %u\n"
                   "# HELP msp_mcp_runs_queued Runs waiting for a free slot (--max-concurrent).\n"
                   "# TYPE msp_mcp_runs_queued gauge\n"
                   "msp_mcp_runs_queued %u\n"
                   "# HELP msp_mcp_http_sessions Live HTTP (MCP) sessions.\n"
                   "# TYPE msp_mcp_http_sessions gauge\n"
                   "msp_mcp_http_sessions %zu\n"
                   "# HELP msp_mcp_sandbox_sessions Live sandbox sessions (session_create).\n"
                   "# TYPE msp_mcp_sandbox_sessions gauge\n"
                   "msp_mcp_sandbox_sessions %zu\n",
                g->runs_running, g->runs_queued, g->http_sessions, g->sandbox_sessions);
        if (fclose(f) != 0) {
                free(buf);
                return -ENOMEM;
        }
        *ret = buf;
        *ret_len = len;
        return 0;
}
