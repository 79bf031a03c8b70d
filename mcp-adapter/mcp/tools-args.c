/* The tools' argument readers (each bad argument a message naming the field, the value
 * and the limit) and the tool results every tool sends: errors, structured content, a
 * refusal by the transport's admission check. */
#include "mcp/tools-args.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/base.h"
#include "mcp/tools-audit.h"

/* ---- argument checks ---- */

int
mcp_arg_bad(targs *a, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(a->msg, sizeof a->msg, fmt, ap);
        va_end(ap);
        return -EINVAL;
}

const oci_json *
mcp_arg_get(targs *a, const char *key)
{
        const oci_json *v = a->obj ? oci_json_get(a->obj, key) : NULL;
        /* Clients often send null for an optional argument: treat it as absent. */
        return v && oci_json_type_of(v) != OCI_JSON_NULL ? v : NULL;
}

const char *
mcp_arg_describe(const oci_json *v, char *buf, size_t size)
{
        oci_json_describe(v, buf, size);
        return buf;
}

int
mcp_arg_unknown(targs *a, const char *what, const char *const *args)
{
        if (!a->obj)
                return 0;
        for (size_t i = 0; i < oci_json_len(a->obj); i++) {
                const char *key = oci_json_key_at(a->obj, i);
                bool ok = false;
                for (const char *const *p = args; *p && !ok; p++)
                        ok = strcmp(*p, key) == 0;
                if (ok)
                        continue;
                char allowed[512] = "";
                size_t n = 0;
                for (const char *const *p = args; *p; p++)
                        n += (size_t) snprintf(allowed + n, n < sizeof allowed ? sizeof allowed - n : 0,
                                               "%s%s", n ? ", " : "", *p);
                char q[96];
                oci_json_quote(key, q, sizeof q);
                return mcp_arg_bad(a, "unknown argument %s (%s takes %s)", q, what,
                            allowed[0] ? allowed : "no arguments");
        }
        return 0;
}

/* 1 when set, 0 when absent, < 0 on error. */
int
mcp_arg_str(targs *a, const char *key, bool req, size_t max, const char **ret)
{
        const oci_json *v = mcp_arg_get(a, key);
        char d[96];
        if (!v)
                return req ? mcp_arg_bad(a, "%s: required argument missing", key) : 0;
        if (oci_json_type_of(v) != OCI_JSON_STRING)
                return mcp_arg_bad(a, "%s: expected a string, got %s", key,
                                   mcp_arg_describe(v, d, sizeof d));
        size_t len = strlen(oci_json_string(v));
        if (max && len > max)
                return mcp_arg_bad(a, "%s: %zu bytes is above the limit of %zu bytes", key, len, max);
        *ret = oci_json_string(v);
        return 1;
}

int
mcp_arg_uint(targs *a, const char *key, uint64_t min, uint64_t max, uint64_t *ret)
{
        const oci_json *v = mcp_arg_get(a, key);
        char d[96];
        int64_t n;
        if (!v)
                return 0;
        if (oci_json_type_of(v) != OCI_JSON_NUMBER ||
            mcp_parse_int64(oci_json_number_text(v), &n) < 0)
                return mcp_arg_bad(a, "%s: expected an integer from %" PRIu64 " to %" PRIu64 ", got %s",
                            key, min, max, mcp_arg_describe(v, d, sizeof d));
        if (n < 0 || (uint64_t) n < min)
                return mcp_arg_bad(a, "%s: %" PRId64 " is below the minimum %" PRIu64, key, n, min);
        if ((uint64_t) n > max)
                return mcp_arg_bad(a, "%s: %" PRId64 " is above the maximum %" PRIu64, key, n, max);
        *ret = (uint64_t) n;
        return 1;
}

int
mcp_arg_bool(targs *a, const char *key, bool *ret)
{
        const oci_json *v = mcp_arg_get(a, key);
        char d[96];
        if (!v)
                return 0;
        if (oci_json_type_of(v) != OCI_JSON_BOOL)
                return mcp_arg_bad(a, "%s: expected true or false, got %s", key,
                                   mcp_arg_describe(v, d, sizeof d));
        *ret = oci_json_bool(v);
        return 1;
}

int
mcp_arg_enum(targs *a, const char *key, bool req, const char *const *values, const char **ret)
{
        const char *s = NULL;
        int r = mcp_arg_str(a, key, req, 256, &s);
        if (r <= 0)
                return r;
        for (const char *const *p = values; *p; p++)
                if (strcmp(*p, s) == 0) {
                        *ret = *p;
                        return 1;
                }
        char list[512] = "";
        size_t n = 0;
        for (const char *const *p = values; *p; p++)
                n += (size_t) snprintf(list + n, n < sizeof list ? sizeof list - n : 0, "%s%s",
                                       n ? ", " : "", *p);
        char q[96];
        oci_json_quote(s, q, sizeof q);
        return mcp_arg_bad(a, "%s: %s is not one of %s", key, q, list[0] ? list : "(none available)");
}

/* "0.5" -> 500 millis (mcp_parse_cpus), from 0.01 (the kernel's minimum quota) to the
 * maximum exactly. */
static int
t_cpus(targs *a, uint64_t max_millis, uint64_t *ret)
{
        const oci_json *v = mcp_arg_get(a, "cpus");
        char d[96];
        if (!v)
                return 0;
        const char *s = oci_json_type_of(v) == OCI_JSON_NUMBER ? oci_json_number_text(v) : NULL;
        uint64_t millis = 0;
        int r = s ? mcp_parse_cpus(s, &millis) : -EINVAL;
        if (r == -EINVAL)
                return mcp_arg_bad(a, "cpus: expected a number such as 0.5 with at most three decimals, "
                               "got %s",
                            mcp_arg_describe(v, d, sizeof d));
        if (r == 0 && millis < MCP_CPU_MILLIS_MIN)
                return mcp_arg_bad(a, "cpus: %s is below the minimum 0.01 (the kernel's smallest quota)",
                            s);
        if (r < 0 || millis > max_millis)
                return mcp_arg_bad(a, "cpus: %s is above the maximum %" PRIu64 ".%03" PRIu64, s,
                            max_millis / 1000, max_millis % 1000);
        *ret = millis;
        return 1;
}

int
mcp_arg_limits(targs *a, const mcp_config *cfg, mcp_limits *l)
{
        uint64_t mb = 0;
        int r;
        if ((r = mcp_arg_uint(a, "timeout_ms", TIMEOUT_MIN, cfg->maxima.timeout_ms, &l->timeout_ms)) < 0 ||
            (r = mcp_arg_uint(a, "memory_mb", 1, cfg->maxima.memory_bytes / MIB, &mb)) < 0 ||
            (r = mcp_arg_uint(a, "pids", 1, cfg->maxima.pids, &l->pids)) < 0 ||
            (r = t_cpus(a, cfg->maxima.cpu_millis, &l->cpu_millis)) < 0)
                return r;
        l->memory_bytes = mb * MIB;
        return 0;
}

/* The content of a file argument, decoded; *ret_buf owns a base64 decoding. */
int
mcp_arg_content(targs *a, const char *field, const char *content, const char *encoding, size_t max,
          const char **ret, size_t *ret_len, unsigned char **ret_buf)
{
        size_t len = strlen(content);
        *ret_buf = NULL;
        if (!encoding || strcmp(encoding, "utf8") == 0) {
                if (len > max)
                        return mcp_arg_bad(a, "%s: %zu bytes is above the limit of %zu bytes", field, len, max);
                *ret = content;
                *ret_len = len;
                return 0;
        }
        if (mcp_base64_decoded_max(len) > max + 3)
                return mcp_arg_bad(a, "%s: about %zu bytes decoded is above the limit of %zu bytes", field,
                            mcp_base64_decoded_max(len), max);
        size_t n;
        int r = mcp_base64_decode(content, len, ret_buf, &n);
        if (r == -ENOMEM)
                return mcp_arg_bad(a, "%s: out of memory", field);
        if (r < 0)
                return mcp_arg_bad(a, "%s: not valid base64 (RFC 4648, padded, no whitespace)", field);
        if (n > max)
                return mcp_arg_bad(a, "%s: %zu bytes decoded is above the limit of %zu bytes", field, n, max);
        *ret = (const char *) *ret_buf;
        *ret_len = n;
        return 0;
}

/* ---- results ---- */

void
mcp_tool_error(mcp_server *srv, const mcp_rpc_id *id, const char *msg)
{
        oci_jw *w = mcp_rpc_begin_result(id);
        if (w) {
                oci_jw_begin_object(w);
                oci_jw_key(w, "content");
                oci_jw_begin_array(w);
                oci_jw_begin_object(w);
                oci_jw_kv_string(w, "type", "text");
                oci_jw_key(w, "text");
                mcp_jw_text(w, msg);
                oci_jw_end_object(w);
                oci_jw_end_array(w);
                oci_jw_kv_bool(w, "isError", true);
                oci_jw_end_object(w);
        }
        (void) mcp_rpc_send(srv->rpc, w, id, false);
}

void
mcp_tool_errorf(mcp_server *srv, const mcp_rpc_id *id, const char *fmt, ...)
{
        char msg[2048];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        mcp_tool_error(srv, id, msg);
}

/* The structured result and the same JSON as a text block. */
void
mcp_tool_structured(mcp_server *srv, const mcp_rpc_id *id, struct_fn fn, const void *ctx)
{
        _cleanup_jw_ oci_jw *tw = oci_jw_new(false);
        _cleanup_free_ char *text = NULL;
        if (!tw) {
                mcp_tool_error(srv, id, "out of memory");
                return;
        }
        fn(tw, ctx);
        msp_err err = { 0 };
        if (oci_jw_finish(tw, &text, NULL, &err) < 0) {
                mcp_tool_error(srv, id, err.msg);
                return;
        }
        oci_jw *w = mcp_rpc_begin_result(id);
        if (w) {
                oci_jw_begin_object(w);
                oci_jw_key(w, "content");
                oci_jw_begin_array(w);
                oci_jw_begin_object(w);
                oci_jw_kv_string(w, "type", "text");
                oci_jw_kv_string(w, "text", text);
                oci_jw_end_object(w);
                oci_jw_end_array(w);
                if (mcp_version_structured(srv->version)) {
                        oci_jw_key(w, "structuredContent");
                        fn(w, ctx);
                }
                oci_jw_end_object(w);
        }
        (void) mcp_rpc_send(srv->rpc, w, id, false);
}

/* A session or file error: the engine's message names the field and value. */
void
mcp_tool_errno(mcp_server *srv, const mcp_rpc_id *id, int r, const msp_err *err, const char *what)
{
        if (err->msg[0])
                mcp_tool_errorf(srv, id, "%s: %s", what, err->msg);
        else
                mcp_tool_errorf(srv, id, "%s: %s", what, strerror(-r));
}

int
mcp_tool_admit(mcp_server *srv, const mcp_rpc_id *id, mcp_admit what)
{
        char msg[256] = "";
        int r = srv->admit ? srv->admit(srv, what, msg, sizeof msg, srv->admit_data) : 0;
        if (r < 0) {
                mcp_audit_refused(srv, what == MCP_ADMIT_RUN ? "run_code" : "session_create", msg);
                mcp_tool_error(srv, id, msg);
        }
        return r;
}
