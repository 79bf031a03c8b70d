/* The HTTP transport's sessions (see http-session.h): each an MCP server state of its own
 * whose transport hands what the server says to the exchange or stream of the request it
 * belongs to; created at initialize within the tenant's quota, found only by their
 * tenant, ended by DELETE, by being idle past --http-session-idle or with the server. */
#include "http/http-session.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "http/http-admin.h"
#include "http/http-exchange.h"
#include "http/http-stream.h"
#include "mcp/mcp.h"
#include "observe/observe.h"
#include "session/session.h"

#define MAX_SESSIONS 4096u

/* The session's transport: a message for the stream or exchange of the request it belongs
 * to. A message of no request (a log message) most likely comes of the newest request still
 * waiting: it goes there, in order with that request's response; with none waiting, to the
 * GET stream (or it is dropped). */
static int
session_sink(void *data, const char *json, size_t len, const mcp_rpc_id *request,
             bool response, bool droppable)
{
        http_session *s = data;
        http_exchange *x = NULL;
        http_stream *st = NULL;
        if (request && !(st = mcp_http_stream_find(s, request)))
                for (x = s->pending; x && !mcp_rpc_id_equal(&x->id, request); x = x->next)
                        ;
        if (!request && !response && !(x = s->pending) && !(st = mcp_http_stream_newest_call(s)))
                st = mcp_http_stream_get(s);
        if (st)
                return mcp_http_stream_push(st, json, len, response, droppable);
        if (!x)
                return droppable ? -ENOBUFS : 0;
        if (response && x->mode == X_PENDING) {
                x->out = malloc(len);
                if (!x->out)
                        return -ENOMEM;
                memcpy(x->out, json, len);
                x->olen = len;
                x->mode = X_JSON;
                x->answered = true;
                mcp_http_exchange_unlink(x);
                mcp_http_wake(x);
                return 0;
        }
        /* The exchange becomes its request's stream (no longer a pending exchange). */
        mcp_http_exchange_unlink(x);
        int r = mcp_http_stream_start(x, s);
        if (r < 0)
                return r;
        return mcp_http_stream_push(x->stream, json, len, response, droppable);
}

/* A change to a sandbox session: every MCP session of its tenant lists it. */
static void
tenant_sessions_changed(mcp_http *h, const char *tenant)
{
        for (http_session *s = h->sessions; s; s = s->next)
                if (strcmp(s->tenant, tenant) == 0)
                        mcp_resources_changed(s->srv);
}

static void
on_session_changed(mcp_server *srv, const char *tenant)
{
        http_session *s = srv->transport_data;
        tenant_sessions_changed(s->http, tenant);
}

/* The list_changed notice concerns no request: it goes on the GET stream, kept there for
 * a resume like any event; without one it waits for the client to open it. */
static int
notice_out(mcp_server *srv, const char *json, size_t len)
{
        http_stream *st = mcp_http_stream_get(srv->transport_data);
        return st ? mcp_http_stream_push(st, json, len, false, false) : -EAGAIN;
}

/* A sandbox session expired: its audit line names the tenant that owned it, which owns
 * it no more. */
static void
on_sandbox_session_expired(const char *id, const char *why, void *data)
{
        mcp_http *h = data;
        const char *tenant = mcp_owners_tenant(h->owners, id);
        mcp_audit_session_expired(h->log->audit, true, tenant, id, why);
        if (tenant)
                tenant_sessions_changed(h, tenant);
        mcp_owners_forget(h->owners, id);
}

void
mcp_http_session_end(mcp_http *h, http_session *s, const char *why)
{
        if (s->prev)
                s->prev->next = s->next;
        else
                h->sessions = s->next;
        if (s->next)
                s->next->prev = s->prev;
        h->n_sessions--;
        mcp_log(h->log, MCP_LOG_INFO, "HTTP session %.8s... ended: %s", s->id, why);
        /* Its runs are cancelled without answers; the waiting exchanges are told. */
        mcp_server_free(s->srv);
        while (s->pending) {
                http_exchange *x = s->pending;
                mcp_http_exchange_unlink(x);
                x->ended = x->answered = true;
                mcp_http_wake(x);
        }
        mcp_http_streams_end(s);
        free(s);
}

/* Neither a request nor a stream of it is open. */
static bool
session_idle(const http_session *s)
{
        return !s->pending && !mcp_http_streams_busy(s);
}

/* A tenant at its quota of MCP sessions gives up its least recently used idle one (a
 * client that never sent DELETE left it); with every one in use, -EDQUOT and msg. */
static int
make_room(mcp_http *h, const char *tenant, char *msg, size_t size)
{
        unsigned quota = mcp_http_session_quota(h, tenant);
        for (;;) {
                size_t n = 0;
                http_session *lru = NULL;
                for (http_session *s = h->sessions; quota && s; s = s->next) {
                        if (strcmp(s->tenant, tenant) != 0)
                                continue;
                        n++;
                        if (session_idle(s) && (!lru || s->last_used < lru->last_used))
                                lru = s;
                }
                if (n < quota || !quota)
                        return 0;
                if (!lru) {
                        snprintf(msg, size, "Too many sessions: tenant %s has its quota of %u MCP sessions, each with a request or stream open; end one (DELETE) first",
                                 tenant, quota);
                        return -EDQUOT;
                }
                mcp_http_session_end(h, lru, "its tenant is at its quota of MCP sessions: the least recently used idle one gives way");
        }
}

int
mcp_http_session_new(mcp_http *h, const char *tenant, http_session **ret, char *msg, size_t size)
{
        int r = make_room(h, tenant, msg, size);
        if (r < 0)
                return r;
        if (h->n_sessions >= MAX_SESSIONS) {
                snprintf(msg, size, "Too many sessions");
                return -EBUSY;
        }
        http_session *s = calloc(1, sizeof *s);
        if (!s)
                return -ENOMEM;
        unsigned char rnd[SESSION_ID_BYTES];
        if (getrandom(rnd, sizeof rnd, 0) != (ssize_t) sizeof rnd) {
                free(s);
                return -EIO;
        }
        for (size_t i = 0; i < sizeof rnd; i++)
                snprintf(s->id + 2 * i, 3, "%02x", rnd[i]);
        s->http = h;
        snprintf(s->tenant, sizeof s->tenant, "%s", tenant);
        s->log = (mcp_logger) { .stderr_level = h->log->stderr_level,
                                .client_level = h->log->client_level, .audit = h->log->audit };
        r = mcp_server_new_sink(h->loop, h->cfg, h->engine, &s->log, session_sink, s, &s->srv);
        if (r < 0) {
                free(s);
                return r;
        }
        s->srv->owners = h->owners;
        s->srv->ports = h->ports;
        s->srv->tenant = s->tenant;
        s->srv->http_session = s->id;
        s->srv->admit = mcp_http_admit;
        s->srv->metrics = h->metrics;
        s->srv->admit_data = s;
        s->srv->notice_out = notice_out;
        s->srv->session_changed = on_session_changed;
        s->srv->transport_data = s;
        s->last_used = mcp_now_usec();
        s->next = h->sessions;
        if (s->next)
                s->next->prev = s;
        h->sessions = s;
        h->n_sessions++;
        *ret = s;
        return 0;
}

/* Another tenant's session is not found, as one that does not exist. */
http_session *
mcp_http_session_find(mcp_http *h, const char *id, const char *tenant)
{
        for (http_session *s = h->sessions; s; s = s->next)
                if (strcmp(s->id, id) == 0)
                        return strcmp(s->tenant, tenant) == 0 ? s : NULL;
        return NULL;
}

/* Sessions nobody used for --http-session-idle end. */
static int
on_sweep(mcp_loop *loop, void *data)
{
        mcp_http *h = data;
        h->sweep = NULL;
        uint64_t now = mcp_now_usec(), idle = h->cfg->http_session_idle_s * 1000000;
        for (http_session *s = h->sessions, *next; s; s = next) {
                next = s->next;
                if (session_idle(s) && now - s->last_used >= idle)
                        mcp_http_session_end(h, s, "idle");
        }
        uint64_t every = idle / 4;
        every = every < 1000000 ? 1000000 : every > 60000000 ? 60000000 : every;
        (void) mcp_loop_add_timer(loop, every, on_sweep, h, &h->sweep);
        return 0;
}

/* A notifications/cancelled for one of the session's waiting requests ends that exchange. */
void
mcp_http_session_cancelled(http_session *s, const oci_json *params)
{
        mcp_rpc_id id;
        if (mcp_rpc_cancelled_id(params, &id) < 0)
                return;
        for (http_exchange *x = s->pending; x; x = x->next)
                if (mcp_rpc_id_equal(&x->id, &id)) {
                        mcp_http_exchange_unlink(x);
                        x->answered = true;
                        mcp_http_wake(x);
                        break;
                }
        mcp_http_stream_cancelled(s, &id);
        mcp_rpc_id_clear(&id);
}

void
mcp_http_sessions_start(mcp_http *h)
{
        mcp_sessions_set_expired(mcp_engine_sessions(h->engine), on_sandbox_session_expired, h);
        (void) on_sweep(h->loop, h);
}
