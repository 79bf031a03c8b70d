/* The egress proxy's side of HTTP/1.x: the head of a request a sandbox sends to its proxy,
 * and the head forwarded upstream. Owner: proxy-http.c. Pure functions: no I/O.
 *
 * Two forms are served: `CONNECT host:port HTTP/1.x` (a tunnel; TLS stays end to end) and
 * a request with an absolute http:// URI (`GET http://host[:port]/path HTTP/1.1`), which is
 * forwarded in origin form with `Connection: close` (one request per upstream connection:
 * a kept-alive client connection cannot switch hosts) and without the Proxy-* headers. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "egress/proxy-policy.h"

/* Larger heads are refused (431). */
#define MCP_PROXY_HEAD_MAX 16384

typedef struct mcp_proxy_request {
        bool connect;
        char host[MCP_EGRESS_HOST_MAX + 3];     /* as the request names it, brackets dropped */
        uint16_t port;
        size_t head_len;                        /* bytes of the head, terminator included */
        char *forward;                          /* the head to send upstream, NUL-terminated
                                                 * (NULL: CONNECT) */
        size_t forward_len;
} mcp_proxy_request;

/* 0 with *ret filled (forward malloc'd, the caller's), -EAGAIN while the head is
 * incomplete, or the HTTP status to answer with (400 malformed, 405 a method or scheme not
 * served, 431 head too large, 505 not HTTP/1.x) and a reason in `why`. */
int mcp_proxy_parse_head(const char *buf, size_t len, mcp_proxy_request *ret,
                         const char **why);

/* "HTTP/1.1 <status> <reason>" with a text/plain body naming `detail` and
 * Connection: close; malloc'd, NULL on ENOMEM. Also sets the X-Msp-Egress header to
 * `detail` so that a client printing only headers sees it. */
char *mcp_proxy_error_response(int status, const char *detail, size_t *ret_len);
