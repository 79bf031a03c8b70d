/* One request of the HTTP transport and its connection (http_exchange, http-types.h):
 * responses queued on it, the connection suspended while its answer is not there yet and
 * woken when it is, the client leaving meanwhile. Owner: http-exchange.c. */
#pragma once

#include <microhttpd.h>
#include <stddef.h>

#include "http/http-types.h"
#include "rpc/rpc.h"

/* resp as x's response (status counted in the metrics, kept for the audit line). */
enum MHD_Result mcp_http_queue(http_exchange *x, unsigned status, struct MHD_Response *resp);
/* A response of body (copied); type and allow: those headers, when not NULL. */
enum MHD_Result mcp_http_reply(http_exchange *x, unsigned status, const char *type,
                               const char *body, size_t len, const char *allow);
/* An HTTP error with a JSON-RPC error object as its body (id: the request's, if known). */
enum MHD_Result mcp_http_reply_error(http_exchange *x, unsigned status, const mcp_rpc_id *id,
                                     int code, const char *msg);
/* A suspended exchange's connection goes on (MHD asks for its response again). */
void mcp_http_wake(http_exchange *x);
/* Until mcp_http_wake(); the client closing the connection wakes it too (client_gone). */
void mcp_http_suspend(http_exchange *x);
/* x leaves its session's waiting exchanges (x->sess NULL after; the session was used now). */
void mcp_http_exchange_unlink(http_exchange *x);
/* x's socket is no longer watched for the client leaving. */
void mcp_http_exchange_unwatch(http_exchange *x);
