/* JSON-RPC 2.0 over stdio: the line decoder, the non-blocking line reader and the queued
 * writer (see jsonrpc.h). */
#include "rpc/jsonrpc.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "oci/oci.h"
#include "base/base.h"

#define READ_CHUNK (64u * 1024)
#define READS_PER_WAKEUP 16             /* then let other fds run */
#define OUT_HIGH_WATER (4u * 1024 * 1024) /* above: reading pauses, droppables are dropped */
#define OUT_LOW_WATER (256u * 1024)     /* below: reading resumes */
#define FLUSH_ON_FREE_MS 2000

/* ---- decoder ---- */

void
mcp_rpc_msg_clear(mcp_rpc_msg *msg)
{
        oci_json_doc_free(msg->doc);
        mcp_rpc_id_clear(&msg->id);
        *msg = (mcp_rpc_msg) { 0 };
}

_printf_(3, 0) static void
vfail(mcp_rpc_error *e, int code, const char *fmt, va_list ap)
{
        vsnprintf(e->message, sizeof e->message, fmt, ap);
        e->code = code;
}

_printf_(3, 4) static int
fail(mcp_rpc_error *e, int code, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        vfail(e, code, fmt, ap);
        va_end(ap);
        return -EINVAL;
}

/* fail(), with the id salvage_id() finds in the refused line. */
_printf_(5, 6) static int
salvaged(mcp_rpc_error *e, const char *line, size_t len, int code, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        vfail(e, code, fmt, ap);
        va_end(ap);
        mcp_rpc_id_salvage(line, len, &e->id);
        return -EINVAL;
}

int
mcp_rpc_decode(const char *line, size_t len, size_t max_bytes, mcp_rpc_msg *ret,
               mcp_rpc_error *e)
{
        *ret = (mcp_rpc_msg) { 0 };
        *e = (mcp_rpc_error) { .id.kind = MCP_ID_NONE };

        /* JSON allows surrounding whitespace; a line of only whitespace is skipped. */
        while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == ' ' || line[len - 1] == '\t'))
                len--;
        size_t lead = 0;
        while (lead < len && (line[lead] == ' ' || line[lead] == '\t'))
                lead++;
        if (lead == len)
                return -ENODATA;
        if (len > max_bytes)
                return salvaged(e, line, len, MCP_RPC_INVALID_REQUEST,
                                "Invalid request: message too large (%zu bytes, limit %zu)", len,
                                max_bytes);

        /* Strict UTF-8 (no overlong forms, surrogates or NUL bytes) before the parser,
         * which takes both: nothing invalid may reach a reply. The message never quotes
         * the line. */
        size_t valid = mcp_utf8_valid_len(line, len);
        if (valid < len)
                return salvaged(e, line, len, MCP_RPC_PARSE_ERROR,
                                "Parse error: invalid UTF-8 at byte %zu", valid);

        msp_err err = { 0 };
        _cleanup_json_doc_ oci_json_doc *doc = NULL;
        int r = oci_json_parse_limits("message", line, len, max_bytes, max_bytes, &doc, &err);
        if (r == -ENOMEM)
                return fail(e, MCP_RPC_INTERNAL_ERROR, "Internal error: out of memory");
        if (r == -E2BIG)
                return salvaged(e, line, len, MCP_RPC_INVALID_REQUEST, "Invalid request: %s",
                                err.msg);
        if (r < 0)
                return salvaged(e, line, len, MCP_RPC_PARSE_ERROR, "Parse error: %s", err.msg);

        const oci_json *root = oci_json_doc_root(doc);
        if (oci_json_type_of(root) == OCI_JSON_ARRAY)
                return fail(e, MCP_RPC_INVALID_REQUEST, "Invalid request: batches are not supported");
        if (oci_json_type_of(root) != OCI_JSON_OBJECT)
                return fail(e, MCP_RPC_INVALID_REQUEST, "Invalid request: a message must be a JSON object");

        const oci_json *idv = oci_json_get(root, "id");
        mcp_rpc_id id = { .kind = MCP_ID_NONE };
        if (idv) {
                r = mcp_rpc_id_from_json(idv, &id);
                if (r == -ENOMEM)
                        return fail(e, MCP_RPC_INTERNAL_ERROR, "Internal error: out of memory");
                if (r < 0)
                        return fail(e, MCP_RPC_INVALID_REQUEST,
                                    "Invalid request: id must be a string or an integer%s",
                                    oci_json_type_of(idv) == OCI_JSON_NULL ? ", not null" : "");
        }
        /* From here on errors carry the id. */
        e->id = id;

        const oci_json *ver = oci_json_get(root, "jsonrpc");
        if (!ver || !oci_json_string(ver) || strcmp(oci_json_string(ver), "2.0") != 0)
                return fail(e, MCP_RPC_INVALID_REQUEST, "Invalid request: jsonrpc must be \"2.0\"");

        const oci_json *method = oci_json_get(root, "method");
        if (!method) {
                /* A response to a request of ours: we send none, so it is dropped. */
                if (idv && (oci_json_get(root, "result") || oci_json_get(root, "error"))) {
                        ret->doc = TAKE_PTR(doc);
                        ret->id = id;
                        e->id = (mcp_rpc_id) { .kind = MCP_ID_NONE };
                        return 0;
                }
                return fail(e, MCP_RPC_INVALID_REQUEST, "Invalid request: method missing");
        }
        if (!oci_json_string(method))
                return fail(e, MCP_RPC_INVALID_REQUEST, "Invalid request: method must be a string");

        const oci_json *params = oci_json_get(root, "params");
        if (params && oci_json_type_of(params) != OCI_JSON_OBJECT)
                return fail(e, MCP_RPC_INVALID_REQUEST, "Invalid request: params must be an object");

        ret->id = id;
        e->id = (mcp_rpc_id) { .kind = MCP_ID_NONE };
        ret->method = oci_json_string(method);
        ret->params = params;
        ret->doc = TAKE_PTR(doc);
        return 0;
}

/* ---- transport ---- */

struct mcp_rpc {
        mcp_loop *loop;
        int in_fd, out_fd;
        size_t max_message;
        mcp_rpc_msg_fn on_msg;
        mcp_rpc_eof_fn on_eof;
        mcp_rpc_sink_fn sink;           /* set: no fds, every message goes to it */
        void *data;

        char *ibuf;
        size_t ilen, icap;
        size_t iscan;                   /* bytes of ibuf known to hold no newline */
        bool skipping;                  /* inside an over-long line: discard to its end */
        mcp_rpc_id_stream skip_id;      /* ... watching it go by for its id */
        bool in_epoll;                  /* else a regular file read from a timer */
        mcp_timer *in_timer;
        bool paused, in_eof, eof_reported;
        char why[96];                   /* what ended the stream */

        char *obuf;
        size_t olen, ooff, ocap;
        bool out_epoll, out_watching;
        int in_flags, out_flags;        /* restored on free: the fds share their file
                                         * descriptions with the parent (a terminal) */
};

const char *
mcp_rpc_eof_reason(const mcp_rpc *rpc)
{
        return rpc->why[0] ? rpc->why : "end of input";
}

size_t
mcp_rpc_queued(const mcp_rpc *rpc)
{
        return rpc->olen - rpc->ooff;
}

static void
report_eof(mcp_rpc *rpc)
{
        if (rpc->eof_reported)
                return;
        rpc->eof_reported = true;
        if (rpc->on_eof)
                rpc->on_eof(rpc, rpc->data);
}

static int
queue_line(mcp_rpc *rpc, const char *json, size_t len)
{
        if (rpc->ooff > 0 && rpc->ooff == rpc->olen)
                rpc->ooff = rpc->olen = 0;
        if (rpc->olen + len + 1 > rpc->ocap) {
                if (rpc->ooff > 0) {
                        memmove(rpc->obuf, rpc->obuf + rpc->ooff, rpc->olen - rpc->ooff);
                        rpc->olen -= rpc->ooff;
                        rpc->ooff = 0;
                }
                size_t want = rpc->olen + len + 1;
                if (want > rpc->ocap) {
                        size_t cap = rpc->ocap ? rpc->ocap : 4096;
                        while (cap < want)
                                cap *= 2;
                        char *p = realloc(rpc->obuf, cap);
                        if (!p)
                                return -ENOMEM;
                        rpc->obuf = p;
                        rpc->ocap = cap;
                }
        }
        memcpy(rpc->obuf + rpc->olen, json, len);
        rpc->obuf[rpc->olen + len] = '\n';
        rpc->olen += len + 1;
        return 0;
}

static void resume_input(mcp_rpc *rpc);

/* Writes as much as the fd takes now; watches EPOLLOUT for the rest. */
static void
flush_out(mcp_rpc *rpc)
{
        while (rpc->ooff < rpc->olen) {
                ssize_t n = write(rpc->out_fd, rpc->obuf + rpc->ooff, rpc->olen - rpc->ooff);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0 && errno == EAGAIN)
                        break;
                if (n <= 0) {
                        /* The client is gone (EPIPE) or the fd broke: nothing more can be said. */
                        snprintf(rpc->why, sizeof rpc->why, "writing to the client: %s",
                                 n < 0 ? strerror(errno) : "nothing written");
                        rpc->ooff = rpc->olen = 0;
                        report_eof(rpc);
                        return;
                }
                rpc->ooff += (size_t) n;
        }
        bool pending = rpc->ooff < rpc->olen;
        if (rpc->out_epoll && pending != rpc->out_watching) {
                if (mcp_loop_mod_io(rpc->loop, rpc->out_fd, pending ? EPOLLOUT : 0) == 0)
                        rpc->out_watching = pending;
        }
        if (!pending)
                rpc->ooff = rpc->olen = 0;
        if (rpc->paused && mcp_rpc_queued(rpc) < OUT_LOW_WATER)
                resume_input(rpc);
}

static int
on_out(mcp_loop *loop _unused_, int fd _unused_, uint32_t events _unused_, void *data)
{
        flush_out(data);
        return 0;
}

/* One serialised message to the client: the sink's, or queued on the output fd. */
static int
deliver(mcp_rpc *rpc, const char *json, size_t len, const mcp_rpc_id *request, bool response,
        bool droppable)
{
        if (rpc->sink)
                return rpc->sink(rpc->data, json, len, request, response, droppable);
        int r = queue_line(rpc, json, len);
        if (r < 0)
                return r;
        flush_out(rpc);
        return 0;
}

int
mcp_rpc_format_error(const mcp_rpc_id *id, int code, const char *message, char **ret,
                     size_t *ret_len)
{
        _cleanup_jw_ oci_jw *w = oci_jw_new(false);
        if (!w)
                return -ENOMEM;
        oci_jw_begin_object(w);
        oci_jw_kv_string(w, "jsonrpc", "2.0");
        oci_jw_key(w, "id");
        mcp_rpc_id_write(w, id);
        oci_jw_key(w, "error");
        oci_jw_begin_object(w);
        oci_jw_kv_int64(w, "code", code);
        oci_jw_kv_string(w, "message", message);
        oci_jw_end_object(w);
        oci_jw_end_object(w);
        return oci_jw_finish(w, ret, ret_len, NULL);
}

int
mcp_rpc_send_error(mcp_rpc *rpc, const mcp_rpc_id *id, int code, const char *message)
{
        _cleanup_free_ char *json = NULL;
        size_t len;
        int r = mcp_rpc_format_error(id, code, message, &json, &len);
        if (r < 0) {
                /* The message was not UTF-8 (it quotes client input): say less. */
                r = mcp_rpc_format_error(id, code, "invalid message", &json, &len);
                if (r < 0)
                        return r;
        }
        return deliver(rpc, json, len, id, true, false);
}

oci_jw *
mcp_rpc_begin_result(const mcp_rpc_id *id)
{
        oci_jw *w = oci_jw_new(false);
        if (!w)
                return NULL;
        oci_jw_begin_object(w);
        oci_jw_kv_string(w, "jsonrpc", "2.0");
        oci_jw_key(w, "id");
        mcp_rpc_id_write(w, id);
        oci_jw_key(w, "result");
        return w;
}

oci_jw *
mcp_rpc_begin_notification(const char *method)
{
        oci_jw *w = oci_jw_new(false);
        if (!w)
                return NULL;
        oci_jw_begin_object(w);
        oci_jw_kv_string(w, "jsonrpc", "2.0");
        oci_jw_kv_string(w, "method", method);
        oci_jw_key(w, "params");
        return w;
}

static int
send_msg(mcp_rpc *rpc, oci_jw *writer, const mcp_rpc_id *id, const mcp_rpc_id *related,
         bool droppable)
{
        _cleanup_jw_ oci_jw *w = writer;       /* ours from here on */
        if (!w)
                return id ? mcp_rpc_send_error(rpc, id, MCP_RPC_INTERNAL_ERROR, "out of memory")
                          : -ENOMEM;
        if (droppable && mcp_rpc_queued(rpc) > OUT_HIGH_WATER)
                return -ENOBUFS;
        oci_jw_end_object(w);
        _cleanup_free_ char *json = NULL;
        size_t len;
        msp_err err = { 0 };
        int r = oci_jw_finish(w, &json, &len, &err);
        if (r < 0) {
                if (!id)
                        return r;
                char msg[MSP_ERR_MSG_MAX + 32];
                snprintf(msg, sizeof msg, "Internal error: %s", err.msg);
                return mcp_rpc_send_error(rpc, id, MCP_RPC_INTERNAL_ERROR, msg);
        }
        return deliver(rpc, json, len, id ? id : related, id != NULL, droppable);
}

int
mcp_rpc_send(mcp_rpc *rpc, oci_jw *w, const mcp_rpc_id *id, bool droppable)
{
        return send_msg(rpc, w, id, NULL, droppable);
}

int
mcp_rpc_send_json(mcp_rpc *rpc, const char *json, size_t len)
{
        return deliver(rpc, json, len, NULL, false, false);
}

int
mcp_rpc_notify(mcp_rpc *rpc, oci_jw *w, const mcp_rpc_id *related)
{
        return send_msg(rpc, w, NULL, related, true);
}

static void
pause_input(mcp_rpc *rpc)
{
        if (rpc->paused)
                return;
        rpc->paused = true;
        if (rpc->in_epoll && !rpc->in_eof)
                (void) mcp_loop_mod_io(rpc->loop, rpc->in_fd, 0);
}

static void
handle_line(mcp_rpc *rpc, const char *line, size_t len)
{
        mcp_rpc_msg msg;
        mcp_rpc_error e;
        int r = mcp_rpc_decode(line, len, rpc->max_message, &msg, &e);
        if (r == -ENODATA)
                return;
        if (r < 0) {
                (void) mcp_rpc_send_error(rpc, &e.id, e.code, e.message);
                mcp_rpc_id_clear(&e.id);
                return;
        }
        if (!msg.method) {
                mcp_rpc_msg_clear(&msg);
                return;
        }
        rpc->on_msg(rpc, &msg, rpc->data);
}

/* Handles the complete lines in ibuf while the output has room. */
static void
process_lines(mcp_rpc *rpc)
{
        size_t start = 0, scan = rpc->iscan;
        while (!rpc->paused && !rpc->eof_reported && !mcp_loop_exiting(rpc->loop)) {
                char *nl = memchr(rpc->ibuf + scan, '\n', rpc->ilen - scan);
                if (!nl) {
                        scan = rpc->ilen;
                        break;
                }
                size_t end = (size_t) (nl - rpc->ibuf);
                handle_line(rpc, rpc->ibuf + start, end - start);
                start = scan = end + 1;
                if (mcp_rpc_queued(rpc) > OUT_HIGH_WATER)
                        pause_input(rpc);
        }
        if (start > 0) {
                memmove(rpc->ibuf, rpc->ibuf + start, rpc->ilen - start);
                rpc->ilen -= start;
        }
        rpc->iscan = scan - start;
        /* A big message went through: give its memory back. */
        if (rpc->icap > 4 * READ_CHUNK && rpc->ilen < READ_CHUNK) {
                char *p = realloc(rpc->ibuf, 2 * READ_CHUNK);
                if (p) {
                        rpc->ibuf = p;
                        rpc->icap = 2 * READ_CHUNK;
                }
        }
}

static void too_long(mcp_rpc *rpc);

static void
finish_input(mcp_rpc *rpc)
{
        /* An over-long last line without a newline still gets its error. */
        if (rpc->skipping && !rpc->eof_reported) {
                rpc->skipping = false;
                too_long(rpc);
        }
        /* A last line without a newline is still a message. */
        if (!rpc->paused && !rpc->skipping && rpc->ilen > 0 && !rpc->eof_reported) {
                handle_line(rpc, rpc->ibuf, rpc->ilen);
                rpc->ilen = rpc->iscan = 0;
        }
        if (!rpc->paused)
                report_eof(rpc);
}

/* The error for the over-long line just skipped, with its id when the line showed one,
 * so that the client's request fails at once instead of at its timeout. */
static void
too_long(mcp_rpc *rpc)
{
        char msg[160];
        snprintf(msg, sizeof msg, "Invalid request: message too large (more than %zu bytes)",
                 rpc->max_message);
        mcp_rpc_id id;
        mcp_rpc_id_stream_end(&rpc->skip_id, &id);
        (void) mcp_rpc_send_error(rpc, &id, MCP_RPC_INVALID_REQUEST, msg);
        mcp_rpc_id_clear(&id);
}

/* From here to the next newline the line is discarded, watched only for its id. */
static void
start_skipping(mcp_rpc *rpc, const char *seen, size_t n)
{
        rpc->skip_id = (mcp_rpc_id_stream) { 0 };
        mcp_rpc_id_stream_feed(&rpc->skip_id, seen, n);
        rpc->ilen = rpc->iscan = 0;
        rpc->skipping = true;
}

/* Takes in one chunk: skips over-long lines, keeps the rest for process_lines(). */
static int
absorb(mcp_rpc *rpc, const char *buf, size_t n)
{
        if (rpc->skipping) {
                const char *nl = memchr(buf, '\n', n);
                mcp_rpc_id_stream_feed(&rpc->skip_id, buf, nl ? (size_t) (nl - buf) : n);
                if (!nl)
                        return 0;
                rpc->skipping = false;
                too_long(rpc);
                size_t used = (size_t) (nl - buf) + 1;
                buf += used;
                n -= used;
        }
        if (rpc->ilen + n > rpc->icap) {
                size_t cap = rpc->icap ? rpc->icap : READ_CHUNK;
                while (cap < rpc->ilen + n)
                        cap *= 2;
                char *p = realloc(rpc->ibuf, cap);
                if (!p)
                        return -ENOMEM;
                rpc->ibuf = p;
                rpc->icap = cap;
        }
        memcpy(rpc->ibuf + rpc->ilen, buf, n);
        rpc->ilen += n;
        process_lines(rpc);
        /* The unfinished line alone is over the limit: drop it and skip to its end. */
        if (!rpc->paused && rpc->ilen > rpc->max_message + 2)
                start_skipping(rpc, rpc->ibuf, rpc->ilen);
        return 0;
}

/* Reads what is available; returns true at EOF. */
static bool
read_some(mcp_rpc *rpc)
{
        char buf[READ_CHUNK];
        for (int i = 0; i < READS_PER_WAKEUP && !rpc->paused && !rpc->eof_reported; i++) {
                ssize_t n = read(rpc->in_fd, buf, sizeof buf);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0 && errno == EAGAIN)
                        return false;
                if (n <= 0) {
                        snprintf(rpc->why, sizeof rpc->why, "%s",
                                 n < 0 ? strerror(errno) : "end of input");
                        return true;
                }
                if (absorb(rpc, buf, (size_t) n) < 0) {
                        mcp_rpc_id none = { .kind = MCP_ID_NONE };
                        (void) mcp_rpc_send_error(rpc, &none, MCP_RPC_INTERNAL_ERROR,
                                                  "Internal error: out of memory");
                        start_skipping(rpc, NULL, 0);
                        rpc->skip_id.bad = true;        /* its error is sent already */
                }
        }
        return false;
}

static void
input_eof(mcp_rpc *rpc)
{
        if (rpc->in_eof)
                return;
        rpc->in_eof = true;
        if (rpc->in_epoll)
                mcp_loop_del_io(rpc->loop, rpc->in_fd);
        finish_input(rpc);
}

static int
on_in(mcp_loop *loop _unused_, int fd _unused_, uint32_t events _unused_, void *data)
{
        mcp_rpc *rpc = data;
        if (read_some(rpc))
                input_eof(rpc);
        return 0;
}

static int on_in_timer(mcp_loop *loop, void *data);

static void
schedule_file_read(mcp_rpc *rpc)
{
        if (!rpc->in_timer && !rpc->in_eof && !rpc->paused)
                (void) mcp_loop_add_timer(rpc->loop, 0, on_in_timer, rpc, &rpc->in_timer);
}

/* A regular file cannot be polled: it is read a chunk at a time from a zero timer. */
static int
on_in_timer(mcp_loop *loop _unused_, void *data)
{
        mcp_rpc *rpc = data;
        rpc->in_timer = NULL;
        if (read_some(rpc))
                input_eof(rpc);
        else
                schedule_file_read(rpc);
        return 0;
}

static void
resume_input(mcp_rpc *rpc)
{
        rpc->paused = false;
        process_lines(rpc);
        if (rpc->paused)
                return;
        if (rpc->in_eof) {
                finish_input(rpc);
                return;
        }
        if (rpc->in_epoll)
                (void) mcp_loop_mod_io(rpc->loop, rpc->in_fd, EPOLLIN);
        else
                schedule_file_read(rpc);
}

static int
set_nonblock(int fd, int *ret_flags)
{
        int fl = fcntl(fd, F_GETFL);
        if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
                return -errno;
        *ret_flags = fl;
        return 0;
}

int
mcp_rpc_new(mcp_loop *loop, int in_fd, int out_fd, size_t max_message, mcp_rpc_msg_fn on_msg,
            mcp_rpc_eof_fn on_eof, void *data, mcp_rpc **ret)
{
        mcp_rpc *rpc = calloc(1, sizeof *rpc);
        if (!rpc)
                return -ENOMEM;
        *rpc = (mcp_rpc) { .loop = loop, .in_fd = in_fd, .out_fd = out_fd,
                           .max_message = max_message, .on_msg = on_msg, .on_eof = on_eof,
                           .data = data };
        int r = set_nonblock(in_fd, &rpc->in_flags);
        if (r == 0)
                r = set_nonblock(out_fd, &rpc->out_flags);
        if (r < 0) {
                free(rpc);
                return r;
        }
        r = mcp_loop_add_io(loop, in_fd, EPOLLIN, on_in, rpc);
        if (r == 0)
                rpc->in_epoll = true;
        else if (r == -EPERM)
                schedule_file_read(rpc);
        else {
                free(rpc);
                return r;
        }
        /* Registered with no events until a write would block; a regular file never does. */
        r = mcp_loop_add_io(loop, out_fd, 0, on_out, rpc);
        if (r == 0)
                rpc->out_epoll = true;
        else if (r != -EPERM) {
                mcp_rpc_free(rpc);
                return r;
        }
        *ret = rpc;
        return 0;
}

int
mcp_rpc_new_sink(mcp_loop *loop, size_t max_message, mcp_rpc_sink_fn sink, void *data,
                 mcp_rpc **ret)
{
        mcp_rpc *rpc = calloc(1, sizeof *rpc);
        if (!rpc)
                return -ENOMEM;
        *rpc = (mcp_rpc) { .loop = loop, .in_fd = -1, .out_fd = -1, .max_message = max_message,
                           .sink = sink, .data = data };
        *ret = rpc;
        return 0;
}

mcp_rpc *
mcp_rpc_free(mcp_rpc *rpc)
{
        if (!rpc)
                return NULL;
        if (rpc->sink) {
                free(rpc);
                return NULL;
        }
        if (rpc->in_epoll && !rpc->in_eof)
                mcp_loop_del_io(rpc->loop, rpc->in_fd);
        if (rpc->in_timer)
                mcp_timer_cancel(rpc->loop, rpc->in_timer);
        if (rpc->out_epoll)
                mcp_loop_del_io(rpc->loop, rpc->out_fd);
        /* What is queued is written within a bounded time: a client that stopped reading
         * must not keep the server alive. */
        uint64_t deadline = mcp_now_usec() + FLUSH_ON_FREE_MS * 1000ull;
        while (rpc->ooff < rpc->olen) {
                ssize_t n = write(rpc->out_fd, rpc->obuf + rpc->ooff, rpc->olen - rpc->ooff);
                if (n > 0) {
                        rpc->ooff += (size_t) n;
                        continue;
                }
                if (n < 0 && errno == EINTR)
                        continue;
                uint64_t now = mcp_now_usec();
                if (n == 0 || errno != EAGAIN || now >= deadline)
                        break;
                struct pollfd p = { .fd = rpc->out_fd, .events = POLLOUT };
                (void) poll(&p, 1, (int) ((deadline - now) / 1000) + 1);
        }
        (void) fcntl(rpc->in_fd, F_SETFL, rpc->in_flags);
        (void) fcntl(rpc->out_fd, F_SETFL, rpc->out_flags);
        free(rpc->ibuf);
        free(rpc->obuf);
        free(rpc);
        return NULL;
}
