/* mcp-adapter/engine/engine.c: real runs through the real runtime ($MSP, or $MCP_RUNTIME=runc) on
 * this host, driven by the real loop: exit codes, signals, stdin, files/args/env, timeout
 * kill, OOM on a 32 MiB limit, output cap and run logs, artifacts, queue and -EBUSY,
 * cancel, sessions, and no leftovers (containers, cgroups, mounts, dirs) after free.
 * Root only. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/lib/tap.h"
#include "tests/lib/loop-deadline.h"
#include "engine/engine.h"
#include "sandbox/languages.h"
#include "sandbox/sandbox-ids.h"
#include "base/loop.h"
#include "engine/recover.h"
#include "session/session.h"

static char base[64];                   /* /tmp/mcp-engine-XXXXXX */
static char state[128];
static char empty_root[128];
static char busybox_root[4200];         /* bundles/busybox/rootfs (git-ignored, prepared) */
static mcp_rootfs rootfs[] = { { "host", NULL }, { "empty", empty_root },
                               { "busybox", busybox_root } };

/* <source>/<rel> in the source tree (MSP_SOURCE_ROOT) */
static void
source_path(const char *rel, char *buf, size_t size)
{
        snprintf(buf, size, "%s/%s", tap_source_root(), rel);
}
static mcp_config cfg;
static mcp_loop *loop;
static mcp_engine *engine;

typedef struct outcome {
        bool done;
        mcp_run_result r;               /* buffers copied below */
        char out[1 << 16], errb[1 << 16];
        size_t n_art;
        char art_path[4][128], art_mime[4][64];
        bool art_data[4];
        char run_id[64];
        size_t chunks;
} outcome;

static int pending;

static void
on_output(mcp_run *run, mcp_stream s, const char *buf, size_t len, void *data)
{
        (void) run;
        (void) s;
        (void) buf;
        (void) len;
        ((outcome *) data)->chunks++;
}

static void
on_done(mcp_run *run, const mcp_run_result *r, void *data)
{
        outcome *o = data;
        (void) run;
        o->done = true;
        o->r = *r;
        snprintf(o->out, sizeof o->out, "%.*s", (int) r->stdout_len, r->stdout_buf);
        snprintf(o->errb, sizeof o->errb, "%.*s", (int) r->stderr_len, r->stderr_buf);
        snprintf(o->run_id, sizeof o->run_id, "%s", r->run_id);
        o->r.stdout_buf = o->r.stderr_buf = NULL;
        o->r.artifacts = NULL;
        o->n_art = r->n_artifacts;
        for (size_t i = 0; i < r->n_artifacts && i < 4; i++) {
                snprintf(o->art_path[i], sizeof o->art_path[i], "%s", r->artifacts[i].path);
                snprintf(o->art_mime[i], sizeof o->art_mime[i], "%s", r->artifacts[i].mime_type);
                o->art_data[i] = r->artifacts[i].data != NULL;
        }
        if (--pending == 0)
                mcp_loop_exit(loop, 0);
}

/* Run the loop until every submitted run is done (bounded). */
static int
wait_runs(unsigned seconds)
{
        if (pending == 0)
                return 0;
        return test_loop_run_within(loop, (uint64_t) seconds * 1000000);
}

static int
submit(mcp_run_request *req, outcome *o, mcp_run **ret, msp_err *err)
{
        int r = mcp_engine_submit(engine, req, on_output, on_done, o, ret, err);
        if (r >= 0)
                pending++;
        return r;
}

static int
run_sh(const char *lang, const char *code, mcp_limits lim, outcome *o)
{
        msp_err err = { 0 };
        mcp_run_request req = { .language = lang, .code = code, .code_len = strlen(code),
                                .limits = lim };
        int r = submit(&req, o, NULL, &err);
        if (r < 0) {
                tap_diag("submit: %s", err.msg);
                return r;
        }
        return wait_runs(60);
}

TEST(echo_hi)
{
        static outcome o;
        ASSERT_OK(run_sh("sh", "echo hi", (mcp_limits){ 0 }, &o));
        ASSERT_TRUE(o.done);
        if (o.r.sandbox_failed)
                tap_diag("sandbox failed: %s", o.r.error);
        ASSERT_FALSE(o.r.sandbox_failed);
        ASSERT_EQ_INT(o.r.exit_code, 0);
        ASSERT_EQ_INT(o.r.term_signal, 0);
        ASSERT_STREQ(o.out, "hi\n");
        ASSERT_STREQ(o.errb, "");
        ASSERT_TRUE(strncmp(o.run_id, "r-", 2) == 0);
        ASSERT_TRUE(o.chunks >= 1);
}

TEST(exit_code_and_signal)
{
        static outcome a, b;
        ASSERT_OK(run_sh("sh", "echo err >&2; exit 3", (mcp_limits){ 0 }, &a));
        ASSERT_EQ_INT(a.r.exit_code, 3);
        ASSERT_EQ_INT(a.r.term_signal, 0);
        ASSERT_STREQ(a.errb, "err\n");
        ASSERT_FALSE(a.r.sandbox_failed);
        /* The init passes the program's signal on as 128+N: still a signal, not a code. */
        ASSERT_OK(run_sh("python", "import ctypes\nctypes.string_at(0)", (mcp_limits){ 0 }, &b));
        ASSERT_FALSE(b.r.sandbox_failed);
        ASSERT_EQ_INT(b.r.term_signal, SIGSEGV);
        ASSERT_EQ_INT(b.r.exit_code, 0);
        ASSERT_FALSE(b.r.timed_out);
        static outcome c;
        ASSERT_OK(run_sh("sh", "exit 1", (mcp_limits){ 0 }, &c));
        ASSERT_FALSE(c.r.sandbox_failed);
        ASSERT_EQ_INT(c.r.exit_code, 1);
        ASSERT_EQ_INT(c.r.term_signal, 0);
}

TEST(missing_init_refused)
{
        /* Checked first, before any mount or directory: nothing to clean up. */
        mcp_config c2 = cfg;
        mcp_engine *e2 = NULL;
        msp_err err = { 0 };
        c2.init_path = NULL;
        ASSERT_EQ_INT(mcp_engine_new(loop, &c2, NULL, &e2, &err), -ENOENT);
        ASSERT_TRUE(strstr(err.msg, "msp-sandbox-init") && strstr(err.msg, "--sandbox-init"));
        c2.init_path = "/nonexistent/msp-sandbox-init";
        ASSERT_EQ_INT(mcp_engine_new(loop, &c2, NULL, &e2, &err), -ENOENT);
        ASSERT_TRUE(strstr(err.msg, "/nonexistent/msp-sandbox-init") != NULL);
        char plain[160];                        /* a regular file, not executable */
        snprintf(plain, sizeof plain, "%s/not-executable", base);
        FILE *f = fopen(plain, "w");
        ASSERT_NOT_NULL(f);
        fclose(f);
        ASSERT_OK(chmod(plain, 0644));
        c2.init_path = plain;
        int r = mcp_engine_new(loop, &c2, NULL, &e2, &err);
        unlink(plain);
        if (e2) {
                /* Must not happen: a second engine would unshare this process's mounts. */
                mcp_engine_free(e2);
                printf("Bail out! an engine started with a non-executable init\n");
                exit(1);
        }
        ASSERT_EQ_INT(r, -EACCES);
}

TEST(init_is_pid1)
{
        /* pid 1 is msp-sandbox-init with the program after "--"; the program is not pid 1. */
        static outcome o;
        ASSERT_OK(run_sh("sh", "tr '\\0' ' ' </proc/1/cmdline; echo; [ $$ != 1 ] && echo notpid1",
                         (mcp_limits){ 0 }, &o));
        ASSERT_FALSE(o.r.sandbox_failed);
        ASSERT_EQ_INT(o.r.exit_code, 0);
        ASSERT_TRUE(strncmp(o.out, "/.msp/init -- /", 15) == 0);
        ASSERT_TRUE(strstr(o.out, "/.msp/main.sh \nnotpid1\n") != NULL);
}

TEST(self_signal_kills)
{
        /* Without an init the program was pid 1 and these signals were dropped. */
        static outcome a, b;
        ASSERT_OK(run_sh("sh", "echo before; kill $$; echo after", (mcp_limits){ 0 }, &a));
        ASSERT_FALSE(a.r.sandbox_failed);
        ASSERT_FALSE(a.r.timed_out);
        ASSERT_EQ_INT(a.r.term_signal, SIGTERM);
        ASSERT_EQ_INT(a.r.exit_code, 0);
        ASSERT_STREQ(a.out, "before\n");
        ASSERT_OK(run_sh("python",
                         "import os, signal\nprint('before', flush=True)\n"
                         "os.kill(os.getpid(), signal.SIGTERM)\nprint('after')",
                         (mcp_limits){ 0 }, &b));
        ASSERT_FALSE(b.r.sandbox_failed);
        ASSERT_FALSE(b.r.timed_out);
        ASSERT_EQ_INT(b.r.term_signal, SIGTERM);
        ASSERT_STREQ(b.out, "before\n");
}

TEST(exit_status_above_128)
{
        /* The init's status pipe tells a plain `exit 130` from a death by SIGINT, which
         * `run` both reports as 130. */
        static outcome o;
        static const int codes[] = { 129, 130, 137, 143, 192, 255 };
        for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
                char code[32];
                snprintf(code, sizeof code, "exit %d", codes[i]);
                o = (outcome){ 0 };
                ASSERT_OK(run_sh("sh", code, (mcp_limits){ 0 }, &o));
                ASSERT_FALSE(o.r.sandbox_failed);
                ASSERT_EQ_INT(o.r.exit_code, codes[i]);
                ASSERT_EQ_INT(o.r.term_signal, 0);
        }
        static const struct { const char *code; int sig; } kills[] = {
                { "kill -INT $$; echo after", SIGINT },
                { "kill -KILL $$; echo after", SIGKILL },
        };
        for (size_t i = 0; i < sizeof kills / sizeof kills[0]; i++) {
                o = (outcome){ 0 };
                ASSERT_OK(run_sh("sh", kills[i].code, (mcp_limits){ 0 }, &o));
                ASSERT_FALSE(o.r.sandbox_failed);
                ASSERT_FALSE(o.r.timed_out);
                ASSERT_EQ_INT(o.r.term_signal, kills[i].sig);
                ASSERT_EQ_INT(o.r.exit_code, 0);
                ASSERT_STREQ(o.out, "");
        }
}

TEST(status_pipe_out_of_reach)
{
        /* A forged "signal 2" before `exit 130` would turn it into SIGINT: neither the
         * inherited fd 3 nor pid 1's /proc entry is writable by the program. */
        static outcome o;
        ASSERT_OK(run_sh("sh",
                         "(echo 'signal 2' >&3) 2>/dev/null && echo fd3;"
                         " (echo 'signal 2' >/proc/1/fd/3) 2>/dev/null && echo proc;"
                         " ls /proc/1/fd >/dev/null 2>&1 && echo listed; exit 130",
                         (mcp_limits){ 0 }, &o));
        ASSERT_FALSE(o.r.sandbox_failed);
        ASSERT_STREQ(o.out, "");
        ASSERT_EQ_INT(o.r.exit_code, 130);
        ASSERT_EQ_INT(o.r.term_signal, 0);
}

TEST(signal_to_pid1_forwarded)
{
        /* A signal for pid 1 reaches the program (its trap runs), which exits as it likes.
         * The loop bounds the wait (dash runs the trap between commands). */
        static outcome o;
        ASSERT_OK(run_sh("sh",
                         "trap 'echo got; exit 5' USR1; kill -USR1 1; i=0;"
                         " while [ $i -lt 2000000 ]; do i=$((i+1)); done; echo missed",
                         (mcp_limits){ 0 }, &o));
        ASSERT_FALSE(o.r.sandbox_failed);
        ASSERT_STREQ(o.out, "got\n");
        ASSERT_EQ_INT(o.r.exit_code, 5);
}

/* 50 orphans (their parents exit first) that exit: pid 1 reaps them while the program
 * keeps running. The pipe's EOF says every orphan has exited; reaping is the init's, so
 * the program polls /proc for zombies, bounded. */
static const char orphans_py[] =
        "import os, time\n"
        "r, w = os.pipe()\n"
        "for i in range(50):\n"
        "    if os.fork() == 0:\n"
        "        if os.fork() == 0:\n"
        "            os._exit(0)\n"
        "        os._exit(0)\n"
        "    os.wait()\n"
        "os.close(w)\n"
        "assert os.read(r, 1) == b''\n"
        "def zombies():\n"
        "    z = 0\n"
        "    for p in os.listdir('/proc'):\n"
        "        if p.isdigit():\n"
        "            try:\n"
        "                st = open('/proc/%s/stat' % p).read()\n"
        "            except OSError:\n"
        "                continue\n"
        "            z += st.rsplit(') ', 1)[1][0] == 'Z'\n"
        "    return z\n"
        "end = time.monotonic() + 10\n"
        "while zombies() and time.monotonic() < end:\n"
        "    time.sleep(0.01)\n"
        "print(zombies(), sorted(int(p) for p in os.listdir('/proc') if p.isdigit())[0])\n"
        "raise SystemExit(7)\n";

TEST(kill_group_once)
{
        /* `kill 0` from the program reaches its own process group, not pid 1 (which would
         * forward a second copy): the handler counts exactly one. The USR2 sent through
         * pid 1 afterwards is the barrier: pid 1 takes pending signals lowest first and
         * forwards in order, so a USR1 copy would have arrived before it. */
        static outcome o;
        ASSERT_OK(run_sh("python",
                         "import os, signal\nn = []\n"
                         "signal.signal(signal.SIGUSR1, lambda s, f: n.append(s))\n"
                         "signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR2})\n"
                         "os.kill(0, signal.SIGUSR1)\n"
                         "os.kill(1, signal.SIGUSR2)\n"
                         "signal.sigwait({signal.SIGUSR2})\n"
                         "x = 1\n"
                         "print(len(n), os.getpgid(0) == os.getpid())\n",
                         (mcp_limits){ 0 }, &o));
        ASSERT_FALSE(o.r.sandbox_failed);
        ASSERT_STREQ(o.out, "1 True\n");
        ASSERT_EQ_INT(o.r.exit_code, 0);
}

TEST(orphans_reaped)
{
        static outcome o;
        ASSERT_OK(run_sh("python", orphans_py, (mcp_limits){ 0 }, &o));
        if (o.errb[0])
                tap_diag("stderr: %s", o.errb);
        ASSERT_FALSE(o.r.sandbox_failed);
        ASSERT_FALSE(o.r.timed_out);
        ASSERT_STREQ(o.out, "0 1\n");
        ASSERT_EQ_INT(o.r.exit_code, 7);
        ASSERT_EQ_INT(o.r.term_signal, 0);
}

TEST(leftovers_die_with_program)
{
        /* The program exits while a background child holds stdout open: pid 1 exits with
         * the program's code, the kernel kills the rest of the pid namespace, the run ends
         * now rather than at the 20 s timeout. */
        static outcome o;
        ASSERT_OK(run_sh("sh", "sleep 30 & sleep 30 </dev/null >/dev/null 2>&1 & echo up; exit 4",
                         (mcp_limits){ 0 }, &o));
        ASSERT_FALSE(o.r.sandbox_failed);
        ASSERT_FALSE(o.r.timed_out);
        ASSERT_EQ_INT(o.r.exit_code, 4);
        ASSERT_STREQ(o.out, "up\n");
        if (o.r.duration_ms > 10000)
                TAP_FAIL_("the run took %ju ms", (uintmax_t) o.r.duration_ms);
}

TEST(sandbox_identity)
{
        static outcome o;
        ASSERT_OK(run_sh("sh",
                         "id -u; id -g; pwd; grep -E '^(CapEff|NoNewPrivs|Seccomp):' /proc/self/status;"
                         " cat /etc/shadow 2>/dev/null || echo noshadow; ls /root 2>/dev/null | wc -l;"
                         " touch /usr/x 2>/dev/null || echo rofs; echo $HOME $LANG;"
                         " tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ';"
                         " ls / | grep -c workspace",
                         (mcp_limits){ 0 }, &o));
        ASSERT_FALSE(o.r.sandbox_failed);
        ASSERT_STREQ(o.out, "1000\n1000\n/workspace\nCapEff:\t0000000000000000\nNoNewPrivs:\t1\n"
                            "Seccomp:\t2\nnoshadow\n0\nrofs\n/workspace C.UTF-8\nlo\n1\n");
}

TEST(stdin_files_args_env)
{
        static outcome o;
        msp_err err = { 0 };
        const char *args[] = { "one", "two words" };
        const char *env[] = { "FOO=bar", "LANG=C" };
        mcp_file_in files[] = { { .path = "data/in.txt", .data = "filedata\n", .len = 9 } };
        const char *code = "cat; cat data/in.txt; echo \"$1|$2|$FOO|$LANG\"";
        mcp_run_request req = { .language = "sh", .code = code, .code_len = strlen(code),
                                .stdin_data = "from stdin\n", .stdin_len = 11,
                                .files = files, .n_files = 1, .args = args, .n_args = 2,
                                .env = env, .n_env = 2 };
        ASSERT_OK_ERR(submit(&req, &o, NULL, &err), err);
        ASSERT_OK(wait_runs(60));
        ASSERT_STREQ(o.out, "from stdin\nfiledata\none|two words|bar|C\n");
}

TEST(stdin_not_read)
{
        /* 1 MiB of stdin the program never reads: the pipe closes, the run still ends. */
        static outcome o;
        static char big[1 << 20];
        msp_err err = { 0 };
        memset(big, 'x', sizeof big);
        mcp_run_request req = { .language = "sh", .code = "echo ok", .code_len = 7,
                                .stdin_data = big, .stdin_len = sizeof big };
        ASSERT_OK_ERR(submit(&req, &o, NULL, &err), err);
        ASSERT_OK(wait_runs(60));
        ASSERT_STREQ(o.out, "ok\n");
        ASSERT_EQ_INT(o.r.exit_code, 0);
}

TEST(prepared_rootfs_without_language)
{
        mcp_session_store *st = mcp_engine_sessions(engine);
        mcp_session_info info;
        msp_err err = { 0 };
        ASSERT_OK_ERR(mcp_session_create(st, &(mcp_session_opts){ .rootfs = "empty" }, &info, &err),
                      err);
        static outcome o;
        mcp_run_request req = { .language = "sh", .code = "true", .code_len = 4,
                                .session_id = info.id };
        int r = mcp_engine_submit(engine, &req, NULL, on_done, &o, NULL, &err);
        (void) mcp_session_close(st, info.id, true, NULL);
        ASSERT_EQ_INT(r, -ENOENT);
        ASSERT_TRUE(strstr(err.msg, "'sh'") && strstr(err.msg, "'empty'"));
        ASSERT_FALSE(o.done);
}

/* In a child: a second engine unshares another mount namespace, which the first one's
 * sessions must not see. Exit 0 when the run is a sandbox failure with the message. */
static int
broken_runtime_child(void)
{
        static outcome o;
        mcp_config c2 = cfg;
        c2.runtime_path = "/bin/false";
        mcp_engine *e2 = NULL;
        msp_err err = { 0 };
        if (mcp_loop_new(&loop) < 0 || mcp_engine_new(loop, &c2, NULL, &e2, &err) < 0) {
                printf("# engine: %s\n", err.msg);
                return 1;
        }
        engine = e2;
        mcp_run_request req = { .language = "sh", .code = "echo hi", .code_len = 7 };
        int r = submit(&req, &o, NULL, &err);
        int w = r < 0 ? r : wait_runs(30);
        mcp_engine_free(e2);
        printf("# submit %d wait %d failed %d error '%s'\n", r, w, o.r.sandbox_failed, o.r.error);
        return r >= 0 && w >= 0 && o.r.sandbox_failed &&
                       strstr(o.r.error, "before creating the container") ? 0 : 1;
}

/* fn in a forked child, where a second engine cannot touch this process's mounts: it
 * exited 0. */
static bool
child_passes(int (*fn)(void))
{
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0)
                _exit(fn());
        int st;
        return pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

TEST(runtime_failure_is_sandbox_failure)
{
        ASSERT_TRUE(child_passes(broken_runtime_child));
}

/* In a child (a second engine): the engine lists the languages of the host its caller
 * detected and does not detect them again. Exit 0 when only "sh" of the host's is listed
 * after the others were dropped from what was handed over. */
static int
given_host_child(void)
{
        static mcp_host host;
        msp_err err = { 0 };
        if (mcp_host_detect(&host, &err) < 0 || host.langs.n < 2) {
                printf("# host: %zu languages %s\n", host.langs.n, err.msg);
                return 1;
        }
        for (size_t i = host.langs.n; i-- > 0;)
                if (strcmp(host.langs.names[i], "sh") != 0)
                        mcp_languages_drop(&host.langs, host.langs.names[i], "dropped by the test");
        mcp_engine *e2 = NULL;
        if (mcp_loop_new(&loop) < 0 || mcp_engine_new(loop, &cfg, &host, &e2, &err) < 0) {
                printf("# engine: %s\n", err.msg);
                return 1;
        }
        const char *const *names = mcp_engine_languages(e2);
        const char *why = NULL, *off = mcp_engine_language_off(e2, 0, &why);
        bool ok = names[0] && strcmp(names[0], "sh") == 0 && !names[1] && off &&
                  strcmp(why, "dropped by the test") == 0;
        printf("# listed %s %s, off %s: %s\n", names[0] ? names[0] : "-", names[0] && names[1] ? names[1] : "-",
               off ? off : "-", why ? why : "-");
        mcp_engine_free(e2);
        return ok ? 0 : 1;
}

TEST(engine_takes_the_callers_detection)
{
        ASSERT_TRUE(child_passes(given_host_child));
}

TEST(prepared_rootfs_busybox)
{
        mcp_session_store *st = mcp_engine_sessions(engine);
        mcp_session_info info;
        msp_err err = { 0 };
        ASSERT_OK_ERR(mcp_session_create(st, &(mcp_session_opts){ .rootfs = "busybox" }, &info,
                                         &err), err);
        static outcome o;
        const char *code = "busybox 2>&1 | head -n 1 | cut -d' ' -f1; id -u; echo w > f; cat f;"
                           " test -e /usr/bin/python3 || echo no-host-python";
        mcp_run_request req = { .language = "sh", .code = code, .code_len = strlen(code),
                                .session_id = info.id };
        int r = submit(&req, &o, NULL, &err);
        int w = r < 0 ? r : wait_runs(60);
        (void) mcp_session_close(st, info.id, true, NULL);
        ASSERT_OK_ERR(r, err);
        ASSERT_OK(w);
        ASSERT_STREQ(o.out, "BusyBox\n1000\nw\nno-host-python\n");
        /* The prepared rootfs itself was never written (a read-only overlay is used). */
        char p[4400];
        snprintf(p, sizeof p, "%s/.msp", busybox_root);
        ASSERT_TRUE(access(p, F_OK) < 0);
        snprintf(p, sizeof p, "%s/workspace", busybox_root);
        ASSERT_TRUE(access(p, F_OK) < 0);
}

TEST(bad_requests)
{
        static outcome o;
        msp_err err = { 0 };
        mcp_run_request req = { .language = "cobol", .code = "x", .code_len = 1 };
        ASSERT_EQ_INT(mcp_engine_submit(engine, &req, NULL, on_done, &o, NULL, &err), -EINVAL);
        ASSERT_TRUE(strstr(err.msg, "cobol") != NULL);
        const char *env[] = { "BAD KEY=1" };
        req = (mcp_run_request){ .language = "sh", .code = "x", .code_len = 1, .env = env,
                                 .n_env = 1 };
        ASSERT_EQ_INT(mcp_engine_submit(engine, &req, NULL, on_done, &o, NULL, &err), -EINVAL);
        ASSERT_TRUE(strstr(err.msg, "env[0]") != NULL);
        mcp_file_in files[] = { { .path = "../escape", .data = "x", .len = 1 } };
        req = (mcp_run_request){ .language = "sh", .code = "x", .code_len = 1, .files = files,
                                 .n_files = 1 };
        ASSERT_TRUE(mcp_engine_submit(engine, &req, NULL, on_done, &o, NULL, &err) < 0);
        ASSERT_TRUE(strstr(err.msg, "files[0]") != NULL);
        ASSERT_FALSE(o.done);
}

TEST(timeout_kills)
{
        static outcome o;
        uint64_t t0 = mcp_now_usec();
        /* The timer starts with the runtime: the budget leaves room for a slow runtime
         * (runc under load) to reach the program before the timeout kills it. */
        ASSERT_OK(run_sh("sh", "echo started; sleep 30 & sleep 30", (mcp_limits){ .timeout_ms = 2000 },
                         &o));
        uint64_t ms = (mcp_now_usec() - t0) / 1000;
        ASSERT_TRUE(o.r.timed_out);
        ASSERT_EQ_INT(o.r.term_signal, SIGKILL);
        ASSERT_STREQ(o.out, "started\n");
        ASSERT_TRUE(o.r.duration_ms >= 2000);
        if (ms > 10000)
                TAP_FAIL_("the timeout took %ju ms", (uintmax_t) ms);
}

TEST(oom_32mib)
{
        static outcome o;
        bool python = false;
        for (const char *const *l = mcp_engine_languages(engine); *l; l++)
                python |= strcmp(*l, "python") == 0;
        if (!python)
                TAP_FAIL_("this test needs python (/usr/bin/python3)");
        ASSERT_OK(run_sh("python", "b = b'x' * (200 << 20)\nprint('survived')",
                         (mcp_limits){ .memory_bytes = 32u << 20 }, &o));
        ASSERT_FALSE(o.r.sandbox_failed);
        ASSERT_TRUE(o.r.oom_killed);
        ASSERT_EQ_INT(o.r.term_signal, SIGKILL);
        ASSERT_TRUE(strstr(o.out, "survived") == NULL);
        /* A child killed by the OOM killer while the program goes on: its own status. */
        static outcome c;
        ASSERT_OK(run_sh("sh", "python3 -c \"b = b'x' * (200 << 20)\"; echo rc=$?",
                         (mcp_limits){ .memory_bytes = 32u << 20 }, &c));
        ASSERT_TRUE(c.r.oom_killed);
        ASSERT_EQ_INT(c.r.term_signal, 0);
        ASSERT_EQ_INT(c.r.exit_code, 0);
        ASSERT_STREQ(c.out, "rc=137\n");
}

TEST(output_cap_and_log)
{
        static outcome o;
        ASSERT_OK(run_sh("sh", "head -c 1000000 /dev/zero | tr '\\0' a; echo done >&2",
                         (mcp_limits){ .output_bytes = 1000 }, &o));
        ASSERT_EQ_INT(o.r.stdout_len, 1000);
        ASSERT_TRUE(o.r.stdout_truncated);
        ASSERT_FALSE(o.r.stderr_truncated);
        ASSERT_STREQ(o.errb, "done\n");
        char *log = NULL;
        size_t len = 0;
        msp_err err = { 0 };
        ASSERT_OK_ERR(mcp_engine_run_log(engine, o.run_id, MCP_STDOUT, &log, &len, &err), err);
        ASSERT_EQ_INT(len, 1000000);
        free(log);
        ASSERT_EQ_INT(mcp_engine_run_log(engine, "r-unknown", MCP_STDOUT, &log, &len, &err), -ENOENT);
}

static long
rss_kib(void)
{
        FILE *f = fopen("/proc/self/status", "re");
        char line[256];
        long kib = -1;
        while (f && fgets(line, sizeof line, f))
                if (sscanf(line, "VmRSS: %ld", &kib) == 1)
                        break;
        if (f)
                fclose(f);
        return kib;
}

TEST(output_flood_bounded)
{
        /* 256 MiB of output: the result keeps the cap, the log 16 MiB, memory stays flat. */
        static outcome o;
        long before = rss_kib();
        ASSERT_OK(run_sh("sh", "head -c 268435456 /dev/zero; echo end >&2",
                         (mcp_limits){ .output_bytes = 4096 }, &o));
        long after = rss_kib();
        ASSERT_EQ_INT(o.r.stdout_len, 4096);
        ASSERT_TRUE(o.r.stdout_truncated);
        ASSERT_STREQ(o.errb, "end\n");
        char *log = NULL;
        size_t len = 0;
        msp_err err = { 0 };
        ASSERT_OK_ERR(mcp_engine_run_log(engine, o.run_id, MCP_STDOUT, &log, &len, &err), err);
        free(log);
        ASSERT_EQ_INT(len, 16 << 20);
        if (after - before > 8192)
                TAP_FAIL_("RSS grew by %ld KiB during the flood", after - before);
}

TEST(artifacts)
{
        static outcome o;
        ASSERT_OK(run_sh("sh",
                         "mkdir -p out/sub; printf '\\211PNG\\r\\n\\032\\nxxxx' > out/a.png;"
                         " echo '<svg xmlns=\"http://www.w3.org/2000/svg\"/>' > out/sub/b.svg;"
                         " echo text > out/c.txt; ln -s /etc/passwd out/link",
                         (mcp_limits){ 0 }, &o));
        ASSERT_EQ_INT(o.r.exit_code, 0);
        ASSERT_EQ_INT(o.n_art, 3);
        int png = -1, svg = -1, txt = -1;
        for (int i = 0; i < 3; i++) {
                if (strcmp(o.art_path[i], "out/a.png") == 0)
                        png = i;
                if (strcmp(o.art_path[i], "out/sub/b.svg") == 0)
                        svg = i;
                if (strcmp(o.art_path[i], "out/c.txt") == 0)
                        txt = i;
        }
        ASSERT_TRUE(png >= 0 && svg >= 0 && txt >= 0);
        ASSERT_STREQ(o.art_mime[png], "image/png");
        ASSERT_TRUE(o.art_data[png]);
        ASSERT_STREQ(o.art_mime[svg], "image/svg+xml");
        ASSERT_STREQ(o.art_mime[txt], "text/plain");
        ASSERT_TRUE(o.art_data[txt]);                   /* small files carry their data */
}

TEST(languages)
{
        const char *const *l = mcp_engine_languages(engine);
        ASSERT_STREQ(l[0], "sh");
        for (size_t i = 0; l[i]; i++) {
                static outcome o;
                const char *code = NULL;
                if (strcmp(l[i], "python") == 0)
                        code = "print(6*7)";
                else if (strcmp(l[i], "node") == 0)
                        code = "console.log(6*7)";
                else if (strcmp(l[i], "perl") == 0)
                        code = "print 6*7, \"\\n\";";
                else if (strcmp(l[i], "c") == 0)
                        code = "#include <stdio.h>\nint main(void){printf(\"%d\\n\",6*7);return 0;}";
                if (!code)
                        continue;
                memset(&o, 0, sizeof o);
                ASSERT_OK(run_sh(l[i], code, (mcp_limits){ .memory_bytes = 512u << 20 }, &o));
                if (!tap_check(strcmp(o.out, "42\n") == 0, "language %s prints 42", l[i]))
                        tap_diag("stdout '%s' stderr '%s' exit %d", o.out, o.errb, o.r.exit_code);
        }
}

TEST(queue_and_busy)
{
        static outcome o[3];
        msp_err err = { 0 };
        const char *code = "sleep 0.2; echo q";
        mcp_run_request req = { .language = "sh", .code = code, .code_len = strlen(code) };
        /* max_concurrent 1 and max_queue 1: the third is refused. */
        ASSERT_OK_ERR(submit(&req, &o[0], NULL, &err), err);
        ASSERT_OK_ERR(submit(&req, &o[1], NULL, &err), err);
        ASSERT_EQ_INT(mcp_engine_submit(engine, &req, on_output, on_done, &o[2], NULL, &err), -EBUSY);
        ASSERT_OK(wait_runs(60));
        ASSERT_STREQ(o[0].out, "q\n");
        ASSERT_STREQ(o[1].out, "q\n");
        ASSERT_FALSE(o[2].done);
}

static unsigned queued_after_done = 99;

static int
note_queue(mcp_loop *l, void *data)
{
        unsigned running;
        (void) l;
        (void) data;
        mcp_engine_load(engine, &running, &queued_after_done);
        return 0;
}

static void
on_done_then_note(mcp_run *run, const mcp_run_result *r, void *data)
{
        ASSERT_OK(mcp_loop_add_timer(loop, 0, note_queue, NULL, NULL));
        on_done(run, r, data);
}

/* The next queued run starts in the loop's round after the exit handler, after what the
 * handler queued for that round (an HTTP response is sent from such a zero timer). */
TEST(next_starts_after_the_answer)
{
        static outcome o[2];
        msp_err err = { 0 };
        mcp_run_request req = { .language = "sh", .code = "echo q", .code_len = 6 };
        ASSERT_OK_ERR(mcp_engine_submit(engine, &req, on_output, on_done_then_note, &o[0], NULL,
                                        &err), err);
        pending++;
        ASSERT_OK_ERR(submit(&req, &o[1], NULL, &err), err);
        ASSERT_OK(wait_runs(60));
        ASSERT_STREQ(o[0].out, "q\n");
        ASSERT_STREQ(o[1].out, "q\n");
        ASSERT_EQ_INT(queued_after_done, 1);
}

static int
cancel_it(mcp_loop *l, void *data)
{
        mcp_engine_cancel(engine, data);
        pending--;
        mcp_loop_exit(l, 0);
        return 0;
}

TEST(cancel)
{
        static outcome o, q;
        msp_err err = { 0 };
        mcp_run *run = NULL, *queued = NULL;
        const char *code = "echo x; sleep 30";
        mcp_run_request req = { .language = "sh", .code = code, .code_len = strlen(code) };
        ASSERT_OK_ERR(submit(&req, &o, &run, &err), err);
        ASSERT_OK_ERR(submit(&req, &q, &queued, &err), err);
        mcp_engine_cancel(engine, queued);              /* a queued run goes at once */
        pending--;
        ASSERT_OK(mcp_loop_add_timer(loop, 200000, cancel_it, run, NULL));
        ASSERT_OK(mcp_loop_run(loop));
        /* The next run proves the slot is free again; the cancelled ones never finish. */
        static outcome n;
        ASSERT_OK(run_sh("sh", "echo next", (mcp_limits){ 0 }, &n));
        ASSERT_STREQ(n.out, "next\n");
        ASSERT_FALSE(o.done);
        ASSERT_FALSE(q.done);
}

TEST(session_runs)
{
        mcp_session_store *st = mcp_engine_sessions(engine);
        mcp_session_info info;
        msp_err err = { 0 };
        ASSERT_OK_ERR(mcp_session_create(st, &(mcp_session_opts){ 0 }, &info, &err), err);
        static outcome a, b;
        const char *c1 = "echo kept > state.txt; mkdir -p out; echo x > out/r.txt";
        mcp_run_request req = { .language = "sh", .code = c1, .code_len = strlen(c1),
                                .session_id = info.id };
        ASSERT_OK_ERR(submit(&req, &a, NULL, &err), err);
        ASSERT_OK(wait_runs(60));
        ASSERT_EQ_INT(a.r.exit_code, 0);
        ASSERT_EQ_INT(a.n_art, 1);
        const char *c2 = "cat state.txt";
        req.code = c2;
        req.code_len = strlen(c2);
        ASSERT_OK_ERR(submit(&req, &b, NULL, &err), err);
        ASSERT_OK(wait_runs(60));
        ASSERT_STREQ(b.out, "kept\n");
        ASSERT_EQ_INT(b.n_art, 0);                      /* out/r.txt is from the first run */
        static outcome b2;
        const char *c4 = "echo y > out/r.txt";          /* rewritten in place: reported */
        req.code = c4;
        req.code_len = strlen(c4);
        ASSERT_OK_ERR(submit(&req, &b2, NULL, &err), err);
        ASSERT_OK(wait_runs(60));
        ASSERT_EQ_INT(b2.n_art, 1);
        ASSERT_STREQ(b2.art_path[0], "out/r.txt");
        /* One run per session: a second one while the first runs is refused. */
        static outcome c, d;
        const char *c3 = "sleep 0.3";
        req.code = c3;
        req.code_len = strlen(c3);
        ASSERT_OK_ERR(submit(&req, &c, NULL, &err), err);
        ASSERT_EQ_INT(mcp_engine_submit(engine, &req, NULL, on_done, &d, NULL, &err), -EAGAIN);
        ASSERT_TRUE(strstr(err.msg, info.id) != NULL);
        ASSERT_OK(wait_runs(60));
        ASSERT_EQ_INT(c.r.exit_code, 0);
        ASSERT_FALSE(d.done);
        ASSERT_OK_ERR(mcp_session_close(st, info.id, false, &err), err);
        req.code = "true";
        req.code_len = 4;
        ASSERT_EQ_INT(mcp_engine_submit(engine, &req, NULL, on_done, &a, NULL, &err), -ENOENT);
}

/* Each session holds a slice of host ids of its own (as root): its workspace belongs to
 * the slice's uid 1000, no other session's; closing it gives the slice back. */
TEST(session_slices)
{
        if (geteuid() != 0) {
                tap_diag("run by a user, every sandbox shares the user's one range");
                return;
        }
        mcp_session_store *st = mcp_engine_sessions(engine);
        mcp_session_info info[2];
        msp_err err = { 0 };
        for (int i = 0; i < 2; i++) {
                ASSERT_OK_ERR(mcp_session_create(st, &(mcp_session_opts){ 0 }, &info[i], &err), err);
                ASSERT_TRUE(info[i].slice >= 0);
                ASSERT_TRUE(info[i].id_base >= MCP_SANDBOX_SLICE_BASE(0));
                static outcome o[2];
                mcp_run_request req = { .language = "sh", .code = "stat -c %u /workspace",
                                        .code_len = 21, .session_id = info[i].id };
                ASSERT_OK_ERR(submit(&req, &o[i], NULL, &err), err);
                ASSERT_OK(wait_runs(60));
                ASSERT_STREQ(o[i].out, "1000\n");
                char ws[512];
                struct stat sb;
                snprintf(ws, sizeof ws, "%s/sessions/%s/merged", state, info[i].id);
                ASSERT_EQ_INT(stat(ws, &sb), 0);
                ASSERT_EQ_INT(sb.st_uid, info[i].id_base + 1000);
        }
        ASSERT_TRUE(info[0].slice != info[1].slice);
        ASSERT_TRUE(info[0].id_base + 65536 <= info[1].id_base ||
                    info[1].id_base + 65536 <= info[0].id_base);
        for (int i = 0; i < 2; i++)
                ASSERT_OK_ERR(mcp_session_close(st, info[i].id, false, &err), err);
}

TEST(network_session)
{
        /* Without its user-mode networking helper a network session is refused, naming it
         * (tests/mcp/network.test.mjs runs network sessions with it). */
        mcp_session_store *st = mcp_engine_sessions(engine);
        mcp_session_info info;
        msp_err err = { 0 };
        ASSERT_EQ_INT(mcp_session_create(st, &(mcp_session_opts){ .network = true }, &info, &err),
                      -ENOTSUP);
        ASSERT_TRUE(strstr(err.msg, "slirp4netns") != NULL);
}

TEST(timing)
{
        /* The time of one `echo hi` through the engine, for the report (not a pass/fail). */
        uint64_t best = UINT64_MAX, sum = 0;
        for (int i = 0; i < 10; i++) {
                static outcome o;
                memset(&o, 0, sizeof o);
                uint64_t t0 = mcp_now_usec();
                ASSERT_OK(run_sh("sh", "echo hi", (mcp_limits){ 0 }, &o));
                uint64_t us = mcp_now_usec() - t0;
                ASSERT_STREQ(o.out, "hi\n");
                sum += us;
                best = us < best ? us : best;
        }
        tap_diag("echo hi through the engine: best %.1f ms, mean %.1f ms", best / 1000.0,
                 sum / 10000.0);
}

static int
count_entries(const char *path)
{
        char cmd[512];
        snprintf(cmd, sizeof cmd, "ls -A %s 2>/dev/null | wc -l", path);
        FILE *p = popen(cmd, "r");
        int n = -1;
        if (p) {
                if (fscanf(p, "%d", &n) != 1)
                        n = -1;
                pclose(p);
        }
        return n;
}

static bool instance_name(char *buf, size_t size);

/* A server killed with SIGKILL while a container runs: the next start (mcp_recover) deletes
 * the container, removes its cgroups and the instance directory. */
static void
started(mcp_run *run, mcp_stream s, const char *buf, size_t len, void *data)
{
        (void) run;
        (void) s;
        (void) buf;
        (void) len;
        (void) data;
        raise(SIGKILL);                 /* die like a crashed server: nothing cleaned */
}

static int
dying_server_child(void)
{
        mcp_engine *e2 = NULL;
        msp_err err = { 0 };
        if (mcp_loop_new(&loop) < 0 || mcp_engine_new(loop, &cfg, NULL, &e2, &err) < 0)
                return 1;
        static outcome o;
        const char *code = "echo started; exec sleep 60";
        mcp_run_request req = { .language = "sh", .code = code, .code_len = strlen(code) };
        if (mcp_engine_submit(e2, &req, started, on_done, &o, NULL, &err) < 0)
                return 1;
        pending = 1;
        (void) wait_runs(30);
        return 1;                       /* not reached when the run started */
}

TEST(recover_after_sigkill)
{
        char before[300];
        ASSERT_TRUE(instance_name(before, sizeof before));
        fflush(stdout);
        pid_t pid = fork();
        ASSERT_TRUE(pid >= 0);
        if (pid == 0)
                _exit(dying_server_child());
        int st;
        ASSERT_EQ_INT(waitpid(pid, &st, 0), pid);
        ASSERT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
        char dead[600], p[1200];
        snprintf(dead, sizeof dead, "inst-%d-", (int) pid);
        DIR *d = opendir(state);
        struct dirent *de;
        bool found = false;
        while (d && (de = readdir(d)))
                if (strncmp(de->d_name, dead, strlen(dead)) == 0) {
                        snprintf(dead, sizeof dead, "%s", de->d_name);
                        found = true;
                        break;
                }
        if (d)
                closedir(d);
        ASSERT_TRUE(found);
        snprintf(p, sizeof p, "/sys/fs/cgroup/pids/msp-mcp/%s", dead);
        ASSERT_TRUE(access(p, F_OK) == 0);              /* its container still runs */
        msp_err err = { 0 };
        ASSERT_EQ_INT(mcp_recover(&cfg, &err), 1);      /* ours is alive: only the dead one */
        snprintf(p, sizeof p, "%s/%s", state, dead);
        ASSERT_TRUE(access(p, F_OK) < 0);
        d = opendir("/sys/fs/cgroup");
        int left = 0;
        while (d && (de = readdir(d))) {
                snprintf(p, sizeof p, "/sys/fs/cgroup/%s/msp-mcp/%s", de->d_name, dead);
                left += access(p, F_OK) == 0;
        }
        if (d)
                closedir(d);
        ASSERT_EQ_INT(left, 0);
        char now[300];
        ASSERT_TRUE(instance_name(now, sizeof now));
        ASSERT_STREQ(now, before);
}

/* The instance directory's name (inst-<pid>-<hex>): the name of its cgroups too. */
static bool
instance_name(char *buf, size_t size)
{
        DIR *d = opendir(state);
        struct dirent *de;
        bool found = false;
        while (d && (de = readdir(d)))
                if (strncmp(de->d_name, "inst-", 5) == 0 && !found) {
                        snprintf(buf, size, "%s", de->d_name);
                        found = true;
                }
        if (d)
                closedir(d);
        return found;
}

TEST(no_leftovers_after_free)
{
        static outcome o;
        msp_err err = { 0 };
        const char *code = "sleep 30";
        mcp_run_request req = { .language = "sh", .code = code, .code_len = strlen(code) };
        char inst[300];
        ASSERT_TRUE(instance_name(inst, sizeof inst));
        ASSERT_OK_ERR(submit(&req, &o, NULL, &err), err);
        engine = mcp_engine_free(engine);               /* kills the running one */
        pending = 0;
        ASSERT_EQ_INT(count_entries(state), 1);         /* only sessions/ */
        FILE *f = fopen("/proc/self/mountinfo", "re");
        char line[4096];
        int mounts = 0;
        while (f && fgets(line, sizeof line, f))
                mounts += strstr(line, base) != NULL;
        if (f)
                fclose(f);
        ASSERT_EQ_INT(mounts, 0);
        /* No cgroup of this instance in any hierarchy (v1 controllers, the v2 mount). */
        DIR *d = opendir("/sys/fs/cgroup");
        struct dirent *de;
        int left = 0;
        while (d && (de = readdir(d))) {
                char p[1024];
                snprintf(p, sizeof p, "/sys/fs/cgroup/%s/msp-mcp/%s", de->d_name, inst);
                if (access(p, F_OK) == 0) {
                        tap_diag("left: %s", p);
                        left++;
                }
        }
        if (d)
                closedir(d);
        ASSERT_EQ_INT(left, 0);
}

/* $env, else <build>/mcp-adapter/NAME beside this test (<build>/tests/x); NULL when
 * neither is executable. `buf` holds the path found beside. */
static const char *
helper_path(const char *env, const char *name, char buf[4096])
{
        const char *p = getenv(env);
        ssize_t n = p ? 0 : readlink("/proc/self/exe", buf, 4096 - 64);
        if (n > 0) {
                buf[n] = '\0';
                for (int i = 0; i < 2; i++) {
                        char *slash = strrchr(buf, '/');
                        if (slash)
                                *slash = '\0';
                }
                snprintf(buf + strlen(buf), 4096 - strlen(buf), "/mcp-adapter/%s", name);
                p = buf;
        }
        return p && access(p, X_OK) == 0 ? p : NULL;
}

int
main(void)
{
        if (geteuid() != 0) {
                tap_skip("engine", "needs root (containers, cgroups, mounts)");
                return tap_done();
        }
        const char *rt = getenv("MCP_RUNTIME");
        if (!rt)
                rt = getenv("MSP");
        static char beside[4096];               /* <build>/tests/x -> <build>/runtime/msp */
        ssize_t n = readlink("/proc/self/exe", beside, sizeof beside - 32);
        if (!rt && n > 0) {
                beside[n] = '\0';
                char *slash = strrchr(beside, '/');
                if (slash) {
                        *slash = '\0';
                        slash = strrchr(beside, '/');
                }
                if (slash) {
                        strcpy(slash, "/runtime/msp");
                        rt = beside;
                }
        }
        if (!rt || access(rt, X_OK) < 0) {
                tap_skip("engine", "no runtime: set MSP (meson test does) or MCP_RUNTIME");
                return tap_done();
        }
        static char init_beside[4096], hook_beside[4096];
        const char *init = helper_path("MSP_SANDBOX_INIT", "msp-sandbox-init", init_beside);
        const char *hook = helper_path("MSP_SANDBOX_HOOK", "msp-sandbox-hook", hook_beside);
        if (!init || !hook) {
                tap_skip("engine", "no msp-sandbox-init or msp-sandbox-hook: set MSP_SANDBOX_INIT "
                                   "and MSP_SANDBOX_HOOK (meson test does)");
                return tap_done();
        }
        alarm(600);
        snprintf(base, sizeof base, "/tmp/mcp-engine-XXXXXX");
        if (!mkdtemp(base) || chmod(base, 0711) < 0) {
                perror("mkdtemp");
                return 1;
        }
        snprintf(state, sizeof state, "%s/state", base);
        snprintf(empty_root, sizeof empty_root, "%s/empty-root", base);
        if (mkdir(empty_root, 0755) < 0) {
                perror("mkdir");
                return 1;
        }
        signal(SIGPIPE, SIG_IGN);               /* as main.c: stdin pipes may close early */
        source_path("bundles/busybox/rootfs", busybox_root, sizeof busybox_root);
        bool have_busybox = access(busybox_root, F_OK) == 0;
        cfg = (mcp_config){
                .runtime_path = rt,
                .init_path = init,
                .userns_hook = hook,
                .state_dir = state,
                .defaults = { .memory_bytes = 256u << 20, .pids = 64, .cpu_millis = 1000,
                              .timeout_ms = 20000, .output_bytes = 65536, .tmp_bytes = 16u << 20,
                              .workspace_bytes = 16u << 20 },
                .sandbox_ids = MCP_SANDBOX_ROOT_BASE,
                .max_concurrent = 1,
                .max_queue = 1,
                .max_sessions = 4,
                .session_ttl_s = 600,
                .session_max_ttl_s = 3600,
                .rootfs = rootfs,
                .n_rootfs = 2,          /* 3 with bundles/busybox/rootfs */
                .max_image_bytes = 1 << 20,
                .run_log_keep = 4,
                .allow_network = true,
        };
        cfg.maxima = cfg.defaults;
        if (have_busybox)
                cfg.n_rootfs = 3;
        msp_err err = { 0 };
        if (mcp_loop_new(&loop) < 0 || mcp_engine_new(loop, &cfg, NULL, &engine, &err) < 0) {
                printf("Bail out! engine: %s\n", err.msg);
                return 1;
        }
        RUN(echo_hi);
        RUN(exit_code_and_signal);
        RUN(missing_init_refused);
        RUN(init_is_pid1);
        RUN(self_signal_kills);
        RUN(exit_status_above_128);
        RUN(status_pipe_out_of_reach);
        RUN(signal_to_pid1_forwarded);
        RUN(kill_group_once);
        RUN(orphans_reaped);
        RUN(leftovers_die_with_program);
        RUN(sandbox_identity);
        RUN(stdin_files_args_env);
        RUN(stdin_not_read);
        RUN(prepared_rootfs_without_language);
        if (have_busybox)
                RUN(prepared_rootfs_busybox);
        else
                tap_skip("prepared_rootfs_busybox", "bundles/busybox/rootfs not prepared "
                         "(bundles/busybox/prepare.sh)");
        RUN(runtime_failure_is_sandbox_failure);
        RUN(engine_takes_the_callers_detection);
        RUN(bad_requests);
        RUN(timeout_kills);
        RUN(oom_32mib);
        RUN(output_cap_and_log);
        RUN(output_flood_bounded);
        RUN(artifacts);
        RUN(languages);
        RUN(queue_and_busy);
        RUN(next_starts_after_the_answer);
        RUN(cancel);
        RUN(session_runs);
        RUN(session_slices);
        RUN(network_session);
        RUN(timing);
        RUN(recover_after_sigkill);
        RUN(no_leftovers_after_free);
        mcp_loop_free(loop);
        char cmd[256];
        snprintf(cmd, sizeof cmd, "rm -rf %s", base);
        if (system(cmd) != 0)
                tap_diag("cleanup of %s failed", base);
        return tap_done();
}
