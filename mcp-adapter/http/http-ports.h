/* The exposed ports of sandbox sessions on the HTTP transport's own listener:
 * /sessions/<id>/ports/<port>/..., authenticated as the MCP endpoint is, for the tenant
 * owning the session and a port it exposed (port_expose), through the port gateway
 * (ports/gateway.h). Owner: http-ports.c.
 *
 * An upgrade request (WebSocket) is answered 101 by libmicrohttpd and its socket handed to
 * the gateway (MCP_GW_ANSWERED: the port's own 101 read and dropped), raw both ways from
 * then on. An ordinary request is read whole (its body within --max-message-bytes), sent to
 * the port as HTTP/1.0 (so that its response is delimited by its end) through a socket pair
 * into the gateway, and the port's response, read whole within HTTP_PORT_RESPONSE_MAX, is
 * answered through libmicrohttpd. msp-mcp's Authorization header never reaches the port. */
#pragma once

#include <microhttpd.h>
#include <stdbool.h>

#include "http/http-types.h"

#define HTTP_PORT_RESPONSE_MAX (64u * 1024 * 1024)

/* The path is one of an exposed port's (/sessions/...). */
bool mcp_http_port_path(const char *url);
/* The request's first call, once it is authenticated: the checks, an upgrade answered. */
enum MHD_Result mcp_http_port_start(http_exchange *x, const char *url, const char *method,
                                     const char *version);
/* Its body is in (or resumed: its response is there). */
enum MHD_Result mcp_http_port_body_done(http_exchange *x);
/* The exchange ends: what it had in flight goes. */
void mcp_http_port_exchange_done(http_exchange *x);
/* Every port connection ends (the server stops). */
void mcp_http_ports_stop(mcp_http *h);
