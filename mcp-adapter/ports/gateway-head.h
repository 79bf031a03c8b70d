/* The port gateway's request head: found, parsed and rewritten (see gateway.h), and what
 * the gateway's check sees of it. Owner: gateway-head.c. Pure functions over buffers, no
 * I/O. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define MCP_GW_HEAD_MAX (16u * 1024)
#define MCP_GW_HEADERS_MAX 100u

/* A parsed request head; every string is NUL-terminated and lives as long as the check
 * runs. */
typedef struct mcp_gw_request {
        const char *method;
        const char *target;             /* as sent: the path with its query */
        const char *version;            /* "HTTP/1.1" or "HTTP/1.0" */
        size_t n_headers;
        struct {
                const char *name, *value;       /* the value without surrounding blanks */
        } headers[MCP_GW_HEADERS_MAX];
} mcp_gw_request;

/* The value of the first header called name (case-insensitive), or NULL. */
const char *mcp_gw_header(const mcp_gw_request *req, const char *name);

/* The length of the head in buf[0..len) up to and with its empty line, or 0 when it is not
 * complete yet. */
size_t gw_head_end(const char *buf, size_t len);
/* Parses the head buf[0..len) (gw_head_end's length) into req, its strings in
 * scratch[0..len] (a copy of the head, cut at separators). 0 or -EPROTO. */
int gw_head_parse(const char *buf, size_t len, char *scratch, mcp_gw_request *req);
/* The head to send on: req's request line with target[strip..] as its path, then its
 * headers (for an ordinary request without Connection, Keep-Alive, Proxy-Connection and
 * with `Connection: close`). Its length in out, or -ENOENT (what is left after strip is no
 * path), -E2BIG (more than size). */
ssize_t gw_head_rewrite(const mcp_gw_request *req, size_t strip, char *out, size_t size);
/* The request asks for an upgrade (an `Upgrade:` header). */
bool gw_head_is_upgrade(const mcp_gw_request *req);
