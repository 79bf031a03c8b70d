/* What every tool uses: the limits of the tools' arguments (the readers check them, the
 * schemas advertise them), the argument readers (every bad argument is a tool result with
 * isError naming the field, the value and the limit: SEP-1303), and the tool results:
 * errors, a structured result, a refusal by the transport's admission check. Owner:
 * tools-args.c. */
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

/* ---- argument readers: 1 set, 0 absent, < 0 with a->msg naming field, value, limit ---- */
/* The argument error: a->msg from FMT; returns -EINVAL. */
int mcp_arg_bad(targs *a, const char *fmt, ...) _printf_(2, 3);
/* The value of key; NULL when absent or null (clients send null for an optional one). */
const oci_json *mcp_arg_get(targs *a, const char *key);
/* v for a message ("a string", "42", ...), in buf. */
const char *mcp_arg_describe(const oci_json *v, char *buf, size_t size);
/* -EINVAL when a has a key not in args (NULL-terminated); what names the taker of the
 * arguments in the message ("run_code", "a file"). */
int mcp_arg_unknown(targs *a, const char *what, const char *const *args);
int mcp_arg_str(targs *a, const char *key, bool req, size_t max, const char **ret);
int mcp_arg_uint(targs *a, const char *key, uint64_t min, uint64_t max, uint64_t *ret);
int mcp_arg_bool(targs *a, const char *key, bool *ret);
int mcp_arg_enum(targs *a, const char *key, bool req, const char *const *values, const char **ret);
/* timeout_ms, memory_mb, pids, cpus; 0 fields when absent. */
int mcp_arg_limits(targs *a, const mcp_config *cfg, mcp_limits *l);
/* content decoded by encoding (utf8, base64); *ret_buf owns a decoding. */
int mcp_arg_content(targs *a, const char *field, const char *content, const char *encoding,
                    size_t max, const char **ret, size_t *ret_len, unsigned char **ret_buf);

/* ---- results ---- */
typedef void (*struct_fn)(oci_jw *w, const void *ctx);
void mcp_tool_error(mcp_server *srv, const mcp_rpc_id *id, const char *msg);
void mcp_tool_errorf(mcp_server *srv, const mcp_rpc_id *id, const char *fmt, ...) _printf_(3, 4);
/* structuredContent (2025-06-18 on) and the same JSON as a text block. */
void mcp_tool_structured(mcp_server *srv, const mcp_rpc_id *id, struct_fn fn, const void *ctx);
void mcp_tool_errno(mcp_server *srv, const mcp_rpc_id *id, int r, const msp_err *err,
                    const char *what);
/* The admission policy the transport installed on srv (srv->admit, server.h; none: all is
 * admitted): 0, or < 0 once its refusal is audited and sent as a tool error for id. */
int mcp_tool_admit(mcp_server *srv, const mcp_rpc_id *id, mcp_admit what);
