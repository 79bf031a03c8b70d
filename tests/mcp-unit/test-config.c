/* mcp-adapter/config.c: defaults, sizes, durations and CPUs, --config FILE with flags
 * winning, --rootfs, and errors that name the option and the value. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <unistd.h>

#include "tests/lib/tap.h"
#include "config.h"
#include "oci/macros.h"

#define MIB ((uint64_t) 1024 * 1024)

static int
load(mcp_config *cfg, msp_err *err, mcp_config_action *action, int argc, const char **argv)
{
        return mcp_config_load(cfg, argc, (char **) argv, action, err);
}

TEST(sizes)
{
        static const struct { const char *s; uint64_t v; int r; } c[] = {
                { "4096", 4096, 0 }, { "64k", 65536, 0 }, { "512M", 512 * MIB, 0 },
                { "1G", 1024 * MIB, 0 }, { "2GiB", 2048 * MIB, 0 }, { "1MB", MIB, 0 },
                { "1T", 1024 * 1024 * MIB, 0 }, { "", 0, -EINVAL }, { "M", 0, -EINVAL },
                { "-1", 0, -EINVAL }, { "1X", 0, -EINVAL }, { "1.5G", 0, -EINVAL },
                { "99999999999999999999", 0, -ERANGE }, { "17179869184T", 0, -ERANGE },
        };
        for (size_t i = 0; i < ARRAY_SIZE(c); i++) {
                uint64_t v = 0;
                int r = mcp_parse_size(c[i].s, &v);
                tap_check(r == c[i].r && (r < 0 || v == c[i].v), "size \"%s\" -> %d %" PRIu64, c[i].s, r, v);
        }
}

TEST(defaults_and_flags)
{
        mcp_config cfg;
        msp_err err = { 0 };
        mcp_config_action action;
        const char *argv[] = { "msp-mcp", "--runtime", "/bin/true", "--memory", "1G", "--cpus=0.5",
                               "--timeout", "1500ms", "--session-ttl", "2h", "--allow-network",
                               "--rootfs", "tmp=/tmp", "--log-level", "debug", NULL };
        ASSERT_OK_ERR(load(&cfg, &err, &action, ARRAY_SIZE(argv) - 1, argv), err);
        ASSERT_EQ_INT(action, MCP_ACTION_SERVE);
        ASSERT_EQ_U64(cfg.defaults.memory_bytes, 1024 * MIB);
        ASSERT_EQ_U64(cfg.defaults.cpu_millis, 500);
        ASSERT_EQ_U64(cfg.defaults.timeout_ms, 1500);
        ASSERT_EQ_U64(cfg.session_ttl_s, 7200);
        ASSERT_TRUE(cfg.allow_network);
        ASSERT_EQ_INT(cfg.n_rootfs, 2);
        ASSERT_STREQ(cfg.rootfs[0].name, "host");
        ASSERT_STREQ(cfg.rootfs[1].name, "tmp");
        ASSERT_STREQ(cfg.rootfs[1].path, "/tmp");
        ASSERT_STREQ(cfg.log_level, "debug");
        ASSERT_EQ_U64(cfg.max_message_bytes, 16 * MIB);
        ASSERT_STREQ(cfg.state_dir, "/run/msp-mcp");
        ASSERT_TRUE(cfg.max_concurrent >= 1);
        mcp_config_done(&cfg);
}

TEST(network_helper)
{
        /* Found in PATH as an absolute path (the runtime runs the hook with its own
         * environment); named with --slirp4netns; absent: NULL. */
        mcp_config cfg;
        msp_err err = { 0 };
        mcp_config_action action;
        char dir[] = "/tmp/test-config-XXXXXX";
        ASSERT_NOT_NULL(mkdtemp(dir));
        char helper[64], path[128];
        snprintf(helper, sizeof helper, "%s/slirp4netns", dir);
        int fd = open(helper, O_WRONLY | O_CREAT | O_CLOEXEC, 0755);
        ASSERT_TRUE(fd >= 0);
        close(fd);
        const char *old = getenv("PATH");
        _cleanup_free_ char *saved = old ? strdup(old) : NULL;
        snprintf(path, sizeof path, "/nonexistent:relative:%s", dir);
        setenv("PATH", path, 1);
        const char *argv[] = { "msp-mcp", "--runtime", "/bin/true", NULL };
        int r = load(&cfg, &err, &action, ARRAY_SIZE(argv) - 1, argv);
        const char *found = r == 0 && cfg.usernet_path ? strdup(cfg.usernet_path) : NULL;
        if (r == 0)
                mcp_config_done(&cfg);
        setenv("PATH", "/nonexistent", 1);
        int r2 = load(&cfg, &err, &action, ARRAY_SIZE(argv) - 1, argv);
        bool absent = r2 == 0 && cfg.usernet_path == NULL;
        if (r2 == 0)
                mcp_config_done(&cfg);
        const char *named[] = { "msp-mcp", "--runtime", "/bin/true", "--slirp4netns", "/opt/s4n", NULL };
        int r3 = load(&cfg, &err, &action, ARRAY_SIZE(named) - 1, named);
        bool is_named = r3 == 0 && cfg.usernet_path && strcmp(cfg.usernet_path, "/opt/s4n") == 0;
        if (r3 == 0)
                mcp_config_done(&cfg);
        if (saved)
                setenv("PATH", saved, 1);
        (void) unlink(helper);
        (void) rmdir(dir);
        ASSERT_OK(r);
        ASSERT_NOT_NULL(found);
        ASSERT_STREQ(found, helper);
        free((char *) found);
        ASSERT_TRUE(absent);
        ASSERT_TRUE(is_named);
}

TEST(config_file_and_precedence)
{
        char path[] = "/tmp/msp-mcp-config-XXXXXX";
        int fd = mkstemp(path);
        ASSERT_TRUE(fd >= 0);
        const char *json = "{\"memory\": \"256M\", \"pids\": 99, \"allow_network\": true, "
                           "\"timeout\": \"10s\", \"rootfs\": {\"t\": \"/tmp\"}}";
        ASSERT_EQ_INT(write(fd, json, strlen(json)), (int) strlen(json));
        close(fd);
        mcp_config cfg;
        msp_err err = { 0 };
        mcp_config_action action;
        /* The flag comes before --config and still wins. */
        const char *argv[] = { "msp-mcp", "--pids", "7", "--runtime", "/bin/true", "--config", path, NULL };
        int r = load(&cfg, &err, &action, ARRAY_SIZE(argv) - 1, argv);
        unlink(path);
        ASSERT_OK_ERR(r, err);
        ASSERT_EQ_U64(cfg.defaults.memory_bytes, 256 * MIB);
        ASSERT_EQ_U64(cfg.defaults.pids, 7);
        ASSERT_EQ_U64(cfg.defaults.timeout_ms, 10000);
        ASSERT_TRUE(cfg.allow_network);
        ASSERT_EQ_INT(cfg.n_rootfs, 2);
        mcp_config_done(&cfg);
}

TEST(errors_name_option_and_value)
{
        static const struct { const char *args[5]; const char *want; } c[] = {
                { { "--memory", "lots" }, "--memory \"lots\"" },
                { { "--memory", "0" }, "--memory \"0\"" },
                { { "--cpus", "1e3" }, "--cpus \"1e3\"" },
                { { "--cpus", "0.005" }, "--cpus \"0.005\"" },
                { { "--cpus", "1.0001" }, "--cpus \"1.0001\"" },
                { { "--timeout", "soon" }, "--timeout \"soon\"" },
                { { "--pids", "-4" }, "--pids \"-4\"" },
                { { "--allow-network=maybe" }, "--allow-network \"maybe\"" },
                { { "--log-level", "loud" }, "--log-level \"loud\"" },
                { { "--rootfs", "x" }, "--rootfs \"x\"" },
                { { "--rootfs", "x=/nonexistent-dir" }, "/nonexistent-dir" },
                { { "--rootfs", "host=/tmp" }, "already taken" },
                { { "--image", "x=docker://busybox" }, "--image \"x=docker://busybox\": expected NAME=oci:/DIR" },
                { { "--image", "host=oci:/tmp" }, "already taken" },
                { { "--image-cache", "cache" }, "--image-cache \"cache\": must be an absolute path" },
                { { "--frobnicate" }, "unknown option \"--frobnicate\"" },
                { { "--memory", "8G" }, "--memory 8192M is above --max-memory 4096M" },
                { { "--timeout", "5m", "--max-timeout", "1m" }, "--timeout 5m is above --max-timeout 1m" },
                { { "--session-ttl", "2h", "--session-max-ttl", "90m" },
                  "--session-ttl 2h is above --session-max-ttl 90m" },
                { { "--state-dir", "relative" }, "--state-dir \"relative\"" },
                { { "--config", "/nonexistent.json" }, "/nonexistent.json" },
                { { "--memory" }, "--memory: value missing" },
        };
        for (size_t i = 0; i < ARRAY_SIZE(c); i++) {
                const char *argv[8] = { "msp-mcp", "--runtime", "/bin/true" };
                int argc = 3;
                for (size_t j = 0; c[i].args[j]; j++)
                        argv[argc++] = c[i].args[j];
                mcp_config cfg;
                msp_err err = { 0 };
                mcp_config_action action;
                int r = load(&cfg, &err, &action, argc, argv);
                bool ok = r < 0 && strstr(err.msg, c[i].want);
                if (!ok)
                        tap_diag("r=%d msg=%s", r, err.msg);
                tap_check(ok, "error for %s %s names \"%s\"", c[i].args[0], c[i].args[1] ? c[i].args[1] : "",
                          c[i].want);
                mcp_config_done(&cfg);
        }
}

TEST(actions)
{
        static const struct { const char *flag; mcp_config_action a; } c[] = {
                { "--help", MCP_ACTION_HELP }, { "--version", MCP_ACTION_VERSION },
                { "--check", MCP_ACTION_CHECK },
        };
        for (size_t i = 0; i < ARRAY_SIZE(c); i++) {
                const char *argv[] = { "msp-mcp", "--runtime", "/bin/true", c[i].flag, NULL };
                mcp_config cfg;
                msp_err err = { 0 };
                mcp_config_action action = MCP_ACTION_SERVE;
                int r = load(&cfg, &err, &action, 4, argv);
                tap_check(r == 0 && action == c[i].a, "%s", c[i].flag);
                mcp_config_done(&cfg);
        }
        /* --help lists every option with its default. */
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        ASSERT_NOT_NULL(f);
        mcp_config_help(f);
        fclose(f);
        ASSERT_TRUE(strstr(text, "--max-message-bytes SIZE") && strstr(text, "(default 16M)"));
        ASSERT_TRUE(strstr(text, "--state-dir DIR") && strstr(text, "/run/msp-mcp"));
        /* an address is no PATH (the label a string option has by default) */
        ASSERT_TRUE(strstr(text, "--probe-listen ADDR ") && !strstr(text, "--probe-listen PATH"));
        free(text);
}

int
main(void)
{
        RUN(sizes);
        RUN(defaults_and_flags);
        RUN(network_helper);
        RUN(config_file_and_precedence);
        RUN(errors_name_option_and_value);
        RUN(actions);
        return tap_done();
}
