/* Paths and quoting for messages about JSON values: the path segments the scan, the
 * document model and the typed reader append, and the quoted form of an offending value.
 * Depends only on the UTF-8 rule of logline.c. */
#include "oci/json-quote.h"
#include "oci/logline.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static void
path_append(char *buf, size_t size, size_t *len, const char *seg)
{
        if (*len >= 3 && memcmp(buf + *len - 3, "...", 3) == 0)
                return;                 /* already truncated */
        size_t n = strlen(seg);
        if (*len + n + 1 > size) {
                if (*len + 4 <= size) {
                        memcpy(buf + *len, "...", 4);
                        *len += 3;
                }
                return;
        }
        memcpy(buf + *len, seg, n + 1);
        *len += n;
}

static bool
is_identifier(const char *key)
{
        if (!*key)
                return false;
        for (const char *p = key; *p; p++)
                if (!isalnum((unsigned char) *p) && *p != '_')
                        return false;
        return true;
}

/* Called for every key and index the reader visits (twice per config), so the usual
 * segments are built without snprintf. */
void
oci_json_path_append_key(char *buf, size_t size, size_t *len, const char *key)
{
        char seg[OCI_JR_VALUE_MAX * 2 + 16];
        size_t kl = strlen(key);

        if (kl <= OCI_JR_VALUE_MAX && is_identifier(key)) {
                size_t n = 0;
                if (*len)
                        seg[n++] = '.';
                memcpy(seg + n, key, kl + 1);
        } else {
                char q[OCI_JR_VALUE_MAX * 2 + 8];
                oci_json_quote(key, q, sizeof q);
                snprintf(seg, sizeof seg, "[%s]", q);
        }
        path_append(buf, size, len, seg);
}

void
oci_json_path_append_index(char *buf, size_t size, size_t *len, size_t i)
{
        char seg[32], digits[24];
        size_t n = 0, k = 0;

        do
                digits[k++] = (char) ('0' + i % 10);
        while ((i /= 10) > 0);
        seg[n++] = '[';
        while (k > 0)
                seg[n++] = digits[--k];
        seg[n++] = ']';
        seg[n] = '\0';
        path_append(buf, size, len, seg);
}

/* Escape one byte JSON-style into out (at least 7 bytes); returns its length. */
static size_t
escape_byte(unsigned char c, char *out)
{
        switch (c) {
        case '"':
                return (size_t) sprintf(out, "\\\"");
        case '\\':
                return (size_t) sprintf(out, "\\\\");
        case '\n':
                return (size_t) sprintf(out, "\\n");
        case '\t':
                return (size_t) sprintf(out, "\\t");
        case '\r':
                return (size_t) sprintf(out, "\\r");
        default:
                if (c < 0x20 || c == 0x7f)
                        return (size_t) sprintf(out, "\\u%04x", c);
                out[0] = (char) c;
                out[1] = '\0';
                return 1;
        }
}

/* Quotes s for a message: JSON-style escapes, invalid UTF-8 bytes as \xNN, at most
 * OCI_JR_VALUE_MAX input bytes (then "..."). The output is always valid UTF-8, so a
 * message can be embedded in JSON (logs, MCP replies) as is. */
void
oci_json_quote(const char *s, char *buf, size_t size)
{
        const unsigned char *u = (const unsigned char *) s;
        size_t o = 0, i = 0;
        if (size < 16) {
                if (size)
                        buf[0] = '\0';
                return;
        }
        buf[o++] = '"';
        while (u[i]) {
                char e[8];
                size_t in = 1, k;
                if (u[i] < 0x80) {
                        k = escape_byte(u[i], e);
                } else if ((in = oci_utf8_seq_len(u + i)) > 0) {
                        memcpy(e, u + i, in);
                        k = in;
                } else {
                        in = 1;
                        k = (size_t) snprintf(e, sizeof e, "\\x%02x", u[i]);
                }
                /* room for this, "...", the closing quote and the NUL */
                if (i + in > OCI_JR_VALUE_MAX || o + k + 5 > size)
                        break;
                memcpy(buf + o, e, k);
                o += k;
                i += in;
        }
        if (u[i]) {
                memcpy(buf + o, "...", 3);
                o += 3;
        }
        buf[o++] = '"';
        buf[o] = '\0';
}
