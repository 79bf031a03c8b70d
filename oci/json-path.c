/* Paths, value quoting and error messages of the typed reader:
 * "<name>: <path>: <problem>", quoting the offending value (truncated). */
#include "oci/json.h"
#include "oci/logline.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ---- paths and quoting ---- */

void
oci_jr_init(oci_jr *r, const char *name, oci_arena *arena, msp_err *err)
{
        r->name = name;
        r->arena = arena;
        r->err = err;
        r->user = NULL;
        r->path_len = 0;
        r->path[0] = '\0';
}

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

size_t
oci_jr_push_key(oci_jr *r, const char *key)
{
        size_t mark = r->path_len;
        oci_json_path_append_key(r->path, sizeof r->path, &r->path_len, key);
        return mark;
}

size_t
oci_jr_push_index(oci_jr *r, size_t i)
{
        size_t mark = r->path_len;
        oci_json_path_append_index(r->path, sizeof r->path, &r->path_len, i);
        return mark;
}

void
oci_jr_pop(oci_jr *r, size_t mark)
{
        r->path_len = mark;
        r->path[mark] = '\0';
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

void
oci_json_describe(const oci_json *v, char *buf, size_t size)
{
        switch (oci_json_type_of(v)) {
        case OCI_JSON_STRING:
                oci_json_quote(oci_json_string(v), buf, size);
                return;
        case OCI_JSON_NUMBER: {
                const char *t = oci_json_number_text(v);
                if (strlen(t) > OCI_JR_VALUE_MAX)
                        snprintf(buf, size, "%.*s...", (int) OCI_JR_VALUE_MAX, t);
                else
                        snprintf(buf, size, "%s", t);
                return;
        }
        case OCI_JSON_BOOL:
                snprintf(buf, size, "%s", oci_json_bool(v) ? "true" : "false");
                return;
        case OCI_JSON_OBJECT:
                snprintf(buf, size, "an object");
                return;
        case OCI_JSON_ARRAY:
                snprintf(buf, size, "an array");
                return;
        case OCI_JSON_NULL:
        default:
                snprintf(buf, size, "null");
                return;
        }
}

/* ---- errors ---- */

int
oci_jr_fail(oci_jr *r, int errnum, const char *fmt, ...)
{
        char msg[MSP_ERR_MSG_MAX];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        if (r->path_len)
                return msp_err_set(r->err, errnum, "%s: %s: %s", r->name, r->path, msg);
        return msp_err_set(r->err, errnum, "%s: %s", r->name, msg);
}

int
oci_jr_expected(oci_jr *r, const oci_json *v, const char *what)
{
        char got[OCI_JR_VALUE_MAX * 2 + 16];
        oci_json_describe(v, got, sizeof got);
        return oci_jr_fail(r, EINVAL, "expected %s, got %s", what, got);
}

int
oci_jr_oom(oci_jr *r)
{
        return msp_err_set(r->err, ENOMEM, "%s: out of memory", r->name);
}

int
oci_jr_missing(oci_jr *r, const char *key)
{
        size_t mark = oci_jr_push_key(r, key);
        int ret = oci_jr_fail(r, EINVAL, "required property missing");
        oci_jr_pop(r, mark);
        return ret;
}

