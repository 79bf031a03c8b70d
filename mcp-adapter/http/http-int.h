/* Internal to the HTTP transport (http.c, http-admin.c, http-stream.c): its state and the
 * steps the files share. */
#pragma once

#include <microhttpd.h>

#include "http/auth.h"
#include "http/http.h"
#include "http/oauth.h"
#include "mcp/server.h"

#define SESSION_ID_BYTES 16
#define CONNECTION_MEMORY (64u * 1024)  /* per connection: request line, headers, buffers */
#define MAX_SESSIONS 4096u
#define PROBE_CONNECTIONS 64u           /* of --probe-listen */
#define SSE_HIGH_WATER (4u * 1024 * 1024) /* above: droppable notifications are dropped */
#define SSE_BLOCK (16u * 1024)
#define SSE_REPLAY (64u * 1024)     /* per stream: sent events kept for Last-Event-ID */
#define ENDPOINT "/mcp"

typedef struct http_session http_session;
typedef struct http_exchange http_exchange;
typedef struct http_stream http_stream;
typedef struct http_conn http_conn;

/* A libmicrohttpd daemon driven from the loop (http-daemon.c): --listen's, and
 * --probe-listen's that answers only the probes and /metrics. */
typedef struct http_daemon {
        mcp_http *http;
        struct MHD_Daemon *d;
        int epoll_fd;
        mcp_timer *timer;
        bool kicked;                    /* a connection was resumed: run MHD again soon */
        bool probe;
} http_daemon;

typedef enum x_mode { X_PENDING, X_JSON, X_SSE } x_mode;

struct http_exchange {
        mcp_http *http;
        http_daemon *dm;
        struct MHD_Connection *conn;
        http_session *sess;             /* while its request waits for the response */
        http_exchange *next, *prev;     /* in sess->pending */
        bool replied;                   /* a response is queued */
        bool dispatched;
        bool new_session;               /* an initialize that created a session */
        bool answered;                  /* nothing more will be added to out */
        bool ended;                     /* the session ended before the answer */
        char tenant[MCP_TENANT_MAX + 1];  /* of the bearer token; "" without authentication */
        bool suspended, client_gone;
        int watch_fd;
        char *body;
        size_t len;
        bool too_large;
        mcp_rpc_id id;                  /* the request's id */
        x_mode mode;
        char *out;                      /* JSON: the response */
        size_t olen;
        http_stream *stream;            /* SSE: what it sends (NULL: its response ends) */
        char sid[2 * SESSION_ID_BYTES + 1];     /* the session's, once known */
        /* for the audit log's access line */
        uint64_t start_usec;
        unsigned status;                /* 0: no response queued */
        uint64_t bytes_out;             /* response body bytes */
        char method[16];
        char path[256];
};

struct http_session {
        mcp_http *http;
        char id[2 * SESSION_ID_BYTES + 1];
        char tenant[MCP_TENANT_MAX + 1];  /* who created it: nobody else finds it */
        mcp_logger log;                 /* its own: logging/setLevel is per session */
        mcp_server *srv;
        http_exchange *pending;         /* newest first */
        http_stream *streams;           /* newest first (http-stream.c) */
        unsigned n_streams;             /* streams opened: numbers them */
        uint64_t last_used;
        http_session *next, *prev;
};

/* Runs a tenant started in the current 60 s window (runs_per_minute). */
typedef struct rate_window {
        char tenant[MCP_TENANT_MAX + 1];
        uint64_t start;
        unsigned count;
        struct rate_window *next;
} rate_window;

struct mcp_http {
        mcp_loop *loop;
        const mcp_config *cfg;
        mcp_engine *engine;
        mcp_logger *log;
        mcp_auth *auth;                 /* --auth-tokens (NULL: none) */
        mcp_oauth *oauth;               /* --oauth-*: JWT access tokens (NULL: none); without
                                         * either, no authentication (local listeners only) */
        mcp_oauth_reload *oauth_reload; /* a SIGHUP's JWKS fetch in flight */
        mcp_owners *owners;             /* sandbox sessions and run logs by tenant */
        rate_window *windows;
        mcp_metrics *metrics;
        size_t n_exchanges;             /* requests being received or answered */
        bool draining;
        uint64_t drain_deadline;
        mcp_timer *drain_timer;
        void (*drained)(void *data);
        void *drained_data;
        http_daemon main, probe;        /* probe.d: NULL without --probe-listen */
        http_conn *heads, *heads_tail;  /* connections with a head deadline, earliest first */
        mcp_timer *head_timer;
        bool local;                     /* bound to loopback or a unix socket */
        char *url;
        char *unix_path;
        char *tls_cert, *tls_key;       /* PEM, read at start */
        mcp_timer *sweep, *stream_timer;
        http_session *sessions;
        size_t n_sessions;
};

/* http.c */
enum MHD_Result mcp_http_queue(http_exchange *x, unsigned status, struct MHD_Response *resp);
enum MHD_Result mcp_http_reply(http_exchange *x, unsigned status, const char *type,
                               const char *body, size_t len, const char *allow);
/* A suspended exchange's connection goes on (MHD asks for its response again). */
void mcp_http_wake(http_exchange *x);
/* Until mcp_http_wake(); the client closing the connection wakes it too (client_gone). */
void mcp_http_suspend(http_exchange *x);

/* http-stream.c: the SSE streams of the sessions, resumable with Last-Event-ID */
/* x, a POST of s whose request sends notifications, becomes that request's stream. */
int mcp_http_stream_start(http_exchange *x, http_session *s);
/* The stream of request (not answered yet); the newest such; the GET stream. */
http_stream *mcp_http_stream_find(http_session *s, const mcp_rpc_id *request);
http_stream *mcp_http_stream_newest_call(http_session *s);
http_stream *mcp_http_stream_get(http_session *s);
/* One message as an event; response: the stream's last. -ENOBUFS: a droppable one dropped. */
int mcp_http_stream_push(http_stream *st, const char *json, size_t len, bool response,
                         bool droppable);
/* notifications/cancelled for request: its stream ends without a response. */
void mcp_http_stream_cancelled(http_session *s, const mcp_rpc_id *request);
/* A GET on the endpoint: x becomes s's GET stream, or resumes the stream of
 * last_event_id (may be NULL). 0, or the HTTP status to answer with *why. */
unsigned mcp_http_stream_open_get(http_exchange *x, http_session *s, const char *last_event_id,
                                  const char **why);
/* The content reader of an SSE response (x as cls). */
ssize_t mcp_http_stream_read(void *cls, uint64_t pos, char *buf, size_t max);
/* x's connection is done: its stream waits for a resume (or goes when fully sent). */
void mcp_http_stream_detach(http_exchange *x);
/* A stream has a connection or a call without its response: the session is in use. */
bool mcp_http_streams_busy(const http_session *s);
/* The session ends: its streams go, their connections end. */
void mcp_http_streams_end(http_session *s);
/* Draining: the GET streams end (they never finish by themselves). */
void mcp_http_streams_drain(mcp_http *h);
/* The keepalive and expiry timer (stream_timer). */
void mcp_http_streams_start(mcp_http *h);

/* http-daemon.c: driving the daemons, and the connections' head deadline */
/* dm's epoll fd is watched by the loop; dm->d runs on its readiness and timeouts. */
int mcp_http_daemon_watch(http_daemon *dm, const char *what, msp_err *err);
void mcp_http_daemon_stop(http_daemon *dm);
/* MHD runs dm soon (a connection was resumed). */
void mcp_http_daemon_kick(http_daemon *dm);
/* MHD_OPTION_NOTIFY_CONNECTION: a connection's head deadline starts at its accept. */
void mcp_http_conn_notify(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe);
/* x's request is authenticated: no deadline for the rest of it. */
void mcp_http_conn_trusted(http_exchange *x);
/* conn's request ended, the connection stays: the next head's deadline starts. */
void mcp_http_conn_next(struct MHD_Connection *conn);
/* The remote address of conn ("unix" for a unix socket, "" when unknown). */
void mcp_http_peer(struct MHD_Connection *conn, char *buf, size_t size);

/* http-admin.c */
/* The audit log's "http" line of a finished exchange, and its "auth_failure" line. */
void mcp_http_audit_access(http_exchange *x, bool completed);
void mcp_http_audit_auth(http_exchange *x, const char *reason);
int mcp_http_admit(mcp_server *srv, mcp_admit what, char *msg, size_t size, void *data);
/* The tenant's quota of MCP sessions (0: none, without authentication). */
unsigned mcp_http_session_quota(const mcp_http *h, const char *tenant);
void mcp_http_free_windows(mcp_http *h);
enum MHD_Result mcp_http_reply_ready(http_exchange *x);
enum MHD_Result mcp_http_reply_metrics(http_exchange *x);
enum MHD_Result mcp_http_reply_unauthorized(http_exchange *x, bool presented);
int mcp_http_load_tls(mcp_http *h, msp_err *err);
int mcp_http_load_auth(mcp_http *h, msp_err *err);
