/* port_expose: a port a session's programs listen on, reached from outside its sandbox.
 * The exposed ports of every session (one table per server over stdio, one for all the
 * HTTP sessions), freed with their session: over stdio each is a loopback listener with a
 * token URL (ports/port-listener.h); over HTTP a path of the transport's own listener,
 * which asks mcp_ports_exposed before it lets a request through. Owner: tools-ports.c. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "mcp/tools-args.h"

/* At most this many exposed ports per session. */
#define MCP_PORTS_PER_SESSION 8u

typedef struct mcp_ports mcp_ports;

/* base_url NULL: stdio (a loopback listener per port); else the transport's URL that
 * "/sessions/<id>/ports/<port>/" is appended to. Hears of every session's end
 * (mcp_engine_set_session_gone), until freed. */
int mcp_ports_new(mcp_loop *loop, mcp_engine *engine, const char *base_url, mcp_ports **ret);
mcp_ports *mcp_ports_free(mcp_ports *p);
/* The session's port was exposed (and the session has not ended since). */
bool mcp_ports_exposed(const mcp_ports *p, const char *session_id, uint16_t port);
/* The session's exposed ports, at most max, into ports; how many. */
unsigned mcp_ports_of(const mcp_ports *p, const char *session_id, uint16_t *ports, unsigned max);

void mcp_tool_port_expose(mcp_server *srv, const mcp_rpc_id *id, targs *a, const mcp_rpc_id *token);
