/* JSON-RPC 2.0 over stdio, one message a line. Owner: jsonrpc.c.
 *
 * The decoder (mcp_rpc_decode) is a pure function: one line in, a validated message or
 * the JSON-RPC error to answer out (it is what the fuzzer drives). The transport reads
 * stdin without blocking, skips over-long lines without buffering them, hands each valid
 * message to a callback and answers invalid ones itself; its writer serialises every
 * message into one line and queues output so that a slow client never blocks the loop
 * (reading stops while the queue is above its high-water mark). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "oci/oci.h"
#include "base/base.h"

#define MCP_RPC_PARSE_ERROR     (-32700)
#define MCP_RPC_INVALID_REQUEST (-32600)
#define MCP_RPC_METHOD_NOT_FOUND (-32601)
#define MCP_RPC_INVALID_PARAMS  (-32602)
#define MCP_RPC_INTERNAL_ERROR  (-32603)
#define MCP_RPC_RESOURCE_NOT_FOUND (-32002)
#define MCP_RPC_SERVER_ERROR    (-32000)        /* JSON-RPC's implementation-defined range: a quota */

typedef enum mcp_rpc_id_kind { MCP_ID_NONE, MCP_ID_INT, MCP_ID_STR } mcp_rpc_id_kind;

/* A request id or a progress token: an integer or a string (owned). */
typedef struct mcp_rpc_id {
        mcp_rpc_id_kind kind;
        int64_t num;
        char *str;
} mcp_rpc_id;

int mcp_rpc_id_copy(mcp_rpc_id *dst, const mcp_rpc_id *src);
void mcp_rpc_id_clear(mcp_rpc_id *id);
bool mcp_rpc_id_equal(const mcp_rpc_id *a, const mcp_rpc_id *b);
/* From a JSON value: 0 for an integer or a string, -EINVAL otherwise (null included). */
int mcp_rpc_id_from_json(const oci_json *v, mcp_rpc_id *ret);
/* The requestId of a notifications/cancelled's params (NULL when absent): as above, and
 * -EINVAL without one. */
int mcp_rpc_cancelled_id(const oci_json *params, mcp_rpc_id *ret);
/* Writes the id (null for MCP_ID_NONE). */
void mcp_rpc_id_write(oci_jw *w, const mcp_rpc_id *id);
/* The request's id in a line the parser refused (a limit, a \u0000, invalid UTF-8, bad
 * syntax inside a value) when it still shows one: a closed top-level object with exactly
 * one "id" member, an integer or a string of printable UTF-8 without escapes. Otherwise
 * *ret is left MCP_ID_NONE, as JSON-RPC wants when the id cannot be determined. */
void mcp_rpc_id_salvage(const char *line, size_t len, mcp_rpc_id *ret);

/* The same for a line too long to keep: fed in pieces as they stream past, it follows
 * the top level only (strings, escapes and nesting tracked byte by byte) and keeps the
 * raw value of each top-level "id" member, so that the id is found wherever it stands
 * (the SDK writes it last). mcp_rpc_id_stream_end gives the id when exactly one member
 * was seen and its value is one mcp_rpc_id_salvage accepts, else MCP_ID_NONE. */
typedef struct mcp_rpc_id_stream {
        int64_t depth;                  /* nesting outside strings; 1: the message object */
        bool in_str, esc, bad;
        bool key_next;                  /* at depth 1, the next string is a member name */
        bool in_key, in_value;          /* reading a top-level name, the "id" value */
        bool after_id_key;              /* the name just read is "id": its value follows */
        unsigned ids;                   /* top-level "id" members seen */
        char key[4];
        size_t key_len;
        char value[64];
        size_t value_len;
} mcp_rpc_id_stream;

void mcp_rpc_id_stream_feed(mcp_rpc_id_stream *s, const char *buf, size_t n);
void mcp_rpc_id_stream_end(const mcp_rpc_id_stream *s, mcp_rpc_id *ret);

typedef struct mcp_rpc_msg {
        oci_json_doc *doc;              /* owns everything below */
        mcp_rpc_id id;                  /* MCP_ID_NONE: a notification */
        const char *method;             /* NULL for a response sent by the client */
        const oci_json *params;         /* an object, or NULL when absent */
} mcp_rpc_msg;

void mcp_rpc_msg_clear(mcp_rpc_msg *msg);

typedef struct mcp_rpc_error {
        int code;
        mcp_rpc_id id;                  /* the request's id when it could be read, else none */
        char message[256];
} mcp_rpc_error;

/* 0 and *ret filled; or < 0 with *ret_err filled (and its id owned by it: clear it). A
 * blank line is -ENODATA with no error to send. */
int mcp_rpc_decode(const char *line, size_t len, size_t max_bytes, mcp_rpc_msg *ret,
                   mcp_rpc_error *ret_err);

/* ---- transport ---- */

typedef struct mcp_rpc mcp_rpc;

/* Called for each valid message; msg is the callee's (clear it). */
typedef void (*mcp_rpc_msg_fn)(mcp_rpc *rpc, mcp_rpc_msg *msg, void *data);
/* Called once on EOF of the input or when the output is gone (EPIPE). */
typedef void (*mcp_rpc_eof_fn)(mcp_rpc *rpc, void *data);

int mcp_rpc_new(mcp_loop *loop, int in_fd, int out_fd, size_t max_message, mcp_rpc_msg_fn on_msg,
                mcp_rpc_eof_fn on_eof, void *data, mcp_rpc **ret);
/* The transport of one HTTP session (http.c): no fds; the caller decodes what arrives and
 * every message the server sends goes to sink, serialised. request: a response's id, or
 * the request a notification belongs to (NULL: none). A sink may drop a droppable
 * notification (-ENOBUFS). */
typedef int (*mcp_rpc_sink_fn)(void *data, const char *json, size_t len,
                               const mcp_rpc_id *request, bool response, bool droppable);
int mcp_rpc_new_sink(mcp_loop *loop, size_t max_message, mcp_rpc_sink_fn sink, void *data,
                     mcp_rpc **ret);
/* Writes what is queued (bounded wait), then frees. The fds are not closed. */
mcp_rpc *mcp_rpc_free(mcp_rpc *rpc);

/* A writer positioned at the value of "result" (response) or "params" (notification).
 * NULL on allocation failure. */
oci_jw *mcp_rpc_begin_result(const mcp_rpc_id *id);
oci_jw *mcp_rpc_begin_notification(const char *method);
/* Closes the message and queues it; frees w. A response whose writer failed (e.g. a
 * string that is not UTF-8) is replaced by an internal error for the same id.
 * droppable: a notification that may be skipped when the output queue is full
 * (-ENOBUFS then). */
int mcp_rpc_send(mcp_rpc *rpc, oci_jw *w, const mcp_rpc_id *id, bool droppable);
/* A droppable notification that belongs to the request related (a call's progress). */
int mcp_rpc_notify(mcp_rpc *rpc, oci_jw *w, const mcp_rpc_id *related);
int mcp_rpc_send_error(mcp_rpc *rpc, const mcp_rpc_id *id, int code, const char *message);
/* A serialised message of no request (a notification without params), as it is. */
int mcp_rpc_send_json(mcp_rpc *rpc, const char *json, size_t len);
/* Why on_eof was called: "end of input", "writing to the client: Broken pipe", ... */
const char *mcp_rpc_eof_reason(const mcp_rpc *rpc);
/* Bytes queued and not written yet. */
size_t mcp_rpc_queued(const mcp_rpc *rpc);

/* Serialises an error response into one line (no newline); shared by the transport and
 * the tests. */
int mcp_rpc_format_error(const mcp_rpc_id *id, int code, const char *message, char **ret,
                         size_t *ret_len);

static inline void
mcp_rpc_msg_clearp(mcp_rpc_msg *m)
{
        mcp_rpc_msg_clear(m);
}
#define _cleanup_rpc_msg_ __attribute__((cleanup(mcp_rpc_msg_clearp)))
