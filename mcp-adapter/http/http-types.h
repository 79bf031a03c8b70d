/* The HTTP transport's state, private to http/: the server (mcp_http), its daemons, its
 * sessions and its exchanges. Types only: each file's steps are in its own header
 * (http-daemon.h, http-exchange.h, http-stream.h, http-admin.h, http-session.h), so that
 * including this one makes no file depend on another. http_stream (http-stream.c),
 * http_conn (http-daemon.c) and rate_window (http-admin.c) are complete only in their
 * files. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "http/auth.h"
#include "http/oauth.h"
#include "mcp/mcp.h"

#define SESSION_ID_BYTES 16

typedef struct mcp_http mcp_http;
typedef struct http_session http_session;
typedef struct http_exchange http_exchange;
typedef struct http_stream http_stream;
typedef struct http_conn http_conn;
typedef struct rate_window rate_window;
typedef struct http_port_req http_port_req;

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
        http_port_req *port;            /* a request for an exposed port (http-ports.c) */
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
        mcp_ports *ports;               /* the sessions' exposed ports (port_expose) */
        http_port_req *port_reqs;       /* their requests in flight (http-ports.c) */
};
