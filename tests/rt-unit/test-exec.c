/* rt_exec_lookup and rt_fds_cloexec_from against the real filesystem and kernel. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/process.h"

#include "tests/lib/tap.h"

static char tmpdir[64];

/* A scratch dir with: tool (0755), noexec (0644), sub/ (a directory). */
static void
make_tree(void)
{
        char p[PATH_MAX];
        int fd;

        snprintf(tmpdir, sizeof tmpdir, "/tmp/rt-exec-XXXXXX");
        CHECK(mkdtemp(tmpdir));
        CHECK(chmod(tmpdir, 0755) == 0);
        snprintf(p, sizeof p, "%s/tool", tmpdir);
        CHECK((fd = open(p, O_CREAT | O_WRONLY | O_CLOEXEC, 0755)) >= 0);
        close(fd);
        snprintf(p, sizeof p, "%s/noexec", tmpdir);
        CHECK((fd = open(p, O_CREAT | O_WRONLY | O_CLOEXEC, 0644)) >= 0);
        close(fd);
        snprintf(p, sizeof p, "%s/sub", tmpdir);
        CHECK(mkdir(p, 0755) == 0);
}

static void
remove_tree(void)
{
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
        CHECK(system(cmd) == 0);
}

static void
test_found_in_env_path(void)
{
        char buf[PATH_MAX], want[PATH_MAX], path_env[PATH_MAX];
        msp_err e;

        make_tree();
        snprintf(path_env, sizeof path_env, "PATH=/nonexistent::%s", tmpdir);
        char *env[] = { (char *) "HOME=/", path_env, NULL };
        snprintf(want, sizeof want, "%s/tool", tmpdir);
        CHECK_OK(rt_exec_lookup("tool", env, buf, sizeof buf, &e), e);
        printf("# found %s\n", buf);
        CHECK(strcmp(buf, want) == 0);
        /* default PATH when the env has none: sh is in /usr/bin or /bin */
        char *noenv[] = { NULL };
        CHECK_OK(rt_exec_lookup("sh", noenv, buf, sizeof buf, &e), e);
        CHECK(strcmp(buf, "/usr/bin/sh") == 0 || strcmp(buf, "/bin/sh") == 0);
        /* ... and "tool" is then not found */
        CHECK_ERR(rt_exec_lookup("tool", noenv, buf, sizeof buf, &e), e, ENOENT, "not found");
        remove_tree();
}

static void
test_not_found_message(void)
{
        char buf[PATH_MAX];
        char *env[] = { (char *) "PATH=/usr/bin:/bin", NULL };
        msp_err e;

        CHECK_ERR(rt_exec_lookup("no-such-tool-xyz", env, buf, sizeof buf, &e), e, ENOENT,
                  "executable file `no-such-tool-xyz` not found in $PATH: no such file or directory");
        CHECK_ERR(rt_exec_lookup("/no/such/file", env, buf, sizeof buf, &e), e, ENOENT,
                  "no such file or directory");
}

static void
test_permission_denied_message(void)
{
        char buf[PATH_MAX], p[PATH_MAX], want[PATH_MAX + 64], path_env[PATH_MAX];
        msp_err e;

        make_tree();
        snprintf(p, sizeof p, "%s/noexec", tmpdir);
        snprintf(want, sizeof want, "open executable `%s`: permission denied", p);
        CHECK_ERR(rt_exec_lookup(p, NULL, buf, sizeof buf, &e), e, EACCES, want);
        /* found in PATH but not executable: permission denied, not "not found" */
        snprintf(path_env, sizeof path_env, "PATH=/usr/bin:%s", tmpdir);
        char *env[] = { path_env, NULL };
        CHECK_ERR(rt_exec_lookup("noexec", env, buf, sizeof buf, &e), e, EACCES, want);
        /* a directory */
        snprintf(p, sizeof p, "%s/sub", tmpdir);
        CHECK_ERR(rt_exec_lookup(p, NULL, buf, sizeof buf, &e), e, EACCES, "permission denied");
        CHECK(strstr(e.msg, "is a directory"));
        /* as an unprivileged user, a 0700 root-owned tool is not executable */
        snprintf(p, sizeof p, "%s/tool", tmpdir);
        CHECK(chmod(p, 0700) == 0);
        CHECK(setresuid(65534, 65534, 0) == 0);
        snprintf(want, sizeof want, "open executable `%s`: permission denied", p);
        CHECK_ERR(rt_exec_lookup(p, NULL, buf, sizeof buf, &e), e, EACCES, want);
        CHECK(setresuid(0, 0, 0) == 0);
        remove_tree();
}

static void
test_small_buffer(void)
{
        char buf[4];
        msp_err e;

        CHECK_ERR(rt_exec_lookup("/bin/sh", NULL, buf, sizeof buf, &e), e, ENAMETOOLONG, "too long");
}

static bool
is_cloexec(int fd)
{
        int fl = fcntl(fd, F_GETFD);
        CHECK(fl >= 0);
        return fl & FD_CLOEXEC;
}

static void
test_fds_cloexec(void)
{
        int a = open("/dev/null", O_RDONLY);
        int b = dup(a);
        int c = fcntl(a, F_DUPFD, 100);
        msp_err e;

        CHECK(a >= 3 && b > a && c >= 100);
        CHECK(fcntl(2, F_SETFD, 0) == 0);
        CHECK(!is_cloexec(a) && !is_cloexec(b) && !is_cloexec(c));
        CHECK_OK(rt_fds_cloexec_from(b, &e), e);
        CHECK(!is_cloexec(a) && is_cloexec(b) && is_cloexec(c));
        CHECK_OK(rt_fds_cloexec_from(3, &e), e);
        CHECK(is_cloexec(a));
        CHECK(!is_cloexec(2));
        CHECK_ERR(rt_fds_cloexec_from(-1, &e), e, EINVAL, "invalid first fd");
}

int
main(void)
{
        static const tap_fork_test tests[] = {
                { "lookup honours the env's PATH", test_found_in_env_path },
                { "not found: podman's 127 phrase", test_not_found_message },
                { "permission denied: podman's 126 phrase", test_permission_denied_message },
                { "result longer than the buffer", test_small_buffer },
                { "fds from N on become close-on-exec", test_fds_cloexec },
        };
        if (geteuid() != 0) {
                printf("1..0 # SKIP needs root\n");
                return 0;
        }
        return tap_run_table(tests, ARRAY_SIZE(tests));
}
