/* Request heads for the egress proxy (see proxy-http.h). */
#include "egress/proxy-http.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "oci/oci.h"

/* Hop-by-hop headers of the client's hop, never forwarded, and Host (made from the URL). */
static const char *const dropped_headers[] = { "proxy-connection", "proxy-authorization",
                                               "connection", "keep-alive", "host" };

/* The end of the head: the byte after the empty line (CRLF or bare LF), or 0. */
static size_t
head_end(const char *buf, size_t len)
{
        for (size_t i = 0; i + 1 < len; i++) {
                if (buf[i] != '\n')
                        continue;
                if (buf[i + 1] == '\n')
                        return i + 2;
                if (buf[i + 1] == '\r' && i + 2 < len && buf[i + 2] == '\n')
                        return i + 3;
        }
        return 0;
}

/* An RFC 9110 token (a method, a header name). */
static bool
is_token(const char *s, size_t n)
{
        if (n == 0)
                return false;
        for (size_t i = 0; i < n; i++)
                if (!((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') ||
                      (s[i] >= '0' && s[i] <= '9') || (s[i] && strchr("!#$%&'*+-.^_`|~", s[i]))))
                        return false;
        return true;
}

/* A control byte (NUL, a CR not ending the line, DEL; a tab only where tab_ok): an
 * upstream may end a line there, or a C string, where this parser does not (RFC 9110 5.5,
 * RFC 9112 2.2). */
static bool
has_ctl(const char *s, size_t n, bool tab_ok)
{
        for (size_t i = 0; i < n; i++)
                if (((unsigned char) s[i] < 0x20 && !(tab_ok && s[i] == '\t')) || s[i] == 0x7f)
                        return true;
        return false;
}

/* host[:port] or [v6][:port] of n bytes; port required when default_port is 0. */
static int
parse_authority(const char *s, size_t n, uint16_t default_port, mcp_proxy_request *r)
{
        const char *host = s, *colon = NULL;
        size_t hlen;
        if (n > 0 && s[0] == '[') {
                const char *close = memchr(s, ']', n);
                if (!close)
                        return -EINVAL;
                host = s + 1;
                hlen = (size_t) (close - host);
                if ((size_t) (close + 1 - s) < n) {
                        if (close[1] != ':')
                                return -EINVAL;
                        colon = close + 1;
                }
        } else {
                colon = memchr(s, ':', n);
                hlen = colon ? (size_t) (colon - s) : n;
        }
        if (hlen == 0 || hlen >= sizeof r->host || memchr(host, '@', hlen))
                return -EINVAL;
        memcpy(r->host, host, hlen);
        r->host[hlen] = '\0';
        r->port = default_port;
        if (colon) {
                size_t plen = n - (size_t) (colon + 1 - s);
                unsigned long v = 0;
                if (plen == 0 || plen > 5)
                        return -EINVAL;
                for (size_t i = 0; i < plen; i++) {
                        char c = colon[1 + i];
                        if (c < '0' || c > '9')
                                return -EINVAL;
                        v = v * 10 + (unsigned long) (c - '0');
                }
                if (v == 0 || v > 65535)
                        return -EINVAL;
                r->port = (uint16_t) v;
        }
        return r->port ? 0 : -EINVAL;
}

static bool
header_dropped(const char *line, size_t n)
{
        const char *colon = memchr(line, ':', n);
        size_t nl = colon ? (size_t) (colon - line) : n;
        for (size_t i = 0; i < ARRAY_SIZE(dropped_headers); i++)
                if (nl == strlen(dropped_headers[i]) && strncasecmp(line, dropped_headers[i], nl) == 0)
                        return true;
        return false;
}

static void
append(char *out, size_t *pos, const char *s, size_t n)
{
        memcpy(out + *pos, s, n);
        *pos += n;
}

/* The origin-form head (NUL-terminated): request line, Host from the URL, the client's
 * headers minus the hop-by-hop ones and its own Host lines, Connection: close. The
 * connection goes to the URL's host, so the upstream must hear that one (RFC 9112 3.2.2),
 * not another name served on the same address. Header lines checked on the way (no
 * folding, each has a name and a colon, no control byte). */
static int
build_forward(const char *buf, size_t head_len, const char *method, size_t mlen,
              const char *path, size_t plen, const char *version, const char *authority,
              size_t alen, mcp_proxy_request *r, const char **why)
{
        static const char conn_close[] = "Connection: close\r\n\r\n";
        /* Each line of the head at most once more than its length (a bare LF becomes
         * CRLF), the path "/" when it has none, the Host line, the last line. */
        size_t cap = 2 * head_len + 1 + alen + 8 + sizeof conn_close;
        _cleanup_free_ char *out = malloc(cap);
        if (!out)
                return -ENOMEM;
        size_t pos = 0;
        append(out, &pos, method, mlen);
        append(out, &pos, " ", 1);
        append(out, &pos, plen ? path : "/", plen ? plen : 1);
        append(out, &pos, " ", 1);
        append(out, &pos, version, 8);
        append(out, &pos, "\r\n", 2);
        append(out, &pos, "Host: ", 6);
        append(out, &pos, authority, alen);
        append(out, &pos, "\r\n", 2);
        const char *line = memchr(buf, '\n', head_len) + 1;
        const char *end = buf + head_len;
        while (line < end) {
                const char *nl = memchr(line, '\n', (size_t) (end - line));
                size_t n = (size_t) (nl - line);
                if (n > 0 && line[n - 1] == '\r')
                        n--;
                if (n == 0)
                        break;
                const char *colon = memchr(line, ':', n);
                if (line[0] == ' ' || line[0] == '\t' || !colon ||
                    !is_token(line, (size_t) (colon - line)) || has_ctl(line, n, true)) {
                        *why = "malformed header line";
                        return 400;
                }
                if (!header_dropped(line, n)) {
                        append(out, &pos, line, n);
                        append(out, &pos, "\r\n", 2);
                }
                line = nl + 1;
        }
        append(out, &pos, conn_close, sizeof conn_close);       /* with the NUL */
        pos--;
        r->forward = TAKE_PTR(out);
        r->forward_len = pos;
        return 0;
}

int
mcp_proxy_parse_head(const char *buf, size_t len, mcp_proxy_request *ret, const char **why)
{
        mcp_proxy_request r = { 0 };
        r.head_len = head_end(buf, len < MCP_PROXY_HEAD_MAX ? len : MCP_PROXY_HEAD_MAX);
        if (r.head_len == 0) {
                *why = "request head too large";
                return len >= MCP_PROXY_HEAD_MAX ? 431 : -EAGAIN;
        }
        const char *eol = memchr(buf, '\n', r.head_len);
        size_t llen = (size_t) (eol - buf);
        if (llen > 0 && buf[llen - 1] == '\r')
                llen--;
        const char *sp1 = memchr(buf, ' ', llen);
        const char *sp2 = sp1 ? memchr(sp1 + 1, ' ', llen - (size_t) (sp1 + 1 - buf)) : NULL;
        *why = "malformed request line";
        if (!sp1 || !sp2 || !is_token(buf, (size_t) (sp1 - buf)) || has_ctl(buf, llen, false))
                return 400;
        const char *target = sp1 + 1, *version = sp2 + 1;
        size_t tlen = (size_t) (sp2 - target), mlen = (size_t) (sp1 - buf);
        if (tlen == 0)
                return 400;
        if ((size_t) (buf + llen - version) != 8 || (strncmp(version, "HTTP/1.1", 8) != 0 &&
                                                     strncmp(version, "HTTP/1.0", 8) != 0)) {
                *why = "only HTTP/1.0 and HTTP/1.1 are served";
                return 505;
        }
        if (mlen == 7 && strncmp(buf, "CONNECT", 7) == 0) {
                if (parse_authority(target, tlen, 0, &r) < 0) {
                        *why = "CONNECT needs host:port";
                        return 400;
                }
                r.connect = true;
                *ret = r;
                return 0;
        }
        if (tlen < 7 || strncasecmp(target, "http://", 7) != 0) {
                *why = tlen >= 8 && strncasecmp(target, "https://", 8) == 0
                               ? "https:// URLs go through CONNECT"
                               : "not a proxy request: the target must be an absolute http:// URL";
                return tlen >= 8 && strncasecmp(target, "https://", 8) == 0 ? 405 : 400;
        }
        const char *auth = target + 7;
        size_t alen = strcspn(auth, "/?# ");
        if (auth + alen > sp2)
                alen = (size_t) (sp2 - auth);
        if (parse_authority(auth, alen, 80, &r) < 0) {
                *why = "malformed host in the URL";
                return 400;
        }
        const char *path = auth + alen;
        int s = build_forward(buf, r.head_len, buf, mlen, path, (size_t) (sp2 - path), version,
                              auth, alen, &r, why);
        if (s != 0)
                return s;
        *ret = r;
        return 0;
}

static const char *
reason_phrase(int status)
{
        switch (status) {
        case 400: return "Bad Request";
        case 403: return "Forbidden";
        case 405: return "Method Not Allowed";
        case 431: return "Request Header Fields Too Large";
        case 502: return "Bad Gateway";
        case 504: return "Gateway Timeout";
        case 505: return "HTTP Version Not Supported";
        default: return "Error";
        }
}

char *
mcp_proxy_error_response(int status, const char *detail, size_t *ret_len)
{
        char clean[512];
        size_t n = 0;
        for (; detail[n] && n < sizeof clean - 1; n++)
                clean[n] = (unsigned char) detail[n] < 0x20 || detail[n] == 0x7f ? '?' : detail[n];
        clean[n] = '\0';
        char *out = NULL;
        int len = asprintf(&out,
                           "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\n"
                           "Content-Length: %zu\r\nConnection: close\r\nX-Msp-Egress: %s\r\n\r\n"
                           "msp egress proxy: %s\n",
                           status, reason_phrase(status), strlen(clean) + 19, clean, clean);
        if (len < 0)
                return NULL;
        *ret_len = (size_t) len;
        return out;
}
