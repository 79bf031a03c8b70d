/* The session and file tools: session_create, session_list, session_close, write_file,
 * read_file, list_files (through session.h, which confines every path). */
#include "mcp/tools-session.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "mcp/resources.h"
#include "mcp/tools-audit.h"
#include "mcp/tools-network.h"
#include "mcp/tools-ports.h"
#include "mcp/tools-run.h"

/* ---- session tools ---- */

static mcp_session_store *
store_of(mcp_server *srv)
{
        return srv->engine ? mcp_engine_sessions(srv->engine) : NULL;
}

static void
write_limits(oci_jw *w, const mcp_limits *l)
{
        mcp_jw_obj(w, "limits");
        oci_jw_kv_uint64(w, "memory_mb", l->memory_bytes / MIB);
        oci_jw_kv_uint64(w, "pids", l->pids);
        oci_jw_kv_uint64(w, "cpu_millis", l->cpu_millis);
        oci_jw_kv_uint64(w, "timeout_ms", l->timeout_ms);
        oci_jw_end_object(w);
}

static void
write_session_created(oci_jw *w, const void *ctx)
{
        const mcp_session_info *s = ctx;
        char t[32];
        oci_jw_begin_object(w);
        oci_jw_key(w, "session_id");
        mcp_jw_text(w, s->id);
        oci_jw_key(w, "rootfs");
        mcp_jw_text(w, s->rootfs ? s->rootfs : "host");
        oci_jw_kv_bool(w, "network", s->network);
        oci_jw_key(w, "network_allow");
        oci_jw_begin_array(w);
        for (size_t i = 0; s->allow && i < s->allow->n; i++)
                oci_jw_string(w, s->allow->rules[i].text);
        oci_jw_end_array(w);
        mcp_rfc3339(s->expires_usec, t);
        oci_jw_kv_string(w, "expires_at", t);
        write_limits(w, &s->limits);
        oci_jw_end_object(w);
}

void
mcp_tool_session_create(mcp_server *srv, const mcp_rpc_id *id, targs *a, const mcp_rpc_id *token _unused_)
{
        mcp_session_opts o = { 0 };
        _cleanup_(mcp_egress_policy_done) mcp_egress_policy allow = { 0 };
        mcp_net_mode mode = MCP_NET_NONE;
        const char *names[17] = { 0 };
        for (size_t i = 0; i < srv->cfg->n_rootfs && i < 16; i++)
                names[i] = srv->cfg->rootfs[i].name;
        int r;
        if ((r = mcp_arg_limits(a, srv->cfg, &o.limits)) < 0 ||
            (r = mcp_arg_uint(a, "ttl_s", 1, srv->cfg->session_max_ttl_s, &o.ttl_s)) < 0 ||
            (r = mcp_arg_network(a, srv->cfg, &mode, &allow)) < 0 ||
            (r = mcp_arg_enum(a, "rootfs", false, names, &o.rootfs)) < 0) {
                mcp_tool_error(srv, id, a->msg);
                return;
        }
        o.network = mode == MCP_NET_FULL;
        o.allow = mode == MCP_NET_ALLOW ? &allow : NULL;
        if (mcp_tool_admit(srv, id, MCP_ADMIT_SESSION) < 0)
                return;
        mcp_session_store *st = store_of(srv);
        mcp_session_info info = { 0 };
        msp_err err = { 0 };
        r = st ? mcp_session_create(st, &o, &info, &err) : msp_err_set(&err, ENOSYS, "no session store");
        if (r == -EUSERS) {
                mcp_tool_errorf(srv, id, "session_create: the limit of %u live sessions is reached (--max-sessions); close one first",
                                 srv->cfg->max_sessions);
                return;
        }
        if (r < 0) {
                mcp_tool_errno(srv, id, r, &err, "session_create");
                return;
        }
        /* Its sandbox starts now; its first call waits for it. */
        if ((r = mcp_engine_session_start(srv->engine, info.id, &err)) < 0) {
                msp_err cerr = { 0 };
                (void) mcp_session_close(st, info.id, true, &cerr);
                mcp_tool_errno(srv, id, r, &err, "session_create");
                return;
        }
        if (srv->owners) {
                mcp_owners_prune_sessions(srv->owners, st);
                if (mcp_owners_add(srv->owners, info.id, srv->tenant) < 0) {
                        (void) mcp_session_close(st, info.id, true, &err);
                        mcp_tool_error(srv, id, "session_create: out of memory");
                        return;
                }
        }
        mcp_audit_session(srv, "session_create", &info, NULL, NULL);
        mcp_tool_structured(srv, id, write_session_created, &info);
        mcp_resources_session_changed(srv);
}

typedef struct session_list_view {
        const mcp_session_info *s;
        const mcp_live_info *live;      /* each one's sandbox */
        size_t n;
        const mcp_ports *ports;
} session_list_view;

static void
write_live(oci_jw *w, const mcp_live_info *l)
{
        oci_jw_kv_string(w, "state", l->state == MCP_LIVE_PAUSED ? "paused"
                                     : l->state == MCP_LIVE_STOPPED ? "stopped" : "running");
        oci_jw_kv_uint64(w, "processes", l->processes);
        oci_jw_kv_uint64(w, "memory_bytes", l->memory_bytes);
        oci_jw_kv_uint64(w, "background", l->background);
}

static void
write_session_list(oci_jw *w, const void *ctx)
{
        const session_list_view *v = ctx;
        char t[32];
        oci_jw_begin_object(w);
        oci_jw_key(w, "sessions");
        oci_jw_begin_array(w);
        for (size_t i = 0; i < v->n; i++) {
                const mcp_session_info *s = &v->s[i];
                oci_jw_begin_object(w);
                oci_jw_key(w, "session_id");
                mcp_jw_text(w, s->id);
                oci_jw_key(w, "rootfs");
                mcp_jw_text(w, s->rootfs ? s->rootfs : "host");
                oci_jw_kv_bool(w, "network", s->network);
                mcp_rfc3339(s->created_usec, t);
                oci_jw_kv_string(w, "created_at", t);
                mcp_rfc3339(s->expires_usec, t);
                oci_jw_kv_string(w, "expires_at", t);
                oci_jw_kv_uint64(w, "runs", s->runs);
                oci_jw_kv_bool(w, "busy", s->busy);
                write_live(w, &v->live[i]);
                uint16_t ports[MCP_PORTS_PER_SESSION];
                unsigned n = mcp_ports_of(v->ports, s->id, ports, MCP_PORTS_PER_SESSION);
                oci_jw_key(w, "ports");
                oci_jw_begin_array(w);
                for (unsigned k = 0; k < n && k < MCP_PORTS_PER_SESSION; k++)
                        oci_jw_uint64(w, ports[k]);
                oci_jw_end_array(w);
                oci_jw_end_object(w);
        }
        oci_jw_end_array(w);
        oci_jw_end_object(w);
}

void
mcp_tool_session_list(mcp_server *srv, const mcp_rpc_id *id, targs *a _unused_, const mcp_rpc_id *token _unused_)
{
        mcp_session_store *st = store_of(srv);
        _cleanup_free_ mcp_session_info *list = NULL;
        size_t n = 0;
        msp_err err = { 0 };
        int r = st ? mcp_session_list(st, &list, &n, &err) : 0;
        if (r < 0) {
                mcp_tool_errno(srv, id, r, &err, "session_list");
                return;
        }
        size_t mine = 0;
        for (size_t i = 0; i < n; i++)
                if (mcp_server_owns(srv, list[i].id))
                        list[mine++] = list[i];
        _cleanup_free_ mcp_live_info *live = calloc(mine + 1, sizeof *live);
        if (!live) {
                mcp_tool_error(srv, id, "session_list: out of memory");
                return;
        }
        /* A session without a sandbox (none started yet, or it could not) is stopped. */
        for (size_t i = 0; i < mine; i++)
                if (!srv->engine || mcp_engine_session_info(srv->engine, list[i].id, &live[i]) < 0)
                        live[i] = (mcp_live_info){ .state = MCP_LIVE_STOPPED };
        session_list_view v = { .s = list, .live = live, .n = mine, .ports = srv->ports };
        mcp_tool_structured(srv, id, write_session_list, &v);
}

static void
write_closed(oci_jw *w, const void *ctx)
{
        oci_jw_begin_object(w);
        oci_jw_key(w, "session_id");
        mcp_jw_text(w, ctx);
        oci_jw_kv_bool(w, "closed", true);
        oci_jw_end_object(w);
}

static int
t_session_id(mcp_server *srv, const mcp_rpc_id *id, targs *a, mcp_session_store **ret_st,
             const char **ret_sid)
{
        if (mcp_arg_str(a, "session_id", true, SESSION_ID_MAX, ret_sid) < 0) {
                mcp_tool_error(srv, id, a->msg);
                return -EINVAL;
        }
        *ret_st = store_of(srv);
        if (!*ret_st) {
                mcp_tool_error(srv, id, "sessions are not available");
                return -ENOSYS;
        }
        return 0;
}

/* Another tenant's session is one that does not exist: the same error, at the same step
 * (after the arguments are checked). */
#define OWNED(srv, sid, call) (mcp_server_owns((srv), (sid)) ? (call) : -ENOENT)

static void
send_session_errno(mcp_server *srv, const mcp_rpc_id *id, int r, const msp_err *err,
                   const char *tool_name, const char *sid)
{
        char q[96];
        oci_json_quote(sid, q, sizeof q);
        if (r == -ENOENT && !err->msg[0])
                mcp_tool_errorf(srv, id, "session_id: %s: no such session (expired or closed?)", q);
        else if (r == -EBUSY && !err->msg[0])
                mcp_tool_errorf(srv, id, "session_id: %s: a run is using the session; retry when it is done", q);
        else
                mcp_tool_errno(srv, id, r, err, tool_name);
}

void
mcp_tool_session_close(mcp_server *srv, const mcp_rpc_id *id, targs *a, const mcp_rpc_id *token _unused_)
{
        mcp_session_store *st;
        const char *sid;
        if (t_session_id(srv, id, a, &st, &sid) < 0)
                return;
        msp_err err = { 0 };
        int r = OWNED(srv, sid, mcp_session_close(st, sid, false, &err));
        if (r == -EBUSY) {
                /* A run of ours uses it: that run is killed and answered first, then the
                 * close is forced (the engine cancels whatever still holds the session). */
                mcp_tools_abort_session(srv, sid);
                msp_err_clear(&err);
                r = mcp_session_close(st, sid, true, &err);
        }
        if (r < 0) {
                send_session_errno(srv, id, r, &err, "session_close", sid);
                return;
        }
        if (srv->owners)
                mcp_owners_forget(srv->owners, sid);
        mcp_audit_session(srv, "session_close", NULL, sid, "closed by the client");
        mcp_tool_structured(srv, id, write_closed, sid);
        mcp_resources_session_changed(srv);
}

typedef struct written_view {
        const char *path;
        size_t bytes;
} written_view;

static void
write_written(oci_jw *w, const void *ctx)
{
        const written_view *v = ctx;
        oci_jw_begin_object(w);
        oci_jw_key(w, "path");
        mcp_jw_text(w, v->path);
        oci_jw_kv_uint64(w, "bytes", v->bytes);
        oci_jw_end_object(w);
}

void
mcp_tool_write_file(mcp_server *srv, const mcp_rpc_id *id, targs *a, const mcp_rpc_id *token _unused_)
{
        mcp_session_store *st;
        const char *sid, *path = NULL, *content = NULL, *encoding = NULL;
        bool exec = false;
        if (t_session_id(srv, id, a, &st, &sid) < 0)
                return;
        if (mcp_arg_str(a, "path", true, PATH_MAX_LEN, &path) < 0 ||
            mcp_arg_str(a, "content", true, 0, &content) < 0 ||
            mcp_arg_enum(a, "encoding", false, (const char *const[]) { "utf8", "base64", NULL }, &encoding) < 0 ||
            mcp_arg_bool(a, "executable", &exec) < 0) {
                mcp_tool_error(srv, id, a->msg);
                return;
        }
        const char *data;
        size_t len;
        _cleanup_free_ unsigned char *decoded = NULL;
        if (mcp_arg_content(a, "content", content, encoding, srv->cfg->max_message_bytes, &data, &len,
                      &decoded) < 0) {
                mcp_tool_error(srv, id, a->msg);
                return;
        }
        msp_err err = { 0 };
        int r = OWNED(srv, sid, mcp_session_write_file(st, sid, path, data, len, exec, &err));
        if (r < 0) {
                send_session_errno(srv, id, r, &err, "write_file", sid);
                return;
        }
        written_view v = { .path = path, .bytes = len };
        mcp_tool_structured(srv, id, write_written, &v);
        mcp_resources_session_changed(srv);
}

typedef struct read_view {
        const char *path, *content, *encoding;
        uint64_t size;
        bool truncated;
} read_view;

static void
write_read(oci_jw *w, const void *ctx)
{
        const read_view *v = ctx;
        oci_jw_begin_object(w);
        oci_jw_key(w, "path");
        mcp_jw_text(w, v->path);
        oci_jw_kv_string(w, "content", v->content);
        oci_jw_kv_string(w, "encoding", v->encoding);
        oci_jw_kv_uint64(w, "size", v->size);
        oci_jw_kv_bool(w, "truncated", v->truncated);
        oci_jw_end_object(w);
}

void
mcp_tool_read_file(mcp_server *srv, const mcp_rpc_id *id, targs *a, const mcp_rpc_id *token _unused_)
{
        mcp_session_store *st;
        const char *sid, *path = NULL, *encoding = "utf8";
        uint64_t max = READ_DEFAULT;
        if (t_session_id(srv, id, a, &st, &sid) < 0)
                return;
        if (mcp_arg_str(a, "path", true, PATH_MAX_LEN, &path) < 0 ||
            mcp_arg_enum(a, "encoding", false, (const char *const[]) { "utf8", "base64", NULL }, &encoding) < 0 ||
            mcp_arg_uint(a, "max_bytes", 1, READ_MAX, &max) < 0) {
                mcp_tool_error(srv, id, a->msg);
                return;
        }
        _cleanup_free_ char *buf = NULL;
        size_t len = 0;
        uint64_t size = 0;
        bool truncated = false;
        msp_err err = { 0 };
        int r = OWNED(srv, sid, mcp_session_read_file(st, sid, path, max, &buf, &len, &size, &truncated, &err));
        if (r < 0) {
                send_session_errno(srv, id, r, &err, "read_file", sid);
                return;
        }
        /* The content is in the response twice (structuredContent, and escaped again in
         * the text block's JSON) or once (only the text block): cut to the budget. */
        unsigned structured = mcp_version_structured(srv->version) ? 1 : 0;
        size_t budget = MCP_RESPONSE_BUDGET - 64 * 1024;
        _cleanup_free_ char *content = NULL;
        if (strcmp(encoding, "base64") == 0) {
                size_t keep = budget / (1 + structured) / 4 * 3;
                if (len > keep) {
                        len = keep;
                        truncated = true;
                }
                content = mcp_base64_encode(buf ? buf : "", len, NULL);
        } else {
                /* A cut may split a character: drop the partial one at the end. */
                size_t n = len;
                if (truncated)
                        while (n > 0 && n > len - 4 && !mcp_utf8_valid(buf, n))
                                n--;
                if (!mcp_utf8_valid(buf ? buf : "", n) || (buf && memchr(buf, 0, n))) {
                        char q[96];
                        oci_json_quote(path, q, sizeof q);
                        mcp_tool_errorf(srv, id, "path: %s is not UTF-8 text; read it with encoding \"base64\"", q);
                        return;
                }
                size_t fit = mcp_json_fit(buf ? buf : "", n, budget, structured, 1, NULL);
                if (fit < n) {
                        n = fit;
                        truncated = true;
                }
                content = strndup(buf ? buf : "", n);
        }
        if (!content) {
                mcp_tool_error(srv, id, "out of memory");
                return;
        }
        read_view v = { .path = path, .content = content, .encoding = encoding, .size = size,
                        .truncated = truncated };
        mcp_tool_structured(srv, id, write_read, &v);
}

typedef struct list_view {
        const char *path;
        const mcp_dirent *ents;
        size_t n;
        bool truncated;
} list_view;

static const char *
type_name(mcp_file_type t)
{
        switch (t) {
        case MCP_FILE_REG:
                return "file";
        case MCP_FILE_DIR:
                return "dir";
        case MCP_FILE_SYMLINK:
                return "symlink";
        case MCP_FILE_OTHER:
        default:
                return "other";
        }
}

static void
write_list(oci_jw *w, const void *ctx)
{
        const list_view *v = ctx;
        oci_jw_begin_object(w);
        oci_jw_key(w, "path");
        mcp_jw_text(w, v->path);
        oci_jw_key(w, "entries");
        oci_jw_begin_array(w);
        for (size_t i = 0; i < v->n; i++) {
                oci_jw_begin_object(w);
                oci_jw_key(w, "name");
                mcp_jw_text(w, v->ents[i].name);
                oci_jw_kv_string(w, "type", type_name(v->ents[i].type));
                oci_jw_kv_uint64(w, "size", v->ents[i].size);
                oci_jw_end_object(w);
        }
        oci_jw_end_array(w);
        oci_jw_kv_bool(w, "truncated", v->truncated);
        oci_jw_end_object(w);
}

void
mcp_tool_list_files(mcp_server *srv, const mcp_rpc_id *id, targs *a, const mcp_rpc_id *token _unused_)
{
        mcp_session_store *st;
        const char *sid, *path = "";
        if (t_session_id(srv, id, a, &st, &sid) < 0)
                return;
        if (mcp_arg_str(a, "path", false, PATH_MAX_LEN, &path) < 0) {
                mcp_tool_error(srv, id, a->msg);
                return;
        }
        mcp_dirent *ents = NULL;
        size_t n = 0;
        bool truncated = false;
        msp_err err = { 0 };
        int r = OWNED(srv, sid, mcp_session_list_files(st, sid, path, LIST_MAX, &ents, &n, &truncated, &err));
        if (r < 0) {
                send_session_errno(srv, id, r, &err, "list_files", sid);
                return;
        }
        list_view v = { .path = path, .ents = ents, .n = n, .truncated = truncated };
        mcp_tool_structured(srv, id, write_list, &v);
        mcp_dirents_free(ents, n);
}

