/* The input and output schemas of the tools (JSON Schema written with oci_jw): every
 * object closed with additionalProperties:false by the caller, items on every array,
 * limits from the configuration. */
#include "mcp/tools-schema.h"

#include <stdio.h>

#include "base/base.h"
#include "mcp/tools-args.h"
#include "mcp/tools-live.h"
#include "mcp/tools-network.h"

/* ---- schemas ---- */

static void
s_type(oci_jw *w, const char *type, const char *desc)
{
        oci_jw_kv_string(w, "type", type);
        if (desc)
                oci_jw_kv_string(w, "description", desc);
}

static void
p_str(oci_jw *w, const char *name, const char *desc, uint64_t max_len)
{
        mcp_jw_obj(w, name);
        s_type(w, "string", desc);
        if (max_len)
                oci_jw_kv_uint64(w, "maxLength", max_len);
        oci_jw_end_object(w);
}

static void
p_int(oci_jw *w, const char *name, const char *desc, uint64_t min, uint64_t max)
{
        mcp_jw_obj(w, name);
        s_type(w, "integer", desc);
        oci_jw_kv_uint64(w, "minimum", min);
        oci_jw_kv_uint64(w, "maximum", max);
        oci_jw_end_object(w);
}

static void
p_bool(oci_jw *w, const char *name, const char *desc)
{
        mcp_jw_obj(w, name);
        s_type(w, "boolean", desc);
        oci_jw_end_object(w);
}

static void
p_enum(oci_jw *w, const char *name, const char *desc, const char *const *values)
{
        mcp_jw_obj(w, name);
        s_type(w, "string", desc);
        oci_jw_kv_strlist(w, "enum", values);
        oci_jw_end_object(w);
}

static void
p_typed(oci_jw *w, const char *name, const char *t1, const char *t2)
{
        mcp_jw_obj(w, name);
        oci_jw_key(w, "type");
        oci_jw_begin_array(w);
        oci_jw_string(w, t1);
        oci_jw_string(w, t2);
        oci_jw_end_array(w);
        oci_jw_end_object(w);
}

static void
p_plain(oci_jw *w, const char *name, const char *type)
{
        mcp_jw_obj(w, name);
        oci_jw_kv_string(w, "type", type);
        oci_jw_end_object(w);
}

/* An array of strings. */
static void
p_strings(oci_jw *w, const char *name)
{
        mcp_jw_obj(w, name);
        oci_jw_kv_string(w, "type", "array");
        mcp_jw_obj(w, "items");
        oci_jw_kv_string(w, "type", "string");
        oci_jw_end_object(w);
        oci_jw_end_object(w);
}

static void
required(oci_jw *w, const char *const *names)
{
        oci_jw_kv_strlist(w, "required", names);
}

static void
p_cpus(oci_jw *w, uint64_t max_millis)
{
        mcp_jw_obj(w, "cpus");
        s_type(w, "number", "CPU quota in CPUs (e.g. 0.5)");
        oci_jw_kv_uint64(w, "exclusiveMinimum", 0);
        /* The writer has integers only: a fractional maximum is left to the check. */
        if (max_millis % 1000 == 0)
                oci_jw_kv_uint64(w, "maximum", max_millis / 1000);
        oci_jw_end_object(w);
}

static void
limit_props(oci_jw *w, const mcp_config *cfg)
{
        p_int(w, "timeout_ms", "wall-clock limit of a run in milliseconds", TIMEOUT_MIN,
              cfg->maxima.timeout_ms);
        p_int(w, "memory_mb", "memory limit in MiB (no swap)", 1, cfg->maxima.memory_bytes / MIB);
        p_int(w, "pids", "limit on processes and threads", 1, cfg->maxima.pids);
        p_cpus(w, cfg->maxima.cpu_millis);
}

void
mcp_schema_in_run_code(oci_jw *w, const mcp_config *cfg, const char *const *languages)
{
        oci_jw_key(w, "properties");
        oci_jw_begin_object(w);
        p_enum(w, "language", "the interpreter or compiler", languages);
        p_str(w, "code", "the program", CODE_MAX);
        p_str(w, "stdin", "standard input of the program (default: empty)", STDIN_MAX);
        p_bool(w, "fresh", "with session_id: run as a process of its own in the session's "
                           "sandbox, never in the session's kernel or node REPL (needed for "
                           "stdin and args of a language they run)");
        p_bool(w, "background", "with session_id: return at once with a process_id while the "
                                "program runs on (process_output, process_kill)");

        mcp_jw_obj(w, "files");
        s_type(w, "array", "files placed in /workspace before the run");
        oci_jw_kv_uint64(w, "maxItems", FILES_MAX);
        mcp_jw_obj(w, "items");
        oci_jw_kv_string(w, "type", "object");
        oci_jw_key(w, "properties");
        oci_jw_begin_object(w);
        p_str(w, "path", "relative to /workspace", PATH_MAX_LEN);
        p_str(w, "content", NULL, 0);
        p_enum(w, "encoding", "of content (default utf8)",
               (const char *const[]) { "utf8", "base64", NULL });
        p_bool(w, "executable", "mode 0755 instead of 0644");
        oci_jw_end_object(w);
        required(w, (const char *const[]) { "path", "content", NULL });
        oci_jw_kv_bool(w, "additionalProperties", false);
        oci_jw_end_object(w);
        oci_jw_end_object(w);

        mcp_jw_obj(w, "args");
        s_type(w, "array", "arguments after the program");
        oci_jw_kv_uint64(w, "maxItems", ARGS_MAX);
        mcp_jw_obj(w, "items");
        oci_jw_kv_string(w, "type", "string");
        oci_jw_end_object(w);
        oci_jw_end_object(w);

        mcp_jw_obj(w, "env");
        s_type(w, "object", "environment variables added to the sandbox's");
        oci_jw_kv_uint64(w, "maxProperties", ENV_MAX);
        mcp_jw_obj(w, "additionalProperties");
        oci_jw_kv_string(w, "type", "string");
        oci_jw_end_object(w);
        oci_jw_end_object(w);

        limit_props(w, cfg);
        p_str(w, "session_id", "run inside this session's running sandbox, whose files and background processes carry over between its calls", SESSION_ID_MAX);
        mcp_schema_network(w, cfg);
        oci_jw_end_object(w);
        required(w, (const char *const[]) { "language", "code", NULL });
}

void
mcp_schema_out_run_code(oci_jw *w)
{
        oci_jw_key(w, "properties");
        oci_jw_begin_object(w);
        p_typed(w, "exit_code", "integer", "null");
        p_typed(w, "signal", "string", "null");
        p_plain(w, "stdout", "string");
        p_plain(w, "stderr", "string");
        p_plain(w, "timed_out", "boolean");
        p_plain(w, "oom_killed", "boolean");
        p_plain(w, "truncated", "boolean");
        p_plain(w, "duration_ms", "integer");
        p_plain(w, "run_id", "string");
        p_typed(w, "session_id", "string", "null");
        mcp_jw_obj(w, "files");
        oci_jw_kv_string(w, "type", "array");
        mcp_jw_obj(w, "items");
        oci_jw_kv_string(w, "type", "object");
        oci_jw_key(w, "properties");
        oci_jw_begin_object(w);
        p_plain(w, "path", "string");
        p_plain(w, "mime_type", "string");
        p_plain(w, "size", "integer");
        p_plain(w, "uri", "string");
        oci_jw_end_object(w);
        oci_jw_end_object(w);
        oci_jw_end_object(w);
        p_strings(w, "denied_hosts");
        p_strings(w, "upstream_errors");
        p_plain(w, "error", "string");
        p_plain(w, "process_id", "string");
        p_plain(w, "value", "string");
        p_plain(w, "kernel", "string");
        p_plain(w, "traceback", "boolean");
        oci_jw_end_object(w);
        required(w, (const char *const[]) { "exit_code", "signal", "stdout", "stderr", "timed_out",
                                            "oom_killed", "truncated", "duration_ms", "run_id", NULL });
}

void
mcp_schema_in_session_create(oci_jw *w, const mcp_config *cfg, const char *const *languages _unused_)
{
        oci_jw_key(w, "properties");
        oci_jw_begin_object(w);
        limit_props(w, cfg);
        p_int(w, "ttl_s", "lifetime in seconds", 1, cfg->session_max_ttl_s);
        mcp_schema_network(w, cfg);
        const char *names[17] = { 0 };
        for (size_t i = 0; i < cfg->n_rootfs && i < 16; i++)
                names[i] = cfg->rootfs[i].name;
        p_enum(w, "rootfs", "root filesystem (default host)", names);
        oci_jw_end_object(w);
}

static void
limits_out_props(oci_jw *w)
{
        mcp_jw_obj(w, "limits");
        oci_jw_kv_string(w, "type", "object");
        oci_jw_key(w, "properties");
        oci_jw_begin_object(w);
        p_plain(w, "memory_mb", "integer");
        p_plain(w, "pids", "integer");
        p_plain(w, "cpu_millis", "integer");
        p_plain(w, "timeout_ms", "integer");
        oci_jw_end_object(w);
        oci_jw_end_object(w);
}

void
mcp_schema_out_session_create(oci_jw *w)
{
        oci_jw_key(w, "properties");
        oci_jw_begin_object(w);
        p_plain(w, "session_id", "string");
        p_plain(w, "rootfs", "string");
        p_plain(w, "network", "boolean");
        p_strings(w, "network_allow");
        p_plain(w, "expires_at", "string");
        limits_out_props(w);
        oci_jw_end_object(w);
        required(w, (const char *const[]) { "session_id", "rootfs", "network", "expires_at",
                                            "limits", NULL });
}

void
mcp_schema_in_none(oci_jw *w, const mcp_config *cfg _unused_, const char *const *languages _unused_)
{
        oci_jw_key(w, "properties");
        oci_jw_begin_object(w);
        oci_jw_end_object(w);
}

void
mcp_schema_out_session_list(oci_jw *w)
{
        oci_jw_key(w, "properties");
        oci_jw_begin_object(w);
        mcp_jw_obj(w, "sessions");
        oci_jw_kv_string(w, "type", "array");
        mcp_jw_obj(w, "items");
        oci_jw_kv_string(w, "type", "object");
        oci_jw_key(w, "properties");
        oci_jw_begin_object(w);
        p_plain(w, "session_id", "string");
        p_plain(w, "rootfs", "string");
        p_plain(w, "network", "boolean");
        p_plain(w, "created_at", "string");
        p_plain(w, "expires_at", "string");
        p_plain(w, "runs", "integer");
        p_plain(w, "busy", "boolean");
        p_enum(w, "state", "of its sandbox", (const char *const[]) { "running", "paused", "stopped", NULL });
        p_plain(w, "processes", "integer");
        p_plain(w, "memory_bytes", "integer");
        p_plain(w, "background", "integer");
        mcp_jw_obj(w, "ports");
        s_type(w, "array", "its exposed ports (port_expose)");
        mcp_jw_obj(w, "items");
        oci_jw_kv_string(w, "type", "integer");
        oci_jw_end_object(w);
        oci_jw_end_object(w);
        oci_jw_end_object(w);
        oci_jw_end_object(w);
        oci_jw_end_object(w);
        oci_jw_end_object(w);
        required(w, (const char *const[]) { "sessions", NULL });
}

void
mcp_schema_in_session_id(oci_jw *w, const mcp_config *cfg _unused_, const char *const *languages _unused_)
{
        oci_jw_key(w, "properties");
        oci_jw_begin_object(w);
        p_str(w, "session_id", NULL, SESSION_ID_MAX);
        oci_jw_end_object(w);
        required(w, (const char *const[]) { "session_id", NULL });
}

void
mcp_schema_out_session_close(oci_jw *w)
{
        oci_jw_key(w, "properties");
        oci_jw_begin_object(w);
        p_plain(w, "session_id", "string");
        p_plain(w, "closed", "boolean");
        oci_jw_end_object(w);
        required(w, (const char *const[]) { "session_id", "closed", NULL });
}

void
mcp_schema_in_write_file(oci_jw *w, const mcp_config *cfg, const char *const *languages _unused_)
{
        oci_jw_key(w, "properties");
        oci_jw_begin_object(w);
        p_str(w, "session_id", NULL, SESSION_ID_MAX);
        p_str(w, "path", "relative to /workspace", PATH_MAX_LEN);
        p_str(w, "content", NULL, cfg->max_message_bytes);
        p_enum(w, "encoding", "of content (default utf8)",
               (const char *const[]) { "utf8", "base64", NULL });
        p_bool(w, "executable", "mode 0755 instead of 0644");
        oci_jw_end_object(w);
        required(w, (const char *const[]) { "session_id", "path", "content", NULL });
}

void
mcp_schema_out_write_file(oci_jw *w)
{
        oci_jw_key(w, "properties");
        oci_jw_begin_object(w);
        p_plain(w, "path", "string");
        p_plain(w, "bytes", "integer");
        oci_jw_end_object(w);
        required(w, (const char *const[]) { "path", "bytes", NULL });
}

void
mcp_schema_in_read_file(oci_jw *w, const mcp_config *cfg _unused_, const char *const *languages _unused_)
{
        oci_jw_key(w, "properties");
        oci_jw_begin_object(w);
        p_str(w, "session_id", NULL, SESSION_ID_MAX);
        p_str(w, "path", "relative to /workspace", PATH_MAX_LEN);
        p_enum(w, "encoding", "of the returned content (default utf8)",
               (const char *const[]) { "utf8", "base64", NULL });
        p_int(w, "max_bytes", "bytes returned at most (default 1 MiB)", 1, READ_MAX);
        oci_jw_end_object(w);
        required(w, (const char *const[]) { "session_id", "path", NULL });
}

void
mcp_schema_out_read_file(oci_jw *w)
{
        oci_jw_key(w, "properties");
        oci_jw_begin_object(w);
        p_plain(w, "path", "string");
        p_plain(w, "content", "string");
        p_plain(w, "encoding", "string");
        p_plain(w, "size", "integer");
        p_plain(w, "truncated", "boolean");
        oci_jw_end_object(w);
        required(w, (const char *const[]) { "path", "content", "encoding", "size", "truncated", NULL });
}

void
mcp_schema_in_list_files(oci_jw *w, const mcp_config *cfg _unused_, const char *const *languages _unused_)
{
        oci_jw_key(w, "properties");
        oci_jw_begin_object(w);
        p_str(w, "session_id", NULL, SESSION_ID_MAX);
        p_str(w, "path", "directory relative to /workspace (default: the workspace)", PATH_MAX_LEN);
        oci_jw_end_object(w);
        required(w, (const char *const[]) { "session_id", NULL });
}

void
mcp_schema_out_list_files(oci_jw *w)
{
        oci_jw_key(w, "properties");
        oci_jw_begin_object(w);
        p_plain(w, "path", "string");
        mcp_jw_obj(w, "entries");
        oci_jw_kv_string(w, "type", "array");
        mcp_jw_obj(w, "items");
        oci_jw_kv_string(w, "type", "object");
        oci_jw_key(w, "properties");
        oci_jw_begin_object(w);
        p_plain(w, "name", "string");
        p_enum(w, "type", NULL, (const char *const[]) { "file", "dir", "symlink", "other", NULL });
        p_plain(w, "size", "integer");
        oci_jw_end_object(w);
        oci_jw_end_object(w);
        oci_jw_end_object(w);
        p_plain(w, "truncated", "boolean");
        oci_jw_end_object(w);
        required(w, (const char *const[]) { "path", "entries", "truncated", NULL });
}


/* ---- the live session tools (tools-live.c) ---- */

void
mcp_schema_out_session_state(oci_jw *w)
{
        oci_jw_key(w, "properties");
        oci_jw_begin_object(w);
        p_plain(w, "session_id", "string");
        p_enum(w, "state", NULL, (const char *const[]) { "running", "paused", "stopped", NULL });
        oci_jw_end_object(w);
        required(w, (const char *const[]) { "session_id", "state", NULL });
}

/* running, exit_code, signal: a process's status. */
static void
status_props(oci_jw *w)
{
        p_plain(w, "running", "boolean");
        p_typed(w, "exit_code", "integer", "null");
        p_typed(w, "signal", "string", "null");
}

void
mcp_schema_out_process_list(oci_jw *w)
{
        oci_jw_key(w, "properties");
        oci_jw_begin_object(w);
        p_plain(w, "session_id", "string");
        mcp_jw_obj(w, "processes");
        oci_jw_kv_string(w, "type", "array");
        mcp_jw_obj(w, "items");
        oci_jw_kv_string(w, "type", "object");
        oci_jw_key(w, "properties");
        oci_jw_begin_object(w);
        p_plain(w, "process_id", "string");
        p_plain(w, "language", "string");
        p_plain(w, "pid", "integer");
        status_props(w);
        p_plain(w, "started_at", "string");
        p_plain(w, "stdout_bytes", "integer");
        p_plain(w, "stderr_bytes", "integer");
        oci_jw_end_object(w);
        oci_jw_end_object(w);
        oci_jw_end_object(w);
        oci_jw_end_object(w);
        required(w, (const char *const[]) { "session_id", "processes", NULL });
}

static void
process_props(oci_jw *w)
{
        p_str(w, "session_id", NULL, SESSION_ID_MAX);
        p_str(w, "process_id", "a background run's process_id", PROCESS_ID_MAX);
}

void
mcp_schema_in_process_output(oci_jw *w, const mcp_config *cfg _unused_, const char *const *languages _unused_)
{
        oci_jw_key(w, "properties");
        oci_jw_begin_object(w);
        process_props(w);
        p_enum(w, "stream", "default stdout", (const char *const[]) { "stdout", "stderr", NULL });
        p_int(w, "offset", "byte offset in the stream to read from (default 0; next_offset of "
                           "the previous read)", 0, INT64_MAX);
        p_int(w, "max_bytes", "bytes returned at most (default 64 KiB)", 1, PROCESS_OUTPUT_MAX);
        oci_jw_end_object(w);
        required(w, (const char *const[]) { "session_id", "process_id", NULL });
}

void
mcp_schema_out_process_output(oci_jw *w)
{
        oci_jw_key(w, "properties");
        oci_jw_begin_object(w);
        p_plain(w, "session_id", "string");
        p_plain(w, "process_id", "string");
        p_enum(w, "stream", NULL, (const char *const[]) { "stdout", "stderr", NULL });
        p_plain(w, "text", "string");
        p_plain(w, "offset", "integer");
        p_plain(w, "next_offset", "integer");
        p_plain(w, "skipped", "integer");
        p_plain(w, "total_bytes", "integer");
        status_props(w);
        oci_jw_end_object(w);
        required(w, (const char *const[]) { "session_id", "process_id", "stream", "text", "offset",
                                            "next_offset", "skipped", "running", NULL });
}

void
mcp_schema_in_process_kill(oci_jw *w, const mcp_config *cfg _unused_, const char *const *languages _unused_)
{
        oci_jw_key(w, "properties");
        oci_jw_begin_object(w);
        process_props(w);
        mcp_jw_obj(w, "signal");
        oci_jw_key(w, "type");
        oci_jw_begin_array(w);
        oci_jw_string(w, "string");
        oci_jw_string(w, "integer");
        oci_jw_end_array(w);
        oci_jw_kv_string(w, "description", "a name (\"TERM\", \"SIGINT\", \"KILL\") or a number; "
                                           "default KILL");
        oci_jw_end_object(w);
        oci_jw_end_object(w);
        required(w, (const char *const[]) { "session_id", "process_id", NULL });
}

void
mcp_schema_out_process_kill(oci_jw *w)
{
        oci_jw_key(w, "properties");
        oci_jw_begin_object(w);
        p_plain(w, "session_id", "string");
        p_plain(w, "process_id", "string");
        p_typed(w, "signal", "string", "null");
        p_plain(w, "signaled", "boolean");
        p_plain(w, "removed", "boolean");
        oci_jw_end_object(w);
        required(w, (const char *const[]) { "session_id", "process_id", "signaled", "removed", NULL });
}

void
mcp_schema_in_port_expose(oci_jw *w, const mcp_config *cfg _unused_, const char *const *languages _unused_)
{
        oci_jw_key(w, "properties");
        oci_jw_begin_object(w);
        p_str(w, "session_id", NULL, SESSION_ID_MAX);
        p_int(w, "port", "the TCP port inside the sandbox", 1, 65535);
        oci_jw_end_object(w);
        required(w, (const char *const[]) { "session_id", "port", NULL });
}

void
mcp_schema_out_port_expose(oci_jw *w)
{
        oci_jw_key(w, "properties");
        oci_jw_begin_object(w);
        p_plain(w, "url", "string");
        p_plain(w, "port", "integer");
        p_plain(w, "session_id", "string");
        oci_jw_end_object(w);
        required(w, (const char *const[]) { "url", "port", "session_id", NULL });
}
