/* msp-mcp run by a user: the state dir it may use (rootless.c), the default it picks
 * (config.c), and the range it probes once. Real directories under /tmp; the defaults and
 * the probe are read in a child that becomes uid 65534 (root only: skipped otherwise, with
 * the reason). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sched.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/lib/tap.h"
#include "config.h"
#include "host/rootless.h"

static char base[64];                   /* /tmp/mcp-rootless-XXXXXX */

TEST(state_dir_made_private)
{
        char p[256];
        msp_err err = { 0 };
        snprintf(p, sizeof p, "%s/a/b/state", base);   /* parents missing too */
        ASSERT_EQ_INT(mcp_rootless_state_check(p, &err), 0);
        struct stat st;
        ASSERT_EQ_INT(lstat(p, &st), 0);
        ASSERT_TRUE(S_ISDIR(st.st_mode));
        ASSERT_EQ_INT(st.st_mode & 07777, 0700);
        ASSERT_EQ_INT(st.st_uid, geteuid());
        /* A second start finds it as it left it. */
        ASSERT_EQ_INT(mcp_rootless_state_check(p, &err), 0);
}

TEST(state_dir_refused)
{
        char p[256], q[256];
        msp_err err = { 0 };
        snprintf(p, sizeof p, "%s/loose", base);
        ASSERT_EQ_INT(mkdir(p, 0700), 0);
        ASSERT_EQ_INT(chmod(p, 0770), 0);
        ASSERT_EQ_INT(mcp_rootless_state_check(p, &err), -EPERM);
        ASSERT_TRUE(strstr(err.msg, "mode 0770") != NULL);
        ASSERT_EQ_INT(chmod(p, 0700), 0);
        ASSERT_EQ_INT(chown(p, 65534, 65534), 0);
        ASSERT_EQ_INT(mcp_rootless_state_check(p, &err), -EPERM);
        ASSERT_TRUE(strstr(err.msg, "owned by uid 65534") != NULL);
        /* A symlink to a good directory, and a file, are not a state dir. */
        snprintf(q, sizeof q, "%s/link", base);
        ASSERT_EQ_INT(symlink(base, q), 0);
        ASSERT_EQ_INT(mcp_rootless_state_check(q, &err), -ENOTDIR);
        snprintf(q, sizeof q, "%s/file", base);
        FILE *f = fopen(q, "we");
        ASSERT_NOT_NULL(f);
        fclose(f);
        ASSERT_EQ_INT(mcp_rootless_state_check(q, &err), -ENOTDIR);
}

/* body(fd, arg) in a child that is uid 65534 with only this environment (NULL: unset);
 * what it writes to fd in out, its exit status returned. */
static int
as_user(const char *xdg, const char *state, const char *home, int (*body)(int, void *),
        void *arg, char *out, size_t size)
{
        int fd[2];
        if (pipe(fd) < 0)
                return -errno;
        pid_t pid = fork();
        if (pid == 0) {
                close(fd[0]);
                if (setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0)
                        _exit(2);
                clearenv();
                if ((xdg && setenv("XDG_RUNTIME_DIR", xdg, 1) < 0) ||
                    (state && setenv("XDG_STATE_HOME", state, 1) < 0) ||
                    (home && setenv("HOME", home, 1) < 0))
                        _exit(2);
                _exit(body(fd[1], arg));
        }
        close(fd[1]);
        size_t n = 0;
        for (ssize_t r; n < size - 1 && (r = read(fd[0], out + n, size - 1 - n)) > 0;)
                n += (size_t) r;
        out[n] = '\0';
        close(fd[0]);
        int st;
        waitpid(pid, &st, 0);
        return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The default --state-dir (or why there is none). */
static int
write_default_state_dir(int fd, void *arg)
{
        (void) arg;
        mcp_config cfg;
        mcp_config_action action;
        msp_err err = { 0 };
        char *argv[] = { "msp-mcp", "--runtime", "/bin/true", NULL };
        int r = mcp_config_load(&cfg, 3, argv, &action, &err);
        const char *s = r < 0 ? err.msg : cfg.state_dir;
        if (write(fd, s, strlen(s)) < 0)
                return 2;
        return r < 0 ? 1 : 0;
}

/* The default --state-dir of uid 65534 with this environment: written to out. */
static int
default_as_user(const char *xdg, const char *state, const char *home, char *out, size_t size)
{
        return as_user(xdg, state, home, write_default_state_dir, NULL, out, size);
}

TEST(default_state_dir_of_a_user)
{
        char xdg[128], open_xdg[128], want[256], got[512];
        snprintf(xdg, sizeof xdg, "%s/xdg", base);
        snprintf(open_xdg, sizeof open_xdg, "%s/xdg-open", base);
        ASSERT_EQ_INT(mkdir(xdg, 0700), 0);
        ASSERT_EQ_INT(chown(xdg, 65534, 65534), 0);
        ASSERT_EQ_INT(mkdir(open_xdg, 0755), 0);
        ASSERT_EQ_INT(chown(open_xdg, 65534, 65534), 0);

        ASSERT_EQ_INT(default_as_user(xdg, "/st", "/h", got, sizeof got), 0);
        snprintf(want, sizeof want, "%s/msp-mcp", xdg);
        ASSERT_STREQ(got, want);
        /* Not the user's private directory: the next one. */
        ASSERT_EQ_INT(default_as_user(open_xdg, "/st", "/h", got, sizeof got), 0);
        ASSERT_STREQ(got, "/st/msp-mcp");
        ASSERT_EQ_INT(default_as_user(base, "/st", "/h", got, sizeof got), 0);  /* root's */
        ASSERT_STREQ(got, "/st/msp-mcp");
        /* A home whose ~/.local the sandbox's root cannot search (0700, as rootless podman
         * leaves it), or nothing set: the user's own /tmp/msp-mcp-UID, never /run/msp-mcp. */
        char home[128], local[160], tmp_dir[64];
        snprintf(home, sizeof home, "%s/home", base);
        snprintf(local, sizeof local, "%s/.local", home);
        snprintf(tmp_dir, sizeof tmp_dir, "/tmp/msp-mcp-65534");
        bool had_tmp = access(tmp_dir, F_OK) == 0;
        ASSERT_EQ_INT(mkdir(home, 0755), 0);
        ASSERT_EQ_INT(chown(home, 65534, 65534), 0);
        ASSERT_EQ_INT(mkdir(local, 0700), 0);
        ASSERT_EQ_INT(chown(local, 65534, 65534), 0);
        ASSERT_EQ_INT(default_as_user(NULL, NULL, home, got, sizeof got), 0);
        ASSERT_STREQ(got, tmp_dir);
        ASSERT_EQ_INT(chmod(local, 0711), 0);
        ASSERT_EQ_INT(default_as_user(NULL, NULL, home, got, sizeof got), 0);
        snprintf(want, sizeof want, "%s/.local/state/msp-mcp", home);
        ASSERT_STREQ(got, want);
        ASSERT_EQ_INT(chmod(local, 0700), 0);
        /* An XDG_RUNTIME_DIR that is not taken exempts nothing from that check, whatever
         * it is a prefix of: empty (as some environments export it), or a parent. */
        ASSERT_EQ_INT(default_as_user("", NULL, home, got, sizeof got), 0);
        ASSERT_STREQ(got, tmp_dir);
        ASSERT_EQ_INT(default_as_user(base, NULL, home, got, sizeof got), 0);
        ASSERT_STREQ(got, tmp_dir);
        /* (no --image: no image cache is needed either) */
        ASSERT_EQ_INT(default_as_user(NULL, NULL, NULL, got, sizeof got), 0);
        ASSERT_STREQ(got, tmp_dir);
        if (!had_tmp)
                (void) rmdir(tmp_dir);
}

static int
write_help(int fd, void *arg)
{
        (void) arg;
        FILE *f = fdopen(fd, "w");
        if (!f)
                return 2;
        mcp_config_help(f);
        return fclose(f) == 0 ? 0 : 2;
}

/* --help shows the defaults of the user asking, the /tmp fallback among them, and makes
 * nothing to show it. */
TEST(help_names_the_fallback_without_making_it)
{
        const char *tmp_dir = "/tmp/msp-mcp-65534";
        if (rmdir(tmp_dir) < 0 && errno != ENOENT) {
                tap_diag("%s is in use (%s): not checked", tmp_dir, strerror(errno));
                return;
        }
        char home[128], local[160];
        static char text[65536];
        snprintf(home, sizeof home, "%s/help-home", base);
        snprintf(local, sizeof local, "%s/.local", home);
        ASSERT_EQ_INT(mkdir(home, 0755), 0);
        ASSERT_EQ_INT(mkdir(local, 0700), 0);
        ASSERT_EQ_INT(chown(local, 65534, 65534), 0);
        ASSERT_EQ_INT(as_user(NULL, NULL, home, write_help, NULL, text, sizeof text), 0);
        ASSERT_TRUE(strstr(text, tmp_dir) != NULL);
        ASSERT_TRUE(access(tmp_dir, F_OK) < 0 && errno == ENOENT);
}

static int
write_text(const char *path, const char *text)
{
        FILE *f = fopen(path, "we");
        if (!f)
                return -1;
        int r = fputs(text, f) < 0 ? -1 : 0;
        return fclose(f) < 0 ? -1 : r;
}

/* In a child with an /etc of its own (an overlay whose upper layer is a tmpfs), as uid
 * 65534: the range probed, then probed again after /etc/subuid names another one. Exit 0
 * when both probes saw the first range: start-up's callers share one read. */
static int
probe_twice_as_user(void)
{
        char dir[128], opts[512];
        snprintf(dir, sizeof dir, "%s/etc-upper", base);
        if (mkdir(dir, 0700) < 0)
                return -1;
        pid_t pid = fork();
        if (pid == 0) {
                snprintf(opts, sizeof opts, "lowerdir=/etc,upperdir=%s/up,workdir=%s/work", dir,
                         dir);
                if (unshare(CLONE_NEWNS) < 0 ||
                    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
                    mount("tmpfs", dir, "tmpfs", 0, "mode=0700") < 0 || chdir(dir) < 0 ||
                    mkdir("up", 0755) < 0 || mkdir("work", 0700) < 0 ||
                    mount("overlay", "/etc", "overlay", 0, opts) < 0 ||
                    write_text("/etc/subuid", "65534:200000:65536\n") < 0 ||
                    write_text("/etc/subgid", "65534:200000:65536\n") < 0 ||
                    chmod("/etc/subuid", 0666) < 0 ||
                    setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0)
                        _exit(2);
                mcp_rootless first, again;
                mcp_rootless_probe(&first);
                if (!first.on || first.subuid != 200000 || first.subuid_n != 65536)
                        _exit(3);
                if (write_text("/etc/subuid", "65534:300000:65536\n") < 0)
                        _exit(2);
                mcp_rootless_probe(&again);
                _exit(again.subuid == 200000 && again.subgid == 200000 ? 0 : 1);
        }
        int st;
        waitpid(pid, &st, 0);
        rmdir(dir);
        return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

TEST(range_probed_once)
{
        ASSERT_EQ_INT(probe_twice_as_user(), 0);
}

int
main(void)
{
        if (geteuid() != 0) {
                printf("1..0 # SKIP needs root (chown, and a child that becomes uid 65534)\n");
                return 0;
        }
        snprintf(base, sizeof base, "/tmp/mcp-rootless-XXXXXX");
        if (!mkdtemp(base) || chmod(base, 0711) < 0)    /* uid 65534 looks inside */
                return 1;
        RUN(state_dir_made_private);
        RUN(state_dir_refused);
        RUN(default_state_dir_of_a_user);
        RUN(help_names_the_fallback_without_making_it);
        RUN(range_probed_once);
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
        if (system(cmd) != 0)
                tap_diag("could not remove %s", base);
        return tap_done();
}
