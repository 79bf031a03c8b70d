/* msp-mcp over MCP Streamable HTTP (--listen): one endpoint, /mcp, served by libmicrohttpd
 * driven from the event loop (no threads of its own). Every HTTP session (Mcp-Session-Id,
 * issued at initialize) is its own MCP server state (server.h) on the shared engine.
 * Owner: http.c (this header's new, start, free: the daemons, the requests);
 * http-control.c (http-control.h: drain, reload, check) and http-admin.c (the quotas,
 * probes, metrics, TLS and token files, the 401 challenge, the audit lines) beside it.
 * Each file of http/ uses only those after it: http.c, http-control.c, http-session.c
 * (the sessions), http-admin.c, http-stream.c (SSE streams, resumption), http-exchange.c
 * (a request's responses; its connection suspended and woken), http-daemon.c (MHD driven from the loop, the request head deadline); below them
 * http-listen.c (the listening sockets), oauth.c, https-get.c, auth.c. http-types.h holds
 * the state they share (types only). This header includes none of them. */
#pragma once

#include <stdbool.h>
#include <stdio.h>

#include "config.h"
#include "engine/engine.h"
#include "oci/oci.h"
#include "observe/observe.h"
#include "base/base.h"
#include "http/http-control.h"

typedef struct mcp_http mcp_http;

/* The files of --tls-cert/--tls-key, --auth-tokens and the --oauth-* flags read and
 * checked (an https:// JWKS fetched), before anything starts; mcp_http_start() serves with
 * what they hold. */
int mcp_http_new(const mcp_config *cfg, mcp_http **ret, msp_err *err);
/* Binds cfg->listen and serves it from loop until mcp_http_free(). On an error the caller
 * frees http (while loop lives). */
int mcp_http_start(mcp_http *http, mcp_loop *loop, mcp_engine *engine, mcp_logger *log,
                   msp_err *err);
/* Ends every session (their runs are cancelled), closes every connection. */
mcp_http *mcp_http_free(mcp_http *http);
static inline void
mcp_http_freep(mcp_http **h)
{
        mcp_http_free(*h);
}
