/* rt_hooks_run with real processes: status, signals, timeout, stdin JSON, exec errors. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/hooks.h"

#include "tests/lib/tap.h"

#define STATE "{\"ociVersion\":\"1.2.0\",\"id\":\"c1\",\"status\":\"created\",\"pid\":42," \
              "\"bundle\":\"/b\"}"

static char tmpdir[64];

static void
make_tmp(void)
{
        snprintf(tmpdir, sizeof tmpdir, "/tmp/rt-hooks-XXXXXX");
        CHECK(mkdtemp(tmpdir));
}

static void
remove_tmp(void)
{
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
        CHECK(system(cmd) == 0);
}

static size_t
read_file(const char *path, char *buf, size_t bufsz)
{
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t n;

        CHECK(fd >= 0);
        n = read(fd, buf, bufsz - 1);
        CHECK(n >= 0);
        buf[n] = '\0';
        close(fd);
        return (size_t) n;
}

/* A hook running "/bin/sh -c script" with the given env. */
static oci_hook
sh_hook(char **argv, char *script, char **env, size_t n_env)
{
        argv[0] = (char *) "sh";
        argv[1] = (char *) "-c";
        argv[2] = script;
        argv[3] = NULL;
        return (oci_hook) { .path = (char *) "/bin/sh", .args = { .v = argv, .n = 3 },
                            .env = { .v = env, .n = n_env } };
}

static void
test_success_and_stdin_json(void)
{
        char *argv[4], script[PATH_MAX + 32], out[PATH_MAX], buf[512];
        msp_err e;

        make_tmp();
        snprintf(out, sizeof out, "%s/stdin", tmpdir);
        snprintf(script, sizeof script, "cat > '%s'", out);
        oci_hook h = sh_hook(argv, script, NULL, 0);
        oci_hook_list l = { .v = &h, .n = 1 };
        CHECK_OK(rt_hooks_run(&l, "createRuntime", STATE, &e), e);
        read_file(out, buf, sizeof buf);
        CHECK(strcmp(buf, STATE) == 0);
        remove_tmp();
}

static void
test_exit_status(void)
{
        char *argv[4];
        msp_err e;
        oci_hook h = sh_hook(argv, (char *) "exit 3", NULL, 0);
        oci_hook_list l = { .v = &h, .n = 1 };

        CHECK_ERR(rt_hooks_run(&l, "createRuntime", STATE, &e), e, EIO,
                  "createRuntime hook '/bin/sh' exited with status 3");
}

static void
test_killed_by_signal(void)
{
        char *argv[4];
        msp_err e;
        oci_hook h = sh_hook(argv, (char *) "kill -9 $$", NULL, 0);
        oci_hook_list l = { .v = &h, .n = 1 };

        CHECK_ERR(rt_hooks_run(&l, "poststart", STATE, &e), e, EIO,
                  "poststart hook '/bin/sh' was killed by signal 9");
}

static double
now_s(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static void
test_timeout(void)
{
        char *argv[] = { (char *) "sleep", (char *) "30", NULL };
        oci_hook h = { .path = (char *) "/bin/sleep", .args = { .v = argv, .n = 2 },
                       .has_timeout = true, .timeout = 1 };
        oci_hook_list l = { .v = &h, .n = 1 };
        msp_err e;

        double t0 = now_s();
        CHECK_ERR(rt_hooks_run(&l, "prestart", STATE, &e), e, ETIMEDOUT,
                  "prestart hook '/bin/sleep' timed out after 1 s");
        double dt = now_s() - t0;
        printf("# took %.3f s\n", dt);
        CHECK(dt >= 0.9 && dt < 2.5);
        /* and it was reaped */
        CHECK(waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD);
}

/* A hook that never reads stdin must not block us past its timeout, even when the JSON
 * is larger than a pipe buffer; and one that exits without reading is not an error. */
static void
test_big_json_unread(void)
{
        size_t big = 1 << 20;
        char *json = malloc(big + 1);
        char *sleep_argv[] = { (char *) "sleep", (char *) "30", NULL };
        char *true_argv[] = { (char *) "true", NULL };
        oci_hook h = { .path = (char *) "/bin/sleep", .args = { .v = sleep_argv, .n = 2 },
                       .has_timeout = true, .timeout = 1 };
        oci_hook_list l = { .v = &h, .n = 1 };
        msp_err e;

        CHECK(json);
        memset(json, ' ', big);
        json[big] = '\0';
        double t0 = now_s();
        CHECK_ERR(rt_hooks_run(&l, "createContainer", json, &e), e, ETIMEDOUT, "timed out after 1 s");
        CHECK(now_s() - t0 < 2.5);
        h = (oci_hook) { .path = (char *) "/bin/true", .args = { .v = true_argv, .n = 1 } };
        CHECK_OK(rt_hooks_run(&l, "createContainer", json, &e), e);
        free(json);
}

static void
test_exec_failure(void)
{
        oci_hook h = { .path = (char *) "/nonexistent/hook" };
        oci_hook_list l = { .v = &h, .n = 1 };
        msp_err e;

        CHECK_ERR(rt_hooks_run(&l, "createRuntime", STATE, &e), e, ENOENT,
                  "createRuntime hook '/nonexistent/hook' exec failed: No such file or directory");
        h.path = (char *) "/etc/passwd";
        CHECK_ERR(rt_hooks_run(&l, "startContainer", STATE, &e), e, EACCES,
                  "startContainer hook '/etc/passwd' exec failed: Permission denied");
}

/* args[0] as given, env exactly as given (empty without one), stdout is ours. */
static void
test_args_env_stdout(void)
{
        char *argv[4], out[PATH_MAX], buf[512];
        char *env[] = { (char *) "FOO=bar", NULL };
        msp_err e;
        int saved = dup(1);

        make_tmp();
        snprintf(out, sizeof out, "%s/stdout", tmpdir);
        int fd = open(out, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
        CHECK(fd >= 0 && saved >= 0);
        oci_hook hooks[2];
        hooks[0] = sh_hook(argv, (char *) "echo \"$0 FOO=$FOO HOME=$HOME\"", env, 1);
        hooks[0].args.v[0] = (char *) "custom-argv0";
        char *argv2[] = { (char *) "env", NULL };
        hooks[1] = (oci_hook) { .path = (char *) "/usr/bin/env", .args = { .v = argv2, .n = 1 } };
        oci_hook_list l = { .v = hooks, .n = 2 };
        fflush(stdout);
        CHECK(dup2(fd, 1) == 1);
        int r = rt_hooks_run(&l, "poststart", STATE, &e);
        CHECK(dup2(saved, 1) == 1);
        CHECK_OK(r, e);
        read_file(out, buf, sizeof buf);
        printf("# hook output: '%.*s'\n", (int) strcspn(buf, "\n"), buf);
        CHECK(strcmp(buf, "custom-argv0 FOO=bar HOME=\n") == 0);
        close(fd);
        remove_tmp();
}

static void
test_stops_at_first_failure(void)
{
        char *a1[4], *a2[4], *a3[4], s1[PATH_MAX + 32], s3[PATH_MAX + 32], p[PATH_MAX];
        struct stat st;
        msp_err e;

        make_tmp();
        snprintf(s1, sizeof s1, "touch '%s/one'", tmpdir);
        snprintf(s3, sizeof s3, "touch '%s/three'", tmpdir);
        char *env[] = { (char *) "PATH=/usr/bin:/bin", NULL };
        oci_hook hooks[3] = { sh_hook(a1, s1, env, 1), sh_hook(a2, (char *) "exit 5", NULL, 0),
                              sh_hook(a3, s3, env, 1) };
        oci_hook_list l = { .v = hooks, .n = 3 };
        CHECK_ERR(rt_hooks_run(&l, "createRuntime", STATE, &e), e, EIO, "exited with status 5");
        snprintf(p, sizeof p, "%s/one", tmpdir);
        CHECK(stat(p, &st) == 0);
        snprintf(p, sizeof p, "%s/three", tmpdir);
        CHECK(stat(p, &st) < 0 && errno == ENOENT);
        remove_tmp();
        /* an empty list is fine */
        oci_hook_list none = { 0 };
        CHECK_OK(rt_hooks_run(&none, "poststop", STATE, &e), e);
        CHECK_OK(rt_hooks_run(NULL, "poststop", STATE, &e), e);
}

int
main(void)
{
        static const tap_fork_test tests[] = {
                { "hook succeeds and reads the state JSON on stdin", test_success_and_stdin_json },
                { "exit status is reported", test_exit_status },
                { "death by signal is reported", test_killed_by_signal },
                { "timeout kills and reaps within the bound", test_timeout },
                { "large JSON: unread stdin neither blocks nor fails", test_big_json_unread },
                { "exec failure reported with errno", test_exec_failure },
                { "args[0], env and stdout as given", test_args_env_stdout },
                { "stops at the first failing hook", test_stops_at_first_failure },
        };
        /* a runner that ignores SIGPIPE or blocks signals must not change the results */
        signal(SIGPIPE, SIG_DFL);
        return tap_run_table(tests, ARRAY_SIZE(tests));
}
