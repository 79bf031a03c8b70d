/* libFuzzer target for the port gateway's request heads (mcp-adapter/ports/gateway-head.c),
 * which msp-mcp parses from any client that reaches an exposed port's listener. Beyond the
 * sanitizers it checks what the gateway relies on: an accepted head's strings lie within
 * its copy, its target is a path and its version HTTP/1.0 or 1.1; the head rebuilt for the
 * sandbox (with a strip chosen by the input) parses again to the same method, version and
 * headers, its target is the rest after the strip (a '/' put first when missing), and an
 * ordinary request carries exactly one Connection header, `close`, while an upgrade keeps
 * every header (a head at the header limit is left out of these checks). Built only with clang (tests/meson.build); run with tests/fuzz/run-fuzz.sh. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ports/gateway-head.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char scratch[MCP_GW_HEAD_MAX + 1], scratch2[2 * MCP_GW_HEAD_MAX + 1];
static char out[2 * MCP_GW_HEAD_MAX];
static mcp_gw_request req, again;

static int
inside(const char *p)
{
        return p >= scratch && p < scratch + sizeof scratch;
}

static int
hop(const char *name)
{
        return strcasecmp(name, "connection") == 0 || strcasecmp(name, "keep-alive") == 0 ||
               strcasecmp(name, "proxy-connection") == 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size < 1 || size > MCP_GW_HEAD_MAX + 1)
                return 0;
        /* The first byte chooses the strip; the head is the rest. */
        size_t strip = data[0];
        const char *buf = (const char *) data + 1;
        size_t len = gw_head_end(buf, size - 1);
        if (len == 0 || gw_head_parse(buf, len, scratch, &req) < 0)
                return 0;
        if (!inside(req.method) || !inside(req.target) || !inside(req.version) ||
            req.target[0] != '/' || req.n_headers > MCP_GW_HEADERS_MAX ||
            (strcmp(req.version, "HTTP/1.1") != 0 && strcmp(req.version, "HTTP/1.0") != 0))
                abort();
        for (size_t i = 0; i < req.n_headers; i++)
                if (!inside(req.headers[i].name) || !inside(req.headers[i].value))
                        abort();
        ssize_t n = gw_head_rewrite(&req, strip, out, sizeof out);
        /* A head with the most headers the parser takes is sent on with one more (its
         * Connection) than it would take again: only the others are compared. */
        if (n < 0 || req.n_headers == MCP_GW_HEADERS_MAX)
                return 0;
        if (gw_head_end(out, (size_t) n) != (size_t) n ||
            gw_head_parse(out, (size_t) n, scratch2, &again) < 0)
                abort();
        const char *rest = req.target + strip;
        if (strcmp(again.method, req.method) != 0 || strcmp(again.version, req.version) != 0 ||
            strcmp(again.target + (rest[0] == '/' ? 0 : 1), rest) != 0)
                abort();
        int upgrade = gw_head_is_upgrade(&req);
        size_t k = 0, connection = 0;
        for (size_t i = 0; i < req.n_headers; i++) {
                if (!upgrade && hop(req.headers[i].name))
                        continue;
                if (k >= again.n_headers || strcmp(again.headers[k].name, req.headers[i].name) != 0 ||
                    strcmp(again.headers[k].value, req.headers[i].value) != 0)
                        abort();
                k++;
        }
        for (size_t i = 0; i < again.n_headers; i++)
                connection += strcasecmp(again.headers[i].name, "connection") == 0;
        if (!upgrade && (k + 1 != again.n_headers || connection != 1 ||
                         strcmp(again.headers[k].value, "close") != 0))
                abort();
        if (upgrade && k != again.n_headers)
                abort();
        return 0;
}
