/* The port gateway's request head (see gateway-head.h). Strict where it matters for the
 * check: a request line of three parts, a target that is a path ('/'...), HTTP/1.0 or
 * 1.1, lines ended by CRLF, no NUL, no bare CR, no folded header line, header names that
 * are tokens. What passes is what the sandbox's server receives, rebuilt from the parsed
 * parts: nothing the check did not see reaches it. */
#include "ports/gateway-head.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/types.h>

size_t
gw_head_end(const char *buf, size_t len)
{
        for (size_t i = 3; i < len; i++)
                if (buf[i] == '\n' && buf[i - 1] == '\r' && buf[i - 2] == '\n' && buf[i - 3] == '\r')
                        return i + 1;
        return 0;
}

static bool
is_tchar(unsigned char c)
{
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
               (c && strchr("!#$%&'*+-.^_`|~", c));
}

static bool
is_token(const char *s)
{
        if (!*s)
                return false;
        for (; *s; s++)
                if (!is_tchar((unsigned char) *s))
                        return false;
        return true;
}

/* A target to pass on: a path, no blank or control character. */
static bool
is_path(const char *s)
{
        if (s[0] != '/')
                return false;
        for (; *s; s++)
                if ((unsigned char) *s <= ' ' || *s == 0x7f)
                        return false;
        return true;
}

static char *
trim(char *s)
{
        while (*s == ' ' || *s == '\t')
                s++;
        size_t n = strlen(s);
        while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
                s[--n] = '\0';
        return s;
}

int
gw_head_parse(const char *buf, size_t len, char *scratch, mcp_gw_request *req)
{
        if (len < 4 || memcmp(buf + len - 4, "\r\n\r\n", 4) != 0)
                return -EPROTO;
        memcpy(scratch, buf, len);
        scratch[len] = '\0';
        /* Lines: each CRLF becomes NUL; a NUL or a CR elsewhere is refused. */
        for (size_t i = 0; i < len; i++) {
                if (scratch[i] == '\0')
                        return -EPROTO;
                if (scratch[i] == '\r') {
                        if (i + 1 >= len || scratch[i + 1] != '\n')
                                return -EPROTO;
                        scratch[i] = scratch[i + 1] = '\0';
                        i++;
                } else if (scratch[i] == '\n') {
                        return -EPROTO;
                }
        }
        char *line = scratch, *end = scratch + len;
        /* Each line ends with its NUL pair; the next one starts after it (taken before the
         * line is cut further). */
        char *next = line + strlen(line) + 2;
        /* The request line: METHOD SP target SP version. */
        char *sp1 = strchr(line, ' ');
        char *sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
        if (!sp1 || !sp2 || strchr(sp2 + 1, ' '))
                return -EPROTO;
        *sp1 = *sp2 = '\0';
        req->method = line;
        req->target = sp1 + 1;
        req->version = sp2 + 1;
        if (!is_token(req->method) || !is_path(req->target) ||
            (strcmp(req->version, "HTTP/1.1") != 0 && strcmp(req->version, "HTTP/1.0") != 0))
                return -EPROTO;
        req->n_headers = 0;
        for (line = next; line < end && *line; line = next) {
                next = line + strlen(line) + 2;
                char *colon = strchr(line, ':');
                if (!colon || req->n_headers == MCP_GW_HEADERS_MAX)
                        return -EPROTO;
                *colon = '\0';
                if (!is_token(line))
                        return -EPROTO;         /* also a folded line (leading blank) */
                char *value = trim(colon + 1);
                for (const char *v = value; *v; v++)
                        if ((unsigned char) *v < ' ' && *v != '\t')
                                return -EPROTO;
                req->headers[req->n_headers].name = line;
                req->headers[req->n_headers].value = value;
                req->n_headers++;
        }
        return 0;
}

const char *
mcp_gw_header(const mcp_gw_request *req, const char *name)
{
        for (size_t i = 0; i < req->n_headers; i++)
                if (strcasecmp(req->headers[i].name, name) == 0)
                        return req->headers[i].value;
        return NULL;
}

bool
gw_head_is_upgrade(const mcp_gw_request *req)
{
        return mcp_gw_header(req, "upgrade") != NULL;
}

/* Appends s (n bytes) at *at; false when it does not fit. */
static bool
put(char *out, size_t size, size_t *at, const char *s, size_t n)
{
        if (n > size - *at)
                return false;
        memcpy(out + *at, s, n);
        *at += n;
        return true;
}

#define PUTS(s) put(out, size, &at, (s), strlen(s))

ssize_t
gw_head_rewrite(const mcp_gw_request *req, size_t strip, char *out, size_t size)
{
        size_t tlen = strlen(req->target);
        if (strip > tlen)
                return -ENOENT;
        const char *rest = req->target + strip;
        if (rest[0] && rest[0] != '/' && rest[0] != '?')
                return -ENOENT;
        bool upgrade = gw_head_is_upgrade(req);
        size_t at = 0;
        bool ok = PUTS(req->method) && PUTS(" ") && (rest[0] == '/' || PUTS("/")) && PUTS(rest) &&
                  PUTS(" ") && PUTS(req->version) && PUTS("\r\n");
        for (size_t i = 0; ok && i < req->n_headers; i++) {
                const char *name = req->headers[i].name;
                if (!upgrade && (strcasecmp(name, "connection") == 0 ||
                                 strcasecmp(name, "keep-alive") == 0 ||
                                 strcasecmp(name, "proxy-connection") == 0))
                        continue;
                ok = PUTS(name) && PUTS(": ") && PUTS(req->headers[i].value) && PUTS("\r\n");
        }
        ok = ok && (upgrade || PUTS("Connection: close\r\n")) && PUTS("\r\n");
        return ok ? (ssize_t) at : -E2BIG;
}
