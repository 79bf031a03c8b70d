/* tools/list and tools/call: the tool table, argument validation (every bad argument is a
 * tool result with isError naming the field, the value and the limit: SEP-1303), and
 * run_code through the engine with progress notifications. The schemas are in
 * tools-schema.c, the session and file tools in tools-session.c. */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/text.h"
#include "mcp/tools.h"
#include "base/jw.h"
#include "sandbox/bundle.h"

#define PROGRESS_INTERVAL_USEC 250000   /* at most 4 notifications a second */
#define TAIL_KEEP 2048
#define TAIL_BYTES 1024
#define TAIL_LINES 20

/* ---- the tool table ---- */

typedef void (*tool_fn)(mcp_server *srv, const mcp_rpc_id *id, targs *a,
                        const mcp_rpc_id *progress_token);

typedef struct tool {
        const char *name, *title, *description;
        void (*in)(oci_jw *w, const mcp_config *cfg, const char *const *languages);
        void (*out)(oci_jw *w);
        bool read_only, destructive, idempotent, open_world_if_network;
        const char *const *args;        /* allowed argument names */
        tool_fn fn;
} tool;

static void t_run_code(mcp_server *, const mcp_rpc_id *, targs *, const mcp_rpc_id *);

static const tool tools[] = {
        { "run_code", "Run code in a sandbox",
          "Run a program in an isolated Linux sandbox: no network (unless `network` asks for "
          "what this server allows), limited memory, processes, CPU and time. Each call is a "
          "fresh sandbox process: no process, variable, /tmp file or package installed outside "
          "/workspace survives it (a background process is killed when the call ends). Without "
          "session_id the call gets a new /workspace and keeps nothing; with a "
          "session's id, the files in that session's /workspace (HOME) carry over to its next "
          "calls. Returns exit_code, stdout, stderr (each capped; the full logs are "
          "resources), timed_out, oom_killed. Files the code creates or changes under "
          "/workspace/out/ (it exists in every workspace) are returned: images (PNG, JPEG, "
          "GIF, SVG) as image content, other files as resource links. Python packages: `pip "
          "install PKG` installs into /workspace/.local (the user site; a session's later "
          "calls import it), or use a venv in /workspace (`python3 -m venv /workspace/venv`). "
          "Through a network allowlist, denied_hosts names the hosts the egress proxy refused "
          "and upstream_errors the allowed ones it could not reach, with why.",
          mcp_schema_in_run_code, mcp_schema_out_run_code, false, false, false, true,
          (const char *const[]) { "language", "code", "stdin", "files", "args", "env",
                                  "timeout_ms", "memory_mb", "pids", "cpus", "session_id",
                                  "network", NULL },
          t_run_code },
        { "session_create", "Create a session",
          "Create a session: a /workspace whose files carry over between the run_code calls "
          "that pass its session_id, with its own limits, until it is closed or expires. Only "
          "those files persist: each call is still a fresh sandbox process, and no process, "
          "variable or package installed outside /workspace survives a call.",
          mcp_schema_in_session_create, mcp_schema_out_session_create, false, false, false, true,
          (const char *const[]) { "timeout_ms", "memory_mb", "pids", "cpus", "ttl_s", "network",
                                  "rootfs", NULL },
          mcp_tool_session_create },
        { "session_list", "List sessions", "List the live sessions.",
          mcp_schema_in_none, mcp_schema_out_session_list, true, false, true, false,
          (const char *const[]) { NULL }, mcp_tool_session_list },
        { "session_close", "Close a session",
          "Close a session and delete its workspace (its files are gone).",
          mcp_schema_in_session_id, mcp_schema_out_session_close, false, true, true, false,
          (const char *const[]) { "session_id", NULL }, mcp_tool_session_close },
        { "write_file", "Write a file",
          "Write a file into a session's /workspace (parent directories are created).",
          mcp_schema_in_write_file, mcp_schema_out_write_file, false, true, true, false,
          (const char *const[]) { "session_id", "path", "content", "encoding", "executable", NULL },
          mcp_tool_write_file },
        { "read_file", "Read a file", "Read a file from a session's /workspace.",
          mcp_schema_in_read_file, mcp_schema_out_read_file, true, false, true, false,
          (const char *const[]) { "session_id", "path", "encoding", "max_bytes", NULL },
          mcp_tool_read_file },
        { "list_files", "List files", "List a directory of a session's /workspace.",
          mcp_schema_in_list_files, mcp_schema_out_list_files, true, false, true, false,
          (const char *const[]) { "session_id", "path", NULL }, mcp_tool_list_files },
};

void
mcp_tools_write_list(oci_jw *w, const mcp_config *cfg, const char *const *languages,
                     mcp_version v)
{
        oci_jw_begin_object(w);
        oci_jw_key(w, "tools");
        oci_jw_begin_array(w);
        for (size_t i = 0; i < ARRAY_SIZE(tools); i++) {
                const tool *t = &tools[i];
                oci_jw_begin_object(w);
                oci_jw_kv_string(w, "name", t->name);
                if (mcp_version_structured(v))
                        oci_jw_kv_string(w, "title", t->title);
                oci_jw_kv_string(w, "description", t->description);
                mcp_jw_obj(w, "inputSchema");
                oci_jw_kv_string(w, "type", "object");
                t->in(w, cfg, languages);
                oci_jw_kv_bool(w, "additionalProperties", false);
                oci_jw_end_object(w);
                if (mcp_version_structured(v)) {
                        mcp_jw_obj(w, "outputSchema");
                        oci_jw_kv_string(w, "type", "object");
                        t->out(w);
                        oci_jw_end_object(w);
                }
                if (mcp_version_annotations(v)) {
                        mcp_jw_obj(w, "annotations");
                        oci_jw_kv_string(w, "title", t->title);
                        oci_jw_kv_bool(w, "readOnlyHint", t->read_only);
                        if (!t->read_only)
                                oci_jw_kv_bool(w, "destructiveHint", t->destructive);
                        oci_jw_kv_bool(w, "idempotentHint", t->idempotent);
                        oci_jw_kv_bool(w, "openWorldHint",
                                       t->open_world_if_network &&
                                               (cfg->allow_network || cfg->network_allow.n));
                        oci_jw_end_object(w);
                }
                oci_jw_end_object(w);
        }
        oci_jw_end_array(w);
        oci_jw_end_object(w);
}

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

static const oci_json *
tget(targs *a, const char *key)
{
        const oci_json *v = a->obj ? oci_json_get(a->obj, key) : NULL;
        /* Clients often send null for an optional argument: treat it as absent. */
        return v && oci_json_type_of(v) != OCI_JSON_NULL ? v : NULL;
}

static const char *
describe(const oci_json *v, char *buf, size_t size)
{
        oci_json_describe(v, buf, size);
        return buf;
}

static int
t_unknown(targs *a, const tool *t)
{
        if (!a->obj)
                return 0;
        for (size_t i = 0; i < oci_json_len(a->obj); i++) {
                const char *key = oci_json_key_at(a->obj, i);
                bool ok = false;
                for (const char *const *p = t->args; *p && !ok; p++)
                        ok = strcmp(*p, key) == 0;
                if (ok)
                        continue;
                char allowed[512] = "";
                size_t n = 0;
                for (const char *const *p = t->args; *p; p++)
                        n += (size_t) snprintf(allowed + n, n < sizeof allowed ? sizeof allowed - n : 0,
                                               "%s%s", n ? ", " : "", *p);
                char q[96];
                oci_json_quote(key, q, sizeof q);
                return mcp_arg_bad(a, "unknown argument %s (%s takes %s)", q, t->name,
                            allowed[0] ? allowed : "no arguments");
        }
        return 0;
}

/* 1 when set, 0 when absent, < 0 on error. */
int
mcp_arg_str(targs *a, const char *key, bool req, size_t max, const char **ret)
{
        const oci_json *v = tget(a, key);
        char d[96];
        if (!v)
                return req ? mcp_arg_bad(a, "%s: required argument missing", key) : 0;
        if (oci_json_type_of(v) != OCI_JSON_STRING)
                return mcp_arg_bad(a, "%s: expected a string, got %s", key, describe(v, d, sizeof d));
        size_t len = strlen(oci_json_string(v));
        if (max && len > max)
                return mcp_arg_bad(a, "%s: %zu bytes is above the limit of %zu bytes", key, len, max);
        *ret = oci_json_string(v);
        return 1;
}

int
mcp_arg_uint(targs *a, const char *key, uint64_t min, uint64_t max, uint64_t *ret)
{
        const oci_json *v = tget(a, key);
        char d[96];
        int64_t n;
        if (!v)
                return 0;
        if (oci_json_type_of(v) != OCI_JSON_NUMBER ||
            mcp_parse_int64(oci_json_number_text(v), &n) < 0)
                return mcp_arg_bad(a, "%s: expected an integer from %" PRIu64 " to %" PRIu64 ", got %s",
                            key, min, max, describe(v, d, sizeof d));
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
        const oci_json *v = tget(a, key);
        char d[96];
        if (!v)
                return 0;
        if (oci_json_type_of(v) != OCI_JSON_BOOL)
                return mcp_arg_bad(a, "%s: expected true or false, got %s", key, describe(v, d, sizeof d));
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
        const oci_json *v = tget(a, "cpus");
        char d[96];
        if (!v)
                return 0;
        const char *s = oci_json_type_of(v) == OCI_JSON_NUMBER ? oci_json_number_text(v) : NULL;
        uint64_t millis = 0;
        int r = s ? mcp_parse_cpus(s, &millis) : -EINVAL;
        if (r == -EINVAL)
                return mcp_arg_bad(a, "cpus: expected a number such as 0.5 with at most three decimals, "
                               "got %s",
                            describe(v, d, sizeof d));
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
mcp_tool_errorf(mcp_server *srv, const mcp_rpc_id *id, const char *fmt, ...) _printf_(3, 4);

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

/* ---- run_code ---- */

struct mcp_call {
        mcp_server *srv;
        mcp_call *next, *prev;
        mcp_rpc_id id;
        mcp_run *run;
        mcp_rpc_id token;               /* progress token; MCP_ID_NONE: no progress */
        uint64_t seen;                  /* output bytes so far */
        uint64_t sent;                  /* progress value last sent */
        uint64_t last_sent_usec;
        mcp_timer *timer;
        char *session_id;
        const char *language;           /* the engine's name (fixed at start) */
        bool submitting, finished;
        const mcp_run_request *req;     /* while submitting */
        mcp_run_audit audit;
        size_t tail_len;
        char tail[TAIL_KEEP];
};

static void
count_cancelled(mcp_call *c)
{
        if (c->finished)
                return;
        mcp_metrics_run(c->srv->metrics, c->language, MCP_OUTCOME_CANCELLED, 0, c->srv->tenant);
        mcp_audit_run_end(c->srv, &c->audit, MCP_OUTCOME_CANCELLED, NULL, NULL);
}

static void
call_free(mcp_call *c)
{
        if (!c)
                return;
        mcp_server *srv = c->srv;
        if (c->timer)
                mcp_timer_cancel(srv->loop, c->timer);
        if (c->prev)
                c->prev->next = c->next;
        else if (srv->calls == c)
                srv->calls = c->next;
        if (c->next)
                c->next->prev = c->prev;
        mcp_rpc_id_clear(&c->id);
        mcp_rpc_id_clear(&c->token);
        free(c->session_id);
        free(c);
}

static void
send_progress(mcp_call *c)
{
        if (c->seen <= c->sent)
                return;
        /* The tail: the last TAIL_BYTES, cut on a character, then the last TAIL_LINES. */
        size_t n = mcp_utf8_tail_start(c->tail, c->tail_len, TAIL_BYTES);
        const char *t = c->tail + c->tail_len - n;
        size_t lines = 0;
        for (size_t i = n; i > 0; i--)
                if (t[i - 1] == '\n' && i != n && ++lines >= TAIL_LINES) {
                        t += i;
                        n -= i;
                        break;
                }
        oci_jw *w = mcp_rpc_begin_notification("notifications/progress");
        if (!w)
                return;
        oci_jw_begin_object(w);
        oci_jw_key(w, "progressToken");
        mcp_rpc_id_write(w, &c->token);
        oci_jw_kv_uint64(w, "progress", c->seen);
        oci_jw_key(w, "message");
        mcp_jw_bytes(w, t, n);
        oci_jw_end_object(w);
        /* A full output queue drops it; the next one carries a larger value anyway. */
        if (mcp_rpc_notify(c->srv->rpc, w, &c->id) == 0) {
                c->sent = c->seen;
                c->last_sent_usec = mcp_now_usec();
        }
}

static int
on_progress_timer(mcp_loop *loop _unused_, void *data)
{
        mcp_call *c = data;
        c->timer = NULL;
        send_progress(c);
        return 0;
}

static void
on_output(mcp_run *run _unused_, mcp_stream stream _unused_, const char *buf, size_t len,
          void *data)
{
        mcp_call *c = data;
        if (c->finished || len == 0)
                return;
        c->seen += len;
        if (len >= TAIL_KEEP) {
                memcpy(c->tail, buf + len - TAIL_KEEP, TAIL_KEEP);
                c->tail_len = TAIL_KEEP;
        } else {
                if (c->tail_len + len > TAIL_KEEP) {
                        size_t drop = c->tail_len + len - TAIL_KEEP;
                        memmove(c->tail, c->tail + drop, c->tail_len - drop);
                        c->tail_len -= drop;
                }
                memcpy(c->tail + c->tail_len, buf, len);
                c->tail_len += len;
        }
        if (c->token.kind == MCP_ID_NONE || c->timer)
                return;
        uint64_t now = mcp_now_usec(), due = c->last_sent_usec + PROGRESS_INTERVAL_USEC;
        (void) mcp_loop_add_timer(c->srv->loop, due > now ? due - now : 0, on_progress_timer, c,
                                  &c->timer);
}

static const char *
signal_name(int sig, char buf[32])
{
        const char *abbrev = sigabbrev_np(sig);
        if (abbrev)
                snprintf(buf, 32, "SIG%s", abbrev);
        else
                snprintf(buf, 32, "SIG%d", sig);
        return buf;
}

typedef struct run_view {
        const mcp_run_result *res;
        const char *session_id;
        bool no_output;                 /* the text copy: stdout/stderr are in the other block */
} run_view;

static void
write_run_structured(oci_jw *w, const void *ctx)
{
        const run_view *v = ctx;
        const mcp_run_result *res = v->res;
        char sig[32];
        oci_jw_begin_object(w);
        oci_jw_key(w, "exit_code");
        if (res->sandbox_failed || res->term_signal > 0)
                oci_jw_null(w);
        else
                oci_jw_int64(w, res->exit_code);
        oci_jw_key(w, "signal");
        if (res->term_signal > 0)
                oci_jw_string(w, signal_name(res->term_signal, sig));
        else
                oci_jw_null(w);
        if (!v->no_output) {
                oci_jw_key(w, "stdout");
                mcp_jw_bytes(w, res->stdout_buf, res->stdout_len);
                oci_jw_key(w, "stderr");
                mcp_jw_bytes(w, res->stderr_buf, res->stderr_len);
        }
        oci_jw_kv_bool(w, "timed_out", res->timed_out);
        oci_jw_kv_bool(w, "oom_killed", res->oom_killed);
        oci_jw_kv_bool(w, "truncated", res->stdout_truncated || res->stderr_truncated);
        oci_jw_kv_uint64(w, "duration_ms", res->duration_ms);
        oci_jw_key(w, "run_id");
        mcp_jw_text(w, res->run_id ? res->run_id : "");
        oci_jw_key(w, "session_id");
        mcp_jw_text(w, v->session_id);
        oci_jw_key(w, "files");
        oci_jw_begin_array(w);
        for (size_t i = 0; i < res->n_artifacts; i++) {
                const mcp_artifact *f = &res->artifacts[i];
                oci_jw_begin_object(w);
                oci_jw_key(w, "path");
                mcp_jw_text(w, f->path);
                oci_jw_key(w, "mime_type");
                mcp_jw_text(w, f->mime_type ? f->mime_type : "application/octet-stream");
                oci_jw_kv_uint64(w, "size", f->size);
                oci_jw_key(w, "uri");
                mcp_jw_text(w, f->uri ? f->uri : "");
                oci_jw_end_object(w);
        }
        oci_jw_end_array(w);
        mcp_write_egress(w, res);
        if (res->sandbox_failed) {
                oci_jw_key(w, "error");
                mcp_jw_text(w, res->error);
        }
        oci_jw_end_object(w);
}

static bool
run_failed(const mcp_run_result *res)
{
        return res->sandbox_failed || res->timed_out || res->oom_killed || res->term_signal > 0 ||
               res->exit_code != 0;
}

/* "exit code 0 in 7 ms", then stdout and stderr for people. */
static void
write_run_text(oci_jw *w, const mcp_run_result *res)
{
        char head[1400], sig[32];
        if (res->sandbox_failed)
                snprintf(head, sizeof head, "sandbox failed: %s", res->error);
        else if (res->timed_out)
                snprintf(head, sizeof head, "timed out: the run was killed at its time limit");
        else if (res->oom_killed)
                snprintf(head, sizeof head, "killed: out of memory (the memory limit was reached)");
        else if (res->term_signal > 0)
                snprintf(head, sizeof head, "killed by %s", signal_name(res->term_signal, sig));
        else
                snprintf(head, sizeof head, "exit code %d", res->exit_code);
        size_t n = strlen(head);
        snprintf(head + n, sizeof head - n, " (%" PRIu64 " ms)", res->duration_ms);
        n = strlen(head);
        if ((res->stdout_truncated || res->stderr_truncated) && res->run_id)
                snprintf(head + n, sizeof head - n,
                         "; output truncated, the full logs are resources sandbox://runs/%s/stdout "
                         "and sandbox://runs/%s/stderr", res->run_id, res->run_id);
        n = strlen(head);
        (void) mcp_egress_text(res, head + n, sizeof head - n);

        size_t cap = strlen(head) + res->stdout_len + res->stderr_len + 64;
        _cleanup_free_ char *text = malloc(cap);
        if (!text) {
                oci_jw_string(w, head);
                return;
        }
        size_t o = (size_t) snprintf(text, cap, "%s\n", head);
        if (res->stdout_len) {
                o += (size_t) snprintf(text + o, cap - o, "--- stdout ---\n");
                memcpy(text + o, res->stdout_buf, res->stdout_len);
                o += res->stdout_len;
                if (text[o - 1] != '\n')
                        text[o++] = '\n';
        }
        if (res->stderr_len) {
                o += (size_t) snprintf(text + o, cap - o, "--- stderr ---\n");
                memcpy(text + o, res->stderr_buf, res->stderr_len);
                o += res->stderr_len;
        }
        mcp_jw_bytes(w, text, o);
}

/* The output is written `copies` times (the text block, structuredContent): cut it to half
 * the response budget (stderr gets at least a quarter of that when it needs it), repaired
 * into *ret_out and *ret_err, with truncated set on a cut. What it takes, encoded. */
static size_t
fit_output(mcp_run_result *r, unsigned copies, char **ret_out, char **ret_err)
{
        size_t half = MCP_RESPONSE_BUDGET / 2, olen = 0, elen = 0, ocost = 0, ecost = 0;
        char *o = *ret_out = mcp_utf8_sanitize(r->stdout_buf ? r->stdout_buf : "",
                                               r->stdout_buf ? r->stdout_len : 0, &olen);
        char *e = *ret_err = mcp_utf8_sanitize(r->stderr_buf ? r->stderr_buf : "",
                                               r->stderr_buf ? r->stderr_len : 0, &elen);
        if (!o || !e) {
                r->stdout_len = r->stderr_len = 0;
                r->stdout_truncated = r->stderr_truncated = true;
                return 0;
        }
        size_t efit = mcp_json_fit(e, elen, half / 4, copies, 0, &ecost);
        size_t ofit = mcp_json_fit(o, olen, half - ecost, copies, 0, &ocost);
        if (efit < elen)
                efit = mcp_json_fit(e, elen, half - ocost, copies, 0, &ecost);
        r->stdout_buf = o;
        r->stderr_buf = e;
        r->stdout_truncated |= ofit < olen;
        r->stderr_truncated |= efit < elen;
        r->stdout_len = ofit;
        r->stderr_len = efit;
        return ocost + ecost;
}

static void
send_run_result(mcp_call *c, const mcp_run_result *full)
{
        mcp_server *srv = c->srv;
        bool structured = mcp_version_structured(srv->version);
        mcp_run_result fitted = *full;
        const mcp_run_result *res = &fitted;
        _cleanup_free_ char *out = NULL, *errs = NULL;
        size_t used = fit_output(&fitted, structured ? 2 : 1, &out, &errs);
        /* Images fill what is left, less room for the rest of the result; past it they
         * become resource_links. */
        size_t room = MCP_RESPONSE_BUDGET - 256 * 1024 > used ? MCP_RESPONSE_BUDGET - 256 * 1024 - used : 0;
        run_view view = { .res = res, .session_id = c->session_id };
        /* The output is in the result twice (people's text, structuredContent), not three
         * times: the JSON text block carries everything else. */
        run_view meta = { .res = res, .session_id = c->session_id, .no_output = true };
        _cleanup_jw_ oci_jw *tw = oci_jw_new(false);
        _cleanup_free_ char *json = NULL;
        if (tw) {
                write_run_structured(tw, &meta);
                (void) oci_jw_finish(tw, &json, NULL, NULL);
        }

        oci_jw *w = mcp_rpc_begin_result(&c->id);
        if (w) {
                oci_jw_begin_object(w);
                oci_jw_key(w, "content");
                oci_jw_begin_array(w);
                oci_jw_begin_object(w);
                oci_jw_kv_string(w, "type", "text");
                oci_jw_key(w, "text");
                write_run_text(w, res);
                oci_jw_end_object(w);
                if (json) {
                        oci_jw_begin_object(w);
                        oci_jw_kv_string(w, "type", "text");
                        oci_jw_kv_string(w, "text", json);
                        oci_jw_end_object(w);
                }
                for (size_t i = 0; i < res->n_artifacts; i++) {
                        const mcp_artifact *f = &res->artifacts[i];
                        bool image = f->mime_type && strncmp(f->mime_type, "image/", 6) == 0;
                        /* A fresh workspace is gone after the run: its small files stay
                         * readable from disk (keptfiles.h). */
                        size_t b64_len = (f->size + 2) / 3 * 4;
                        bool inline_image = image && f->data &&
                                            f->size <= srv->cfg->max_image_bytes && b64_len <= room;
                        if (f->data && !inline_image && f->uri)
                                mcp_resources_keep_file(srv, f->uri, f->mime_type, f->data, f->size);
                        if (inline_image) {
                                room -= b64_len;
                                _cleanup_free_ char *b64 = mcp_base64_encode(f->data, f->size, NULL);
                                if (!b64)
                                        continue;
                                oci_jw_begin_object(w);
                                oci_jw_kv_string(w, "type", "image");
                                oci_jw_kv_string(w, "data", b64);
                                oci_jw_key(w, "mimeType");
                                mcp_jw_text(w, f->mime_type ? f->mime_type : "image/png");
                                oci_jw_end_object(w);
                        } else if (structured && f->uri) {
                                oci_jw_begin_object(w);
                                oci_jw_kv_string(w, "type", "resource_link");
                                oci_jw_key(w, "uri");
                                mcp_jw_text(w, f->uri);
                                oci_jw_key(w, "name");
                                mcp_jw_text(w, f->path);
                                if (f->mime_type) {
                                        oci_jw_key(w, "mimeType");
                                        mcp_jw_text(w, f->mime_type);
                                }
                                oci_jw_kv_uint64(w, "size", f->size);
                                oci_jw_end_object(w);
                        }
                }
                oci_jw_end_array(w);
                if (structured) {
                        oci_jw_key(w, "structuredContent");
                        write_run_structured(w, &view);
                }
                if (run_failed(res))
                        oci_jw_kv_bool(w, "isError", true);
                oci_jw_end_object(w);
        }
        (void) mcp_rpc_send(srv->rpc, w, &c->id, false);
}

static void
on_done(mcp_run *run _unused_, const mcp_run_result *res, void *data)
{
        mcp_call *c = data;
        if (c->timer) {
                mcp_timer_cancel(c->srv->loop, c->timer);
                c->timer = NULL;
        }
        /* The progress notifications stop before the response. */
        c->finished = true;
        c->run = NULL;
        mcp_outcome o = res->timed_out ? MCP_OUTCOME_TIMEOUT
                        : res->oom_killed ? MCP_OUTCOME_OOM
                        : res->sandbox_failed || res->term_signal > 0 || res->exit_code != 0 ? MCP_OUTCOME_ERROR
                                                                                             : MCP_OUTCOME_OK;
        mcp_metrics_run(c->srv->metrics, c->language, o, res->duration_ms, c->srv->tenant);
        if (c->req)
                mcp_audit_run_start(c->srv, &c->audit, c->req, res->run_id);
        mcp_audit_run_end(c->srv, &c->audit, o, res, NULL);
        send_run_result(c, res);
        /* The engine keeps the logs of runs that ran (not of sandbox failures). */
        if (res->run_id && !res->sandbox_failed)
                mcp_resources_note_run(c->srv, res->run_id);
        if (c->session_id)
                mcp_resources_session_changed(c->srv);     /* its workspace may have changed */
        if (!c->submitting)
                call_free(c);
}

typedef struct run_args {
        mcp_file_in files[FILES_MAX];
        unsigned char *decoded[FILES_MAX];
        size_t n_files;
        const char *args[ARGS_MAX];
        size_t n_args;
        char *env[ENV_MAX];
        size_t n_env;
} run_args;

static void
run_args_free(run_args *ra)
{
        for (size_t i = 0; i < ra->n_files; i++)
                free(ra->decoded[i]);
        for (size_t i = 0; i < ra->n_env; i++)
                free(ra->env[i]);
}

static int
t_files(targs *a, run_args *ra)
{
        const oci_json *v = tget(a, "files");
        char d[96];
        if (!v)
                return 0;
        if (oci_json_type_of(v) != OCI_JSON_ARRAY)
                return mcp_arg_bad(a, "files: expected an array, got %s", describe(v, d, sizeof d));
        size_t n = oci_json_len(v), total = 0;
        if (n > FILES_MAX)
                return mcp_arg_bad(a, "files: %zu files is above the limit of %d", n, FILES_MAX);
        for (size_t i = 0; i < n; i++) {
                const oci_json *f = oci_json_value_at(v, i);
                if (oci_json_type_of(f) != OCI_JSON_OBJECT)
                        return mcp_arg_bad(a, "files[%zu]: expected an object, got %s", i,
                                    describe(f, d, sizeof d));
                targs fa = { .obj = f };
                static const char *const file_args[] = { "path", "content", "encoding",
                                                         "executable", NULL };
                const tool file_shape = { .name = "a file", .args = file_args };
                const char *path = NULL, *content = NULL, *encoding = NULL;
                bool exec = false;
                int r;
                if ((r = t_unknown(&fa, &file_shape)) < 0 ||
                    (r = mcp_arg_str(&fa, "path", true, PATH_MAX_LEN, &path)) < 0 ||
                    (r = mcp_arg_str(&fa, "content", true, 0, &content)) < 0 ||
                    (r = mcp_arg_enum(&fa, "encoding", false, (const char *const[]) { "utf8", "base64", NULL },
                                &encoding)) < 0 ||
                    (r = mcp_arg_bool(&fa, "executable", &exec)) < 0)
                        return mcp_arg_bad(a, "files[%zu]%s%s", i,
                                    strncmp(fa.msg, "unknown", 7) == 0 ? ": " : ".", fa.msg);
                if (!*path)
                        return mcp_arg_bad(a, "files[%zu].path: empty", i);
                char field[48];
                snprintf(field, sizeof field, "files[%zu].content", i);
                const char *data;
                size_t len;
                r = mcp_arg_content(&fa, field, content, encoding, FILES_BYTES_MAX - total, &data, &len,
                              &ra->decoded[i]);
                ra->n_files = i + 1;
                if (r < 0)
                        return mcp_arg_bad(a, "%s (all files together: at most %" PRIu64 " bytes)", fa.msg,
                                    FILES_BYTES_MAX);
                total += len;
                ra->files[i] = (mcp_file_in) { .path = path, .data = data, .len = len,
                                               .executable = exec };
        }
        return 1;
}

static int
t_args(targs *a, run_args *ra)
{
        const oci_json *v = tget(a, "args");
        char d[96];
        if (!v)
                return 0;
        if (oci_json_type_of(v) != OCI_JSON_ARRAY)
                return mcp_arg_bad(a, "args: expected an array of strings, got %s", describe(v, d, sizeof d));
        size_t n = oci_json_len(v);
        if (n > ARGS_MAX)
                return mcp_arg_bad(a, "args: %zu arguments is above the limit of %d", n, ARGS_MAX);
        for (size_t i = 0; i < n; i++) {
                const oci_json *s = oci_json_value_at(v, i);
                if (oci_json_type_of(s) != OCI_JSON_STRING)
                        return mcp_arg_bad(a, "args[%zu]: expected a string, got %s", i, describe(s, d, sizeof d));
                if (strlen(oci_json_string(s)) > ARG_MAX_LEN)
                        return mcp_arg_bad(a, "args[%zu]: %zu bytes is above the limit of %d bytes", i,
                                    strlen(oci_json_string(s)), ARG_MAX_LEN);
                ra->args[i] = oci_json_string(s);
        }
        ra->n_args = n;
        return 1;
}

static int
t_env(targs *a, run_args *ra)
{
        const oci_json *v = tget(a, "env");
        char d[96], q[96];
        if (!v)
                return 0;
        if (oci_json_type_of(v) != OCI_JSON_OBJECT)
                return mcp_arg_bad(a, "env: expected an object of strings, got %s", describe(v, d, sizeof d));
        size_t n = oci_json_len(v);
        if (n > ENV_MAX)
                return mcp_arg_bad(a, "env: %zu variables is above the limit of %d", n, ENV_MAX);
        for (size_t i = 0; i < n; i++) {
                const char *k = oci_json_key_at(v, i);
                const oci_json *s = oci_json_value_at(v, i);
                oci_json_quote(k, q, sizeof q);
                if (!mcp_env_name_valid(k, strlen(k)))
                        return mcp_arg_bad(a, "env: %s is not a variable name ([A-Za-z_][A-Za-z0-9_]*, at most %d bytes)",
                                    q, MCP_ENV_NAME_MAX);
                if (oci_json_type_of(s) != OCI_JSON_STRING)
                        return mcp_arg_bad(a, "env.%s: expected a string, got %s", k, describe(s, d, sizeof d));
                size_t len = strlen(oci_json_string(s));
                if (len > ENV_VALUE_MAX)
                        return mcp_arg_bad(a, "env.%s: %zu bytes is above the limit of %d bytes", k, len,
                                    ENV_VALUE_MAX);
                if (asprintf(&ra->env[i], "%s=%s", k, oci_json_string(s)) < 0)
                        return mcp_arg_bad(a, "env: out of memory");
                ra->n_env = i + 1;
        }
        return 1;
}

static void
on_network(mcp_proxy_event ev, const char *host, uint16_t port, const char *reason,
           uint64_t up, uint64_t down, void *data)
{
        mcp_call *c = data;
        const char *run_id = c->run ? mcp_engine_run_id(c->run) : "run";
        mcp_network_log(c->srv->log, run_id, ev, host, port, reason, up + down);
        mcp_audit_egress(c->srv, run_id, ev, host, port, reason, up, down);
}

/* A language the host has but the sandbox cannot run: the message says so and why. */
static void
language_off(mcp_server *srv, targs *a)
{
        const char *name = NULL, *off, *why;
        (void) mcp_arg_str(a, "language", true, 256, &name);
        for (size_t i = 0; name && srv->engine && (off = mcp_engine_language_off(srv->engine, i, &why)); i++)
                if (strcmp(off, name) == 0)
                        snprintf(a->msg, sizeof a->msg, "language: \"%s\" is not available: %s",
                                 off, why);
}

static void
t_run_code(mcp_server *srv, const mcp_rpc_id *id, targs *a, const mcp_rpc_id *token)
{
        _cleanup_(mcp_egress_policy_done) mcp_egress_policy allow = { 0 };
        const char *const *languages = srv->languages;
        mcp_run_request req = { 0 };
        run_args ra = { 0 };
        int r;
        if ((r = mcp_arg_enum(a, "language", true, languages, &req.language)) < 0)
                language_off(srv, a);
        if (r < 0 || (r = mcp_arg_str(a, "code", true, CODE_MAX, &req.code)) < 0 ||
            (r = mcp_arg_str(a, "stdin", false, STDIN_MAX, &req.stdin_data)) < 0 ||
            (r = t_files(a, &ra)) < 0 || (r = t_args(a, &ra)) < 0 || (r = t_env(a, &ra)) < 0 ||
            (r = mcp_arg_limits(a, srv->cfg, &req.limits)) < 0 ||
            (r = mcp_arg_str(a, "session_id", false, SESSION_ID_MAX, &req.session_id)) < 0 ||
            (r = mcp_arg_network(a, srv->cfg, &req.network, &allow)) < 0) {
                run_args_free(&ra);
                mcp_tool_error(srv, id, a->msg);
                return;
        }
        if (req.session_id && r > 0) {
                run_args_free(&ra);
                mcp_tool_error(srv, id, "network: a session's runs have the session's network "
                                        "(set it with session_create)");
                return;
        }
        req.allow = &allow;
        req.on_network = on_network;
        req.tenant = srv->tenant;
        if (req.session_id && !mcp_server_owns(srv, req.session_id)) {
                char q[96];
                oci_json_quote(req.session_id, q, sizeof q);
                run_args_free(&ra);
                mcp_tool_errorf(srv, id, "session_id: %s: no such session (expired or closed?)", q);
                return;
        }
        if (mcp_server_admit(srv, id, MCP_ADMIT_RUN) < 0) {
                run_args_free(&ra);
                return;
        }
        req.code_len = strlen(req.code);
        req.stdin_len = req.stdin_data ? strlen(req.stdin_data) : 0;
        req.files = ra.files;
        req.n_files = ra.n_files;
        req.args = ra.args;
        req.n_args = ra.n_args;
        req.env = (const char *const *) ra.env;
        req.n_env = ra.n_env;

        mcp_call *c = calloc(1, sizeof *c);
        if (!c || mcp_rpc_id_copy(&c->id, id) < 0 ||
            (token && mcp_rpc_id_copy(&c->token, token) < 0) ||
            (req.session_id && !(c->session_id = strdup(req.session_id)))) {
                if (c) {
                        mcp_rpc_id_clear(&c->id);
                        mcp_rpc_id_clear(&c->token);
                        free(c);
                }
                run_args_free(&ra);
                mcp_tool_error(srv, id, "out of memory");
                return;
        }
        c->srv = srv;
        c->language = req.language;
        c->next = srv->calls;
        if (c->next)
                c->next->prev = c;
        srv->calls = c;

        msp_err err = { 0 };
        mcp_audit_run_prepare(&c->audit, &req, c->session_id);
        c->submitting = true;
        c->req = &req;
        r = srv->engine ? mcp_engine_submit(srv->engine, &req, on_output, on_done, c, &c->run, &err)
                        : msp_err_set(&err, ENOSYS, "no engine");
        c->submitting = false;
        c->req = NULL;
        run_args_free(&ra);
        if (c->finished) {
                /* on_done ran inside submit and answered. */
                call_free(c);
                return;
        }
        if (r < 0) {
                char q[96];
                mcp_audit_run_end(srv, &c->audit, MCP_OUTCOME_ERROR, NULL,
                                  r == -EBUSY ? "the queue is full" : r == -EAGAIN ? "the session is busy"
                                  : err.msg[0] ? err.msg : strerror(-r));
                if (r == -EBUSY)
                        mcp_tool_errorf(srv, id, "the server is busy: %u runs are queued (--max-queue); retry later",
                                         srv->cfg->max_queue);
                else if (r == -EAGAIN && req.session_id) {
                        oci_json_quote(req.session_id, q, sizeof q);
                        mcp_tool_errorf(srv, id, "session_id: %s: another run is using this session; retry when it is done",
                                         q);
                } else if (r == -ENOENT && req.session_id && !err.msg[0]) {
                        oci_json_quote(req.session_id, q, sizeof q);
                        mcp_tool_errorf(srv, id, "session_id: %s: no such session (expired or closed?)", q);
                } else if (r == -ENOENT && err.msg[0])
                        /* it names what is missing: the session, a language in its rootfs */
                        mcp_tool_errorf(srv, id, "%s", err.msg);
                else
                        mcp_tool_errno(srv, id, r, &err, "run_code");
                call_free(c);
                return;
        }
        mcp_audit_run_start(srv, &c->audit, &req, mcp_engine_run_id(c->run));
        mcp_log(srv->log, MCP_LOG_DEBUG, "run_code %s started", req.language);
}

size_t
mcp_tools_in_flight(const mcp_server *srv)
{
        size_t n = 0;
        for (const mcp_call *c = srv->calls; c; c = c->next)
                n += !c->finished;
        return n;
}

int
mcp_server_admit(mcp_server *srv, const mcp_rpc_id *id, mcp_admit what)
{
        char msg[256] = "";
        int r = srv->admit ? srv->admit(srv, what, msg, sizeof msg, srv->admit_data) : 0;
        if (r < 0) {
                mcp_audit_refused(srv, what == MCP_ADMIT_RUN ? "run_code" : "session_create", msg);
                mcp_tool_error(srv, id, msg);
        }
        return r;
}

void
mcp_tools_cancel(mcp_server *srv, const mcp_rpc_id *id)
{
        for (mcp_call *c = srv->calls; c; c = c->next)
                if (mcp_rpc_id_equal(&c->id, id)) {
                        if (c->run && !c->finished && srv->engine)
                                mcp_engine_cancel(srv->engine, c->run);
                        count_cancelled(c);
                        mcp_log(srv->log, MCP_LOG_INFO, "run cancelled by the client");
                        call_free(c);
                        return;
                }
}

void
mcp_tools_cancel_all(mcp_server *srv)
{
        while (srv->calls) {
                mcp_call *c = srv->calls;
                if (c->run && !c->finished && srv->engine)
                        mcp_engine_cancel(srv->engine, c->run);
                count_cancelled(c);
                call_free(c);
        }
}

void
mcp_tools_abort_session(mcp_server *srv, const char *session_id)
{
        for (mcp_call *c = srv->calls, *next; c; c = next) {
                next = c->next;
                if (c->finished || !c->session_id || strcmp(c->session_id, session_id) != 0)
                        continue;
                /* The caller gets an answer (isError), unlike a client's own cancel. */
                char q[96];
                oci_json_quote(session_id, q, sizeof q);
                mcp_tool_errorf(srv, &c->id, "killed: session %s was closed while the run was going", q);
                if (c->run && srv->engine)
                        mcp_engine_cancel(srv->engine, c->run);
                count_cancelled(c);
                call_free(c);
        }
}

/* ---- tools/call ---- */

void
mcp_tools_call(mcp_server *srv, const mcp_rpc_id *id, const oci_json *params)
{
        const char *name = mcp_json_str(params, "name");
        if (!name) {
                (void) mcp_rpc_send_error(srv->rpc, id, MCP_RPC_INVALID_PARAMS,
                                          "Invalid params: name must be a string");
                return;
        }
        const tool *t = NULL;
        for (size_t i = 0; i < ARRAY_SIZE(tools) && !t; i++)
                if (strcmp(tools[i].name, name) == 0)
                        t = &tools[i];
        if (!t) {
                char msg[200];
                snprintf(msg, sizeof msg, "Unknown tool: %.120s", name);
                (void) mcp_rpc_send_error(srv->rpc, id, MCP_RPC_INVALID_PARAMS, msg);
                return;
        }
        const oci_json *args = oci_json_get(params, "arguments");
        if (args && oci_json_type_of(args) == OCI_JSON_NULL)
                args = NULL;
        if (args && oci_json_type_of(args) != OCI_JSON_OBJECT) {
                (void) mcp_rpc_send_error(srv->rpc, id, MCP_RPC_INVALID_PARAMS,
                                          "Invalid params: arguments must be an object");
                return;
        }
        mcp_rpc_id token = { .kind = MCP_ID_NONE };
        const oci_json *meta = oci_json_get(params, "_meta");
        const oci_json *tok = meta ? oci_json_get(meta, "progressToken") : NULL;
        if (tok && mcp_rpc_id_from_json(tok, &token) < 0)
                token.kind = MCP_ID_NONE;

        targs a = { .obj = args };
        if (t_unknown(&a, t) < 0)
                mcp_tool_error(srv, id, a.msg);
        else
                t->fn(srv, id, &a, token.kind == MCP_ID_NONE ? NULL : &token);
        mcp_rpc_id_clear(&token);
}
