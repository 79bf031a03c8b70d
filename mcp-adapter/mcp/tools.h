/* Internal to the tool modules (tools.c: the table, tools/call, run_code and the shared
 * argument checks and result writers; tools-schema.c: input and output schemas;
 * tools-session.c: the session and file tools). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mcp/server.h"

#define MIB ((uint64_t) 1024 * 1024)
#define CODE_MAX MIB
#define STDIN_MAX MIB
#define FILES_MAX 64
#define FILES_BYTES_MAX (8 * MIB)
#define PATH_MAX_LEN 4096
#define ARGS_MAX 256
#define ARG_MAX_LEN (128 * 1024)
#define ENV_MAX 128
#define ENV_VALUE_MAX (32 * 1024)
#define SESSION_ID_MAX 64
#define READ_DEFAULT MIB
#define READ_MAX (8 * MIB)
#define LIST_MAX 1000
#define TIMEOUT_MIN 100

/* The arguments of one call and the message of the first bad one. */
typedef struct targs {
        const oci_json *obj;            /* the arguments object; NULL: none given */
        char msg[1024];
} targs;

/* ---- schemas (tools-schema.c): properties and required of an object schema ---- */
void mcp_schema_in_run_code(oci_jw *w, const mcp_config *cfg, const char *const *languages);
void mcp_schema_out_run_code(oci_jw *w);
void mcp_schema_in_session_create(oci_jw *w, const mcp_config *cfg, const char *const *languages);
void mcp_schema_out_session_create(oci_jw *w);
void mcp_schema_in_none(oci_jw *w, const mcp_config *cfg, const char *const *languages);
void mcp_schema_out_session_list(oci_jw *w);
void mcp_schema_in_session_id(oci_jw *w, const mcp_config *cfg, const char *const *languages);
void mcp_schema_out_session_close(oci_jw *w);
void mcp_schema_in_write_file(oci_jw *w, const mcp_config *cfg, const char *const *languages);
void mcp_schema_out_write_file(oci_jw *w);
void mcp_schema_in_read_file(oci_jw *w, const mcp_config *cfg, const char *const *languages);
void mcp_schema_out_read_file(oci_jw *w);
void mcp_schema_in_list_files(oci_jw *w, const mcp_config *cfg, const char *const *languages);
void mcp_schema_out_list_files(oci_jw *w);

/* ---- argument checks: 1 set, 0 absent, < 0 with a->msg naming field, value, limit ---- */
/* The argument error: a->msg from FMT; returns -EINVAL. */
int mcp_arg_bad(targs *a, const char *fmt, ...) _printf_(2, 3);
int mcp_arg_str(targs *a, const char *key, bool req, size_t max, const char **ret);
int mcp_arg_uint(targs *a, const char *key, uint64_t min, uint64_t max, uint64_t *ret);
int mcp_arg_bool(targs *a, const char *key, bool *ret);
int mcp_arg_enum(targs *a, const char *key, bool req, const char *const *values, const char **ret);
/* timeout_ms, memory_mb, pids, cpus; 0 fields when absent. */
int mcp_arg_limits(targs *a, const mcp_config *cfg, mcp_limits *l);
/* content decoded by encoding (utf8, base64); *ret_buf owns a decoding. */
int mcp_arg_content(targs *a, const char *field, const char *content, const char *encoding,
                    size_t max, const char **ret, size_t *ret_len, unsigned char **ret_buf);

/* ---- network (tools-network.c) ---- */
/* `network`: absent, false or "none"; true or "full" (--allow-network); {"allow": [...]}
 * within --network-allow (patterns added to *allow, the caller's to free). */
int mcp_arg_network(targs *a, const mcp_config *cfg, mcp_net_mode *mode, mcp_egress_policy *allow);
void mcp_schema_network(oci_jw *w, const mcp_config *cfg);
void mcp_network_log(mcp_logger *log, const char *run_id, mcp_proxy_event ev, const char *host,
                     uint16_t port, const char *reason, uint64_t bytes);
/* denied_hosts and upstream_errors of a result's structuredContent. */
void mcp_write_egress(oci_jw *w, const mcp_run_result *res);
/* "; the egress proxy refused a:443 (...); upstream connections failed: b:443 (why)" for
 * the text of a result; "" without. */
size_t mcp_egress_text(const mcp_run_result *res, char *buf, size_t size);

/* ---- results ---- */
typedef void (*struct_fn)(oci_jw *w, const void *ctx);
void mcp_tool_error(mcp_server *srv, const mcp_rpc_id *id, const char *msg);
void mcp_tool_errorf(mcp_server *srv, const mcp_rpc_id *id, const char *fmt, ...) _printf_(3, 4);
/* structuredContent (2025-06-18 on) and the same JSON as a text block. */
void mcp_tool_structured(mcp_server *srv, const mcp_rpc_id *id, struct_fn fn, const void *ctx);
void mcp_tool_errno(mcp_server *srv, const mcp_rpc_id *id, int r, const msp_err *err,
                    const char *what);

/* ---- the audit log (tools-audit.c) ---- */
/* What a run's audit lines carry from its start to its end. */
typedef struct mcp_run_audit {
        char run_id[32];                /* "" until known */
        char code_sha256[65];
        uint64_t code_bytes;
        const char *language;           /* the engine's name */
        const char *session_id;         /* the call's copy; NULL: a fresh workspace */
        uint64_t start_usec;            /* monotonic */
        bool started;                   /* run_start written */
} mcp_run_audit;

/* An audit event naming the caller: transport, tenant, mcp_session (NULL: no audit log). */
oci_jw *mcp_audit_begin_srv(mcp_server *srv, const char *event);
/* Before the submit: the code's hash and size, the start time. */
void mcp_audit_run_prepare(mcp_run_audit *ra, const mcp_run_request *req, const char *session_id);
/* Once per run, when its id is known. */
void mcp_audit_run_start(mcp_server *srv, mcp_run_audit *ra, const mcp_run_request *req,
                         const char *run_id);
/* res NULL: cancelled or refused before the sandbox ran; reason: why, or NULL. */
void mcp_audit_run_end(mcp_server *srv, mcp_run_audit *ra, mcp_outcome o, const mcp_run_result *res,
                       const char *reason);
void mcp_audit_egress(mcp_server *srv, const char *run_id, mcp_proxy_event ev, const char *host,
                      uint16_t port, const char *reason, uint64_t up, uint64_t down);
/* A call the tenant's quota refused (reason: the tool error's text). */
void mcp_audit_refused(mcp_server *srv, const char *tool, const char *reason);
/* session_create (info) or session_close (session_id). */
void mcp_audit_session(mcp_server *srv, const char *event, const mcp_session_info *info,
                       const char *session_id, const char *reason);

/* ---- the session and file tools (tools-session.c) ---- */
void mcp_tool_session_create(mcp_server *srv, const mcp_rpc_id *id, targs *a, const mcp_rpc_id *token);
void mcp_tool_session_list(mcp_server *srv, const mcp_rpc_id *id, targs *a, const mcp_rpc_id *token);
void mcp_tool_session_close(mcp_server *srv, const mcp_rpc_id *id, targs *a, const mcp_rpc_id *token);
void mcp_tool_write_file(mcp_server *srv, const mcp_rpc_id *id, targs *a, const mcp_rpc_id *token);
void mcp_tool_read_file(mcp_server *srv, const mcp_rpc_id *id, targs *a, const mcp_rpc_id *token);
void mcp_tool_list_files(mcp_server *srv, const mcp_rpc_id *id, targs *a, const mcp_rpc_id *token);
