/* libFuzzer target for msp-mcp's JSON-RPC decoder (mcp-adapter/rpc/jsonrpc.c), the text
 * helpers its replies go through, and the whole protocol layer behind it. Beyond the
 * sanitizers it checks that every input gets either a message or exactly one of the
 * JSON-RPC error codes with a non-empty one-line message, that the error reply serialises
 * to one line of JSON that parses again, that UTF-8 repair and base64 round trips hold,
 * and that the input fed to a real server (after an initialize) over pipes only ever
 * produces lines that are JSON-RPC 2.0 objects. The server runs without an engine: the
 * engine and session functions below abort if the protocol layer ever calls them then.
 * Built only with clang (tests/meson.build); run with tests/fuzz/run-fuzz.sh. */
#include <errno.h>
#include <fcntl.h>
#include <sys/epoll.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "oci/json.h"
#include "rpc/jsonrpc.h"
#include "host/rootless.h"
#include "mcp/server.h"
#include "mcp/tools-ports.h"
#include "base/text.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_MESSAGE 65536

static void
check_decode(const char *line, size_t len)
{
        mcp_rpc_msg msg;
        mcp_rpc_error e;
        int r = mcp_rpc_decode(line, len, MAX_MESSAGE, &msg, &e);
        if (r == -ENODATA)
                return;
        if (r == 0) {
                /* A message: a method (request or notification) or a client's response. */
                if (!msg.method && msg.id.kind == MCP_ID_NONE)
                        abort();
                if (msg.params && oci_json_type_of(msg.params) != OCI_JSON_OBJECT)
                        abort();
                mcp_rpc_id copy;
                if (mcp_rpc_id_copy(&copy, &msg.id) < 0 || !mcp_rpc_id_equal(&copy, &msg.id))
                        abort();
                mcp_rpc_id_clear(&copy);
                mcp_rpc_msg_clear(&msg);
                return;
        }
        if (e.code != MCP_RPC_PARSE_ERROR && e.code != MCP_RPC_INVALID_REQUEST &&
            e.code != MCP_RPC_INTERNAL_ERROR)
                abort();
        if (!e.message[0] || strchr(e.message, '\n'))
                abort();
        /* A parse error carries only the id the refused line still shows
         * (mcp_rpc_id_salvage): a string one is printable UTF-8 without escapes, there in
         * the line as it is. */
        if (e.code == MCP_RPC_PARSE_ERROR && e.id.kind == MCP_ID_STR) {
                size_t n = strlen(e.id.str);
                if (!mcp_utf8_valid(e.id.str, n) || !memmem(line, len, e.id.str, n) ||
                    !memmem(line, len, "\"id\"", 4))
                        abort();
                for (size_t i = 0; i < n; i++)
                        if ((unsigned char) e.id.str[i] < 0x20 || e.id.str[i] == '"' ||
                            e.id.str[i] == '\\')
                                abort();
        }
        /* The reply is one line of JSON (the transport falls back to a fixed message when
         * the text quoted from the input is not UTF-8). */
        char *json = NULL;
        size_t jlen = 0;
        if (mcp_rpc_format_error(&e.id, e.code, e.message, &json, &jlen) < 0 &&
            mcp_rpc_format_error(&e.id, e.code, "invalid message", &json, &jlen) < 0)
                abort();
        if (memchr(json, '\n', jlen))
                abort();
        oci_json_doc *doc = NULL;
        msp_err err = { 0 };
        if (oci_json_parse("reply", json, jlen, &doc, &err) < 0)
                abort();
        oci_json_doc_free(doc);
        free(json);
        mcp_rpc_id_clear(&e.id);
}

static void
check_text(const uint8_t *data, size_t size)
{
        size_t n = 0;
        char *fixed = mcp_utf8_sanitize((const char *) data, size, &n);
        if (!fixed || !mcp_utf8_valid(fixed, n) || memchr(fixed, 0, n) || strlen(fixed) != n)
                abort();
        if (mcp_utf8_valid((const char *) data, size) && !memchr(data, 0, size) &&
            (n != size || memcmp(fixed, data, size) != 0))
                abort();
        free(fixed);

        size_t blen = 0;
        char *b64 = mcp_base64_encode(data, size, &blen);
        unsigned char *back = NULL;
        size_t back_len = 0;
        if (!b64 || mcp_base64_decode(b64, blen, &back, &back_len) < 0 || back_len != size ||
            memcmp(back, data, size) != 0)
                abort();
        free(b64);
        free(back);
        /* Decoding arbitrary text must not crash (most of it is refused). */
        if (mcp_base64_decode((const char *) data, size, &back, &back_len) == 0)
                free(back);
}

/* ---- the engine and session layers: never reached without an engine ---- */

const char *const *mcp_engine_languages(const mcp_engine *e) { (void) e; abort(); }
mcp_session_store *mcp_engine_sessions(mcp_engine *e) { (void) e; abort(); }
int mcp_engine_submit(mcp_engine *e, const mcp_run_request *q, mcp_run_output_fn o, mcp_run_done_fn d,
                      void *x, mcp_run **r, msp_err *err) { (void) e, (void) q, (void) o, (void) d, (void) x, (void) r, (void) err; abort(); }
void mcp_engine_cancel(mcp_engine *e, mcp_run *r) { (void) e, (void) r; abort(); }
const char *mcp_engine_run_id(const mcp_run *r) { (void) r; abort(); }
const char *mcp_engine_language_off(const mcp_engine *e, size_t i, const char **w) { (void) e, (void) i, (void) w; abort(); }
int mcp_engine_run_log(mcp_engine *e, const char *id, mcp_stream s, char **r, size_t *l, msp_err *err)
{ (void) e, (void) id, (void) s, (void) r, (void) l, (void) err; abort(); }
int mcp_session_create(mcp_session_store *st, const mcp_session_opts *o, mcp_session_info *r, msp_err *err)
{ (void) st, (void) o, (void) r, (void) err; abort(); }
int mcp_session_close(mcp_session_store *st, const char *id, bool f, msp_err *err) { (void) st, (void) id, (void) f, (void) err; abort(); }
int mcp_session_list(mcp_session_store *st, mcp_session_info **r, size_t *n, msp_err *err) { (void) st, (void) r, (void) n, (void) err; abort(); }
int mcp_session_get(mcp_session_store *st, const char *id, mcp_session_info *r, msp_err *err) { (void) st, (void) id, (void) r, (void) err; abort(); }
int mcp_session_write_file(mcp_session_store *st, const char *id, const char *p, const void *d, size_t l, bool x, msp_err *err)
{ (void) st, (void) id, (void) p, (void) d, (void) l, (void) x, (void) err; abort(); }
int mcp_session_read_file(mcp_session_store *st, const char *id, const char *p, size_t m, char **r, size_t *l, uint64_t *sz,
                          bool *t, msp_err *err) { (void) st, (void) id, (void) p, (void) m, (void) r, (void) l, (void) sz, (void) t, (void) err; abort(); }
int mcp_session_list_files(mcp_session_store *st, const char *id, const char *p, size_t m, mcp_dirent **r, size_t *n,
                           bool *t, msp_err *err) { (void) st, (void) id, (void) p, (void) m, (void) r, (void) n, (void) t, (void) err; abort(); }
void mcp_dirents_free(mcp_dirent *e, size_t n) { (void) e, (void) n; abort(); }
void mcp_sessions_set_expired(mcp_session_store *st, mcp_session_expired_fn f, void *d) { (void) st, (void) f, (void) d; abort(); }
int mcp_engine_keep_file(mcp_engine *e, const char *t, const char *u, const char *m, const void *d,
                         size_t l, mcp_kept_dropped_fn fn, void *x, msp_err *err)
{ (void) e, (void) t, (void) u, (void) m, (void) d, (void) l, (void) fn, (void) x, (void) err; abort(); }
int mcp_engine_kept_file(mcp_engine *e, const char *t, const char *u, unsigned char **r, size_t *l,
                         const char **m, msp_err *err)
{ (void) e, (void) t, (void) u, (void) r, (void) l, (void) m, (void) err; abort(); }
int mcp_engine_session_start(mcp_engine *e, const char *id, msp_err *err) { (void) e, (void) id, (void) err; abort(); }
int mcp_engine_session_info(mcp_engine *e, const char *id, mcp_live_info *r) { (void) e, (void) id, (void) r; abort(); }
int mcp_engine_session_pause(mcp_engine *e, const char *id, msp_err *err) { (void) e, (void) id, (void) err; abort(); }
int mcp_engine_session_resume(mcp_engine *e, const char *id, msp_err *err) { (void) e, (void) id, (void) err; abort(); }
bool mcp_engine_uses_kernel(mcp_engine *e, const char *id, const char *l, bool f) { (void) e, (void) id, (void) l, (void) f; abort(); }
int mcp_engine_process_list(mcp_engine *e, const char *id, mcp_process_info **r, size_t *n, msp_err *err)
{ (void) e, (void) id, (void) r, (void) n, (void) err; abort(); }
int mcp_engine_process_output(mcp_engine *e, const char *id, const char *p, mcp_stream s, uint64_t o, size_t m,
                              char **r, size_t *l, uint64_t *nx, uint64_t *sk, msp_err *err)
{ (void) e, (void) id, (void) p, (void) s, (void) o, (void) m, (void) r, (void) l, (void) nx, (void) sk, (void) err; abort(); }
int mcp_engine_process_kill(mcp_engine *e, const char *id, const char *p, int sig, msp_err *err)
{ (void) e, (void) id, (void) p, (void) sig, (void) err; abort(); }
/* port_expose (tools-ports.c): servers of this target have no engine, hence no ports */
int mcp_ports_new(mcp_loop *l, mcp_engine *e, const char *u, mcp_ports **r) { (void) l, (void) e, (void) u, (void) r; abort(); }
mcp_ports *mcp_ports_free(mcp_ports *p) { (void) p; return NULL; }
unsigned mcp_ports_of(const mcp_ports *p, const char *s, uint16_t *v, unsigned m) { (void) p, (void) s, (void) v, (void) m; return 0; }
void mcp_tool_port_expose(mcp_server *srv, const mcp_rpc_id *id, targs *a, const mcp_rpc_id *t) { (void) srv, (void) id, (void) a, (void) t; abort(); }
/* config.c's default state dir for a user (the fuzzer runs as root, never there) */
int mcp_rootless_reachable(const char *s, msp_err *err) { (void) s, (void) err; abort(); }

/* ---- the protocol layer over pipes ---- */

typedef struct sink {
        char *buf;
        size_t len, cap;
} sink;

static int
drain(mcp_loop *loop, int fd, uint32_t events, void *data)
{
        (void) loop, (void) events;
        sink *k = data;
        for (;;) {
                if (k->cap - k->len < 65536) {
                        k->cap = k->cap ? k->cap * 2 : 1 << 20;
                        k->buf = realloc(k->buf, k->cap);
                        if (!k->buf)
                                abort();
                }
                ssize_t n = read(fd, k->buf + k->len, k->cap - k->len);
                if (n <= 0)
                        return 0;
                k->len += (size_t) n;
        }
}

static int
hang(mcp_loop *loop, void *data)
{
        (void) loop, (void) data;
        abort();
}

static void
check_server(const uint8_t *data, size_t size)
{
        static mcp_config cfg;
        static bool ready;
        static const char *const langs[] = { "sh", "python", NULL };
        if (!ready) {
                char *argv[] = { (char *) "msp-mcp", (char *) "--runtime", (char *) "/bin/true", NULL };
                mcp_config_action action;
                msp_err err = { 0 };
                if (mcp_config_load(&cfg, 3, argv, &action, &err) < 0)
                        abort();
                ready = true;
        }
        static const char init[] = "{\"jsonrpc\":\"2.0\",\"id\":\"init\",\"method\":\"initialize\","
                                   "\"params\":{\"protocolVersion\":\"2025-11-25\"}}\n";
        int in[2], out[2];
        if (size > 60000 || pipe2(in, O_CLOEXEC) < 0)
                return;
        if (pipe2(out, O_CLOEXEC | O_NONBLOCK) < 0)
                abort();
        (void) fcntl(in[1], F_SETPIPE_SZ, 1 << 20);
        if (write(in[1], init, sizeof init - 1) != (ssize_t) sizeof init - 1 ||
            (size && write(in[1], data, size) != (ssize_t) size))
                abort();
        close(in[1]);

        mcp_loop *loop = NULL;
        mcp_server *srv = NULL;
        mcp_logger lg = { .stderr_level = MCP_LOG_EMERGENCY, .client_level = MCP_LOG_EMERGENCY };
        sink k = { 0 };
        if (mcp_loop_new(&loop) < 0 || mcp_loop_add_timer(loop, 10000000, hang, NULL, NULL) < 0 ||
            mcp_loop_add_io(loop, out[0], EPOLLIN, drain, &k) < 0 ||
            mcp_server_new(loop, &cfg, NULL, &lg, in[0], out[1], &srv) < 0)
                abort();
        srv->languages = langs;
        if (mcp_loop_run(loop) != 0)
                abort();
        mcp_server_free(srv);
        drain(loop, out[0], 0, &k);
        mcp_loop_del_io(loop, out[0]);
        mcp_loop_free(loop);
        close(in[0]);
        close(out[0]);
        close(out[1]);

        /* Every line: one JSON-RPC 2.0 object. */
        for (size_t at = 0; at < k.len;) {
                char *nl = memchr(k.buf + at, '\n', k.len - at);
                if (!nl)
                        abort();
                size_t len = (size_t) (nl - (k.buf + at));
                oci_json_doc *doc = NULL;
                msp_err err = { 0 };
                if (oci_json_parse_limits("reply", k.buf + at, len, 64u << 20, 64u << 20, &doc, &err) < 0)
                        abort();
                const oci_json *root = oci_json_doc_root(doc);
                const oci_json *v = oci_json_get(root, "jsonrpc");
                if (oci_json_type_of(root) != OCI_JSON_OBJECT || !v || !oci_json_string(v) ||
                    strcmp(oci_json_string(v), "2.0") != 0)
                        abort();
                oci_json_doc_free(doc);
                at += len + 1;
        }
        free(k.buf);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        /* The whole input as one line, and each of its lines as the reader splits them. */
        check_decode((const char *) data, size);
        const char *p = (const char *) data, *end = p + size;
        while (p < end) {
                const char *nl = memchr(p, '\n', (size_t) (end - p));
                size_t len = nl ? (size_t) (nl - p) : (size_t) (end - p);
                if (nl || p != (const char *) data)
                        check_decode(p, len);
                p += len + 1;
        }
        check_text(data, size);
        check_server(data, size);
        return 0;
}
