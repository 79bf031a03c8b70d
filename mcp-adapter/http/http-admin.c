/* The HTTP transport's operations beside serving requests (see http-admin.h): the tenants'
 * quotas, the probes and metrics, the 401 challenge, the TLS, token and OAuth key files,
 * the audit log's HTTP records. */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "http/auth.h"
#include "http/http-admin.h"
#include "http/http-daemon.h"
#include "http/http-exchange.h"
#include "http/http-stream.h"
#include "http/oauth.h"
#include "mcp/mcp.h"
#include "observe/observe.h"
#include "oci/oci.h"

/* ---- tenants' quotas ---- */

/* Runs a tenant started in the current 60 s window (runs_per_minute). */
struct rate_window {
        char tenant[MCP_TENANT_MAX + 1];
        uint64_t start;
        unsigned count;
        struct rate_window *next;
};

static rate_window *
window_of(mcp_http *h, const char *tenant)
{
        for (rate_window *w = h->windows; w; w = w->next)
                if (strcmp(w->tenant, tenant) == 0)
                        return w;
        rate_window *w = calloc(1, sizeof *w);
        if (!w)
                return NULL;
        snprintf(w->tenant, sizeof w->tenant, "%s", tenant);
        w->next = h->windows;
        h->windows = w;
        return w;
}

/* The admission hook of every HTTP session: the tenant's quotas from --auth-tokens, over
 * all of its HTTP sessions. */
int
mcp_http_admit(mcp_server *srv, mcp_admit what, char *msg, size_t size, void *data)
{
        http_session *s = data;
        mcp_http *h = s->http;
        mcp_quota q = mcp_auth_quota(h->auth, s->tenant);
        if (what == MCP_ADMIT_SESSION) {
                if (!q.sessions)
                        return 0;
                mcp_owners_prune_sessions(h->owners, mcp_engine_sessions(h->engine));
                if (mcp_owners_count(h->owners, s->tenant, "s-") < q.sessions)
                        return 0;
                snprintf(msg, size, "session_create: tenant %s has its quota of %u live sessions; close one first",
                         s->tenant, q.sessions);
                return -EDQUOT;
        }
        if (q.concurrent_runs) {
                size_t n = 0;
                for (http_session *o = h->sessions; o; o = o->next)
                        if (strcmp(o->tenant, s->tenant) == 0)
                                n += mcp_tools_in_flight(o->srv);
                if (n >= q.concurrent_runs) {
                        snprintf(msg, size, "run_code: tenant %s has its quota of %u runs at once; retry when one ends",
                                 s->tenant, q.concurrent_runs);
                        return -EDQUOT;
                }
        }
        if (q.runs_per_minute) {
                rate_window *w = window_of(h, s->tenant);
                uint64_t now = mcp_now_usec();
                if (!w)
                        return -ENOMEM;
                if (now - w->start >= 60000000ull) {
                        w->start = now;
                        w->count = 0;
                }
                if (w->count >= q.runs_per_minute) {
                        snprintf(msg, size, "run_code: tenant %s has its quota of %u runs per minute; retry in %" PRIu64 " s",
                                 s->tenant, q.runs_per_minute, (uint64_t) ((w->start + 60000000ull - now) / 1000000 + 1));
                        return -EDQUOT;
                }
                w->count++;
        }
        (void) srv;
        return 0;
}

unsigned
mcp_http_session_quota(const mcp_http *h, const char *tenant)
{
        if (!h->auth && !h->oauth)
                return 0;
        unsigned q = mcp_auth_quota(h->auth, tenant).mcp_sessions;
        return q ? q : h->cfg->http_tenant_sessions;
}

void
mcp_http_free_windows(mcp_http *h)
{
        while (h->windows) {
                rate_window *w = h->windows;
                h->windows = w->next;
                free(w);
        }
}

/* ---- probes and metrics ---- */

/* /readyz: runs can start (the runtime is there, the queue has room). */
enum MHD_Result
mcp_http_reply_ready(http_exchange *x)
{
        mcp_http *h = x->http;
        unsigned running, queued;
        mcp_engine_load(h->engine, &running, &queued);
        unsigned max = h->cfg->max_concurrent ? h->cfg->max_concurrent : 1;
        const char *why = h->draining ? "the server is stopping\n"
                          : access(h->cfg->runtime_path, X_OK) < 0 ? "the runtime is not executable\n"
                          : running >= max && queued >= h->cfg->max_queue ? "the run queue is full\n"
                                                                           : NULL;
        if (why)
                return mcp_http_reply(x, 503, "text/plain", why, strlen(why), NULL);
        return mcp_http_reply(x, 200, "text/plain", "ready\n", 6, NULL);
}

enum MHD_Result
mcp_http_reply_metrics(http_exchange *x)
{
        mcp_http *h = x->http;
        mcp_gauges g = { .http_sessions = h->n_sessions };
        mcp_engine_load(h->engine, &g.runs_running, &g.runs_queued);
        _cleanup_free_ mcp_session_info *list = NULL;
        msp_err err = { 0 };
        mcp_session_store *st = mcp_engine_sessions(h->engine);
        if (!st || mcp_session_list(st, &list, &g.sandbox_sessions, &err) < 0)
                g.sandbox_sessions = 0;
        _cleanup_free_ char *text = NULL;
        size_t len = 0;
        if (mcp_metrics_format(h->metrics, &g, &text, &len) < 0)
                return MHD_NO;
        return mcp_http_reply(x, 200, "text/plain; version=0.0.4", text, len, NULL);
}

/* 401 with the challenge (RFC 6750): error="invalid_token" when a token was presented;
 * with OAuth, where the protected-resource metadata is (RFC 9728 §5.1). */
enum MHD_Result
mcp_http_reply_unauthorized(http_exchange *x, bool presented)
{
        mcp_http *h = x->http;
        _cleanup_free_ char *challenge = NULL;
        if (asprintf(&challenge, "Bearer realm=\"msp-mcp\"%s%s%s%s",
                     h->oauth ? ", resource_metadata=\"" : "",
                     h->oauth ? mcp_oauth_metadata_url(h->oauth) : "", h->oauth ? "\"" : "",
                     presented ? ", error=\"invalid_token\"" : "") < 0)
                return MHD_NO;
        struct MHD_Response *resp = MHD_create_response_from_buffer(13, (void *) "unauthorized\n",
                                                                    MHD_RESPMEM_PERSISTENT);
        if (!resp)
                return MHD_NO;
        (void) MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain");
        (void) MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE, challenge);
        enum MHD_Result r = mcp_http_queue(x, 401, resp);
        MHD_destroy_response(resp);
        x->replied = true;
        return r;
}

/* ---- files: TLS, tokens, OAuth keys ---- */

/* --auth-tokens and the --oauth-* flags. */
int
mcp_http_load_auth(mcp_http *h, msp_err *err)
{
        int r = h->cfg->auth_tokens ? mcp_auth_load(h->cfg->auth_tokens, &h->auth, err) : 0;
        return r < 0 ? r : mcp_oauth_load(h->cfg, &h->oauth, err);
}

#define PEM_MAX (1024 * 1024)

/* A PEM file, NUL-terminated. */
static int
read_pem(const char *flag, const char *path, char **ret, msp_err *err)
{
        _cleanup_fclose_ FILE *f = fopen(path, "re");
        if (!f)
                return msp_err_sys(err, errno, "%s %s", flag, path);
        _cleanup_free_ char *buf = malloc(PEM_MAX + 1);
        if (!buf)
                return msp_err_set(err, ENOMEM, "out of memory");
        size_t n = fread(buf, 1, PEM_MAX + 1, f);
        if (ferror(f) || n == 0 || n > PEM_MAX)
                return msp_err_set(err, EINVAL, "%s %s: expected a PEM file of at most 1 MiB", flag, path);
        buf[n] = '\0';
        if (!strstr(buf, "-----BEGIN "))
                return msp_err_set(err, EINVAL, "%s %s: not PEM (no -----BEGIN line)", flag, path);
        *ret = TAKE_PTR(buf);
        return 0;
}

/* --tls-cert and --tls-key: both or neither. */
int
mcp_http_load_tls(mcp_http *h, msp_err *err)
{
        const mcp_config *cfg = h->cfg;
        if (!cfg->tls_cert && !cfg->tls_key)
                return 0;
        if (!cfg->tls_cert || !cfg->tls_key)
                return msp_err_set(err, EINVAL, "--tls-cert and --tls-key go together: %s is missing",
                                   cfg->tls_cert ? "--tls-key" : "--tls-cert");
        int r = read_pem("--tls-cert", cfg->tls_cert, &h->tls_cert, err);
        return r < 0 ? r : read_pem("--tls-key", cfg->tls_key, &h->tls_key, err);
}

/* ---- the audit log ---- */

static void
audit_request(oci_jw *w, http_exchange *x)
{
        char addr[INET6_ADDRSTRLEN + 8];
        mcp_http_peer(x->conn, addr, sizeof addr);
        mcp_audit_str(w, "transport", "http");
        mcp_audit_str(w, "tenant", x->tenant[0] ? x->tenant : NULL);
        mcp_audit_str(w, "mcp_session", x->sid[0] ? x->sid : NULL);
        mcp_audit_str(w, "remote", addr[0] ? addr : NULL);
        mcp_audit_str(w, "method", x->method);
        mcp_audit_str(w, "path", x->path);
}

void
mcp_http_audit_access(http_exchange *x, bool completed)
{
        mcp_audit *a = x->http->log->audit;
        oci_jw *w = mcp_audit_begin(a, "http");
        if (!w)
                return;
        audit_request(w, x);
        mcp_audit_uint(w, "status", x->status);
        mcp_audit_uint(w, "bytes_in", x->len);
        mcp_audit_uint(w, "bytes_out", x->bytes_out);
        mcp_audit_uint(w, "duration_ms", (mcp_now_usec() - x->start_usec) / 1000);
        /* The connection ended before the response was sent in full. */
        mcp_audit_bool(w, "completed", completed);
        mcp_audit_end(a, w);
}

void
mcp_http_audit_auth(http_exchange *x, const char *reason)
{
        mcp_audit *a = x->http->log->audit;
        oci_jw *w = mcp_audit_begin(a, "auth_failure");
        audit_request(w, x);
        mcp_audit_str(w, "reason", reason);
        mcp_audit_end(a, w);
}
