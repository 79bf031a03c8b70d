/* UTF-8 repair, base64 and RFC 3339 (see text.h). */
#include "base/text.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Length of the valid UTF-8 sequence at p (1..4), or 0 when it is invalid, a NUL, an
 * overlong form, a surrogate or beyond U+10FFFF. */
static size_t
utf8_seq(const unsigned char *p, size_t avail)
{
        unsigned c = p[0];
        if (c == 0)
                return 0;
        if (c < 0x80)
                return 1;
        size_t n;
        unsigned cp;
        if (c >= 0xc2 && c <= 0xdf) {
                n = 2;
                cp = c & 0x1f;
        } else if (c >= 0xe0 && c <= 0xef) {
                n = 3;
                cp = c & 0x0f;
        } else if (c >= 0xf0 && c <= 0xf4) {
                n = 4;
                cp = c & 0x07;
        } else {
                return 0;
        }
        if (avail < n)
                return 0;
        for (size_t i = 1; i < n; i++) {
                if ((p[i] & 0xc0) != 0x80)
                        return 0;
                cp = (cp << 6) | (p[i] & 0x3f);
        }
        if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
            (cp >= 0xd800 && cp <= 0xdfff))
                return 0;
        return n;
}

size_t
mcp_utf8_valid_len(const char *buf, size_t len)
{
        const unsigned char *p = (const unsigned char *) buf;
        size_t i = 0;
        for (size_t n; i < len && (n = utf8_seq(p + i, len - i)) > 0;)
                i += n;
        return i;
}

bool
mcp_utf8_valid(const char *buf, size_t len)
{
        return mcp_utf8_valid_len(buf, len) == len;
}

/* Bytes of c escaped by msp's JSON writer once (a string value), and twice (that escape
 * written again as part of a string). */
static size_t
esc_once(unsigned char c)
{
        if (c == '"' || c == '\\' || c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t')
                return 2;
        return c < 0x20 ? 6 : 1;
}

static size_t
esc_twice(unsigned char c)
{
        if (c == '"' || c == '\\')
                return 4;       /* \\\" */
        if (c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t')
                return 3;       /* \\n */
        return c < 0x20 ? 7 : 1; /* \\u0001 */
}

size_t
mcp_json_fit(const char *buf, size_t len, size_t budget, unsigned once, unsigned twice,
             size_t *ret_cost)
{
        size_t cost = 0, i = 0;
        for (; i < len; i++) {
                unsigned char c = (unsigned char) buf[i];
                size_t w = once * esc_once(c) + twice * esc_twice(c);
                if (cost + w > budget)
                        break;
                cost += w;
        }
        /* Back to a character boundary (continuation bytes cost 1 each). */
        while (i > 0 && i < len && ((unsigned char) buf[i] & 0xc0) == 0x80) {
                i--;
                cost -= once + twice;
        }
        if (ret_cost)
                *ret_cost = cost;
        return i;
}

char *
mcp_utf8_sanitize(const char *buf, size_t len, size_t *ret_len)
{
        const unsigned char *p = (const unsigned char *) buf;
        /* Worst case: every byte becomes a 3-byte U+FFFD. */
        if (len > (SIZE_MAX - 1) / 3)
                return NULL;
        char *out = malloc(len * 3 + 1);
        if (!out)
                return NULL;
        size_t o = 0;
        for (size_t i = 0; i < len;) {
                size_t n = utf8_seq(p + i, len - i);
                if (n) {
                        memcpy(out + o, p + i, n);
                        o += n;
                        i += n;
                } else {
                        memcpy(out + o, "\xef\xbf\xbd", 3);
                        o += 3;
                        i++;
                }
        }
        out[o] = '\0';
        /* Give back the slack of the worst-case allocation when it is large. */
        if (len > 4096 && o < len * 2) {
                char *shrunk = realloc(out, o + 1);
                if (shrunk)
                        out = shrunk;
        }
        if (ret_len)
                *ret_len = o;
        return out;
}

size_t
mcp_utf8_tail_start(const char *buf, size_t len, size_t max)
{
        if (len <= max)
                return len;
        size_t start = len - max;
        /* Skip continuation bytes so that the tail starts on a character. */
        while (start < len && ((unsigned char) buf[start] & 0xc0) == 0x80)
                start++;
        return len - start;
}

/* U+0080..U+009F, U+2028/U+2029, U+202A..U+202E and U+2066..U+2069: no glyph, but a
 * meaning to a terminal (C1), to a log viewer (new lines) or to the text's direction. */
static bool
inert_cp(unsigned cp)
{
        return !((cp >= 0x80 && cp <= 0x9f) || (cp >= 0x2028 && cp <= 0x202e) ||
                 (cp >= 0x2066 && cp <= 0x2069));
}

static unsigned
utf8_cp(const unsigned char *p, size_t n)
{
        if (n == 1)
                return p[0];
        unsigned cp = p[0] & (n == 2 ? 0x1f : n == 3 ? 0x0f : 0x07);
        for (size_t i = 1; i < n; i++)
                cp = (cp << 6) | (p[i] & 0x3f);
        return cp;
}

size_t
mcp_text_escape(const char *buf, size_t len, char *out, size_t size)
{
        const unsigned char *p = (const unsigned char *) buf;
        size_t o = 0;
        for (size_t i = 0; i < len;) {
                char esc[8];
                const char *piece = esc;
                size_t n = utf8_seq(p + i, len - i), m;
                unsigned cp = n ? utf8_cp(p + i, n) : 0;
                if (n == 0) {
                        m = (size_t) snprintf(esc, sizeof esc, "\\x%02x", p[i]);
                        n = 1;
                } else if (cp == '\\') {
                        piece = "\\\\";
                        m = 2;
                } else if (cp < 0x20 || cp == 0x7f) {
                        static const char named[] = { ['\n'] = 'n', ['\r'] = 'r', ['\t'] = 't', [0x1b] = 'e' };
                        char c = cp < sizeof named ? named[cp] : 0;
                        m = c ? (size_t) snprintf(esc, sizeof esc, "\\%c", c)
                              : (size_t) snprintf(esc, sizeof esc, "\\x%02x", cp);
                } else if (!inert_cp(cp)) {
                        m = (size_t) snprintf(esc, sizeof esc, "\\u%04x", cp);
                } else {
                        piece = (const char *) p + i;
                        m = n;
                }
                if (o + m >= size)
                        break;
                memcpy(out + o, piece, m);
                o += m;
                i += n;
        }
        if (size)
                out[o] = '\0';
        return o;
}

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int
mcp_parse_int64(const char *s, int64_t *ret)
{
        const char *p = s;
        if (*p == '-')
                p++;
        if (!*p)
                return -EINVAL;
        for (; *p; p++)
                if (*p < '0' || *p > '9')
                        return -EINVAL;
        errno = 0;
        char *end;
        long long v = strtoll(s, &end, 10);
        if (errno || *end)
                return -ERANGE;
        *ret = v;
        return 0;
}

char *
mcp_base64_encode(const void *data, size_t len, size_t *ret_len)
{
        const unsigned char *p = data;
        if (len > (SIZE_MAX - 4) / 4 * 3)
                return NULL;
        size_t n = (len + 2) / 3 * 4;
        char *out = malloc(n + 1);
        if (!out)
                return NULL;
        size_t o = 0, i = 0;
        for (; i + 3 <= len; i += 3) {
                unsigned v = (unsigned) p[i] << 16 | (unsigned) p[i + 1] << 8 | p[i + 2];
                out[o++] = b64[v >> 18];
                out[o++] = b64[(v >> 12) & 63];
                out[o++] = b64[(v >> 6) & 63];
                out[o++] = b64[v & 63];
        }
        if (i < len) {
                unsigned v = (unsigned) p[i] << 16 | (i + 1 < len ? (unsigned) p[i + 1] << 8 : 0);
                out[o++] = b64[v >> 18];
                out[o++] = b64[(v >> 12) & 63];
                out[o++] = i + 1 < len ? b64[(v >> 6) & 63] : '=';
                out[o++] = '=';
        }
        out[o] = '\0';
        if (ret_len)
                *ret_len = o;
        return out;
}

static int
b64_value(char c)
{
        if (c >= 'A' && c <= 'Z')
                return c - 'A';
        if (c >= 'a' && c <= 'z')
                return c - 'a' + 26;
        if (c >= '0' && c <= '9')
                return c - '0' + 52;
        if (c == '+')
                return 62;
        if (c == '/')
                return 63;
        return -1;
}

size_t
mcp_base64_decoded_max(size_t len)
{
        return (len + 3) / 4 * 3;
}

int
mcp_base64_decode(const char *s, size_t len, unsigned char **ret, size_t *ret_len)
{
        if (len % 4 != 0)
                return -EINVAL;
        unsigned char *out = malloc(mcp_base64_decoded_max(len) + 1);
        if (!out)
                return -ENOMEM;
        size_t o = 0;
        for (size_t i = 0; i < len; i += 4) {
                int v[4];
                size_t pad = 0;
                for (size_t j = 0; j < 4; j++) {
                        if (s[i + j] == '=' && i + 4 == len && j >= 2) {
                                v[j] = 0;
                                pad++;
                                continue;
                        }
                        v[j] = pad ? -1 : b64_value(s[i + j]);
                        if (v[j] < 0) {
                                free(out);
                                return -EINVAL;
                        }
                }
                unsigned w = (unsigned) v[0] << 18 | (unsigned) v[1] << 12 | (unsigned) v[2] << 6 |
                             (unsigned) v[3];
                out[o++] = (unsigned char) (w >> 16);
                if (pad < 2)
                        out[o++] = (unsigned char) (w >> 8);
                if (pad < 1)
                        out[o++] = (unsigned char) w;
        }
        out[o] = '\0';
        *ret = out;
        *ret_len = o;
        return 0;
}

static void
rfc3339(uint64_t wall_usec, bool ms, char buf[32])
{
        time_t t = (time_t) (wall_usec / 1000000);
        struct tm tm;
        size_t n = gmtime_r(&t, &tm) ? strftime(buf, 32, "%Y-%m-%dT%H:%M:%S", &tm) : 0;
        if (n == 0)
                n = (size_t) snprintf(buf, 32, "1970-01-01T00:00:00");
        if (ms)
                snprintf(buf + n, 32 - n, ".%03uZ", (unsigned) (wall_usec / 1000 % 1000));
        else
                snprintf(buf + n, 32 - n, "Z");
}

void
mcp_rfc3339(uint64_t wall_usec, char buf[32])
{
        rfc3339(wall_usec, false, buf);
}

void
mcp_rfc3339_ms(uint64_t wall_usec, char buf[32])
{
        rfc3339(wall_usec, true, buf);
}
