/* The port gateway: one HTTP client connection carried to a port inside a session's
 * sandbox. Owner: gateway.c (the head's parser and rewriter: gateway-head.c).
 *
 * It reads the client's first request head (at most MCP_GW_HEAD_MAX bytes, within
 * MCP_GW_HEAD_USEC), asks the caller's check which session and port it is for and which
 * leading part of the path to strip (or which status to refuse it with), rewrites the
 * request line (the prefix stripped, the query kept) and, for an ordinary request, makes it
 * `Connection: close` (its Connection, Keep-Alive and Proxy-Connection headers dropped), so
 * that the connection carries this one checked request; a WebSocket (any `Upgrade:`)
 * request keeps its headers as they came. Then it connects through the caller's connect
 * (within MCP_GW_CONNECT_USEC) and relays raw bytes both ways (relay.h) until both sides
 * have ended, an error, or idle_usec without traffic.
 *
 * A refusal is a minimal HTTP/1.1 response with a short text body: the check's status
 * (401, 403, 404, ...), 400 for a head that is not HTTP/1.x, 431 for one too large, 408
 * when none came in time, 502 when the port cannot be reached. Either way the client's
 * socket is closed at the end, and done says how it went.
 *
 * The client socket may come from msp-mcp's own listener or from another server that has
 * read part of the stream already (pre: those bytes, handled as if read first). A server
 * that has answered an upgrade itself before it hands the socket over (libmicrohttpd's
 * upgrade: its own 101 is sent first) passes MCP_GW_ANSWERED and the whole request head in
 * pre: the port's response head is then read and dropped (its status must be 101, else the
 * connection is closed), nothing is ever written to the client but the port's bytes that
 * follow it, and a refusal is a close. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "oci/oci.h"
#include "base/base.h"
#include "ports/gateway-head.h"

#define MCP_GW_HEAD_USEC (10u * 1000000)
#define MCP_GW_CONNECT_USEC (10u * 1000000)
#define MCP_GW_IDLE_USEC (300ull * 1000000)
#define MCP_GW_SESSION_MAX 128u

/* Where a checked request goes. */
typedef struct mcp_gw_route {
        char session_id[MCP_GW_SESSION_MAX];
        uint16_t port;
        /* How many leading bytes of target to strip: what is left must be empty or start
         * with '/' or '?' (else 404); it is sent as "/" plus what is left when it does not
         * start with '/'. */
        size_t strip;
} mcp_gw_route;

typedef struct mcp_gw_ops {
        /* 0 with *route filled, or the HTTP status (400..599) to refuse it with. */
        int (*check)(void *data, const mcp_gw_request *req, mcp_gw_route *route);
        /* A stream socket connected or connecting (O_NONBLOCK) to port in session_id's
         * sandbox, the caller's own from then on (mcp_engine_port_connect). 0 or -errno. */
        int (*connect)(void *data, const char *session_id, uint16_t port, int *ret_fd,
                       msp_err *err);
        /* Once, when both sockets are closed (the connection is freed after it returns):
         * status 0 relayed (result: the relay's, see relay.h), else the HTTP status it
         * was refused with, or -1 when the client left or took too long before a
         * response; bytes from the client (after the head's rewrite) and to it. */
        void (*done)(void *data, int status, int result, uint64_t up, uint64_t down);
} mcp_gw_ops;

typedef struct mcp_gw_conn mcp_gw_conn;

/* The client has had its answer (a 101) from the server that hands it over. */
#define MCP_GW_ANSWERED 1u

/* Starts serving client (a connected stream socket, O_NONBLOCK; owned from now on and
 * closed on every path, an error of this call included). pre: at most MCP_GW_HEAD_MAX
 * bytes read from it already (with MCP_GW_ANSWERED: exactly the request head). flags: 0 or
 * MCP_GW_ANSWERED. idle_usec 0: MCP_GW_IDLE_USEC. 0 or -errno. */
int mcp_gw_conn_start(mcp_loop *loop, int client, const void *pre, size_t pre_len,
                      unsigned flags, uint64_t idle_usec, const mcp_gw_ops *ops, void *data,
                      mcp_gw_conn **ret);
/* Ends it now: every socket closed, done not called. */
void mcp_gw_conn_free(mcp_gw_conn *c);
