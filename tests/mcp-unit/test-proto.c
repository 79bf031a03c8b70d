/* mcp-adapter/mcp/proto.c and tools.c without the engine: version negotiation, the fields
 * gated by the negotiated version, the tool schemas' shape, and the lifecycle rules
 * (only ping before initialize, errors for unknown methods and tools, no answer to
 * notifications, argument errors as tool results) through a real server over pipes. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include "tests/lib/tap.h"
#include "tests/lib/loop-deadline.h"
#include "oci/json.h"
#include "oci/macros.h"
#include "mcp/server.h"
#include "mcp/tools.h"

static const char *const langs[] = { "sh", "python", NULL };

TEST(version_negotiation)
{
        ASSERT_STREQ(mcp_version_name(mcp_version_negotiate("2025-11-25")), "2025-11-25");
        ASSERT_STREQ(mcp_version_name(mcp_version_negotiate("2025-06-18")), "2025-06-18");
        ASSERT_STREQ(mcp_version_name(mcp_version_negotiate("2025-03-26")), "2025-03-26");
        ASSERT_STREQ(mcp_version_name(mcp_version_negotiate("2024-11-05")), "2024-11-05");
        ASSERT_STREQ(mcp_version_name(mcp_version_negotiate("2099-01-01")), "2025-11-25");
        ASSERT_STREQ(mcp_version_name(mcp_version_negotiate("")), "2025-11-25");
        ASSERT_STREQ(mcp_version_name(mcp_version_negotiate(NULL)), "2025-11-25");
        ASSERT_STREQ(mcp_version_name(mcp_version_negotiate("2025-11-25 ")), "2025-11-25");
}

static int
load_config(mcp_config *cfg, bool network)
{
        char *argv[] = { (char *) "msp-mcp", (char *) "--runtime", (char *) "/bin/true",
                         (char *) "--allow-network", NULL };
        mcp_config_action action;
        msp_err err = { 0 };
        int r = mcp_config_load(cfg, network ? 4 : 3, argv, &action, &err);
        if (r < 0)
                tap_diag("config: %s", err.msg);
        return r;
}

static oci_json_doc *
tools_doc(const mcp_config *cfg, mcp_version v)
{
        _cleanup_jw_ oci_jw *w = oci_jw_new(false);
        mcp_tools_write_list(w, cfg, langs, v);
        _cleanup_free_ char *json = NULL;
        size_t len;
        msp_err err = { 0 };
        if (oci_jw_finish(w, &json, &len, &err) < 0)
                return NULL;
        oci_json_doc *doc = NULL;
        if (oci_json_parse("tools", json, len, &doc, &err) < 0)
                tap_diag("tools/list: %s", err.msg);
        return doc;
}

/* Every schema object of type array has items; returns the number of arrays seen, or -1. */
static int
arrays_have_items(const oci_json *v)
{
        int n = 0;
        if (oci_json_type_of(v) == OCI_JSON_OBJECT) {
                const oci_json *t = oci_json_get(v, "type");
                if (t && oci_json_string(t) && strcmp(oci_json_string(t), "array") == 0) {
                        if (!oci_json_get(v, "items"))
                                return -1;
                        n++;
                }
        }
        for (size_t i = 0; i < oci_json_len(v); i++) {
                int r = arrays_have_items(oci_json_value_at(v, i));
                if (r < 0)
                        return -1;
                n += r;
        }
        return n;
}

TEST(gating_by_version)
{
        mcp_config cfg;
        ASSERT_OK(load_config(&cfg, false));
        static const struct { mcp_version v; bool title, output, annotations; } want[] = {
                { MCP_V2024_11_05, false, false, false },
                { MCP_V2025_03_26, false, false, true },
                { MCP_V2025_06_18, true, true, true },
                { MCP_V2025_11_25, true, true, true },
        };
        for (size_t i = 0; i < ARRAY_SIZE(want); i++) {
                _cleanup_json_doc_ oci_json_doc *doc = tools_doc(&cfg, want[i].v);
                if (!tap_check(doc != NULL, "tools/list for %s parses", mcp_version_name(want[i].v)))
                        continue;
                const oci_json *tools = oci_json_get(oci_json_doc_root(doc), "tools");
                bool ok = tools && oci_json_len(tools) == 13;
                for (size_t t = 0; ok && t < oci_json_len(tools); t++) {
                        const oci_json *tool = oci_json_value_at(tools, t);
                        ok = (oci_json_get(tool, "title") != NULL) == want[i].title &&
                             (oci_json_get(tool, "outputSchema") != NULL) == want[i].output &&
                             (oci_json_get(tool, "annotations") != NULL) == want[i].annotations &&
                             oci_json_get(tool, "execution") == NULL;
                }
                tap_check(ok, "%s: title %d, outputSchema %d, annotations %d, no execution",
                          mcp_version_name(want[i].v), want[i].title, want[i].output,
                          want[i].annotations);
        }
        mcp_config_done(&cfg);
}

TEST(schemas_are_strict)
{
        mcp_config cfg;
        ASSERT_OK(load_config(&cfg, false));
        _cleanup_json_doc_ oci_json_doc *doc = tools_doc(&cfg, MCP_V_LATEST);
        ASSERT_NOT_NULL(doc);
        const oci_json *tools = oci_json_get(oci_json_doc_root(doc), "tools");
        ASSERT_NOT_NULL(tools);
        for (size_t t = 0; t < oci_json_len(tools); t++) {
                const oci_json *tool = oci_json_value_at(tools, t);
                const char *name = oci_json_string(oci_json_get(tool, "name"));
                const oci_json *in = oci_json_get(tool, "inputSchema");
                ASSERT_NOT_NULL(in);
                ASSERT_STREQ(oci_json_string(oci_json_get(in, "type")), "object");
                const oci_json *ap = oci_json_get(in, "additionalProperties");
                if (!tap_check(ap && oci_json_type_of(ap) == OCI_JSON_BOOL && !oci_json_bool(ap),
                               "%s: additionalProperties false", name))
                        continue;
                tap_check(arrays_have_items(tool) >= 0, "%s: items on every array", name);
                const oci_json *ow = oci_json_get(oci_json_get(tool, "annotations"), "openWorldHint");
                tap_check(ow && !oci_json_bool(ow), "%s: openWorldHint false without --allow-network", name);
        }
        /* run_code: the language enum is the engine's list. */
        const oci_json *lang = oci_json_get(oci_json_get(oci_json_get(oci_json_value_at(tools, 0),
                                                                      "inputSchema"), "properties"),
                                            "language");
        ASSERT_NOT_NULL(lang);
        const oci_json *e = oci_json_get(lang, "enum");
        ASSERT_EQ_INT(oci_json_len(e), 2);
        ASSERT_STREQ(oci_json_string(oci_json_value_at(e, 1)), "python");
        mcp_config_done(&cfg);
}

TEST(open_world_with_network)
{
        mcp_config cfg;
        ASSERT_OK(load_config(&cfg, true));
        _cleanup_json_doc_ oci_json_doc *doc = tools_doc(&cfg, MCP_V_LATEST);
        ASSERT_NOT_NULL(doc);
        const oci_json *tools = oci_json_get(oci_json_doc_root(doc), "tools");
        for (size_t t = 0; t < oci_json_len(tools); t++) {
                const oci_json *tool = oci_json_value_at(tools, t);
                const char *name = oci_json_string(oci_json_get(tool, "name"));
                bool ow = oci_json_bool(oci_json_get(oci_json_get(tool, "annotations"), "openWorldHint"));
                bool want = strcmp(name, "run_code") == 0 || strcmp(name, "session_create") == 0;
                tap_check(ow == want, "--allow-network: %s openWorldHint %d", name, want);
        }
        mcp_config_done(&cfg);
}

/* ---- a server over pipes ---- */

typedef struct exchange {
        char out[65536];
        size_t len;
} exchange;

/* Feeds the lines to a server with no engine, runs it to EOF, collects its output. */
static int
converse_with(const char *input, exchange *x, const char *const *languages)
{
        mcp_config cfg;
        if (load_config(&cfg, false) < 0)
                return -EINVAL;
        int in[2], out[2];
        if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0)
                return -errno;
        (void) fcntl(out[0], F_SETPIPE_SZ, 1 << 20);
        size_t n = strlen(input);
        if (write(in[1], input, n) != (ssize_t) n)
                return -EIO;
        close(in[1]);
        mcp_loop *loop = NULL;
        mcp_logger lg = { .stderr_level = MCP_LOG_EMERGENCY, .client_level = MCP_LOG_INFO };
        mcp_server *srv = NULL;
        int r = mcp_loop_new(&loop);
        if (r == 0)
                r = mcp_server_new(loop, &cfg, NULL, &lg, in[0], out[1], &srv);
        if (r == 0 && languages)
                srv->languages = languages;
        if (r == 0)
                r = test_loop_run_within(loop, 5000000);
        mcp_server_free(srv);
        mcp_loop_free(loop);
        close(in[0]);
        close(out[1]);
        ssize_t got = read(out[0], x->out, sizeof x->out - 1);
        x->len = got > 0 ? (size_t) got : 0;
        x->out[x->len] = '\0';
        close(out[0]);
        mcp_config_done(&cfg);
        return r;
}

static int
converse(const char *input, exchange *x)
{
        return converse_with(input, x, NULL);
}

/* The line answering id (as JSON text), or NULL. */
static const char *
answer(const exchange *x, const char *id, char *buf, size_t size)
{
        char needle[64];
        snprintf(needle, sizeof needle, "\"id\":%s,", id);
        const char *p = strstr(x->out, needle);
        if (!p)
                return NULL;
        const char *start = p;
        while (start > x->out && start[-1] != '\n')
                start--;
        const char *end = strchr(p, '\n');
        snprintf(buf, size, "%.*s", (int) (end ? end - start : (long) strlen(start)), start);
        return buf;
}

static size_t
count_lines(const exchange *x)
{
        size_t n = 0;
        for (const char *p = x->out; *p; p++)
                n += *p == '\n';
        return n;
}

#define INIT(v) "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"" v "\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"0\"}}}\n"

TEST(lifecycle)
{
        static exchange x;
        ASSERT_OK(converse(
                "{\"jsonrpc\":\"2.0\",\"id\":\"p\",\"method\":\"ping\"}\n"
                "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"tools/list\"}\n"
                "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/whatever\"}\n"
                INIT("2099-01-01")
                INIT("2025-06-18")
                "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n"
                "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":42}}\n"
                "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"no/such\"}\n"
                "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"nope\"}}\n"
                "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"run_code\",\"arguments\":{\"language\":\"sh\",\"code\":\"x\",\"timeout_ms\":99999999}}}\n"
                "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"logging/setLevel\",\"params\":{\"level\":\"loud\"}}\n"
                "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"logging/setLevel\",\"params\":{\"level\":\"debug\"}}\n"
                "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"resources/read\",\"params\":{\"uri\":\"sandbox://nope\"}}\n"
                "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":{\"name\":\"run_code\",\"arguments\":[]}}\n"
                "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"tools/call\",\"params\":{\"name\":\"session_list\",\"arguments\":{\"x\":1}}}\n",
                &x));
        char b[4096];
        tap_check(answer(&x, "\"p\"", b, sizeof b) && strstr(b, "\"result\":{}"), "ping before initialize");
        tap_check(answer(&x, "0", b, sizeof b) && strstr(b, "-32600") && strstr(b, "not initialized"),
                  "tools/list before initialize: -32600 not initialized");
        /* The first initialize wins: an unknown version gets the latest... */
        tap_check(strstr(x.out, "\"protocolVersion\":\"2025-11-25\"") != NULL, "2099-01-01 falls back to 2025-11-25");
        /* ...and a second one is refused. */
        tap_check(strstr(x.out, "already initialized") != NULL, "a second initialize is refused");
        tap_check(answer(&x, "3", b, sizeof b) && strstr(b, "-32601"), "unknown method: -32601");
        tap_check(answer(&x, "4", b, sizeof b) && strstr(b, "-32602") && strstr(b, "Unknown tool: nope"),
                  "unknown tool: -32602");
        tap_check(answer(&x, "5", b, sizeof b) && strstr(b, "\"isError\":true") && strstr(b, "language") &&
                          strstr(b, "\\\"sh\\\"") && !strstr(b, "\"error\""),
                  "a bad argument is a tool result with isError naming field and value");
        tap_check(answer(&x, "6", b, sizeof b) && strstr(b, "-32602"), "logging/setLevel with a bad level: -32602");
        tap_check(answer(&x, "7", b, sizeof b) && strstr(b, "\"result\":{}"), "logging/setLevel debug");
        tap_check(answer(&x, "8", b, sizeof b) && strstr(b, "-32002"), "unknown resource: -32002");
        tap_check(answer(&x, "9", b, sizeof b) && strstr(b, "-32602"), "arguments not an object: -32602");
        tap_check(answer(&x, "10", b, sizeof b) && strstr(b, "\"isError\":true") && strstr(b, "unknown argument \\\"x\\\""),
                  "an unknown argument is named");
        tap_check(strstr(x.out, "whatever") == NULL && strstr(x.out, "42") == NULL,
                  "notifications get no answer");
        /* 1 ping, 1 error, 2 initialize, 10 answers after; notifications/message lines after
         * setLevel debug are allowed (they carry no id). */
        size_t lines = count_lines(&x), with_id = 0;
        for (const char *p = x.out; (p = strstr(p, "\"id\":")); p++)
                with_id++;
        tap_check(with_id == 12, "exactly one answer per request (%zu lines, %zu with an id)", lines, with_id);
}

/* Every bad argument of run_code and session_create is a tool result (isError) whose text
 * names the field, the value and the limit. */
TEST(bad_arguments_are_named)
{
        static const struct { const char *tool, *args, *want; } c[] = {
                { "run_code", "\"timeout_ms\":99", "timeout_ms: 99 is below the minimum 100" },
                { "run_code", "\"timeout_ms\":1e3", "timeout_ms: expected an integer from 100 to 600000, got 1e3" },
                { "run_code", "\"timeout_ms\":700000", "timeout_ms: 700000 is above the maximum 600000" },
                { "run_code", "\"timeout_ms\":\"5\"", "timeout_ms: expected an integer" },
                { "run_code", "\"memory_mb\":0", "memory_mb: 0 is below the minimum 1" },
                { "run_code", "\"memory_mb\":5000", "memory_mb: 5000 is above the maximum 4096" },
                { "run_code", "\"pids\":5000", "pids: 5000 is above the maximum 4096" },
                { "run_code", "\"cpus\":0", "cpus: 0 is below the minimum 0.01" },
                { "run_code", "\"cpus\":0.009", "cpus: 0.009 is below the minimum 0.01" },
                { "run_code", "\"cpus\":0.0015", "cpus: expected a number such as 0.5 with at most three decimals, got 0.0015" },
                { "run_code", "\"cpus\":2.0000001", "cpus: expected a number such as 0.5 with at most three decimals, got 2.0000001" },
                { "run_code", "\"cpus\":9999.001", "cpus: 9999.001 is above the maximum" },
                { "run_code", "\"cpus\":-1", "cpus: expected a number such as 0.5" },
                { "run_code", "\"cpus\":\"1\"", "cpus: expected a number such as 0.5" },
                { "run_code", "\"cpus\":1e1", "cpus: expected a number such as 0.5 with at most three decimals, got 1e1" },
                { "run_code", "\"cpus\":9999", "cpus: 9999 is above the maximum" },
                { "run_code", "\"files\":{}", "files: expected an array" },
                { "run_code", "\"files\":[{\"path\":\"a\"}]", "files[0].content: required argument missing" },
                { "run_code", "\"files\":[{\"path\":\"a\",\"content\":\"x\",\"mode\":1}]", "files[0]: unknown argument \\\"mode\\\"" },
                { "run_code", "\"files\":[{\"path\":\"a\",\"content\":\"!!\",\"encoding\":\"base64\"}]", "files[0].content: not valid base64" },
                { "run_code", "\"files\":[{\"path\":\"a\",\"content\":\"x\",\"encoding\":\"hex\"}]", "files[0].encoding: \\\"hex\\\" is not one of utf8, base64" },
                { "run_code", "\"files\":[{\"path\":\"\",\"content\":\"x\"}]", "files[0].path: empty" },
                { "run_code", "\"args\":\"x\"", "args: expected an array of strings" },
                { "run_code", "\"args\":[\"a\",1]", "args[1]: expected a string, got 1" },
                { "run_code", "\"env\":{\"1X\":\"a\"}", "env: \\\"1X\\\" is not a variable name" },
                { "run_code", "\"env\":{\"A\":1}", "env.A: expected a string, got 1" },
                { "run_code", "\"stdin\":5", "stdin: expected a string, got 5" },
                { "run_code", "\"session_id\":\"0123456789012345678901234567890123456789012345678901234567890123456789\"",
                  "session_id: 70 bytes is above the limit of 64 bytes" },
                { "run_code", "\"language\":\"cobol\"", "language: \\\"cobol\\\" is not one of sh, python" },
                { "session_create", "\"network\":true", "network: true is not allowed" },
                { "session_create", "\"rootfs\":\"nope\"", "rootfs: \\\"nope\\\" is not one of host" },
                { "session_create", "\"ttl_s\":0", "ttl_s: 0 is below the minimum 1" },
                { "session_create", "\"ttl_s\":99999999", "ttl_s: 99999999 is above the maximum 86400" },
                { "write_file", "\"path\":\"a\"", "session_id: required argument missing" },
        };
        static char input[65536];
        size_t n = (size_t) snprintf(input, sizeof input, "%s", INIT("2025-11-25"));
        for (size_t i = 0; i < ARRAY_SIZE(c); i++) {
                bool run = strcmp(c[i].tool, "run_code") == 0;
                bool has_lang = strstr(c[i].args, "\"language\"") != NULL;
                n += (size_t) snprintf(input + n, sizeof input - n,
                                       "{\"jsonrpc\":\"2.0\",\"id\":%zu,\"method\":\"tools/call\",\"params\":{\"name\":\"%s\",\"arguments\":{%s%s%s}}}\n",
                                       100 + i, c[i].tool, run && !has_lang ? "\"language\":\"sh\",\"code\":\"x\"," : "",
                                       run && has_lang ? "\"code\":\"x\"," : "", c[i].args);
        }
        /* Valid arguments reach the engine (none here: a tool error too, but not about them). */
        n += (size_t) snprintf(input + n, sizeof input - n, "%s",
                               "{\"jsonrpc\":\"2.0\",\"id\":99,\"method\":\"tools/call\",\"params\":{\"name\":\"run_code\",\"arguments\":{\"language\":\"python\",\"code\":\"print(1)\",\"files\":[{\"path\":\"a\",\"content\":\"aGk=\",\"encoding\":\"base64\"}],\"args\":[\"x\"],\"env\":{\"A_1\":\"b\"},\"cpus\":0.5,\"timeout_ms\":1000,\"memory_mb\":null}}}\n");
        static const char *const l2[] = { "sh", "python", NULL };
        static exchange x;
        ASSERT_OK(converse_with(input, &x, l2));
        char b[4096], id[16];
        for (size_t i = 0; i < ARRAY_SIZE(c); i++) {
                snprintf(id, sizeof id, "%zu", 100 + i);
                const char *line = answer(&x, id, b, sizeof b);
                bool ok = line && strstr(line, "\"isError\":true") && strstr(line, c[i].want);
                if (!ok)
                        tap_diag("%s", line ? line : "(no answer)");
                tap_check(ok, "%s {%s}: %s", c[i].tool, c[i].args, c[i].want);
        }
        const char *line = answer(&x, "99", b, sizeof b);
        tap_check(line && strstr(line, "run_code: no engine"), "valid arguments pass the checks");
}

TEST(old_versions_get_no_structured_content)
{
        static exchange x;
        ASSERT_OK(converse(INIT("2025-03-26")
                           "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"session_list\"}}\n",
                           &x));
        char b[4096];
        ASSERT_NOT_NULL(answer(&x, "1", b, sizeof b));
        ASSERT_TRUE(strstr(b, "\"protocolVersion\":\"2025-03-26\"") != NULL);
        ASSERT_TRUE(strstr(b, "\"title\"") == NULL);
        ASSERT_NOT_NULL(answer(&x, "2", b, sizeof b));
        ASSERT_TRUE(strstr(b, "structuredContent") == NULL);
        ASSERT_TRUE(strstr(b, "sessions") != NULL);
}

int
main(void)
{
        signal(SIGPIPE, SIG_IGN);
        RUN(version_negotiation);
        RUN(gating_by_version);
        RUN(schemas_are_strict);
        RUN(open_world_with_network);
        RUN(lifecycle);
        RUN(old_versions_get_no_structured_content);
        RUN(bad_arguments_are_named);
        return tap_done();
}
