/* The tools of a session's running sandbox (engine.h, "live sessions"): session_pause and
 * session_resume (the cgroup freezer), and the background processes that run_code's
 * `background` leaves: process_list, process_output (a stream's bytes from an offset,
 * repaired as run output is and cut to the response budget), process_kill. Another
 * tenant's session is one that does not exist, as for run_code (mcp_server_owns). */
#include "mcp/tools-live.h"
#include "mcp/tools-run-result.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/base.h"
#include "mcp/resources.h"
#include "mcp/tools-audit.h"

/* session_id read, and the caller's: else a tool error was sent. */
static int
t_live_session(mcp_server *srv, const mcp_rpc_id *id, targs *a, const char **ret_sid)
{
        mcp_live_info info;
        if (mcp_arg_str(a, "session_id", true, SESSION_ID_MAX, ret_sid) < 0) {
                mcp_tool_error(srv, id, a->msg);
                return -EINVAL;
        }
        if (!srv->engine || !mcp_server_owns(srv, *ret_sid) ||
            mcp_engine_session_info(srv->engine, *ret_sid, &info) < 0) {
                char q[96];
                oci_json_quote(*ret_sid, q, sizeof q);
                mcp_tool_errorf(srv, id, "session_id: %s: no such session (expired or closed?)", q);
                return -ENOENT;
        }
        return 0;
}

static const char *
state_name(mcp_live_state s)
{
        return s == MCP_LIVE_PAUSED ? "paused" : s == MCP_LIVE_STOPPED ? "stopped" : "running";
}

/* ---- session_pause, session_resume ---- */

typedef struct state_view {
        const char *session_id, *state;
} state_view;

static void
write_state(oci_jw *w, const void *ctx)
{
        const state_view *v = ctx;
        oci_jw_begin_object(w);
        oci_jw_key(w, "session_id");
        mcp_jw_text(w, v->session_id);
        oci_jw_kv_string(w, "state", v->state);
        oci_jw_end_object(w);
}

static void
pause_or_resume(mcp_server *srv, const mcp_rpc_id *id, targs *a, bool pause)
{
        const char *tool = pause ? "session_pause" : "session_resume";
        const char *sid;
        if (t_live_session(srv, id, a, &sid) < 0)
                return;
        msp_err err = { 0 };
        int r = pause ? mcp_engine_session_pause(srv->engine, sid, &err)
                      : mcp_engine_session_resume(srv->engine, sid, &err);
        if (r == -ENOENT) {
                /* The session is there (t_live_session): its sandbox's cgroup is not, yet
                 * (session_create answers before the sandbox is up) or any more. */
                mcp_tool_errorf(srv, id, "%s: session %s: its sandbox is still starting or has "
                                "just stopped; retry in a moment (its next run_code waits for "
                                "it)", tool, sid);
                return;
        }
        if (r < 0) {
                /* The engine's message says which: already so, stopped, no freezer. */
                mcp_tool_errno(srv, id, r, &err, tool);
                return;
        }
        mcp_audit_session(srv, tool, NULL, sid, NULL);
        mcp_live_info info;
        state_view v = { .session_id = sid, .state = pause ? "paused" : "running" };
        if (mcp_engine_session_info(srv->engine, sid, &info) == 0)
                v.state = state_name(info.state);
        mcp_tool_structured(srv, id, write_state, &v);
}

void
mcp_tool_session_pause(mcp_server *srv, const mcp_rpc_id *id, targs *a, const mcp_rpc_id *token _unused_)
{
        pause_or_resume(srv, id, a, true);
}

void
mcp_tool_session_resume(mcp_server *srv, const mcp_rpc_id *id, targs *a, const mcp_rpc_id *token _unused_)
{
        pause_or_resume(srv, id, a, false);
}

/* ---- process_list ---- */

static void
write_status(oci_jw *w, const mcp_process_info *p)
{
        char sig[32];
        oci_jw_kv_bool(w, "running", p->running);
        oci_jw_key(w, "exit_code");
        if (p->running || p->term_signal > 0)
                oci_jw_null(w);
        else
                oci_jw_int64(w, p->exit_code);
        oci_jw_key(w, "signal");
        if (!p->running && p->term_signal > 0)
                oci_jw_string(w, mcp_signal_name(p->term_signal, sig));
        else
                oci_jw_null(w);
}

typedef struct procs_view {
        const char *session_id;
        const mcp_process_info *p;
        size_t n;
} procs_view;

static void
write_procs(oci_jw *w, const void *ctx)
{
        const procs_view *v = ctx;
        char t[32];
        oci_jw_begin_object(w);
        oci_jw_key(w, "session_id");
        mcp_jw_text(w, v->session_id);
        oci_jw_key(w, "processes");
        oci_jw_begin_array(w);
        for (size_t i = 0; i < v->n; i++) {
                const mcp_process_info *p = &v->p[i];
                oci_jw_begin_object(w);
                oci_jw_key(w, "process_id");
                mcp_jw_text(w, p->id);
                oci_jw_key(w, "language");
                mcp_jw_text(w, p->language);
                oci_jw_kv_int64(w, "pid", p->pid);
                write_status(w, p);
                mcp_rfc3339(p->started_usec, t);
                oci_jw_kv_string(w, "started_at", t);
                oci_jw_kv_uint64(w, "stdout_bytes", p->stdout_total);
                oci_jw_kv_uint64(w, "stderr_bytes", p->stderr_total);
                oci_jw_end_object(w);
        }
        oci_jw_end_array(w);
        oci_jw_end_object(w);
}

void
mcp_tool_process_list(mcp_server *srv, const mcp_rpc_id *id, targs *a, const mcp_rpc_id *token _unused_)
{
        const char *sid;
        if (t_live_session(srv, id, a, &sid) < 0)
                return;
        _cleanup_free_ mcp_process_info *list = NULL;
        size_t n = 0;
        msp_err err = { 0 };
        int r = mcp_engine_process_list(srv->engine, sid, &list, &n, &err);
        if (r < 0) {
                mcp_tool_errno(srv, id, r, &err, "process_list");
                return;
        }
        procs_view v = { .session_id = sid, .p = list, .n = n };
        mcp_tool_structured(srv, id, write_procs, &v);
}

/* process_id read, and one of the session's: its info; else a tool error was sent. */
static int
t_process(mcp_server *srv, const mcp_rpc_id *id, targs *a, const char *sid, const char **ret_pid,
          mcp_process_info *ret)
{
        if (mcp_arg_str(a, "process_id", true, PROCESS_ID_MAX, ret_pid) < 0) {
                mcp_tool_error(srv, id, a->msg);
                return -EINVAL;
        }
        _cleanup_free_ mcp_process_info *list = NULL;
        size_t n = 0;
        msp_err err = { 0 };
        int r = mcp_engine_process_list(srv->engine, sid, &list, &n, &err);
        if (r < 0) {
                mcp_tool_errno(srv, id, r, &err, "process_id");
                return r;
        }
        for (size_t i = 0; i < n; i++)
                if (strcmp(list[i].id, *ret_pid) == 0) {
                        *ret = list[i];
                        return 0;
                }
        char q[96];
        oci_json_quote(*ret_pid, q, sizeof q);
        mcp_tool_errorf(srv, id, "process_id: %s is not a process of session %s (process_list "
                        "lists them; a killed process that had exited is forgotten)", q, sid);
        return -ENOENT;
}

/* ---- process_output ---- */

/* n, or less so that buf[0..n) does not end inside a character: the rest of it comes with
 * the next read. */
static size_t
whole_chars(const char *buf, size_t n)
{
        for (size_t back = 1; back <= 4 && back <= n; back++) {
                unsigned char c = (unsigned char) buf[n - back];
                if ((c & 0xC0) == 0x80)
                        continue;
                /* A byte that starts no character (ASCII, 0xC0, 0xC1, above 0xF4) is
                 * complete as it is: it is repaired, never waited for. */
                size_t need = c >= 0xF5 || c < 0xC2 ? 1 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
                return need > back ? n - back : n;
        }
        return n;
}

/* The longest prefix of raw[0..n) whose repaired text (invalid UTF-8 and NULs as U+FFFD,
 * as run output) fits the response: written once in structuredContent (`once`) and once
 * inside the JSON text block. The text in *ret; the raw bytes it stands for returned;
 * (size_t) -1 when out of memory. */
static size_t
fit_text(const char *raw, size_t n, bool cut, unsigned once, char **ret, size_t *ret_len)
{
        size_t budget = MCP_RESPONSE_BUDGET - 64 * 1024;
        for (unsigned round = 0;; round++) {
                if (cut)
                        n = whole_chars(raw, n);
                size_t len = 0;
                char *t = mcp_utf8_sanitize(raw, n, &len);
                if (!t)
                        return (size_t) -1;
                size_t fit = mcp_json_fit(t, len, budget, once, 1, NULL);
                if (fit == len) {
                        *ret = t;
                        *ret_len = len;
                        return n;
                }
                free(t);
                /* The repaired text is about as long as the raw bytes times a ratio: aim at
                 * the fit, halve after a few rounds. */
                size_t m = round < 4 ? (size_t) ((double) n * (double) fit / (double) len) : n / 2;
                n = m < n ? m : n - 1;
                cut = true;
        }
}

typedef struct output_view {
        const char *session_id, *stream;
        const mcp_process_info *p;
        const char *text;
        size_t len;
        uint64_t offset, next, skipped, total;
} output_view;

static void
write_output(oci_jw *w, const void *ctx)
{
        const output_view *v = ctx;
        oci_jw_begin_object(w);
        oci_jw_key(w, "session_id");
        mcp_jw_text(w, v->session_id);
        oci_jw_key(w, "process_id");
        mcp_jw_text(w, v->p->id);
        oci_jw_kv_string(w, "stream", v->stream);
        oci_jw_key(w, "text");
        mcp_jw_bytes(w, v->text, v->len);
        oci_jw_kv_uint64(w, "offset", v->offset);
        oci_jw_kv_uint64(w, "next_offset", v->next);
        oci_jw_kv_uint64(w, "skipped", v->skipped);
        oci_jw_kv_uint64(w, "total_bytes", v->total);
        write_status(w, v->p);
        oci_jw_end_object(w);
}

void
mcp_tool_process_output(mcp_server *srv, const mcp_rpc_id *id, targs *a, const mcp_rpc_id *token _unused_)
{
        const char *sid, *pid, *stream = "stdout";
        uint64_t offset = 0, max = PROCESS_OUTPUT_DEFAULT;
        mcp_process_info p;
        if (t_live_session(srv, id, a, &sid) < 0 || t_process(srv, id, a, sid, &pid, &p) < 0)
                return;
        if (mcp_arg_enum(a, "stream", false, (const char *const[]) { "stdout", "stderr", NULL }, &stream) < 0 ||
            mcp_arg_uint(a, "offset", 0, INT64_MAX, &offset) < 0 ||
            mcp_arg_uint(a, "max_bytes", 1, PROCESS_OUTPUT_MAX, &max) < 0) {
                mcp_tool_error(srv, id, a->msg);
                return;
        }
        bool err_stream = strcmp(stream, "stderr") == 0;
        _cleanup_free_ char *buf = NULL;
        size_t len = 0;
        uint64_t next = 0, skipped = 0;
        msp_err err = { 0 };
        int r = mcp_engine_process_output(srv->engine, sid, pid, err_stream ? MCP_STDERR : MCP_STDOUT,
                                          offset, (size_t) max, &buf, &len, &next, &skipped, &err);
        if (r < 0) {
                mcp_tool_errno(srv, id, r, &err, "process_output");
                return;
        }
        uint64_t total = err_stream ? p.stderr_total : p.stdout_total;
        uint64_t from = next - len;
        /* A character cut by max_bytes, or still being written, comes whole next time. */
        bool cut = next < total || p.running;
        _cleanup_free_ char *text = NULL;
        size_t text_len = 0;
        size_t keep = fit_text(buf ? buf : "", len, cut, mcp_version_structured(srv->version) ? 1 : 0,
                               &text, &text_len);
        if (keep == (size_t) -1) {
                mcp_tool_error(srv, id, "process_output: out of memory");
                return;
        }
        output_view v = { .session_id = sid, .stream = stream, .p = &p, .text = text,
                          .len = text_len, .offset = from, .next = from + keep,
                          .skipped = skipped, .total = total };
        mcp_tool_structured(srv, id, write_output, &v);
}

/* ---- process_kill ---- */

/* signal: a name ("TERM", "SIGTERM", any case) or a number; default SIGKILL. */
static int
t_signal(targs *a, int *ret)
{
        const oci_json *v = mcp_arg_get(a, "signal");
        char d[96];
        int64_t n;
        *ret = SIGKILL;
        if (!v)
                return 0;
        if (oci_json_type_of(v) == OCI_JSON_NUMBER && mcp_parse_int64(oci_json_number_text(v), &n) == 0) {
                if (n < 1 || n > SIGRTMAX)
                        return mcp_arg_bad(a, "signal: %" PRId64 " is not a signal number (1 to %d)",
                                           n, SIGRTMAX);
                *ret = (int) n;
                return 1;
        }
        const char *s = oci_json_type_of(v) == OCI_JSON_STRING ? oci_json_string(v) : NULL;
        if (s) {
                const char *name = strncasecmp(s, "SIG", 3) == 0 ? s + 3 : s;
                for (int sig = 1; sig < NSIG; sig++) {
                        const char *abbrev = sigabbrev_np(sig);
                        if (abbrev && strcasecmp(abbrev, name) == 0) {
                                *ret = sig;
                                return 1;
                        }
                }
        }
        return mcp_arg_bad(a, "signal: expected a signal name such as \"TERM\", \"SIGINT\" or "
                           "\"KILL\", or a number from 1 to %d, got %s", SIGRTMAX,
                           mcp_arg_describe(v, d, sizeof d));
}

typedef struct kill_view {
        const char *session_id, *process_id, *signal;
        bool signaled;
} kill_view;

static void
write_killed(oci_jw *w, const void *ctx)
{
        const kill_view *v = ctx;
        oci_jw_begin_object(w);
        oci_jw_key(w, "session_id");
        mcp_jw_text(w, v->session_id);
        oci_jw_key(w, "process_id");
        mcp_jw_text(w, v->process_id);
        oci_jw_key(w, "signal");
        if (v->signaled)
                oci_jw_string(w, v->signal);
        else
                oci_jw_null(w);
        oci_jw_kv_bool(w, "signaled", v->signaled);
        oci_jw_kv_bool(w, "removed", !v->signaled);
        oci_jw_end_object(w);
}

void
mcp_tool_process_kill(mcp_server *srv, const mcp_rpc_id *id, targs *a, const mcp_rpc_id *token _unused_)
{
        const char *sid, *pid;
        mcp_process_info p;
        int sig;
        if (t_live_session(srv, id, a, &sid) < 0 || t_process(srv, id, a, sid, &pid, &p) < 0)
                return;
        if (t_signal(a, &sig) < 0) {
                mcp_tool_error(srv, id, a->msg);
                return;
        }
        msp_err err = { 0 };
        int r = mcp_engine_process_kill(srv->engine, sid, pid, sig, &err);
        if (r < 0) {
                mcp_tool_errno(srv, id, r, &err, "process_kill");
                return;
        }
        char name[32];
        /* A running process gets the signal (its exit shows in process_list); one that had
         * exited is forgotten, its output with it. */
        kill_view v = { .session_id = sid, .process_id = pid, .signal = mcp_signal_name(sig, name),
                        .signaled = p.running };
        mcp_audit_process_kill(srv, sid, pid, p.running ? sig : 0);
        mcp_tool_structured(srv, id, write_killed, &v);
        if (!p.running)
                mcp_resources_session_changed(srv);     /* its output resources are gone */
}
