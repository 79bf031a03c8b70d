/* run_code: its files, args and env arguments, the submit to the engine, and the calls in
 * flight (srv->calls): the output tail sent as progress notifications, the answer when
 * the run is done (tools-run-result.c), the cancel by the client and the abort when the
 * session closes. */
#include "mcp/tools-run.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "mcp/resources.h"
#include "mcp/tools-audit.h"
#include "mcp/tools-network.h"
#include "mcp/tools-run-result.h"
#include "sandbox/sandbox.h"

#define PROGRESS_INTERVAL_USEC 250000   /* at most 4 notifications a second */
#define TAIL_KEEP 2048
#define TAIL_BYTES 1024
#define TAIL_LINES 20

/* One run_code call from its submit to its answer, or to its cancel. */
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
        mcp_tool_run_result(c->srv, &c->id, c->session_id, res);
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
        const oci_json *v = mcp_arg_get(a, "files");
        char d[96];
        if (!v)
                return 0;
        if (oci_json_type_of(v) != OCI_JSON_ARRAY)
                return mcp_arg_bad(a, "files: expected an array, got %s",
                                   mcp_arg_describe(v, d, sizeof d));
        size_t n = oci_json_len(v), total = 0;
        if (n > FILES_MAX)
                return mcp_arg_bad(a, "files: %zu files is above the limit of %d", n, FILES_MAX);
        for (size_t i = 0; i < n; i++) {
                const oci_json *f = oci_json_value_at(v, i);
                if (oci_json_type_of(f) != OCI_JSON_OBJECT)
                        return mcp_arg_bad(a, "files[%zu]: expected an object, got %s", i,
                                    mcp_arg_describe(f, d, sizeof d));
                targs fa = { .obj = f };
                static const char *const file_args[] = { "path", "content", "encoding",
                                                         "executable", NULL };
                const char *path = NULL, *content = NULL, *encoding = NULL;
                bool exec = false;
                int r;
                if ((r = mcp_arg_unknown(&fa, "a file", file_args)) < 0 ||
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
        const oci_json *v = mcp_arg_get(a, "args");
        char d[96];
        if (!v)
                return 0;
        if (oci_json_type_of(v) != OCI_JSON_ARRAY)
                return mcp_arg_bad(a, "args: expected an array of strings, got %s",
                                   mcp_arg_describe(v, d, sizeof d));
        size_t n = oci_json_len(v);
        if (n > ARGS_MAX)
                return mcp_arg_bad(a, "args: %zu arguments is above the limit of %d", n, ARGS_MAX);
        for (size_t i = 0; i < n; i++) {
                const oci_json *s = oci_json_value_at(v, i);
                if (oci_json_type_of(s) != OCI_JSON_STRING)
                        return mcp_arg_bad(a, "args[%zu]: expected a string, got %s", i,
                                           mcp_arg_describe(s, d, sizeof d));
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
        const oci_json *v = mcp_arg_get(a, "env");
        char d[96], q[96];
        if (!v)
                return 0;
        if (oci_json_type_of(v) != OCI_JSON_OBJECT)
                return mcp_arg_bad(a, "env: expected an object of strings, got %s",
                                   mcp_arg_describe(v, d, sizeof d));
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
                        return mcp_arg_bad(a, "env.%s: expected a string, got %s", k,
                                           mcp_arg_describe(s, d, sizeof d));
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

/* fresh and background (a session's only), and what a run in the session's kernel or node
 * REPL cannot take: stdin and args go to a process, never to a cell. */
static int
t_live_args(mcp_server *srv, targs *a, mcp_run_request *req, const run_args *ra)
{
        int r;
        if ((r = mcp_arg_bool(a, "fresh", &req->fresh)) < 0 ||
            (r = mcp_arg_bool(a, "background", &req->background)) < 0)
                return r;
        if (!req->session_id && (req->fresh || req->background))
                return mcp_arg_bad(a, "%s: only with session_id (a process of its own in the "
                                   "session's sandbox); a call without a session is always a "
                                   "process of its own", req->fresh ? "fresh" : "background");
        /* A background run is a process of its own, never a cell. */
        if (!req->session_id || !srv->engine ||
            !mcp_engine_uses_kernel(srv->engine, req->session_id, req->language,
                                    req->fresh || req->background))
                return 0;
        if (req->stdin_data || ra->n_args)
                return mcp_arg_bad(a, "%s: a %s run in a session is evaluated in the session's "
                                   "%s, which takes no %s; pass \"fresh\": true to run it as a "
                                   "process of its own", req->stdin_data ? "stdin" : "args",
                                   req->language,
                                   strcmp(req->language, "node") == 0 ? "node REPL" : "kernel",
                                   req->stdin_data ? "stdin" : "arguments");
        return 0;
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

void
mcp_tool_run_code(mcp_server *srv, const mcp_rpc_id *id, targs *a, const mcp_rpc_id *token)
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
        if (t_live_args(srv, a, &req, &ra) < 0) {
                run_args_free(&ra);
                mcp_tool_error(srv, id, a->msg);
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
        if (mcp_tool_admit(srv, id, MCP_ADMIT_RUN) < 0) {
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
