/* The HTTP transport's sessions (Mcp-Session-Id): each is its own MCP server (server.h) on
 * the shared engine. Owner: http-session.c. */
#pragma once

#include <stddef.h>

#include "http/http-types.h"
#include "oci/oci.h"

/* A session of tenant, within its quota of MCP sessions (its least recently used idle one
 * gives way); -EDQUOT or -EBUSY and msg saying why not. */
int mcp_http_session_new(mcp_http *h, const char *tenant, http_session **ret, char *msg,
                         size_t size);
/* The session id of tenant; NULL also when another tenant's. */
http_session *mcp_http_session_find(mcp_http *h, const char *id, const char *tenant);
/* s ends: its runs are cancelled, its waiting exchanges are told, its streams end. */
void mcp_http_session_end(mcp_http *h, http_session *s, const char *why);
/* A notifications/cancelled for one of s's waiting requests (params) ends that exchange. */
void mcp_http_session_cancelled(http_session *s, const oci_json *params);
/* Watching the sandbox sessions' expiry, and the sweep of idle sessions. */
void mcp_http_sessions_start(mcp_http *h);
