/* tools/list and tools/call: the tool table (name, schemas, annotations, allowed arguments
 * and implementation of each tool) and the dispatch of a call to its tool, once its
 * arguments are an object of names the tool takes. The tools: run_code in tools-run.c,
 * the session and file tools in tools-session.c; their schemas in tools-schema.c. */
#include "mcp/tools.h"

#include <stdio.h>
#include <string.h>

#include "base/base.h"
#include "mcp/tools-args.h"
#include "mcp/tools-live.h"
#include "mcp/tools-ports.h"
#include "mcp/tools-run.h"
#include "mcp/tools-schema.h"
#include "mcp/tools-session.h"

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

static const tool tools[] = {
        { "run_code", "Run code in a sandbox",
          "Run a program in an isolated Linux sandbox: no network (unless `network` asks for "
          "what this server allows), limited memory, processes, CPU and time. Without "
          "session_id the call gets a fresh sandbox with a new /workspace and keeps nothing (a "
          "background process is killed when the call ends). With a session's id it runs "
          "inside that session's running sandbox: its files (/workspace, HOME, /tmp) carry "
          "over, a process it leaves in the background keeps running, and timeout_ms ends "
          "this call's own processes only. Returns exit_code, stdout, stderr (each capped; the full logs are "
          "resources), timed_out, oom_killed. Files the code creates or changes under "
          "/workspace/out/ (it exists in every workspace) are returned: images (PNG, JPEG, "
          "GIF, SVG) as image content, other files as resource links. Python packages: `pip "
          "install PKG` installs into /workspace/.local (the user site; a session's later "
          "calls import it), or use a venv in /workspace (`python3 -m venv /workspace/venv`). "
          "Through a network allowlist, denied_hosts names the hosts the egress proxy refused "
          "and upstream_errors the allowed ones it could not reach, with why. In a session, "
          "background: true returns at once with a process_id while the program runs on "
          "(process_output reads what it writes, process_kill ends it), and fresh: true runs "
          "the program as a process of its own, never in the session's kernel (python, R) or "
          "node REPL, whose state otherwise persists across the session's calls.",
          mcp_schema_in_run_code, mcp_schema_out_run_code, false, false, false, true,
          (const char *const[]) { "language", "code", "stdin", "files", "args", "env",
                                  "timeout_ms", "memory_mb", "pids", "cpus", "session_id",
                                  "network", "fresh", "background", NULL },
          mcp_tool_run_code },
        { "session_create", "Create a session",
          "Create a session: one sandbox that keeps running, with its own limits and network, "
          "until it is closed or expires. The run_code calls that pass its session_id run "
          "inside it: files in /workspace (HOME) and /tmp, and processes left in the "
          "background, carry over between them; the session's limits cover everything in it "
          "together, and closing it ends everything it runs.",
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
        { "session_pause", "Pause a session",
          "Freeze everything running in a session's sandbox (its background processes "
          "included): it uses no CPU until it is resumed. Its next run_code, process_kill or "
          "session_resume thaws it; its files stay.",
          mcp_schema_in_session_id, mcp_schema_out_session_state, false, false, false, false,
          (const char *const[]) { "session_id", NULL }, mcp_tool_session_pause },
        { "session_resume", "Resume a session",
          "Thaw a paused session's sandbox: its processes go on where they stopped.",
          mcp_schema_in_session_id, mcp_schema_out_session_state, false, false, false, false,
          (const char *const[]) { "session_id", NULL }, mcp_tool_session_resume },
        { "process_list", "List background processes",
          "List a session's background processes (run_code with background: true): running "
          "or exited, with their exit status and how much each has written.",
          mcp_schema_in_session_id, mcp_schema_out_process_list, true, false, true, false,
          (const char *const[]) { "session_id", NULL }, mcp_tool_process_list },
        { "process_output", "Read a background process's output",
          "Read what a session's background process wrote to stdout or stderr, from a byte "
          "offset (0: the start); pass next_offset as the offset of the next read. Only the "
          "last 1 MiB of each stream is kept: skipped counts the bytes dropped before what is "
          "returned.",
          mcp_schema_in_process_output, mcp_schema_out_process_output, true, false, true, false,
          (const char *const[]) { "session_id", "process_id", "stream", "offset", "max_bytes", NULL },
          mcp_tool_process_output },
        { "process_kill", "Kill a background process",
          "Send a signal (default KILL) to a session's background process and the processes "
          "it started; a process that has already exited is forgotten, its output with it.",
          mcp_schema_in_process_kill, mcp_schema_out_process_kill, false, true, false, false,
          (const char *const[]) { "session_id", "process_id", "signal", NULL },
          mcp_tool_process_kill },
        { "port_expose", "Expose a port of a session",
          "Make a TCP port that a program in a session's sandbox listens on (on 127.0.0.1 or "
          "0.0.0.0 inside it: start the server in the background first) reachable over HTTP "
          "and WebSocket from outside the sandbox, without giving the sandbox any other "
          "network. Returns the url to use (the same one when the port is exposed again); "
          "the url works until the session is closed or expires. A session with a network "
          "allowlist cannot expose ports.",
          mcp_schema_in_port_expose, mcp_schema_out_port_expose, false, false, true, false,
          (const char *const[]) { "session_id", "port", NULL }, mcp_tool_port_expose },
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
        if (mcp_arg_unknown(&a, t->name, t->args) < 0)
                mcp_tool_error(srv, id, a.msg);
        else
                t->fn(srv, id, &a, token.kind == MCP_ID_NONE ? NULL : &token);
        mcp_rpc_id_clear(&token);
}
