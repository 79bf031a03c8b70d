/* mcp-adapter/rpc/jsonrpc.c: every class of malformed input gets the right JSON-RPC error
 * (and the request's id when it can be read); the transport skips an over-long line,
 * answers the next one, writes one line per message and never blocks on a full pipe. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "tests/lib/tap.h"
#include "tests/lib/loop-deadline.h"
#include "rpc/jsonrpc.h"
#include "base/text.h"
#include "oci/macros.h"

#define MAX 4096

typedef struct decode_case {
        const char *name;
        const char *line;
        int code;                       /* 0: valid; 1: blank (skipped) */
        const char *id;                 /* expected id of the error or message: "5", "\"a\"", NULL */
} decode_case;

static const decode_case cases[] = {
        { "request with an integer id", "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\"}", 0, "5" },
        { "request with a string id", "{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"x\",\"params\":{}}", 0, "\"a\"" },
        { "notification", "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", 0, NULL },
        { "negative id", "{\"jsonrpc\":\"2.0\",\"id\":-3,\"method\":\"ping\"}", 0, "-3" },
        { "surrounding whitespace and CR", "  {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"} \r", 0, "1" },
        { "a response from the client", "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}", 0, "1" },
        { "blank line", "   \r", 1, NULL },
        { "not JSON", "hello", MCP_RPC_PARSE_ERROR, NULL },
        { "truncated JSON", "{\"jsonrpc\":\"2.0\",\"id\":1", MCP_RPC_PARSE_ERROR, NULL },
        { "trailing garbage", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"} x", MCP_RPC_PARSE_ERROR, NULL },
        { "duplicate key", "{\"jsonrpc\":\"2.0\",\"id\":1,\"id\":2,\"method\":\"ping\"}", MCP_RPC_PARSE_ERROR, NULL },
        { "escaped NUL", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\\u0000\"}", MCP_RPC_PARSE_ERROR, "1" },
        { "escaped NUL in params", "{\"jsonrpc\":\"2.0\",\"method\":\"p\",\"params\":{\"a\":[\"\\u0000\"]},\"id\":\"n\"}", MCP_RPC_PARSE_ERROR, "\"n\"" },
        { "invalid UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\xfe\"}", MCP_RPC_PARSE_ERROR, "1" },
        { "overlong '/'", "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"\xc0\xaf\"}", MCP_RPC_PARSE_ERROR, "2" },
        { "overlong NUL", "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"a\xc0\x80\"}", MCP_RPC_PARSE_ERROR, "2" },
        { "overlong 3-byte", "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"\xe0\x80\xaf\"}", MCP_RPC_PARSE_ERROR, "2" },
        { "UTF-16 surrogate", "{\"jsonrpc\":\"2.0\",\"id\":\"s\",\"method\":\"\xed\xa0\x80\"}", MCP_RPC_PARSE_ERROR, "\"s\"" },
        { "beyond U+10FFFF", "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"\xf4\x90\x80\x80\"}", MCP_RPC_PARSE_ERROR, "2" },
        { "invalid UTF-8 in the id", "{\"jsonrpc\":\"2.0\",\"id\":\"\xc0\xaf\",\"method\":\"x\"}", MCP_RPC_PARSE_ERROR, NULL },
        { "a lone backslash at the end", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\\", MCP_RPC_PARSE_ERROR, NULL },
        { "an escaped quote before the id", "{\"jsonrpc\":\"2.0\",\"method\":\"a\\\"}\",\"params\":{\"x\":\"\\u0000\"},\"id\":6}", MCP_RPC_PARSE_ERROR, "6" },
        { "truncated after a NUL", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\\u0000\"", MCP_RPC_PARSE_ERROR, NULL },
        { "comment", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"} // c", MCP_RPC_PARSE_ERROR, NULL },
        { "batch", "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]", MCP_RPC_INVALID_REQUEST, NULL },
        { "empty batch", "[]", MCP_RPC_INVALID_REQUEST, NULL },
        { "a number", "42", MCP_RPC_INVALID_REQUEST, NULL },
        { "a string", "\"ping\"", MCP_RPC_INVALID_REQUEST, NULL },
        { "null", "null", MCP_RPC_INVALID_REQUEST, NULL },
        { "jsonrpc missing", "{\"id\":7,\"method\":\"ping\"}", MCP_RPC_INVALID_REQUEST, "7" },
        { "jsonrpc 1.0", "{\"jsonrpc\":\"1.0\",\"id\":7,\"method\":\"ping\"}", MCP_RPC_INVALID_REQUEST, "7" },
        { "jsonrpc a number", "{\"jsonrpc\":2.0,\"id\":\"q\",\"method\":\"ping\"}", MCP_RPC_INVALID_REQUEST, "\"q\"" },
        { "id null", "{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}", MCP_RPC_INVALID_REQUEST, NULL },
        { "id fractional", "{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}", MCP_RPC_INVALID_REQUEST, NULL },
        { "id exponent", "{\"jsonrpc\":\"2.0\",\"id\":1e3,\"method\":\"ping\"}", MCP_RPC_INVALID_REQUEST, NULL },
        { "id beyond int64", "{\"jsonrpc\":\"2.0\",\"id\":99999999999999999999,\"method\":\"ping\"}", MCP_RPC_INVALID_REQUEST, NULL },
        { "id boolean", "{\"jsonrpc\":\"2.0\",\"id\":true,\"method\":\"ping\"}", MCP_RPC_INVALID_REQUEST, NULL },
        { "id object", "{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"ping\"}", MCP_RPC_INVALID_REQUEST, NULL },
        { "method missing", "{\"jsonrpc\":\"2.0\",\"id\":8}", MCP_RPC_INVALID_REQUEST, "8" },
        { "method a number", "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":1}", MCP_RPC_INVALID_REQUEST, "8" },
        { "params an array", "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"x\",\"params\":[1]}", MCP_RPC_INVALID_REQUEST, "9" },
        { "params a string", "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"x\",\"params\":\"p\"}", MCP_RPC_INVALID_REQUEST, "9" },
        { "params null", "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"x\",\"params\":null}", MCP_RPC_INVALID_REQUEST, "9" },
};

static void
id_text(const mcp_rpc_id *id, char *buf, size_t size)
{
        if (id->kind == MCP_ID_INT)
                snprintf(buf, size, "%" PRId64, id->num);
        else if (id->kind == MCP_ID_STR)
                snprintf(buf, size, "\"%s\"", id->str);
        else
                buf[0] = '\0';
}

TEST(decode_table)
{
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                const decode_case *c = &cases[i];
                mcp_rpc_msg msg;
                mcp_rpc_error e;
                int r = mcp_rpc_decode(c->line, strlen(c->line), MAX, &msg, &e);
                char got[64];
                bool ok;
                if (c->code == 0) {
                        id_text(&msg.id, got, sizeof got);
                        ok = r == 0 && strcmp(got, c->id ? c->id : "") == 0;
                        if (!ok)
                                tap_diag("r=%d code=%d message=%s id=%s", r, e.code, e.message, got);
                        mcp_rpc_msg_clear(&msg);
                } else if (c->code == 1) {
                        ok = r == -ENODATA;
                } else {
                        id_text(&e.id, got, sizeof got);
                        ok = r < 0 && e.code == c->code && strcmp(got, c->id ? c->id : "") == 0 &&
                             e.message[0];
                        if (!ok)
                                tap_diag("r=%d code=%d (want %d) id=%s message=%s", r, e.code,
                                         c->code, got, e.message);
                        mcp_rpc_id_clear(&e.id);
                }
                tap_check(ok, "decode: %s", c->name);
        }
}

TEST(decode_fields)
{
        const char *line = "{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"method\":\"tools/call\",\"params\":{\"name\":\"n\"}}";
        _cleanup_rpc_msg_ mcp_rpc_msg msg = { 0 };
        mcp_rpc_error e;
        ASSERT_OK(mcp_rpc_decode(line, strlen(line), MAX, &msg, &e));
        ASSERT_STREQ(msg.method, "tools/call");
        ASSERT_NOT_NULL(msg.params);
        ASSERT_STREQ(oci_json_string(oci_json_get(msg.params, "name")), "n");
}

TEST(decode_too_large)
{
        char line[MAX + 100];
        memset(line, ' ', sizeof line);
        memcpy(line, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":{\"a\":\"", 52);
        line[sizeof line - 3] = '"';
        line[sizeof line - 2] = '}';
        line[sizeof line - 1] = '}';
        mcp_rpc_msg msg;
        mcp_rpc_error e;
        ASSERT_TRUE(mcp_rpc_decode(line, sizeof line, MAX, &msg, &e) < 0);
        ASSERT_EQ_INT(e.code, MCP_RPC_INVALID_REQUEST);
        ASSERT_TRUE(strstr(e.message, "too large") != NULL);
}

TEST(decode_too_deep)
{
        char line[600];
        size_t n = 0;
        for (int i = 0; i < 200; i++)
                line[n++] = '[';
        for (int i = 0; i < 200; i++)
                line[n++] = ']';
        mcp_rpc_msg msg;
        mcp_rpc_error e;
        ASSERT_TRUE(mcp_rpc_decode(line, n, MAX, &msg, &e) < 0);
        ASSERT_EQ_INT(e.code, MCP_RPC_INVALID_REQUEST);
}

/* A request over a parser limit, readable otherwise, gets its id back; the bytes of an
 * invalid message are never quoted. */
TEST(limit_errors_carry_the_id)
{
        static char line[1u << 20];
        size_t n = (size_t) snprintf(line, sizeof line, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"x\",\"params\":{\"a\":");
        for (int i = 0; i < 65; i++)
                line[n++] = '[';
        for (int i = 0; i < 65; i++)
                line[n++] = ']';
        n += (size_t) snprintf(line + n, sizeof line - n, "}}");
        mcp_rpc_msg msg;
        mcp_rpc_error e;
        ASSERT_TRUE(mcp_rpc_decode(line, n, sizeof line, &msg, &e) < 0);
        ASSERT_EQ_INT(e.code, MCP_RPC_INVALID_REQUEST);
        ASSERT_EQ_INT(e.id.kind, MCP_ID_INT);
        ASSERT_EQ_INT(e.id.num, 3);

        n = (size_t) snprintf(line, sizeof line, "{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"params\":{\"a\":[");
        for (int i = 0; i < 65537; i++)
                n += (size_t) snprintf(line + n, sizeof line - n, "%s0", i ? "," : "");
        n += (size_t) snprintf(line + n, sizeof line - n, "]},\"id\":\"big\"}");
        ASSERT_TRUE(mcp_rpc_decode(line, n, sizeof line, &msg, &e) < 0);
        ASSERT_EQ_INT(e.code, MCP_RPC_INVALID_REQUEST);
        ASSERT_EQ_INT(e.id.kind, MCP_ID_STR);
        ASSERT_STREQ(e.id.str, "big");
        mcp_rpc_id_clear(&e.id);

        const char *bad = "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"\xed\xbf\xbf\"}";
        ASSERT_TRUE(mcp_rpc_decode(bad, strlen(bad), MAX, &msg, &e) < 0);
        ASSERT_EQ_INT(e.code, MCP_RPC_PARSE_ERROR);
        ASSERT_TRUE(mcp_utf8_valid(e.message, strlen(e.message)));
        _cleanup_free_ char *json = NULL;
        size_t len = 0;
        ASSERT_OK(mcp_rpc_format_error(&e.id, e.code, e.message, &json, &len));
        ASSERT_STREQ(json, "{\"jsonrpc\":\"2.0\",\"id\":4,\"error\":{\"code\":-32700,\"message\":\"Parse error: invalid UTF-8 at byte 34\"}}");
}

/* The id of a line too long to keep, found as it streams past in pieces of any size,
 * first or last (the SDK writes it last), and only at the top level. */
static void
stream_id(const char *line, size_t piece, mcp_rpc_id *ret)
{
        mcp_rpc_id_stream st = { 0 };
        size_t n = strlen(line);
        for (size_t i = 0; i < n; i += piece)
                mcp_rpc_id_stream_feed(&st, line + i, n - i < piece ? n - i : piece);
        mcp_rpc_id_stream_end(&st, ret);
}

TEST(stream_finds_the_top_level_id)
{
        static const struct { const char *line; int kind; int64_t num; const char *str; } streams[] = {
                { "{\"method\":\"tools/call\",\"params\":{\"id\":9,\"x\":\"a\\\"id\\\":8\"},\"jsonrpc\":\"2.0\",\"id\":7}", MCP_ID_INT, 7, NULL },
                { "{\"jsonrpc\":\"2.0\", \"id\" : \"abc-1\", \"method\":\"x\",\"params\":{\"code\":\"}}}\"}}", MCP_ID_STR, 0, "abc-1" },
                { "{\"id\":-12,\"params\":[{\"id\":1}]}", MCP_ID_INT, -12, NULL },
                { "{\"params\":{\"id\":1},\"method\":\"x\"}", MCP_ID_NONE, 0, NULL },   /* only nested */
                { "{\"id\":1,\"id\":2}", MCP_ID_NONE, 0, NULL },                        /* two */
                { "{\"i\\u0064\":5}", MCP_ID_NONE, 0, NULL },                           /* escaped name */
                { "{\"id\":{\"a\":1}}", MCP_ID_NONE, 0, NULL },                          /* not a scalar */
                { "{\"id\":\"a\\nb\"}", MCP_ID_NONE, 0, NULL },                         /* escape in the value */
                { "[{\"id\":3}]", MCP_ID_NONE, 0, NULL },                                 /* a batch */
        };
        for (size_t i = 0; i < sizeof streams / sizeof streams[0]; i++)
                for (size_t piece = 1; piece <= 7; piece += 3) {
                        mcp_rpc_id id;
                        stream_id(streams[i].line, piece, &id);
                        ASSERT_EQ_INT(id.kind, streams[i].kind);
                        if (id.kind == MCP_ID_INT)
                                ASSERT_EQ_INT(id.num, streams[i].num);
                        if (id.kind == MCP_ID_STR)
                                ASSERT_STREQ(id.str, streams[i].str);
                        mcp_rpc_id_clear(&id);
                }
}

TEST(error_is_one_escaped_line)
{
        mcp_rpc_id id = { .kind = MCP_ID_STR, .str = (char *) "a\nb" };
        _cleanup_free_ char *json = NULL;
        size_t len = 0;
        ASSERT_OK(mcp_rpc_format_error(&id, -32600, "bad\n\t\x01 thing", &json, &len));
        ASSERT_TRUE(memchr(json, '\n', len) == NULL);
        ASSERT_TRUE(memchr(json, '\x01', len) == NULL);
        ASSERT_TRUE(strstr(json, "\\u0001") != NULL || strstr(json, "\\u0001") != NULL);
        ASSERT_STREQ(json, "{\"jsonrpc\":\"2.0\",\"id\":\"a\\nb\",\"error\":{\"code\":-32600,\"message\":\"bad\\n\\t\\u0001 thing\"}}");
}

/* ---- transport ---- */

typedef struct echo_ctx {
        mcp_loop *loop;
        int msgs;
        bool eof;
} echo_ctx;

static void
echo_msg(mcp_rpc *rpc, mcp_rpc_msg *msg, void *data)
{
        echo_ctx *c = data;
        c->msgs++;
        oci_jw *w = mcp_rpc_begin_result(&msg->id);
        oci_jw_begin_object(w);
        oci_jw_kv_string(w, "method", msg->method);
        oci_jw_end_object(w);
        (void) mcp_rpc_send(rpc, w, &msg->id, false);
        mcp_rpc_msg_clear(msg);
}

static void
echo_eof(mcp_rpc *rpc, void *data)
{
        (void) rpc;
        echo_ctx *c = data;
        c->eof = true;
        mcp_loop_exit(c->loop, 0);
}

TEST(transport_skips_an_overlong_line)
{
        int in[2], out[2];
        ASSERT_OK(pipe2(in, O_CLOEXEC));
        ASSERT_OK(pipe2(out, O_CLOEXEC));
        (void) fcntl(out[0], F_SETPIPE_SZ, 1 << 20);
        _cleanup_loop_ mcp_loop *l = NULL;
        ASSERT_OK(mcp_loop_new(&l));
        echo_ctx c = { .loop = l };
        mcp_rpc *rpc = NULL;
        ASSERT_OK(mcp_rpc_new(l, in[0], out[1], MAX, echo_msg, echo_eof, &c, &rpc));

        /* A 20000-byte line (5x the limit), then a valid request, written by a child so
         * that the pipe never blocks this process. */
        pid_t pid = fork();
        ASSERT_TRUE(pid >= 0);
        if (pid == 0) {
                /* as the SDK writes it: method, params, then jsonrpc and id */
                char big[20000];
                const char *head = "{\"method\":\"tools/call\",\"params\":{\"code\":\"";
                memset(big, 'a', sizeof big);
                memcpy(big, head, strlen(head));
                if (write(in[1], big, sizeof big) != (ssize_t) sizeof big)
                        _exit(1);
                const char *tail = "\"},\"jsonrpc\":\"2.0\",\"id\":41}\n"
                                   "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"after\"}\n\n";
                _exit(write(in[1], tail, strlen(tail)) == (ssize_t) strlen(tail) ? 0 : 1);
        }
        close(in[1]);
        ASSERT_EQ_INT(test_loop_run_within(l, 5000000), 0);
        mcp_rpc_free(rpc);
        int status;
        waitpid(pid, &status, 0);
        close(in[0]);
        close(out[1]);
        char buf[4096];
        ssize_t n = read(out[0], buf, sizeof buf - 1);
        close(out[0]);
        ASSERT_TRUE(n > 0);
        buf[n] = '\0';
        ASSERT_TRUE(c.eof);
        ASSERT_EQ_INT(c.msgs, 1);
        char *nl = strchr(buf, '\n');
        ASSERT_NOT_NULL(nl);
        ASSERT_TRUE(strstr(buf, "\"code\":-32600") != NULL && strstr(buf, "\"code\":-32600") < nl);
        ASSERT_TRUE(strstr(buf, "too large") != NULL);
        /* answered with the request's own id, so the client fails it at once */
        ASSERT_TRUE(strncmp(buf, "{\"jsonrpc\":\"2.0\",\"id\":41,", 25) == 0);
        ASSERT_STREQ(nl + 1, "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"method\":\"after\"}}\n");
}

TEST(transport_never_blocks_on_a_full_pipe)
{
        int in[2], out[2];
        ASSERT_OK(pipe2(in, O_CLOEXEC));
        ASSERT_OK(pipe2(out, O_CLOEXEC));
        _cleanup_loop_ mcp_loop *l = NULL;
        ASSERT_OK(mcp_loop_new(&l));
        echo_ctx c = { .loop = l };
        mcp_rpc *rpc = NULL;
        ASSERT_OK(mcp_rpc_new(l, in[0], out[1], MAX, echo_msg, echo_eof, &c, &rpc));
        /* Nobody reads out[0]: 1 MiB of notifications must queue, not block. */
        char text[1024];
        memset(text, 'x', sizeof text - 1);
        text[sizeof text - 1] = '\0';
        uint64_t start = mcp_now_usec();
        for (int i = 0; i < 1024; i++) {
                oci_jw *w = mcp_rpc_begin_notification("notifications/message");
                oci_jw_begin_object(w);
                oci_jw_kv_string(w, "data", text);
                oci_jw_end_object(w);
                ASSERT_OK(mcp_rpc_send(rpc, w, NULL, false));
        }
        ASSERT_TRUE(mcp_now_usec() - start < 2000000);
        ASSERT_TRUE(mcp_rpc_queued(rpc) > 512 * 1024);
        /* The reader goes away: freeing gives up on the queue (EPIPE) at once. */
        close(out[0]);
        start = mcp_now_usec();
        mcp_rpc_free(rpc);
        ASSERT_TRUE(mcp_now_usec() - start < 1000000);
        close(in[0]);
        close(in[1]);
        close(out[1]);
}


/* ---- backpressure: reading pauses while the output queue is full ---- */

#define BIG_REPLY (64 * 1024)
#define N_REQUESTS 100

typedef struct bp_ctx {
        mcp_loop *loop;
        mcp_rpc *rpc;
        int out_rd;
        int msgs;
        size_t max_queued;
        size_t drained;
        bool eof;
        char *blob;
} bp_ctx;

static void
bp_msg(mcp_rpc *rpc, mcp_rpc_msg *msg, void *data)
{
        bp_ctx *c = data;
        c->msgs++;
        oci_jw *w = mcp_rpc_begin_result(&msg->id);
        oci_jw_begin_object(w);
        oci_jw_kv_string(w, "blob", c->blob);
        oci_jw_end_object(w);
        (void) mcp_rpc_send(rpc, w, &msg->id, false);
        if (mcp_rpc_queued(rpc) > c->max_queued)
                c->max_queued = mcp_rpc_queued(rpc);
        mcp_rpc_msg_clear(msg);
}

static void
bp_maybe_done(bp_ctx *c)
{
        if (c->eof && c->rpc && mcp_rpc_queued(c->rpc) == 0)
                mcp_loop_exit(c->loop, 0);
}

static void
bp_eof(mcp_rpc *rpc, void *data)
{
        (void) rpc;
        bp_ctx *c = data;
        c->eof = true;
        bp_maybe_done(c);
}

static int
bp_drain(mcp_loop *loop, int fd, uint32_t events, void *data)
{
        (void) loop, (void) events;
        bp_ctx *c = data;
        char buf[65536];
        ssize_t n = read(fd, buf, sizeof buf);
        if (n > 0)
                c->drained += (size_t) n;
        bp_maybe_done(c);
        return 0;
}

static int
bp_start_draining(mcp_loop *loop, void *data)
{
        bp_ctx *c = data;
        return mcp_loop_add_io(loop, c->out_rd, EPOLLIN, bp_drain, c);
}

TEST(transport_pauses_reading_while_the_output_is_full)
{
        int in[2], out[2];
        ASSERT_OK(pipe2(in, O_CLOEXEC));
        ASSERT_OK(pipe2(out, O_CLOEXEC));
        for (int i = 0; i < N_REQUESTS; i++) {
                char line[80];
                int n = snprintf(line, sizeof line, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"m\"}\n", i);
                ASSERT_EQ_INT(write(in[1], line, (size_t) n), n);
        }
        close(in[1]);
        _cleanup_loop_ mcp_loop *l = NULL;
        ASSERT_OK(mcp_loop_new(&l));
        bp_ctx c = { .loop = l, .out_rd = out[0] };
        c.blob = malloc(BIG_REPLY + 1);
        ASSERT_NOT_NULL(c.blob);
        memset(c.blob, 'b', BIG_REPLY);
        c.blob[BIG_REPLY] = '\0';
        ASSERT_OK(mcp_rpc_new(l, in[0], out[1], MAX, bp_msg, bp_eof, &c, &c.rpc));
        /* Nobody reads the output for a while: the replies (6.4 MiB) do not fit. */
        ASSERT_OK(mcp_loop_add_timer(l, 300000, bp_start_draining, &c, NULL));
        int r = test_loop_run_within(l, 20000000);
        mcp_loop_del_io(l, out[0]);
        mcp_rpc_free(c.rpc);
        free(c.blob);
        close(in[0]);
        close(out[0]);
        close(out[1]);
        ASSERT_EQ_INT(r, 0);
        ASSERT_EQ_INT(c.msgs, N_REQUESTS);
        ASSERT_TRUE(c.eof);
        /* Bounded: at most the high-water mark (4 MiB) and one reply more. */
        tap_diag("largest queue: %zu bytes", c.max_queued);
        ASSERT_TRUE(c.max_queued <= 4 * 1024 * 1024 + BIG_REPLY + 128);
        ASSERT_TRUE(c.max_queued > 2 * 1024 * 1024);
        ASSERT_TRUE(c.drained > (size_t) N_REQUESTS * BIG_REPLY);
}

int
main(void)
{
        signal(SIGPIPE, SIG_IGN);
        RUN(decode_table);
        RUN(decode_fields);
        RUN(decode_too_large);
        RUN(decode_too_deep);
        RUN(limit_errors_carry_the_id);
        RUN(stream_finds_the_top_level_id);
        RUN(error_is_one_escaped_line);
        RUN(transport_skips_an_overlong_line);
        RUN(transport_never_blocks_on_a_full_pipe);
        RUN(transport_pauses_reading_while_the_output_is_full);
        return tap_done();
}
