/* The MCP lifecycle and method dispatch: initialize and version negotiation, ping,
 * logging, cancellation; the tools and resources methods are handed to tools.c and resources.c. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "observe/observe.h"
#include "mcp/server.h"
#include "mcp/resources.h"
#include "mcp/tools.h"
#include "mcp/tools-run.h"
#include "mcp/tools-ports.h"
#include "base/base.h"

#ifndef MSP_VERSION
#define MSP_VERSION "unknown"
#endif

static const char *const version_names[] = {
        [MCP_V2024_11_05] = "2024-11-05",
        [MCP_V2025_03_26] = "2025-03-26",
        [MCP_V2025_06_18] = "2025-06-18",
        [MCP_V2025_11_25] = "2025-11-25",
};

mcp_version
mcp_version_negotiate(const char *requested)
{
        if (requested)
                for (size_t i = 0; i < ARRAY_SIZE(version_names); i++)
                        if (strcmp(version_names[i], requested) == 0)
                                return (mcp_version) i;
        return MCP_V_LATEST;
}

bool
mcp_version_known(const char *version)
{
        for (size_t i = 0; i < ARRAY_SIZE(version_names); i++)
                if (strcmp(version_names[i], version) == 0)
                        return true;
        return false;
}

const char *
mcp_version_name(mcp_version v)
{
        return (unsigned) v < ARRAY_SIZE(version_names) ? version_names[v] : version_names[MCP_V_LATEST];
}

static void
send_empty_result(mcp_server *srv, const mcp_rpc_id *id)
{
        oci_jw *w = mcp_rpc_begin_result(id);
        if (w) {
                oci_jw_begin_object(w);
                oci_jw_end_object(w);
        }
        (void) mcp_rpc_send(srv->rpc, w, id, false);
}

static void
initialize(mcp_server *srv, const mcp_rpc_id *id, const oci_json *params)
{
        if (srv->initialized) {
                (void) mcp_rpc_send_error(srv->rpc, id, MCP_RPC_INVALID_REQUEST,
                                          "Invalid request: already initialized");
                return;
        }
        const char *requested = mcp_json_str(params, "protocolVersion");
        if (!requested) {
                (void) mcp_rpc_send_error(srv->rpc, id, MCP_RPC_INVALID_PARAMS,
                                          "Invalid params: protocolVersion must be a string");
                return;
        }
        mcp_version v = mcp_version_negotiate(requested);
        srv->version = v;

        oci_jw *w = mcp_rpc_begin_result(id);
        if (w) {
                oci_jw_begin_object(w);
                oci_jw_kv_string(w, "protocolVersion", mcp_version_name(v));
                oci_jw_key(w, "capabilities");
                oci_jw_begin_object(w);
                oci_jw_key(w, "tools");
                oci_jw_begin_object(w);
                oci_jw_kv_bool(w, "listChanged", false);
                oci_jw_end_object(w);
                oci_jw_key(w, "resources");
                oci_jw_begin_object(w);
                oci_jw_kv_bool(w, "subscribe", false);
                oci_jw_kv_bool(w, "listChanged", true);
                oci_jw_end_object(w);
                oci_jw_key(w, "logging");
                oci_jw_begin_object(w);
                oci_jw_end_object(w);
                oci_jw_end_object(w);
                oci_jw_key(w, "serverInfo");
                oci_jw_begin_object(w);
                oci_jw_kv_string(w, "name", "msp-mcp");
                if (mcp_version_structured(v))
                        oci_jw_kv_string(w, "title", "msp code sandbox");
                oci_jw_kv_string(w, "version", MSP_VERSION);
                oci_jw_end_object(w);
                oci_jw_kv_string(w, "instructions",
                                 "Call run_code to execute a program in an isolated Linux "
                                 "sandbox (no network, no access to the host's files, limited "
                                 "memory, CPU and time). A call without session_id runs in a "
                                 "fresh sandbox that starts from a new /workspace holding an "
                                 "empty out/ directory and keeps nothing. For work that spans "
                                 "calls, create a session with session_create and pass its "
                                 "session_id: a session is one sandbox that keeps running until "
                                 "it is closed or expires, so its files (/workspace, also HOME, "
                                 "and /tmp) and the processes a call leaves in the background "
                                 "carry over to its next calls. Files the "
                                 "code writes to /workspace/out/ are returned (images inline).");
                oci_jw_end_object(w);
        }
        if (mcp_rpc_send(srv->rpc, w, id, false) == 0) {
                srv->initialized = true;
                mcp_log(srv->log, MCP_LOG_INFO, "initialized with protocol version %s (asked for %s)",
                        mcp_version_name(v), requested);
        }
}

static void
log_sink(mcp_level level, const char *msg, void *data)
{
        mcp_server *srv = data;
        oci_jw *w = mcp_rpc_begin_notification("notifications/message");
        if (!w)
                return;
        oci_jw_begin_object(w);
        oci_jw_kv_string(w, "level", mcp_level_name(level));
        oci_jw_kv_string(w, "logger", "msp-mcp");
        oci_jw_key(w, "data");
        mcp_jw_text(w, msg);
        oci_jw_end_object(w);
        (void) mcp_rpc_send(srv->rpc, w, NULL, true);
}

static void
set_level(mcp_server *srv, const mcp_rpc_id *id, const oci_json *params)
{
        const char *name = mcp_json_str(params, "level");
        int level = name ? mcp_level_from_name(name) : -1;
        if (level < 0) {
                (void) mcp_rpc_send_error(srv->rpc, id, MCP_RPC_INVALID_PARAMS,
                                          "Invalid params: level must be one of debug, info, notice, warning, error, critical, alert, emergency");
                return;
        }
        srv->log->client_level = (mcp_level) level;
        srv->log->sink = log_sink;
        srv->log->sink_data = srv;
        send_empty_result(srv, id);
}

static void
cancelled(mcp_server *srv, const oci_json *params)
{
        mcp_rpc_id id;
        if (mcp_rpc_cancelled_id(params, &id) < 0)
                return;
        mcp_tools_cancel(srv, &id);
        mcp_rpc_id_clear(&id);
}

static void
tools_list(mcp_server *srv, const mcp_rpc_id *id)
{
        oci_jw *w = mcp_rpc_begin_result(id);
        if (w)
                mcp_tools_write_list(w, srv->cfg, srv->languages, srv->version);
        (void) mcp_rpc_send(srv->rpc, w, id, false);
}

void
mcp_server_dispatch(mcp_server *srv, mcp_rpc_msg *msg)
{
        _cleanup_rpc_msg_ mcp_rpc_msg m = *msg;
        const oci_json *params = m.params;      /* NULL when absent: readers check */
        const char *method = m.method;

        if (m.id.kind == MCP_ID_NONE) {
                /* Notifications never get an answer; unknown ones are ignored. */
                if (strcmp(method, "notifications/initialized") == 0) {
                        srv->client_initialized = true;
                        mcp_resources_changed_retry(srv);
                }
                else if (strcmp(method, "notifications/cancelled") == 0)
                        cancelled(srv, params);
                else
                        mcp_log(srv->log, MCP_LOG_DEBUG, "ignored notification %s", method);
                return;
        }

        if (strcmp(method, "ping") == 0) {
                send_empty_result(srv, &m.id);
                return;
        }
        if (strcmp(method, "initialize") == 0) {
                initialize(srv, &m.id, params);
                return;
        }
        if (!srv->initialized) {
                (void) mcp_rpc_send_error(srv->rpc, &m.id, MCP_RPC_INVALID_REQUEST,
                                          "Invalid request: not initialized (send initialize first)");
                return;
        }
        if (strcmp(method, "tools/list") == 0)
                tools_list(srv, &m.id);
        else if (strcmp(method, "tools/call") == 0)
                mcp_tools_call(srv, &m.id, params);
        else if (strcmp(method, "resources/list") == 0)
                mcp_resources_list(srv, &m.id);
        else if (strcmp(method, "resources/templates/list") == 0)
                mcp_resources_templates(srv, &m.id);
        else if (strcmp(method, "resources/read") == 0)
                mcp_resources_read(srv, &m.id, params);
        else if (strcmp(method, "logging/setLevel") == 0)
                set_level(srv, &m.id, params);
        else {
                char text[200];
                snprintf(text, sizeof text, "Method not found: %.120s", method);
                (void) mcp_rpc_send_error(srv->rpc, &m.id, MCP_RPC_METHOD_NOT_FOUND, text);
        }
}

static void
on_msg(mcp_rpc *rpc _unused_, mcp_rpc_msg *msg, void *data)
{
        mcp_server_dispatch(data, msg);
}

static void
on_eof(mcp_rpc *rpc, void *data)
{
        mcp_server *srv = data;
        mcp_log(srv->log, MCP_LOG_INFO, "%s: stopping", mcp_rpc_eof_reason(rpc));
        mcp_loop_exit(srv->loop, 0);
}

static int
server_alloc(mcp_loop *loop, const mcp_config *cfg, mcp_engine *engine, mcp_logger *log,
             mcp_server **ret)
{
        mcp_server *srv = calloc(1, sizeof *srv);
        if (!srv)
                return -ENOMEM;
        static const char *const none[] = { NULL };
        *srv = (mcp_server) { .loop = loop, .cfg = cfg, .engine = engine, .log = log,
                              .version = MCP_V_LATEST,
                              .languages = engine ? mcp_engine_languages(engine) : none };
        size_t keep = cfg->run_log_keep ? cfg->run_log_keep : 1;
        srv->recent_runs = calloc(keep, sizeof(char *));
        if (!srv->recent_runs) {
                free(srv);
                return -ENOMEM;
        }
        srv->n_recent = keep;
        *ret = srv;
        return 0;
}

/* stdio: the one caller owns every sandbox session, so their expiries are its lines. */
static void
on_session_expired(const char *id, const char *why, void *data)
{
        mcp_server *srv = data;
        mcp_audit_session_expired(srv->log ? srv->log->audit : NULL, false, NULL, id, why);
        mcp_resources_changed(srv);
}

int
mcp_server_new(mcp_loop *loop, const mcp_config *cfg, mcp_engine *engine, mcp_logger *log,
               int in_fd, int out_fd, mcp_server **ret)
{
        mcp_server *srv;
        int r = server_alloc(loop, cfg, engine, log, &srv);
        if (r < 0)
                return r;
        r = mcp_rpc_new(loop, in_fd, out_fd, cfg->max_message_bytes, on_msg, on_eof, srv,
                        &srv->rpc);
        if (r < 0) {
                mcp_server_free(srv);
                return r;
        }
        srv->hears_expiries = engine != NULL;
        if (engine) {
                mcp_sessions_set_expired(mcp_engine_sessions(engine), on_session_expired, srv);
                if (mcp_ports_new(loop, engine, NULL, &srv->ports) < 0) {
                        mcp_server_free(srv);
                        return -ENOMEM;
                }
                srv->owns_ports = true;
        }
        *ret = srv;
        return 0;
}

int
mcp_server_new_sink(mcp_loop *loop, const mcp_config *cfg, mcp_engine *engine, mcp_logger *log,
                    mcp_rpc_sink_fn sink, void *sink_data, mcp_server **ret)
{
        mcp_server *srv;
        int r = server_alloc(loop, cfg, engine, log, &srv);
        if (r < 0)
                return r;
        r = mcp_rpc_new_sink(loop, cfg->max_message_bytes, sink, sink_data, &srv->rpc);
        if (r < 0) {
                mcp_server_free(srv);
                return r;
        }
        *ret = srv;
        return 0;
}

mcp_server *
mcp_server_free(mcp_server *srv)
{
        if (!srv)
                return NULL;
        mcp_tools_cancel_all(srv);
        if (srv->owns_ports)
                srv->ports = mcp_ports_free(srv->ports);
        if (srv->hears_expiries)
                mcp_sessions_set_expired(mcp_engine_sessions(srv->engine), NULL, NULL);
        if (srv->log && srv->log->sink_data == srv)
                srv->log->sink = NULL;
        mcp_rpc_free(srv->rpc);
        mcp_resources_free(srv);
        for (size_t i = 0; i < srv->n_recent; i++) {
                if (srv->owners && srv->recent_runs[i])
                        mcp_owners_forget(srv->owners, srv->recent_runs[i]);
                free(srv->recent_runs[i]);
        }
        free(srv->recent_runs);
        free(srv);
        return NULL;
}
