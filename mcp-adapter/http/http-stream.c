/* The server-sent event streams of the HTTP sessions: a POST's stream (its request's
 * progress and log messages, then its response) and the session's GET stream (messages of no
 * waiting request). Every event has an id "<stream>-<n>", unique in the session; a stream
 * keeps what it sent, up to SSE_REPLAY bytes, so that a client whose connection broke
 * resumes it with a GET carrying Last-Event-ID (MCP Streamable HTTP, resumability).
 *
 * A stream outlives its connection: on a broken one it waits --http-timeout for the client
 * to resume it, and a call whose stream is not resumed by then is cancelled. Idle
 * connections get a keepalive comment every half --http-timeout (1 s to 15 s), so that
 * proxies and the connection timeout do not cut a quiet stream. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http/http-exchange.h"
#include "http/http-stream.h"
#include "mcp/mcp.h"
#include "observe/observe.h"
#include "oci/oci.h"

#define SSE_HIGH_WATER (4u * 1024 * 1024) /* above: droppable notifications are dropped */
#define SSE_REPLAY (64u * 1024)     /* per stream: sent events kept for Last-Event-ID */

typedef struct sse_event {
        struct sse_event *next;
        uint64_t seq;
        size_t len;
        char text[];
} sse_event;

struct http_stream {
        http_session *sess;
        unsigned num;                   /* in the session: the first part of its event ids */
        bool get;                       /* the session's GET stream (else a POST's) */
        bool done;                      /* its last event is in (the response, or cancelled) */
        mcp_rpc_id id;                  /* a POST's request */
        sse_event *head, *tail;         /* held events, oldest first */
        sse_event *cur;                 /* the next to send; NULL: everything is sent */
        size_t cur_off;
        size_t sent, unsent;            /* bytes held of sent events, bytes still to send */
        uint64_t seq;                   /* of the newest event */
        uint64_t since;                 /* last write, or when the connection was lost */
        bool keepalive;                 /* a comment is due */
        http_exchange *x;               /* the connection it is sent on, or NULL */
        http_stream *next;
};

static const char KEEPALIVE[] = ": keepalive\n\n";

static uint64_t
keepalive_usec(const mcp_http *h)
{
        uint64_t t = h->cfg->http_timeout_s * 1000000 / 2;
        return t < 1000000 ? 1000000 : t > 15000000 ? 15000000 : t;
}

/* ---- one stream ---- */

static void
unattach(http_stream *st)
{
        http_exchange *x = st->x;
        if (!x)
                return;
        st->x = NULL;
        x->stream = NULL;
        mcp_http_wake(x);       /* its response ends */
}

static void
free_stream(http_stream *st)
{
        http_session *s = st->sess;
        for (http_stream **p = &s->streams; *p; p = &(*p)->next)
                if (*p == st) {
                        *p = st->next;
                        break;
                }
        unattach(st);
        for (sse_event *e = st->head, *next; e; e = next) {
                next = e->next;
                free(e);
        }
        mcp_rpc_id_clear(&st->id);
        free(st);
}

/* Drops sent events beyond SSE_REPLAY, oldest first; the newest one always stays (a POST
 * stream's response can always be sent again). */
static void
trim(http_stream *st)
{
        while (st->sent > SSE_REPLAY && st->head != st->cur && st->head != st->tail) {
                sse_event *e = st->head;
                st->head = e->next;
                st->sent -= e->len;
                free(e);
        }
}

static int
append(http_stream *st, const char *json, size_t len)
{
        char head[64];
        int n = snprintf(head, sizeof head, "id: %u-%" PRIu64 "\n%s", st->num, st->seq + 1,
                         json ? "event: message\ndata: " : "data: ");
        sse_event *e = malloc(sizeof *e + (size_t) n + len + 2);
        if (!e)
                return -ENOMEM;
        *e = (sse_event) { .seq = ++st->seq, .len = (size_t) n + len + 2 };
        memcpy(e->text, head, (size_t) n);
        if (len)
                memcpy(e->text + n, json, len);
        memcpy(e->text + n + len, "\n\n", 2);
        if (st->tail)
                st->tail->next = e;
        else
                st->head = e;
        st->tail = e;
        if (!st->cur)
                st->cur = e;
        st->unsent += e->len;
        return 0;
}

static int
new_stream(http_session *s, bool get, http_stream **ret)
{
        http_stream *st = calloc(1, sizeof *st);
        if (!st)
                return -ENOMEM;
        *st = (http_stream) { .sess = s, .num = ++s->n_streams, .get = get, .since = mcp_now_usec() };
        /* The priming event (an id, empty data) lets the client resume before the first
         * message; clients older than 2025-11-25 may not take empty data. */
        if (s->srv->version >= MCP_V2025_11_25 && append(st, NULL, 0) < 0) {
                free(st);
                return -ENOMEM;
        }
        st->next = s->streams;
        s->streams = st;
        *ret = st;
        return 0;
}

static void
attach(http_stream *st, http_exchange *x)
{
        unattach(st);
        st->x = x;
        x->stream = st;
        x->mode = X_SSE;
        st->since = mcp_now_usec();
}

int
mcp_http_stream_start(http_exchange *x, http_session *s)
{
        http_stream *st;
        int r = new_stream(s, false, &st);
        if (r < 0)
                return r;
        st->id = x->id;
        x->id = (mcp_rpc_id) { .kind = MCP_ID_NONE };
        attach(st, x);
        return 0;
}

int
mcp_http_stream_push(http_stream *st, const char *json, size_t len, bool response, bool droppable)
{
        if (st->done)
                return droppable ? -ENOBUFS : 0;
        if (droppable && st->unsent > SSE_HIGH_WATER)
                return -ENOBUFS;
        int r = append(st, json, len);
        if (r < 0)
                return r;
        if (response)
                st->done = true;
        if (st->x)
                mcp_http_wake(st->x);
        return 0;
}

http_stream *
mcp_http_stream_find(http_session *s, const mcp_rpc_id *request)
{
        for (http_stream *st = s->streams; st; st = st->next)
                if (!st->get && !st->done && mcp_rpc_id_equal(&st->id, request))
                        return st;
        return NULL;
}

http_stream *
mcp_http_stream_get(http_session *s)
{
        for (http_stream *st = s->streams; st; st = st->next)
                if (st->get)
                        return st;
        return NULL;
}

http_stream *
mcp_http_stream_newest_call(http_session *s)
{
        for (http_stream *st = s->streams; st; st = st->next)
                if (!st->get && !st->done)
                        return st;
        return NULL;
}

void
mcp_http_stream_cancelled(http_session *s, const mcp_rpc_id *request)
{
        http_stream *st = mcp_http_stream_find(s, request);
        if (!st)
                return;
        st->done = true;
        if (st->x)
                mcp_http_wake(st->x);
        else
                free_stream(st);
}

/* ---- connections ---- */

ssize_t
mcp_http_stream_read(void *cls, uint64_t pos _unused_, char *buf, size_t max)
{
        http_exchange *x = cls;
        if (x->client_gone)
                return MHD_CONTENT_READER_END_WITH_ERROR;
        http_stream *st = x->stream;
        if (!st)
                return MHD_CONTENT_READER_END_OF_STREAM;
        size_t n = 0;
        if (st->keepalive && st->cur_off == 0 && max >= sizeof KEEPALIVE - 1) {
                memcpy(buf, KEEPALIVE, sizeof KEEPALIVE - 1);
                n = sizeof KEEPALIVE - 1;
        }
        st->keepalive = false;
        while (st->cur && n < max) {
                sse_event *e = st->cur;
                size_t k = e->len - st->cur_off < max - n ? e->len - st->cur_off : max - n;
                memcpy(buf + n, e->text + st->cur_off, k);
                n += k;
                st->cur_off += k;
                st->unsent -= k;
                if (st->cur_off == e->len) {
                        st->cur = e->next;
                        st->cur_off = 0;
                        st->sent += e->len;
                }
        }
        if (n > 0) {
                x->bytes_out += n;
                st->since = mcp_now_usec();
                trim(st);
                return (ssize_t) n;
        }
        if (st->done)
                return MHD_CONTENT_READER_END_OF_STREAM;
        mcp_http_suspend(x);
        return 0;
}

void
mcp_http_stream_detach(http_exchange *x)
{
        http_stream *st = x->stream;
        if (!st)
                return;
        st->x = NULL;
        x->stream = NULL;
        st->since = mcp_now_usec();
        if (st->done && !st->cur && !x->client_gone) {
                free_stream(st);
                return;
        }
        mcp_log(x->http->log, MCP_LOG_INFO,
                "HTTP session %.8s...: SSE stream %u lost its connection; kept %" PRIu64 " s for Last-Event-ID",
                st->sess->id, st->num, x->http->cfg->http_timeout_s);
}

/* Last-Event-ID "<stream>-<n>": the stream, and where its events resume (the first held
 * event after n; when n is older than everything held, the oldest held: only droppable
 * notifications were sent in between). NULL: not an id this session issued. */
static http_stream *
resume_point(http_session *s, const char *last, sse_event **ret_cur)
{
        char *end;
        if (!isdigit((unsigned char) *last))
                return NULL;
        errno = 0;
        unsigned long num = strtoul(last, &end, 10);
        if (errno || *end != '-' || !isdigit((unsigned char) end[1]))
                return NULL;
        const char *p = end + 1;
        uint64_t seq = strtoull(p, &end, 10);
        if (errno || *end)
                return NULL;
        http_stream *st = s->streams;
        while (st && st->num != num)
                st = st->next;
        if (!st || seq > st->seq)
                return NULL;
        sse_event *e = st->head;
        while (e && e->seq <= seq)
                e = e->next;
        *ret_cur = e;
        return st;
}

unsigned
mcp_http_stream_open_get(http_exchange *x, http_session *s, const char *last_event_id,
                         const char **why)
{
        http_stream *st = NULL;
        if (last_event_id) {
                sse_event *cur;
                st = resume_point(s, last_event_id, &cur);
                if (!st) {
                        *why = "Bad request: Last-Event-ID is not an event of this session's streams";
                        return 400;
                }
                /* The client resumes: a connection the stream still has is a stale one. */
                attach(st, x);
                st->cur = cur;
                st->cur_off = 0;
                st->sent = st->unsent = 0;
                bool after = false;
                for (sse_event *e = st->head; e; e = e->next) {
                        after = after || e == cur;
                        if (after)
                                st->unsent += e->len;
                        else
                                st->sent += e->len;
                }
                mcp_log(x->http->log, MCP_LOG_INFO, "HTTP session %.8s...: SSE stream %u resumed after %.40s",
                        s->id, st->num, last_event_id);
                if (st->get)
                        mcp_resources_changed_retry(s->srv);
                return 0;
        }
        st = mcp_http_stream_get(s);
        if (st && st->x) {
                *why = "Conflict: this session's GET stream is open on another connection";
                return 409;
        }
        if (st)
                free_stream(st);        /* a lost one the client does not resume */
        if (new_stream(s, true, &st) < 0) {
                *why = "Internal error: out of memory";
                return 500;
        }
        attach(st, x);
        mcp_resources_changed_retry(s->srv);   /* a notice that waited for the stream */
        return 0;
}

/* ---- sessions and the server ---- */

bool
mcp_http_streams_busy(const http_session *s)
{
        for (const http_stream *st = s->streams; st; st = st->next)
                if (st->x || !st->done)
                        return true;
        return false;
}

void
mcp_http_streams_end(http_session *s)
{
        while (s->streams)
                free_stream(s->streams);
}

void
mcp_http_streams_drain(mcp_http *h)
{
        for (http_session *s = h->sessions; s; s = s->next)
                for (http_stream *st = s->streams, *next; st; st = next) {
                        next = st->next;
                        if (st->get)
                                free_stream(st);
                }
}

/* Keepalives for quiet connections; streams whose connection is lost past --http-timeout
 * go (a call's run is cancelled). */
static int
on_tick(mcp_loop *loop, void *data)
{
        mcp_http *h = data;
        h->stream_timer = NULL;
        uint64_t now = mcp_now_usec(), every = keepalive_usec(h);
        uint64_t keep = h->cfg->http_timeout_s * 1000000;
        for (http_session *s = h->sessions; s; s = s->next)
                for (http_stream *st = s->streams, *next; st; st = next) {
                        next = st->next;
                        if (st->x && now - st->since >= every) {
                                st->keepalive = true;
                                st->since = now;
                                mcp_http_wake(st->x);
                        } else if (!st->x && now - st->since >= keep) {
                                if (!st->get && !st->done) {
                                        /* Also to the client: on its GET stream, if any,
                                         * as this stream is done with. */
                                        st->done = true;
                                        mcp_log(&s->log, MCP_LOG_NOTICE, "HTTP session %.8s...: SSE stream %u not resumed within --http-timeout: its call is cancelled",
                                                s->id, st->num);
                                        mcp_tools_cancel(s->srv, &st->id);
                                }
                                free_stream(st);
                        }
                }
        (void) mcp_loop_add_timer(loop, every, on_tick, h, &h->stream_timer);
        return 0;
}

void
mcp_http_streams_start(mcp_http *h)
{
        (void) mcp_loop_add_timer(h->loop, keepalive_usec(h), on_tick, h, &h->stream_timer);
}
