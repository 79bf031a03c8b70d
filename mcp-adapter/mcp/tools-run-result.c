/* The result of a finished run_code call: exit code or signal, stdout and stderr cut to the
 * response budget, for people as text and for programs as structuredContent (with the
 * same JSON as a text block for older clients), and the files of /workspace/out as
 * images or resource links. */
#include "mcp/tools-run-result.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "mcp/resources.h"
#include "mcp/tools-network.h"

const char *
mcp_signal_name(int sig, char buf[32])
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

/* What a call in a live session adds: its background process, its kernel cell's value
 * (output: not in the JSON text block, the people's text has it), the kernel's note, and
 * whether the cell raised. */
static void
write_live_fields(oci_jw *w, const mcp_run_result *res, bool no_output)
{
        if (res->process_id) {
                oci_jw_key(w, "process_id");
                mcp_jw_text(w, res->process_id);
        }
        if (res->value_text && !no_output) {
                oci_jw_key(w, "value");
                mcp_jw_bytes(w, res->value_text, res->value_len);
        }
        if (res->kernel_note) {
                oci_jw_key(w, "kernel");
                mcp_jw_text(w, res->kernel_note);
        }
        if (res->kernel_error)
                oci_jw_kv_bool(w, "traceback", true);
}

static void
write_run_structured(oci_jw *w, const void *ctx)
{
        const run_view *v = ctx;
        const mcp_run_result *res = v->res;
        char sig[32];
        oci_jw_begin_object(w);
        oci_jw_key(w, "exit_code");
        /* A background run's program is still running: no status yet. */
        if (res->sandbox_failed || res->term_signal > 0 || res->process_id)
                oci_jw_null(w);
        else
                oci_jw_int64(w, res->exit_code);
        oci_jw_key(w, "signal");
        if (res->term_signal > 0)
                oci_jw_string(w, mcp_signal_name(res->term_signal, sig));
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
        write_live_fields(w, res, v->no_output);
        oci_jw_end_object(w);
}

static bool
run_failed(const mcp_run_result *res)
{
        return res->sandbox_failed || res->timed_out || res->oom_killed || res->term_signal > 0 ||
               res->exit_code != 0 || res->kernel_error;
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
                snprintf(head, sizeof head, "killed by %s", mcp_signal_name(res->term_signal, sig));
        else if (res->process_id)
                snprintf(head, sizeof head, "started in the background as process %s "
                         "(process_output reads its output, process_kill ends it)", res->process_id);
        else if (res->kernel_error)
                snprintf(head, sizeof head, "the cell raised an exception (the traceback is in stderr)");
        else
                snprintf(head, sizeof head, "exit code %d", res->exit_code);
        size_t n = strlen(head);
        snprintf(head + n, sizeof head - n, " (%" PRIu64 " ms)", res->duration_ms);
        n = strlen(head);
        if (res->kernel_note)
                snprintf(head + n, sizeof head - n, "; kernel: %.300s", res->kernel_note);
        n = strlen(head);
        if ((res->stdout_truncated || res->stderr_truncated) && res->run_id)
                snprintf(head + n, sizeof head - n,
                         "; output truncated, the full logs are resources sandbox://runs/%s/stdout "
                         "and sandbox://runs/%s/stderr", res->run_id, res->run_id);
        n = strlen(head);
        (void) mcp_egress_text(res, head + n, sizeof head - n);

        size_t cap = strlen(head) + res->stdout_len + res->stderr_len + res->value_len + 96;
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
        if (res->value_text) {
                o += (size_t) snprintf(text + o, cap - o, "--- value ---\n");
                memcpy(text + o, res->value_text, res->value_len);
                o += res->value_len;
                if (res->value_len && text[o - 1] != '\n')
                        text[o++] = '\n';
        }
        if (res->stderr_len) {
                o += (size_t) snprintf(text + o, cap - o, "--- stderr ---\n");
                memcpy(text + o, res->stderr_buf, res->stderr_len);
                o += res->stderr_len;
        }
        mcp_jw_bytes(w, text, o);
}

/* A kernel cell's value, written as the output is: repaired into *ret and cut to
 * VALUE_BUDGET (truncated set on a cut). What it takes, encoded. */
#define VALUE_BUDGET ((size_t) 256 * 1024)
static size_t
fit_value(mcp_run_result *r, unsigned copies, char **ret)
{
        size_t len = 0, cost = 0;
        if (!r->value_text)
                return 0;
        char *v = *ret = mcp_utf8_sanitize(r->value_text, r->value_len, &len);
        if (!v) {
                r->value_text = NULL;
                r->value_len = 0;
                r->stdout_truncated = true;
                return 0;
        }
        size_t fit = mcp_json_fit(v, len, VALUE_BUDGET, copies, 0, &cost);
        r->stdout_truncated |= fit < len;
        r->value_text = v;
        r->value_len = fit;
        return cost;
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

void
mcp_tool_run_result(mcp_server *srv, const mcp_rpc_id *id, const char *session_id,
                    const mcp_run_result *full)
{
        bool structured = mcp_version_structured(srv->version);
        mcp_run_result fitted = *full;
        const mcp_run_result *res = &fitted;
        _cleanup_free_ char *out = NULL, *errs = NULL, *value = NULL;
        size_t used = fit_output(&fitted, structured ? 2 : 1, &out, &errs);
        used += fit_value(&fitted, structured ? 2 : 1, &value);
        /* Images fill what is left, less room for the rest of the result; past it they
         * become resource_links. */
        size_t room = MCP_RESPONSE_BUDGET - 256 * 1024 > used ? MCP_RESPONSE_BUDGET - 256 * 1024 - used : 0;
        run_view view = { .res = res, .session_id = session_id };
        /* The output is in the result twice (people's text, structuredContent), not three
         * times: the JSON text block carries everything else. */
        run_view meta = { .res = res, .session_id = session_id, .no_output = true };
        _cleanup_jw_ oci_jw *tw = oci_jw_new(false);
        _cleanup_free_ char *json = NULL;
        if (tw) {
                write_run_structured(tw, &meta);
                (void) oci_jw_finish(tw, &json, NULL, NULL);
        }

        oci_jw *w = mcp_rpc_begin_result(id);
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
        (void) mcp_rpc_send(srv->rpc, w, id, false);
}
