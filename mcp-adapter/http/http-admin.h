/* The HTTP transport's operations beside serving requests that the requests use: the
 * tenants' quotas, the probes' and /metrics' answers, the 401 challenge, the TLS and token
 * files, the audit log's HTTP lines. Draining, reloading and --check are
 * http-control.h's. Owner: http-admin.c. */
#pragma once

#include <microhttpd.h>
#include <stdbool.h>
#include <stddef.h>

#include "http/http-types.h"
#include "oci/oci.h"

/* The audit log's "http" line of a finished exchange, and its "auth_failure" line. */
void mcp_http_audit_access(http_exchange *x, bool completed);
void mcp_http_audit_auth(http_exchange *x, const char *reason);
/* The admission hook of every HTTP session (data: its http_session). */
int mcp_http_admit(mcp_server *srv, mcp_admit what, char *msg, size_t size, void *data);
/* The tenant's quota of MCP sessions (0: none, without authentication). */
unsigned mcp_http_session_quota(const mcp_http *h, const char *tenant);
void mcp_http_free_windows(mcp_http *h);
enum MHD_Result mcp_http_reply_ready(http_exchange *x);
enum MHD_Result mcp_http_reply_metrics(http_exchange *x);
enum MHD_Result mcp_http_reply_unauthorized(http_exchange *x, bool presented);
int mcp_http_load_tls(mcp_http *h, msp_err *err);
int mcp_http_load_auth(mcp_http *h, msp_err *err);
