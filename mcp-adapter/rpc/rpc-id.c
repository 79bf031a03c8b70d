/* JSON-RPC ids (see jsonrpc.h): copies, comparison, reading one from a parsed message,
 * writing one, and finding one in a line the parser refused. */
#include "rpc/jsonrpc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"

int
mcp_rpc_id_copy(mcp_rpc_id *dst, const mcp_rpc_id *src)
{
        *dst = *src;
        if (src->kind == MCP_ID_STR) {
                dst->str = strdup(src->str);
                if (!dst->str) {
                        dst->kind = MCP_ID_NONE;
                        return -ENOMEM;
                }
        }
        return 0;
}

void
mcp_rpc_id_clear(mcp_rpc_id *id)
{
        free(id->str);
        *id = (mcp_rpc_id) { .kind = MCP_ID_NONE };
}

bool
mcp_rpc_id_equal(const mcp_rpc_id *a, const mcp_rpc_id *b)
{
        if (a->kind != b->kind)
                return false;
        switch (a->kind) {
        case MCP_ID_INT:
                return a->num == b->num;
        case MCP_ID_STR:
                return strcmp(a->str, b->str) == 0;
        case MCP_ID_NONE:
        default:
                return true;
        }
}

int
mcp_rpc_id_from_json(const oci_json *v, mcp_rpc_id *ret)
{
        *ret = (mcp_rpc_id) { .kind = MCP_ID_NONE };
        switch (oci_json_type_of(v)) {
        case OCI_JSON_STRING:
                ret->str = strdup(oci_json_string(v));
                if (!ret->str)
                        return -ENOMEM;
                ret->kind = MCP_ID_STR;
                return 0;
        case OCI_JSON_NUMBER:
                if (mcp_parse_int64(oci_json_number_text(v), &ret->num) < 0)
                        return -EINVAL;
                ret->kind = MCP_ID_INT;
                return 0;
        case OCI_JSON_NULL:
        case OCI_JSON_BOOL:
        case OCI_JSON_OBJECT:
        case OCI_JSON_ARRAY:
        default:
                return -EINVAL;
        }
}

int
mcp_rpc_cancelled_id(const oci_json *params, mcp_rpc_id *ret)
{
        const oci_json *req = params ? oci_json_get(params, "requestId") : NULL;
        if (!req) {
                *ret = (mcp_rpc_id) { .kind = MCP_ID_NONE };
                return -EINVAL;
        }
        return mcp_rpc_id_from_json(req, ret);
}

void
mcp_rpc_id_write(oci_jw *w, const mcp_rpc_id *id)
{
        switch (id->kind) {
        case MCP_ID_INT:
                oci_jw_int64(w, id->num);
                break;
        case MCP_ID_STR:
                oci_jw_string(w, id->str);
                break;
        case MCP_ID_NONE:
        default:
                oci_jw_null(w);
                break;
        }
}

/* ---- the id of a refused line ---- */

/* What is not the id is skipped by bracket counting outside strings. */
typedef struct idscan {
        const char *p, *end;
} idscan;

static void
scan_ws(idscan *s)
{
        while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\r' || *s->p == '\n'))
                s->p++;
}

/* At '"': past the closing quote; *plain is false when the string has escapes. */
static bool
scan_string(idscan *s, const char **ret, size_t *ret_len, bool *plain)
{
        const char *start = ++s->p;
        *plain = true;
        for (; s->p < s->end; s->p++) {
                if (*s->p == '\\') {
                        *plain = false;
                        if (++s->p == s->end)
                                break;          /* a lone backslash at the end */
                } else if (*s->p == '"') {
                        *ret = start;
                        *ret_len = (size_t) (s->p++ - start);
                        return true;
                }
        }
        return false;
}

static bool
scan_skip_value(idscan *s)
{
        const char *str;
        size_t n;
        bool plain;
        size_t depth = 0;
        while (s->p < s->end) {
                char c = *s->p;
                if (c == '"') {
                        if (!scan_string(s, &str, &n, &plain))
                                return false;
                } else if (c == '{' || c == '[') {
                        depth++;
                        s->p++;
                } else if (c == '}' || c == ']') {
                        if (depth == 0)
                                return true;
                        depth--;
                        s->p++;
                } else if (c == ',' && depth == 0) {
                        return true;
                } else {
                        s->p++;
                }
                if (depth == 0 && (c == '"' || c == '}' || c == ']'))
                        return true;
        }
        return depth == 0;
}

static bool
scan_id_value(idscan *s, mcp_rpc_id *id)
{
        const char *v;
        size_t n;
        bool plain;
        if (*s->p == '"') {
                if (!scan_string(s, &v, &n, &plain) || !plain || !mcp_utf8_valid(v, n))
                        return false;
                for (size_t i = 0; i < n; i++)
                        if ((unsigned char) v[i] < 0x20)
                                return false;
                id->str = strndup(v, n);
                if (!id->str)
                        return false;
                id->kind = MCP_ID_STR;
                return true;
        }
        char num[24];
        for (n = 0; s->p < s->end && n < sizeof num - 1 &&
                    (*s->p == '-' || (*s->p >= '0' && *s->p <= '9'));
             s->p++)
                num[n++] = *s->p;
        num[n] = '\0';
        if (mcp_parse_int64(num, &id->num) < 0)
                return false;
        id->kind = MCP_ID_INT;
        return true;
}

void
mcp_rpc_id_salvage(const char *line, size_t len, mcp_rpc_id *ret)
{
        idscan s = { line, line + len };
        mcp_rpc_id id = { .kind = MCP_ID_NONE };
        bool ok = false;
        scan_ws(&s);
        if (s.p >= s.end || *s.p++ != '{')
                return;
        for (;;) {
                const char *key;
                size_t klen;
                bool plain;
                scan_ws(&s);
                if (s.p >= s.end || *s.p != '"' || !scan_string(&s, &key, &klen, &plain))
                        break;
                scan_ws(&s);
                if (s.p >= s.end || *s.p++ != ':')
                        break;
                scan_ws(&s);
                if (s.p >= s.end)
                        break;
                if (klen == 2 && memcmp(key, "id", 2) == 0) {
                        if (id.kind != MCP_ID_NONE || !scan_id_value(&s, &id))
                                break;
                } else if (!scan_skip_value(&s)) {
                        break;
                }
                scan_ws(&s);
                if (s.p < s.end && *s.p == ',') {
                        s.p++;
                        continue;
                }
                if (s.p < s.end && *s.p == '}') {
                        s.p++;
                        scan_ws(&s);
                        ok = s.p == s.end;
                }
                break;
        }
        if (ok)
                *ret = id;
        else
                mcp_rpc_id_clear(&id);
}

/* One byte of a top-level "id" value: a string is kept with its quotes, a number up to
 * its end; anything longer than the buffer can hold is no id salvage would take. */
static void
stream_value_byte(mcp_rpc_id_stream *s, char c)
{
        if (s->value_len >= sizeof s->value - 1) {
                s->bad = true;
                s->in_value = false;
                return;
        }
        s->value[s->value_len++] = c;
}

static void
stream_byte(mcp_rpc_id_stream *s, char c)
{
        if (s->in_str) {
                if (s->in_key && !s->esc && c != '"' && c != '\\') {
                        if (s->key_len < sizeof s->key)
                                s->key[s->key_len] = c;
                        s->key_len++;
                }
                if (s->in_value)
                        stream_value_byte(s, c);
                if (s->esc) {
                        s->esc = false;
                        if (s->in_key)
                                s->key_len = sizeof s->key + 1;     /* an escaped name is no "id" */
                } else if (c == '\\') {
                        s->esc = true;
                } else if (c == '"') {
                        s->in_str = false;
                        if (s->in_key) {
                                s->in_key = false;
                                s->after_id_key = s->key_len == 2 && memcmp(s->key, "id", 2) == 0;
                        }
                        if (s->in_value && s->depth == 1)
                                s->in_value = false;
                }
                return;
        }
        if (s->in_value && s->depth == 1 && (c == ',' || c == '}' || c == ' ' || c == '\t' ||
                                             c == '\r' || c == '\n'))
                s->in_value = false;
        else if (s->in_value)
                stream_value_byte(s, c);
        switch (c) {
        case '"':
                s->in_str = true;
                if (s->depth == 1 && s->key_next) {
                        s->in_key = true;
                        s->key_next = false;
                        s->key_len = 0;
                }
                return;
        case '{':
        case '[':
                s->depth++;
                if (s->depth == 1)
                        s->key_next = c == '{';
                return;
        case '}':
        case ']':
                s->depth--;
                return;
        case ',':
                if (s->depth == 1)
                        s->key_next = true;
                return;
        case ':':
                if (s->depth == 1 && s->after_id_key) {
                        s->after_id_key = false;
                        s->ids++;
                        s->in_value = true;
                        s->value_len = 0;
                }
                return;
        default:
                return;
        }
}

void
mcp_rpc_id_stream_feed(mcp_rpc_id_stream *s, const char *buf, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                /* whitespace between the name's ':' and the value */
                if (s->in_value && s->value_len == 0 && !s->in_str &&
                    (buf[i] == ' ' || buf[i] == '\t'))
                        continue;
                stream_byte(s, buf[i]);
        }
}

void
mcp_rpc_id_stream_end(const mcp_rpc_id_stream *s, mcp_rpc_id *ret)
{
        char doc[sizeof s->value + 8];

        *ret = (mcp_rpc_id) { .kind = MCP_ID_NONE };
        if (s->ids != 1 || s->bad || s->value_len == 0)
                return;
        int n = snprintf(doc, sizeof doc, "{\"id\":%.*s}", (int) s->value_len, s->value);
        mcp_rpc_id_salvage(doc, (size_t) n, ret);
}
