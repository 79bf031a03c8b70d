/* resources/list, resources/templates/list and resources/read: the full logs of recent
 * runs (sandbox://runs/<id>/stdout|stderr), the files of sessions
 * (sandbox://sessions/<id>/files/<path>) and the kept output of their background processes
 * (sandbox://sessions/<id>/processes/<process_id>/stdout|stderr). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mcp/resources.h"
#include "base/base.h"

#define READ_CAP (8u * 1024 * 1024)     /* a file returned by resources/read */
#define LIST_CAP 1000

/* A file dropped to make room: the caller hears of its own tenant's, the others are
 * named on stderr only (another tenant's URIs are not this client's to learn). */
static void
kept_dropped(const char *uri, const char *tenant, const char *why, void *data)
{
        mcp_server *srv = data;
        mcp_logger quiet = *srv->log;
        bool own = strcmp(tenant, srv->tenant ? srv->tenant : "") == 0;
        if (!own)
                quiet.sink = NULL;
        mcp_log(own ? srv->log : &quiet, MCP_LOG_NOTICE, "kept file %s dropped: %s", uri, why);
}

void
mcp_resources_keep_file(mcp_server *srv, const char *uri, const char *mime, const void *data,
                        size_t len)
{
        msp_err err = { 0 };
        if (srv->engine && mcp_engine_keep_file(srv->engine, srv->tenant, uri, mime, data, len,
                                                kept_dropped, srv, &err) < 0)
                mcp_log(srv->log, MCP_LOG_NOTICE, "file %s not kept: %s", uri, err.msg);
}

static int
list_changed_due(mcp_loop *loop _unused_, void *data)
{
        static const char msg[] = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/resources/list_changed\"}";
        mcp_server *srv = data;
        srv->list_timer = NULL;
        if (!srv->list_changed)
                return 0;
        int r = srv->notice_out ? srv->notice_out(srv, msg, sizeof msg - 1)
                                : mcp_rpc_send_json(srv->rpc, msg, sizeof msg - 1);
        /* Held while the client has nowhere to hear it; dropped on any other failure (the
         * client lists again when it next looks). */
        if (r != -EAGAIN)
                srv->list_changed = false;
        return 0;
}

void
mcp_resources_changed_retry(mcp_server *srv)
{
        /* The spec allows no server notification but logging before initialized. */
        if (!srv->list_changed || !srv->client_initialized || srv->list_timer)
                return;
        if (mcp_loop_add_timer(srv->loop, 0, list_changed_due, srv, &srv->list_timer) < 0)
                srv->list_timer = NULL;
}

void
mcp_resources_changed(mcp_server *srv)
{
        if (!srv->client_initialized)
                return;         /* it lists after initializing */
        srv->list_changed = true;
        mcp_resources_changed_retry(srv);
}

void
mcp_resources_session_changed(mcp_server *srv)
{
        if (srv->session_changed)
                srv->session_changed(srv, srv->tenant);
        else
                mcp_resources_changed(srv);
}

void
mcp_resources_free(mcp_server *srv)
{
        if (srv->list_timer)
                mcp_timer_cancel(srv->loop, srv->list_timer);
        srv->list_timer = NULL;
}

void
mcp_resources_note_run(mcp_server *srv, const char *run_id)
{
        char *copy = strdup(run_id);
        if (!copy)
                return;
        if (srv->owners && mcp_owners_add(srv->owners, run_id, srv->tenant) < 0) {
                free(copy);
                return;
        }
        char *old = srv->recent_runs[srv->recent_next];
        if (old && srv->owners)
                mcp_owners_forget(srv->owners, old);
        free(old);
        srv->recent_runs[srv->recent_next] = copy;
        srv->recent_next = (srv->recent_next + 1) % srv->n_recent;
        mcp_resources_changed(srv);
}

static void
resource(oci_jw *w, mcp_version v, const char *uri, const char *name, const char *title,
         const char *mime)
{
        oci_jw_begin_object(w);
        oci_jw_key(w, "uri");
        mcp_jw_text(w, uri);
        oci_jw_key(w, "name");
        mcp_jw_text(w, name);
        if (title && mcp_version_structured(v)) {
                oci_jw_key(w, "title");
                mcp_jw_text(w, title);
        }
        oci_jw_kv_string(w, "mimeType", mime);
        oci_jw_end_object(w);
}

/* The output streams of session sid's background processes. */
static void
list_processes(mcp_server *srv, oci_jw *w, const char *sid)
{
        _cleanup_free_ mcp_process_info *procs = NULL;
        size_t n = 0;
        char uri[256], name[160];
        if (mcp_engine_process_list(srv->engine, sid, &procs, &n, NULL) < 0)
                return;
        static const char *const streams[] = { "stdout", "stderr" };
        for (size_t i = 0; i < n; i++)
                for (size_t s = 0; s < 2; s++) {
                        snprintf(uri, sizeof uri, "sandbox://sessions/%s/processes/%s/%s", sid,
                                 procs[i].id, streams[s]);
                        snprintf(name, sizeof name, "session %s process %s %s", sid, procs[i].id,
                                 streams[s]);
                        resource(w, srv->version, uri, name, name, "text/plain");
                }
}

void
mcp_resources_list(mcp_server *srv, const mcp_rpc_id *id)
{
        oci_jw *w = mcp_rpc_begin_result(id);
        if (!w) {
                (void) mcp_rpc_send(srv->rpc, NULL, id, false);
                return;
        }
        char uri[256], name[160];
        oci_jw_begin_object(w);
        oci_jw_key(w, "resources");
        oci_jw_begin_array(w);
        /* Newest run first. */
        for (size_t k = 0; k < srv->n_recent; k++) {
                size_t i = (srv->recent_next + srv->n_recent - 1 - k) % srv->n_recent;
                const char *rid = srv->recent_runs[i];
                if (!rid)
                        continue;
                static const char *const streams[] = { "stdout", "stderr" };
                for (size_t s = 0; s < 2; s++) {
                        snprintf(uri, sizeof uri, "sandbox://runs/%s/%s", rid, streams[s]);
                        snprintf(name, sizeof name, "%s %s", rid, streams[s]);
                        resource(w, srv->version, uri, name, name, "text/plain");
                }
        }
        mcp_session_store *st = srv->engine ? mcp_engine_sessions(srv->engine) : NULL;
        _cleanup_free_ mcp_session_info *list = NULL;
        size_t n = 0;
        msp_err err = { 0 };
        if (st && mcp_session_list(st, &list, &n, &err) == 0)
                for (size_t i = 0; i < n; i++) {
                        if (!mcp_server_owns(srv, list[i].id))
                                continue;
                        snprintf(uri, sizeof uri, "sandbox://sessions/%s/files/", list[i].id);
                        snprintf(name, sizeof name, "session %s workspace", list[i].id);
                        resource(w, srv->version, uri, name, name, "application/json");
                        list_processes(srv, w, list[i].id);
                }
        oci_jw_end_array(w);
        oci_jw_end_object(w);
        (void) mcp_rpc_send(srv->rpc, w, id, false);
}

void
mcp_resources_templates(mcp_server *srv, const mcp_rpc_id *id)
{
        static const struct { const char *uri, *name, *mime; } t[] = {
                { "sandbox://runs/{run_id}/stdout", "run stdout", "text/plain" },
                { "sandbox://runs/{run_id}/stderr", "run stderr", "text/plain" },
                { "sandbox://runs/{run_id}/files/{path}", "file written by a run", NULL },
                { "sandbox://sessions/{session_id}/files/{path}", "file of a session's workspace", NULL },
                { "sandbox://sessions/{session_id}/processes/{process_id}/stdout",
                  "background process stdout (its last 1 MiB)", "text/plain" },
                { "sandbox://sessions/{session_id}/processes/{process_id}/stderr",
                  "background process stderr (its last 1 MiB)", "text/plain" },
        };
        oci_jw *w = mcp_rpc_begin_result(id);
        if (w) {
                oci_jw_begin_object(w);
                oci_jw_key(w, "resourceTemplates");
                oci_jw_begin_array(w);
                for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
                        oci_jw_begin_object(w);
                        oci_jw_kv_string(w, "uriTemplate", t[i].uri);
                        oci_jw_kv_string(w, "name", t[i].name);
                        if (mcp_version_structured(srv->version))
                                oci_jw_kv_string(w, "title", t[i].name);
                        if (t[i].mime)
                                oci_jw_kv_string(w, "mimeType", t[i].mime);
                        oci_jw_end_object(w);
                }
                oci_jw_end_array(w);
                oci_jw_end_object(w);
        }
        (void) mcp_rpc_send(srv->rpc, w, id, false);
}

static void
not_found(mcp_server *srv, const mcp_rpc_id *id, const char *uri, const char *why)
{
        char msg[600];
        snprintf(msg, sizeof msg, "Resource not found: %.300s%s%.200s", uri, why ? ": " : "",
                 why ? why : "");
        (void) mcp_rpc_send_error(srv->rpc, id, MCP_RPC_RESOURCE_NOT_FOUND, msg);
}

static int
hexval(char c)
{
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -1;
}

/* %XX decoding of a URI path; -EINVAL for a bad escape or an encoded NUL. */
static int
percent_decode(const char *s, char **ret)
{
        size_t len = strlen(s);
        char *out = malloc(len + 1);
        if (!out)
                return -ENOMEM;
        size_t o = 0;
        for (size_t i = 0; i < len; i++) {
                if (s[i] != '%') {
                        out[o++] = s[i];
                        continue;
                }
                int hi = i + 2 < len ? hexval(s[i + 1]) : -1;
                int lo = i + 2 < len ? hexval(s[i + 2]) : -1;
                if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) {
                        free(out);
                        return -EINVAL;
                }
                int v = hi * 16 + lo;
                out[o++] = (char) v;
                i += 2;
        }
        out[o] = '\0';
        *ret = out;
        return 0;
}

static const char *
guess_mime(const char *path, bool text)
{
        static const struct { const char *ext, *mime; } m[] = {
                { ".png", "image/png" }, { ".jpg", "image/jpeg" }, { ".jpeg", "image/jpeg" },
                { ".gif", "image/gif" }, { ".svg", "image/svg+xml" }, { ".json", "application/json" },
                { ".csv", "text/csv" }, { ".html", "text/html" }, { ".md", "text/markdown" },
                { ".pdf", "application/pdf" },
        };
        const char *dot = strrchr(path, '.');
        if (dot)
                for (size_t i = 0; i < ARRAY_SIZE(m); i++)
                        if (strcasecmp(dot, m[i].ext) == 0)
                                return m[i].mime;
        return text ? "text/plain" : "application/octet-stream";
}

#define BODY_MAX MCP_RESPONSE_BUDGET

static void
send_contents(mcp_server *srv, const mcp_rpc_id *id, const char *uri, const char *mime,
              const char *buf, size_t len, bool force_text)
{
        bool text = force_text || (mcp_utf8_valid(buf, len) && !memchr(buf, 0, len));
        size_t keep = len < BODY_MAX ? len : BODY_MAX;
        _cleanup_free_ char *body = NULL;
        if (text) {
                /* Repaired first (U+FFFD takes 3 bytes), then cut to the escaped budget. */
                size_t n = 0;
                body = mcp_utf8_sanitize(buf, keep, &n);
                if (body) {
                        size_t fit = mcp_json_fit(body, n, BODY_MAX, 1, 0, NULL);
                        body[fit] = '\0';
                        if (fit < n)
                                keep = keep * fit / n;  /* about: for the log and _meta */
                }
        } else {
                keep = len < BODY_MAX / 4 * 3 ? len : BODY_MAX / 4 * 3;
                body = mcp_base64_encode(buf, keep, NULL);
        }
        if (!body) {
                (void) mcp_rpc_send_error(srv->rpc, id, MCP_RPC_INTERNAL_ERROR, "out of memory");
                return;
        }
        if (keep < len)
                mcp_log(srv->log, MCP_LOG_NOTICE, "resources/read %s: about %zu of %zu bytes returned",
                        uri, keep, len);
        oci_jw *w = mcp_rpc_begin_result(id);
        if (w) {
                oci_jw_begin_object(w);
                oci_jw_key(w, "contents");
                oci_jw_begin_array(w);
                oci_jw_begin_object(w);
                oci_jw_key(w, "uri");
                mcp_jw_text(w, uri);
                oci_jw_kv_string(w, "mimeType", mime);
                oci_jw_kv_string(w, text ? "text" : "blob", body);
                if (keep < len) {
                        /* Said where a client can see it: only the head was returned. */
                        oci_jw_key(w, "_meta");
                        oci_jw_begin_object(w);
                        oci_jw_kv_bool(w, "msp/truncated", true);
                        oci_jw_kv_uint64(w, "msp/size", len);
                        oci_jw_kv_uint64(w, "msp/returned", keep);
                        oci_jw_end_object(w);
                }
                oci_jw_end_object(w);
                oci_jw_end_array(w);
                oci_jw_end_object(w);
        }
        (void) mcp_rpc_send(srv->rpc, w, id, false);
}

static void
read_run_log(mcp_server *srv, const mcp_rpc_id *id, const char *uri, const char *run_id,
             mcp_stream stream)
{
        _cleanup_free_ char *buf = NULL;
        size_t len = 0;
        msp_err err = { 0 };
        int r = srv->engine && mcp_server_owns(srv, run_id)
                        ? mcp_engine_run_log(srv->engine, run_id, stream, &buf, &len, &err)
                        : -ENOENT;
        if (r < 0) {
                not_found(srv, id, uri, r == -ENOENT ? "unknown run, or its log was dropped" : err.msg);
                return;
        }
        send_contents(srv, id, uri, "text/plain", buf ? buf : "", len, true);
}

/* A fresh workspace is gone with its run: its small files were kept (keptfiles.h). */
static void
read_kept_file(mcp_server *srv, const mcp_rpc_id *id, const char *uri)
{
        _cleanup_free_ unsigned char *buf = NULL;
        size_t len = 0;
        const char *mime = NULL;
        msp_err err = { 0 };
        int r = srv->engine ? mcp_engine_kept_file(srv->engine, srv->tenant, uri, &buf, &len,
                                                   &mime, &err)
                            : -ENOENT;
        if (r < 0) {
                not_found(srv, id, uri, r != -ENOENT ? err.msg :
                          "not a file of a recent run, or dropped (files above --max-image-bytes "
                          "are not kept; the oldest go past --kept-files-size or "
                          "--kept-files-tenant-size)");
                return;
        }
        send_contents(srv, id, uri, mime, (const char *) buf, len, false);
}

static void
write_listing(oci_jw *w, const mcp_dirent *ents, size_t n, bool truncated)
{
        oci_jw_begin_object(w);
        oci_jw_key(w, "entries");
        oci_jw_begin_array(w);
        for (size_t i = 0; i < n; i++) {
                oci_jw_begin_object(w);
                oci_jw_key(w, "name");
                mcp_jw_text(w, ents[i].name);
                oci_jw_kv_string(w, "type", ents[i].type == MCP_FILE_DIR ? "dir" :
                                            ents[i].type == MCP_FILE_REG ? "file" :
                                            ents[i].type == MCP_FILE_SYMLINK ? "symlink" : "other");
                oci_jw_kv_uint64(w, "size", ents[i].size);
                oci_jw_end_object(w);
        }
        oci_jw_end_array(w);
        oci_jw_kv_bool(w, "truncated", truncated);
        oci_jw_end_object(w);
}

/* What a session's background process has kept of a stream: its last bytes. */
static void
read_process_output(mcp_server *srv, const mcp_rpc_id *id, const char *uri, const char *sid,
                    const char *rest)
{
        const char *slash = strchr(rest, '/');
        mcp_stream stream = slash && strcmp(slash + 1, "stdout") == 0 ? MCP_STDOUT
                            : slash && strcmp(slash + 1, "stderr") == 0 ? MCP_STDERR : 0;
        if (!stream || slash == rest || slash - rest > 15) {
                not_found(srv, id, uri, NULL);
                return;
        }
        char pid[16];
        snprintf(pid, sizeof pid, "%.*s", (int) (slash - rest), rest);
        _cleanup_free_ char *buf = NULL;
        size_t len = 0;
        uint64_t next = 0, skipped = 0;
        msp_err err = { 0 };
        int r = srv->engine && mcp_server_owns(srv, sid)
                        ? mcp_engine_process_output(srv->engine, sid, pid, stream, 0,
                                                    MCP_PROCESS_OUTPUT_KEEP, &buf, &len, &next,
                                                    &skipped, &err)
                        : -ENOENT;
        if (r < 0) {
                not_found(srv, id, uri, "no such session or process (a killed process that had "
                          "exited is forgotten)");
                return;
        }
        send_contents(srv, id, uri, "text/plain", buf ? buf : "", len, true);
}

static void
read_session_file(mcp_server *srv, const mcp_rpc_id *id, const char *uri, const char *sid,
                  const char *path)
{
        mcp_session_store *st = srv->engine ? mcp_engine_sessions(srv->engine) : NULL;
        if (!st) {
                not_found(srv, id, uri, "no sessions");
                return;
        }
        if (!mcp_server_owns(srv, sid)) {
                not_found(srv, id, uri, "no such session");
                return;
        }
        msp_err err = { 0 };
        size_t plen = strlen(path);
        if (plen == 0 || path[plen - 1] == '/') {
                mcp_dirent *ents = NULL;
                size_t n = 0;
                bool truncated = false;
                int r = mcp_session_list_files(st, sid, path, LIST_CAP, &ents, &n, &truncated, &err);
                if (r < 0) {
                        not_found(srv, id, uri, err.msg[0] ? err.msg : strerror(-r));
                        return;
                }
                _cleanup_jw_ oci_jw *lw = oci_jw_new(false);
                _cleanup_free_ char *json = NULL;
                size_t len = 0;
                if (lw)
                        write_listing(lw, ents, n, truncated);
                mcp_dirents_free(ents, n);
                if (!lw || oci_jw_finish(lw, &json, &len, &err) < 0) {
                        (void) mcp_rpc_send_error(srv->rpc, id, MCP_RPC_INTERNAL_ERROR, "out of memory");
                        return;
                }
                send_contents(srv, id, uri, "application/json", json, len, true);
                return;
        }
        _cleanup_free_ char *buf = NULL;
        size_t len = 0;
        uint64_t size = 0;
        bool truncated = false;
        int r = mcp_session_read_file(st, sid, path, READ_CAP, &buf, &len, &size, &truncated, &err);
        if (r < 0) {
                not_found(srv, id, uri, err.msg[0] ? err.msg : strerror(-r));
                return;
        }
        bool text = mcp_utf8_valid(buf ? buf : "", len);
        send_contents(srv, id, uri, guess_mime(path, text), buf ? buf : "", len, false);
}

void
mcp_resources_read(mcp_server *srv, const mcp_rpc_id *id, const oci_json *params)
{
        const char *uri = mcp_json_str(params, "uri");
        if (!uri) {
                (void) mcp_rpc_send_error(srv->rpc, id, MCP_RPC_INVALID_PARAMS,
                                          "Invalid params: uri must be a string");
                return;
        }
        static const char runs[] = "sandbox://runs/", sessions[] = "sandbox://sessions/";
        const char *rest;
        bool is_run;
        if (strncmp(uri, runs, sizeof runs - 1) == 0) {
                rest = uri + sizeof runs - 1;
                is_run = true;
        } else if (strncmp(uri, sessions, sizeof sessions - 1) == 0) {
                rest = uri + sizeof sessions - 1;
                is_run = false;
        } else {
                not_found(srv, id, uri, NULL);
                return;
        }
        const char *slash = strchr(rest, '/');
        if (!slash || slash == rest || slash - rest > 64) {
                not_found(srv, id, uri, NULL);
                return;
        }
        char owner[65];
        snprintf(owner, sizeof owner, "%.*s", (int) (slash - rest), rest);
        const char *what = slash + 1;
        if (is_run && strcmp(what, "stdout") == 0) {
                read_run_log(srv, id, uri, owner, MCP_STDOUT);
                return;
        }
        if (is_run && strcmp(what, "stderr") == 0) {
                read_run_log(srv, id, uri, owner, MCP_STDERR);
                return;
        }
        if (!is_run && strncmp(what, "processes/", 10) == 0) {
                read_process_output(srv, id, uri, owner, what + 10);
                return;
        }
        if (strncmp(what, "files/", 6) != 0) {
                not_found(srv, id, uri, NULL);
                return;
        }
        _cleanup_free_ char *path = NULL;
        if (percent_decode(what + 6, &path) < 0) {
                not_found(srv, id, uri, "bad %-escape in the path");
                return;
        }
        if (is_run) {
                read_kept_file(srv, id, uri);
                return;
        }
        read_session_file(srv, id, uri, owner, path);
}
