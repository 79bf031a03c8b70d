/* The stdio face of an exposed port: a loopback listener of msp-mcp's own that carries
 * HTTP (and WebSocket) connections to one port inside one session's sandbox through the
 * port gateway (gateway.h). Owner: port-listener.c.
 *
 * It listens on 127.0.0.1 (a port the kernel picks) and its URL holds a random 128-bit
 * token as the first path segment: http://127.0.0.1:<port>/<token>/. A request whose
 * path does not start with the token (compared in constant time) gets 404; the token is
 * stripped before the request reaches the sandbox, which sees "/" and what followed.
 * Anyone on the host who can reach loopback and knows the URL reaches the port: the URL
 * is the secret. At most MCP_PORT_LISTENER_CONNS connections at once; more wait in the
 * backlog. */
#pragma once

#include <stdint.h>

#include "oci/oci.h"
#include "base/base.h"

#define MCP_PORT_LISTENER_CONNS 64u
#define MCP_PORT_TOKEN_HEX 32u          /* 128 bits, in hex */

/* A stream socket connected or connecting (O_NONBLOCK, O_CLOEXEC) to port in session_id's
 * sandbox, the caller's from then on: mcp_engine_port_connect. 0 or -errno. */
typedef int (*mcp_port_connect_fn)(void *data, const char *session_id, uint16_t port,
                                   int *ret_fd, msp_err *err);

typedef struct mcp_port_listener mcp_port_listener;

/* Listens for session_id's port (session_id at most 127 bytes). 0 or -errno. */
int mcp_port_listener_new(mcp_loop *loop, mcp_port_connect_fn connect_fn, void *data,
                          const char *session_id, uint16_t port, mcp_port_listener **ret,
                          msp_err *err);
/* "http://127.0.0.1:<listener port>/<token>/", valid while l lives. */
const char *mcp_port_listener_url(const mcp_port_listener *l);
/* The loopback port it listens on. */
uint16_t mcp_port_listener_port(const mcp_port_listener *l);
/* Connections being served now. */
unsigned mcp_port_listener_connections(const mcp_port_listener *l);
/* Bytes carried so far, to the sandbox and from it (connections that ended). */
void mcp_port_listener_bytes(const mcp_port_listener *l, uint64_t *up, uint64_t *down);
/* Stops listening and closes every connection. */
mcp_port_listener *mcp_port_listener_free(mcp_port_listener *l);
