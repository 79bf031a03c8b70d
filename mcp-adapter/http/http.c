/* MCP Streamable HTTP (see http.h): libmicrohttpd in external-polling epoll mode, driven
 * from our loop (http-daemon.c).
 *
 * An exchange is one POST. Its message goes to its session's MCP server (http-session.c);
 * what the server says about the request (the response, the call's progress, log messages
 * while it runs) goes to the exchange: a response that comes before any notification is
 * answered as application/json, otherwise the exchange becomes a text/event-stream
 * (http-stream.c) that ends with the response. A GET opens the session's stream for
 * messages tied to no request, or resumes a stream with Last-Event-ID. Until there is
 * something to send the connection is suspended (http-exchange.c). */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <microhttpd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "base/base.h"
#include "http/auth.h"
#include "http/http-admin.h"
#include "http/http-daemon.h"
#include "http/http-exchange.h"
#include "http/http-listen.h"
#include "http/http-ports.h"
#include "http/http-session.h"
#include "http/http-stream.h"
#include "http/http-types.h"
#include "http/http.h"
#include "http/oauth.h"
#include "mcp/mcp.h"
#include "observe/observe.h"
#include "oci/oci.h"

#define CONNECTION_MEMORY (64u * 1024)  /* per connection: request line, headers, buffers */
#define PROBE_CONNECTIONS 64u           /* of --probe-listen */
#define SSE_BLOCK (16u * 1024)
#define ENDPOINT "/mcp"

/* ---- responses ---- */

/* An SSE response: x's stream (none: one that ends at once, a cancelled call's). */
static enum MHD_Result
reply_stream(http_exchange *x)
{
        struct MHD_Response *resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, SSE_BLOCK,
                                                                      mcp_http_stream_read, x, NULL);
        if (!resp)
                return MHD_NO;
        (void) MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "text/event-stream");
        (void) MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
        if (x->new_session)
                (void) MHD_add_response_header(resp, "Mcp-Session-Id", x->sid);
        enum MHD_Result r = mcp_http_queue(x, 200, resp);
        MHD_destroy_response(resp);
        x->replied = true;
        return r;
}

/* The exchange's request was handed to its session: answer what there is, or wait. */
static enum MHD_Result
reply_pending(http_exchange *x)
{
        if (x->client_gone)
                return mcp_http_reply(x, 500, NULL, "", 0, NULL);
        if (x->mode == X_JSON)
                return mcp_http_reply(x, 200, "application/json", x->out, x->olen, NULL);
        if (x->mode == X_PENDING && x->ended)
                return mcp_http_reply_error(x, 404, &x->id, MCP_RPC_INVALID_REQUEST, "Session ended");
        if (x->mode == X_PENDING && !x->answered) {
                mcp_http_suspend(x);
                return MHD_YES;
        }
        return reply_stream(x);
}

/* ---- requests ---- */

static const char *
header(http_exchange *x, const char *name)
{
        return MHD_lookup_connection_value(x->conn, MHD_HEADER_KIND, name);
}

/* An Origin from a page on this machine (any port), or one --allow-origin names. */
static bool
origin_allowed(mcp_http *h, const char *origin)
{
        const char *list = h->cfg->allow_origins;
        size_t n = strlen(origin);
        for (const char *p = list; p && *p;) {
                size_t l = strcspn(p, ",");
                if (l == n && strncmp(p, origin, n) == 0)
                        return true;
                p += l + (p[l] == ',');
        }
        const char *host = strncmp(origin, "http://", 7) == 0   ? origin + 7
                           : strncmp(origin, "https://", 8) == 0 ? origin + 8
                                                                 : NULL;
        static const char *const local[] = { "localhost", "127.0.0.1", "[::1]" };
        for (size_t i = 0; host && i < ARRAY_SIZE(local); i++) {
                size_t l = strlen(local[i]);
                if (strncmp(host, local[i], l) != 0)
                        continue;
                const char *rest = host + l;
                if (!*rest || (rest[0] == ':' && rest[1] && strspn(rest + 1, "0123456789") == strlen(rest + 1)))
                        return true;
        }
        return false;
}

static bool
content_type_json(const char *ct)
{
        if (!ct || strncasecmp(ct, "application/json", 16) != 0)
                return false;
        return ct[16] == '\0' || ct[16] == ';' || ct[16] == ' ';
}

/* "Authorization: Bearer TOKEN": a line of --auth-tokens, or a JWT of --oauth-issuer,
 * names the tenant; false and err saying why without one (never the token). */
static bool
authenticate(http_exchange *x, bool *presented, msp_err *err)
{
        mcp_http *h = x->http;
        *presented = false;
        if (!h->auth && !h->oauth)
                return true;
        const char *a = header(x, MHD_HTTP_HEADER_AUTHORIZATION);
        if (!a || strncasecmp(a, "Bearer ", 7) != 0) {
                (void) msp_err_set(err, EACCES, "no bearer token");
                return false;
        }
        *presented = true;
        const char *token = a + 7;
        while (*token == ' ')
                token++;
        const char *tenant = mcp_auth_tenant(h->auth, token, strlen(token));
        if (tenant) {
                snprintf(x->tenant, sizeof x->tenant, "%s", tenant);
                return true;
        }
        if (!h->oauth) {
                (void) msp_err_set(err, EACCES, "unknown token");
                return false;
        }
        return mcp_oauth_verify(h->oauth, token, strlen(token), x->tenant, err) == 0;
}

/* GET: the session's stream of messages tied to no request, or a stream resumed. */
static enum MHD_Result
open_stream(http_exchange *x)
{
        const char *accept = header(x, MHD_HTTP_HEADER_ACCEPT);
        if (!accept || (!strstr(accept, "text/event-stream") && !strstr(accept, "*/*")))
                return mcp_http_reply_error(x, 406, NULL, MCP_RPC_INVALID_REQUEST,
                                            "Not acceptable: a GET must accept text/event-stream");
        const char *sid = header(x, "Mcp-Session-Id");
        if (!sid)
                return mcp_http_reply_error(x, 400, NULL, MCP_RPC_INVALID_REQUEST,
                                            "Bad request: Mcp-Session-Id header missing");
        http_session *s = mcp_http_session_find(x->http, sid, x->tenant);
        if (!s)
                return mcp_http_reply_error(x, 404, NULL, MCP_RPC_INVALID_REQUEST, "Session not found");
        const char *pv = header(x, "MCP-Protocol-Version");
        if (pv && !mcp_version_known(pv))
                return mcp_http_reply_error(x, 400, NULL, MCP_RPC_INVALID_REQUEST,
                                            "Bad request: unsupported MCP-Protocol-Version");
        const char *why = NULL;
        unsigned status = mcp_http_stream_open_get(x, s, header(x, "Last-Event-ID"), &why);
        if (status)
                return mcp_http_reply_error(x, status, NULL, MCP_RPC_INVALID_REQUEST, why);
        s->last_used = mcp_now_usec();
        return reply_stream(x);
}

/* The first call for a request: what can be decided from the headers. */
static enum MHD_Result
start(http_exchange *x, const char *url, const char *method, const char *version)
{
        mcp_http *h = x->http;
        bool get = strcmp(method, "GET") == 0;
        /* The probes answer anyone (an orchestrator asks them without a token). */
        if (strcmp(url, "/healthz") == 0 && get)
                return mcp_http_reply(x, 200, "text/plain", "ok\n", 3, NULL);
        if (strcmp(url, "/readyz") == 0 && get)
                return mcp_http_reply_ready(x);
        if (h->oauth && get && mcp_oauth_metadata_path(h->oauth, url)) {
                size_t n;
                const char *doc = mcp_oauth_metadata(h->oauth, &n);
                return mcp_http_reply(x, 200, "application/json", doc, n, NULL);
        }
        bool metrics = strcmp(url, "/metrics") == 0 && get;
        if (x->dm->probe && !metrics)
                return mcp_http_reply(x, 404, "text/plain", "not found\n", 10, NULL);
        if (h->draining)
                return mcp_http_reply(x, 503, "text/plain", "the server is stopping\n", 23, NULL);
        bool port = mcp_http_port_path(url);
        if (strcmp(url, ENDPOINT) != 0 && !metrics && !port)
                return mcp_http_reply(x, 404, "text/plain", "not found\n", 10, NULL);
        bool presented;
        msp_err why = { 0 };
        if (!authenticate(x, &presented, &why)) {
                mcp_log(h->log, MCP_LOG_NOTICE, "HTTP request refused (401): %s", why.msg);
                mcp_http_audit_auth(x, why.msg);
                return mcp_http_reply_unauthorized(x, presented);
        }
        mcp_http_conn_trusted(x);
        if (port)
                return mcp_http_port_start(x, url, method, version);
        const char *origin = header(x, "Origin");
        if (origin && !origin_allowed(h, origin)) {
                mcp_log(h->log, MCP_LOG_NOTICE, "HTTP request from Origin %.200s refused", origin);
                return mcp_http_reply(x, 403, "text/plain", "origin not allowed\n", 19, NULL);
        }
        if (metrics)
                return mcp_http_reply_metrics(x);
        if (strcmp(method, "POST") == 0) {
                if (!content_type_json(header(x, MHD_HTTP_HEADER_CONTENT_TYPE)))
                        return mcp_http_reply(x, 415, "text/plain", "expected Content-Type: application/json\n",
                                     40, NULL);
                return MHD_YES;
        }
        if (strcmp(method, "DELETE") == 0) {
                const char *sid = header(x, "Mcp-Session-Id");
                if (!sid)
                        return mcp_http_reply_error(x, 400, NULL, MCP_RPC_INVALID_REQUEST,
                                                    "Bad request: Mcp-Session-Id header missing");
                http_session *s = mcp_http_session_find(h, sid, x->tenant);
                if (!s)
                        return mcp_http_reply_error(x, 404, NULL, MCP_RPC_INVALID_REQUEST, "Session not found");
                memcpy(x->sid, s->id, sizeof x->sid);
                mcp_http_session_end(h, s, "deleted by the client");
                return mcp_http_reply(x, 204, NULL, "", 0, NULL);
        }
        if (get)
                return open_stream(x);
        return mcp_http_reply(x, 405, "text/plain", "method not allowed\n", 19, "GET, POST, DELETE");
}

/* The whole body is in: decode it, find or create the session, hand the message over. */
static enum MHD_Result
handle_post(http_exchange *x)
{
        mcp_http *h = x->http;
        if (x->too_large) {
                char msg[128];
                snprintf(msg, sizeof msg, "Invalid request: message too large (more than %" PRIu64 " bytes)",
                         h->cfg->max_message_bytes);
                return mcp_http_reply_error(x, 413, NULL, MCP_RPC_INVALID_REQUEST, msg);
        }
        mcp_rpc_msg msg;
        mcp_rpc_error e;
        int r = mcp_rpc_decode(x->body ? x->body : "", x->len, h->cfg->max_message_bytes, &msg, &e);
        if (r == -ENODATA)
                return mcp_http_reply_error(x, 400, NULL, MCP_RPC_INVALID_REQUEST, "Invalid request: empty body");
        if (r < 0) {
                enum MHD_Result ret = mcp_http_reply_error(x, 400, &e.id, e.code, e.message);
                mcp_rpc_id_clear(&e.id);
                return ret;
        }
        _cleanup_rpc_msg_ mcp_rpc_msg m = msg;

        const char *pv = header(x, "MCP-Protocol-Version");
        if (pv && !mcp_version_known(pv)) {
                char text[160];
                snprintf(text, sizeof text, "Bad request: unsupported MCP-Protocol-Version %.40s", pv);
                return mcp_http_reply_error(x, 400, &m.id, MCP_RPC_INVALID_REQUEST, text);
        }
        const char *sid = header(x, "Mcp-Session-Id");
        bool init = m.method && strcmp(m.method, "initialize") == 0;
        http_session *s = NULL;
        if (sid) {
                s = mcp_http_session_find(h, sid, x->tenant);
                if (!s)
                        return mcp_http_reply_error(x, 404, &m.id, MCP_RPC_INVALID_REQUEST, "Session not found");
        } else if (!init) {
                return mcp_http_reply_error(x, 400, &m.id, MCP_RPC_INVALID_REQUEST,
                                            "Bad request: Mcp-Session-Id header missing");
        } else {
                char why[256] = "Internal error";
                r = mcp_http_session_new(h, x->tenant, &s, why, sizeof why);
                if (r < 0)
                        return mcp_http_reply_error(x, r == -EDQUOT ? 429 : r == -EBUSY ? 503 : 500, &m.id,
                                                    r == -EDQUOT ? MCP_RPC_SERVER_ERROR : MCP_RPC_INTERNAL_ERROR,
                                                    why);
                x->new_session = true;
        }
        s->last_used = mcp_now_usec();
        memcpy(x->sid, s->id, sizeof x->sid);

        if (m.id.kind == MCP_ID_NONE) {
                /* A notification or a response: accepted, nothing to answer. */
                bool cancel = m.method && strcmp(m.method, "notifications/cancelled") == 0;
                if (cancel)
                        mcp_http_session_cancelled(s, m.params);
                mcp_server_dispatch(s->srv, &m);
                m = (mcp_rpc_msg) { 0 };
                return mcp_http_reply(x, 202, NULL, "", 0, NULL);
        }
        if (mcp_rpc_id_copy(&x->id, &m.id) < 0)
                return mcp_http_reply_error(x, 500, &m.id, MCP_RPC_INTERNAL_ERROR, "Internal error: out of memory");
        x->sess = s;
        x->next = s->pending;
        if (x->next)
                x->next->prev = x;
        s->pending = x;
        mcp_server_dispatch(s->srv, &m);
        m = (mcp_rpc_msg) { 0 };
        if (x->new_session && !s->srv->initialized) {
                /* initialize failed: the session is not kept (nor announced). */
                mcp_http_exchange_unlink(x);
                x->new_session = false;
                mcp_http_session_end(h, s, "initialize failed");
        }
        return reply_pending(x);
}

static void
absorb(http_exchange *x, const char *data, size_t n)
{
        if (x->too_large)
                return;
        if (x->len + n > x->http->cfg->max_message_bytes) {
                x->too_large = true;
                free(x->body);
                x->body = NULL;
                x->len = 0;
                return;
        }
        char *p = realloc(x->body, x->len + n);
        if (!p) {
                x->too_large = true;
                return;
        }
        memcpy(p + x->len, data, n);
        x->body = p;
        x->len += n;
}

static enum MHD_Result
on_request(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
           const char *version, const char *upload, size_t *upload_size, void **con_cls)
{
        http_daemon *dm = cls;
        http_exchange *x = *con_cls;
        if (!x) {
                x = calloc(1, sizeof *x);
                if (!x)
                        return MHD_NO;
                *x = (http_exchange) { .http = dm->http, .dm = dm, .conn = conn, .watch_fd = -1,
                                       .start_usec = mcp_now_usec() };
                snprintf(x->method, sizeof x->method, "%s", method);
                snprintf(x->path, sizeof x->path, "%s", url);
                *con_cls = x;
                x->http->n_exchanges++;
                return start(x, url, method, version);
        }
        if (*upload_size > 0) {
                if (!x->replied)
                        absorb(x, upload, *upload_size);
                *upload_size = 0;
                return MHD_YES;
        }
        if (x->replied)
                return MHD_YES;
        if (!x->dispatched) {
                x->dispatched = true;
                return x->port ? mcp_http_port_body_done(x) : handle_post(x);
        }
        return x->port ? mcp_http_port_body_done(x) : reply_pending(x);        /* resumed */
}

static void
on_completed(void *cls _unused_, struct MHD_Connection *conn, void **con_cls,
             enum MHD_RequestTerminationCode toe)
{
        if (toe == MHD_REQUEST_TERMINATED_COMPLETED_OK)
                mcp_http_conn_next(conn);
        http_exchange *x = *con_cls;
        if (!x)
                return;
        mcp_http_audit_access(x, toe == MHD_REQUEST_TERMINATED_COMPLETED_OK);
        mcp_http_port_exchange_done(x);
        /* A response that never reached the client: its call is not wanted any more. */
        if (x->sess && !x->answered)
                mcp_tools_cancel(x->sess->srv, &x->id);
        mcp_http_exchange_unlink(x);
        mcp_http_exchange_unwatch(x);
        mcp_http_stream_detach(x);
        mcp_rpc_id_clear(&x->id);
        free(x->body);
        free(x->out);
        x->http->n_exchanges--;
        free(x);
        *con_cls = NULL;
}

_printf_(2, 0) static void
on_mhd_log(void *cls, const char *fmt, va_list ap)
{
        mcp_http *h = cls;
        char msg[512];
        vsnprintf(msg, sizeof msg, fmt, ap);
        msg[strcspn(msg, "\n")] = '\0';
        mcp_log(h->log, MCP_LOG_INFO, "HTTP: %s", msg);
}

/* ---- the server ---- */

#define PER_ADDRESS_DEFAULT 64u         /* off loopback, without --http-max-per-address */

/* Within the fd budget's share for HTTP (each connection is one fd; fd-budget.h), which
 * --probe-listen's connections come out of. */
static unsigned
connection_limit(const mcp_config *cfg, bool probe)
{
        unsigned share = cfg->fds ? cfg->fds->http : UINT_MAX;
        unsigned probes = !cfg->probe_listen ? 0 : share / 2 < PROBE_CONNECTIONS ? share / 2
                                                                                : PROBE_CONNECTIONS;
        if (probe)
                return probes;
        return share - probes < cfg->http_max_connections ? share - probes : cfg->http_max_connections;
}

/* Paths and query arguments as they came: an exposed port's request is sent on with them
 * (http-ports.c), and no other path of ours has an escape. */
static size_t
unescape_none(void *cls _unused_, struct MHD_Connection *conn _unused_, char *s)
{
        return strlen(s);
}

/* dm serves fd (listening): external polling, no threads of MHD's. MHD's limits bound an
 * idle client (--http-timeout), the request line and headers, the connections (at once, and
 * from one address); http-daemon.c bounds the time a request head may take. */
static int
start_daemon(mcp_http *h, http_daemon *dm, int fd, const char *flag, msp_err *err)
{
        const mcp_config *cfg = h->cfg;
        unsigned per_address = cfg->http_max_per_address ? cfg->http_max_per_address
                               : h->local                 ? 0
                                                          : PER_ADDRESS_DEFAULT;
        struct MHD_OptionItem tls[] = {
                { MHD_OPTION_HTTPS_MEM_KEY, 0, h->tls_key },
                { MHD_OPTION_HTTPS_MEM_CERT, 0, h->tls_cert },
                { MHD_OPTION_END, 0, NULL },
        };
        dm->d = MHD_start_daemon(MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG |
                                 (dm->probe ? 0 : MHD_ALLOW_UPGRADE) |
                                 (h->tls_key ? MHD_USE_TLS : 0),
                                 0, NULL, NULL, on_request, dm,
                                 MHD_OPTION_ARRAY, h->tls_key ? tls : tls + 2,
                                 MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, h,
                                 MHD_OPTION_LISTEN_SOCKET, fd,
                                 MHD_OPTION_CONNECTION_TIMEOUT, (unsigned) cfg->http_timeout_s,
                                 MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t) CONNECTION_MEMORY,
                                 MHD_OPTION_CONNECTION_LIMIT, connection_limit(cfg, dm->probe),
                                 MHD_OPTION_PER_IP_CONNECTION_LIMIT, dm->probe ? 0 : per_address,
                                 MHD_OPTION_NOTIFY_COMPLETED, on_completed, h,
                                 MHD_OPTION_NOTIFY_CONNECTION, mcp_http_conn_notify, h,
                                 MHD_OPTION_UNESCAPE_CALLBACK, unescape_none, NULL,
                                 MHD_OPTION_END);
        if (!dm->d) {
                close(fd);
                return msp_err_set(err, EIO, "--%s %s: libmicrohttpd did not start%s",
                                   dm->probe ? "probe-listen" : "listen", flag,
                                   h->tls_key ? " (do --tls-cert and --tls-key match? the log says more)" : "");
        }
        return mcp_http_daemon_watch(dm, flag, err);
}

int
mcp_http_new(const mcp_config *cfg, mcp_http **ret, msp_err *err)
{
        mcp_http *h = calloc(1, sizeof *h);
        if (!h)
                return msp_err_set(err, ENOMEM, "out of memory");
        *h = (mcp_http) { .cfg = cfg, .main = { .http = h, .epoll_fd = -1 },
                          .probe = { .http = h, .epoll_fd = -1, .probe = true } };
        int r = mcp_http_load_tls(h, err);
        if (r == 0)
                r = mcp_http_load_auth(h, err);
        if (r < 0) {
                mcp_http_free(h);
                return r;
        }
        *ret = h;
        return 0;
}


int
mcp_http_start(mcp_http *h, mcp_loop *loop, mcp_engine *engine, mcp_logger *log, msp_err *err)
{
        const mcp_config *cfg = h->cfg;
        h->loop = loop;
        h->engine = engine;
        h->log = log;
        int fd = -1;
        int r = mcp_http_listen(cfg->listen, &fd, &h->local, &h->url, err);
        if (r < 0)
                return r;
        if (strncmp(cfg->listen, "unix:", 5) == 0)
                h->unix_path = strdup(cfg->listen + 5);
        if (!h->auth && !h->oauth && !h->local)
                r = msp_err_set(err, EPERM, "--listen %s is not a loopback address or a unix socket: name --auth-tokens FILE or the --oauth-* flags",
                                cfg->listen);
        if (r == 0 && (mcp_owners_new(&h->owners) < 0 || mcp_metrics_new(&h->metrics) < 0))
                r = msp_err_set(err, ENOMEM, "out of memory");
        char *https = NULL;
        if (r == 0 && h->tls_key && strncmp(h->url, "http://", 7) == 0 &&
            asprintf(&https, "https://%s", h->url + 7) > 0) {
                free(h->url);
                h->url = https;
        }
        if (r < 0) {
                close(fd);
                return r;
        }
        r = start_daemon(h, &h->main, fd, cfg->listen, err);
        if (r == 0 && cfg->probe_listen) {
                bool local;
                _cleanup_free_ char *url = NULL;
                r = mcp_http_listen(cfg->probe_listen, &fd, &local, &url, err);
                if (r == 0)
                        r = start_daemon(h, &h->probe, fd, cfg->probe_listen, err);
                /* "http://ADDR:PORT/mcp": the same without the endpoint. */
                if (r == 0)
                        mcp_log(log, MCP_LOG_INFO, "probes on %s%.*s (/healthz, /readyz, /metrics)",
                                h->tls_key ? "https://" : "http://",
                                (int) (strlen(url) - 7 - strlen(ENDPOINT)), url + 7);
        }
        if (r < 0)
                return r;
        /* "<scheme>://ADDR:PORT/mcp": exposed ports are paths beside the endpoint. */
        size_t base = strlen(h->url) - strlen(ENDPOINT);
        _cleanup_free_ char *base_url = strndup(h->url, base);
        if (!base_url || mcp_ports_new(loop, engine, base_url, &h->ports) < 0)
                return msp_err_set(err, ENOMEM, "out of memory");
        mcp_http_sessions_start(h);
        mcp_http_streams_start(h);
        mcp_log(log, MCP_LOG_INFO, "listening on %s (%s%s%s)", h->url,
                h->auth ? "bearer tokens" : "", h->auth && h->oauth ? " and " : "",
                h->oauth ? "OAuth access tokens" : h->auth ? "" : "no authentication");
        return 0;
}

mcp_http *
mcp_http_free(mcp_http *h)
{
        if (!h)
                return NULL;
        while (h->sessions)
                mcp_http_session_end(h, h->sessions, "the server stops");
        if (h->main.epoll_fd >= 0)
                mcp_sessions_set_expired(mcp_engine_sessions(h->engine), NULL, NULL);
        mcp_timer_cancel(h->loop, h->sweep);
        mcp_timer_cancel(h->loop, h->stream_timer);
        mcp_timer_cancel(h->loop, h->drain_timer);
        mcp_http_ports_stop(h);
        h->ports = mcp_ports_free(h->ports);
        /* Every suspended connection was resumed by mcp_http_session_end(): MHD may stop. */
        mcp_http_daemon_stop(&h->main);
        mcp_http_daemon_stop(&h->probe);
        mcp_timer_cancel(h->loop, h->head_timer);
        if (h->unix_path)
                (void) unlink(h->unix_path);
        free(h->unix_path);
        free(h->url);
        free(h->tls_cert);
        if (h->tls_key)
                explicit_bzero(h->tls_key, strlen(h->tls_key));
        free(h->tls_key);
        mcp_auth_free(h->auth);
        mcp_oauth_reload_cancel(h->oauth_reload);
        mcp_oauth_free(h->oauth);
        mcp_owners_free(h->owners);
        mcp_metrics_free(h->metrics);
        mcp_http_free_windows(h);
        free(h);
        return NULL;
}
