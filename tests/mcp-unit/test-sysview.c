/* mcp-adapter/sandbox/sysview.c: paths resolved hop by hop as the sandbox sees them; what a link
 * needs under /etc joins the view, secrets and paths outside /etc never do; the scan of a
 * language's home (sysdeps.c: its links, what its shared objects and package sources name
 * under /etc); the skeleton's mount points; a language that cannot work is left out
 * with the reason (languages.c). Real files under a temporary directory. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/lib/tap.h"
#include "sandbox/bundle.h"
#include "sandbox/languages.h"
#include "sandbox/sysdeps.h"

static char dir[] = "/tmp/msp-sysview-XXXXXX";
static mcp_hostview view;
static char why[512];

/* A view of dir only: what resolves is below it or has joined. */
static void
fresh_view(void)
{
        memset(&view, 0, sizeof view);
        view.binds[view.n_binds++] = dir;
}

static void
link_at(const char *target, const char *name)
{
        char p[256];
        snprintf(p, sizeof p, "%s/%s", dir, name);
        (void) unlink(p);
        if (symlink(target, p) < 0)
                printf("# symlink %s: %s\n", p, strerror(errno));
}

static bool
resolve(const char *name, bool add)
{
        char p[256];
        snprintf(p, sizeof p, "%s/%s", dir, name);
        why[0] = '\0';
        return mcp_sysview_resolve(&view, p, add, why, sizeof why);
}

TEST(a_link_into_etc_joins_the_view_once)
{
        fresh_view();
        link_at("/etc/ld.so.conf", "conf");
        link_at("/etc/ld.so.conf.d", "confdir");
        ASSERT_TRUE(resolve("conf", true));
        ASSERT_EQ_INT((int) view.sys.n, 1);
        ASSERT_STREQ(view.sys.e[0].path, "/etc/ld.so.conf");
        ASSERT_EQ_INT(view.sys.e[0].kind, MCP_SYSVIEW_FILE);
        ASSERT_TRUE(resolve("conf", true));
        ASSERT_EQ_INT((int) view.sys.n, 1);
        ASSERT_TRUE(resolve("confdir", true));
        ASSERT_EQ_INT((int) view.sys.n, 2);
        ASSERT_EQ_INT(view.sys.e[1].kind, MCP_SYSVIEW_DIR);
}

TEST(secrets_and_paths_outside_etc_never_join)
{
        fresh_view();
        link_at("/etc/shadow", "pw");
        link_at("/etc/shadow-", "pwbackup");
        link_at("/etc/ssl/private", "keys");
        link_at("/root", "rootdir");
        link_at("/etc/ld.so.conf", "conf");
        ASSERT_FALSE(resolve("pw", true));
        ASSERT_TRUE(strstr(why, "/etc/shadow is outside the system view") != NULL);
        ASSERT_FALSE(resolve("pwbackup", true));
        ASSERT_TRUE(strstr(why, "/etc/shadow- is outside the system view") != NULL);
        ASSERT_FALSE(resolve("keys", true));
        ASSERT_FALSE(resolve("rootdir", true));
        ASSERT_TRUE(strstr(why, "/root") != NULL);
        ASSERT_FALSE(resolve("conf", false));   /* add false: reported, not joined */
        ASSERT_EQ_INT((int) view.sys.n, 0);
}

TEST(relative_links_dotdot_loops_and_dangling_links)
{
        fresh_view();
        char p[256];
        snprintf(p, sizeof p, "%s/sub", dir);
        (void) mkdir(p, 0755);
        snprintf(p, sizeof p, "%s/target", dir);
        close(open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
        link_at("../target", "sub/up");
        ASSERT_TRUE(resolve("sub/up", true));
        ASSERT_TRUE(resolve("sub/./../sub/up", true));
        link_at("loop", "loop");
        ASSERT_FALSE(resolve("loop", true));
        ASSERT_TRUE(strstr(why, "too many levels") != NULL);
        link_at("/etc/msp-sysview-no-such-file", "gone");
        ASSERT_FALSE(resolve("gone", true));
        ASSERT_EQ_INT((int) view.sys.n, 0);
}

static void
mkdirs(const char *const *dirs, size_t n)
{
        char p[256];
        for (size_t i = 0; i < n; i++) {
                snprintf(p, sizeof p, "%s/%s", dir, dirs[i]);
                (void) mkdir(p, 0755);
        }
}

static void
write_at(const char *name, const char *text)
{
        char p[256];
        snprintf(p, sizeof p, "%s/%s", dir, name);
        FILE *f = fopen(p, "w");
        if (f) {
                fputs(text, f);
                fclose(f);
        }
}

static bool
joined(const char *path)
{
        for (size_t i = 0; i < view.sys.n; i++)
                if (strcmp(view.sys.e[i].path, path) == 0)
                        return true;
        return false;
}

TEST(the_scan_follows_links_two_levels_below_a_home)
{
        fresh_view();
        static const char *const dirs[] = { "home", "home/etc", "home/a", "home/a/b" };
        mkdirs(dirs, 4);
        link_at("/etc/ld.so.conf", "home/etc/conf");            /* depth 2: followed */
        link_at("/etc/ld.so.conf.d", "home/a/b/deep");          /* depth 3: not */
        link_at("/etc/shadow", "home/etc/pw");                  /* refused, scan goes on */
        char p[256];
        snprintf(p, sizeof p, "%s/home", dir);
        mcp_sysdeps *d = mcp_sysdeps_new(&view);
        ASSERT_NOT_NULL(d);
        mcp_sysdeps_tree(d, p, NULL);
        mcp_sysdeps_free(d);
        ASSERT_EQ_INT((int) view.sys.n, 1);
        ASSERT_STREQ(view.sys.e[0].path, "/etc/ld.so.conf");
}

/* Paths this binary names in its read-only data, as a library names its configuration. */
static const char *volatile named[] = { "/etc/ld.so.conf.d", "/etc/shadow", "/usr/local/etc/ld.so.conf",
                                        "/etc/msp-sysdeps-no-such-file" };

TEST(what_a_shared_object_names_under_etc_joins_secrets_never)
{
        fresh_view();
        static const char *const dirs[] = { "lang", "lang/lib" };
        mkdirs(dirs, 2);
        char p[256], cmd[600];
        snprintf(p, sizeof p, "%s/lang/lib/mod.so", dir);
        snprintf(cmd, sizeof cmd, "cp /proc/%d/exe '%s'", (int) getpid(), p);
        ASSERT_EQ_INT(system(cmd), 0);
        ASSERT_NOT_NULL(named[0]);
        mcp_sysdeps *d = mcp_sysdeps_new(&view);
        ASSERT_NOT_NULL(d);
        snprintf(p, sizeof p, "%s/lang", dir);
        mcp_sysdeps_tree(d, p, NULL);
        mcp_sysdeps_free(d);
        ASSERT_TRUE(joined("/etc/ld.so.conf.d"));
        ASSERT_FALSE(joined("/etc/shadow"));
        ASSERT_FALSE(joined("/usr/local/etc/ld.so.conf"));
        ASSERT_FALSE(joined("/etc/msp-sysdeps-no-such-file"));
        for (size_t i = 0; i < view.sys.n; i++)
                ASSERT_TRUE(strncmp(view.sys.e[i].path, "/etc/", 5) == 0);
}

TEST(a_package_source_names_its_configuration_subpackages_are_not_read)
{
        fresh_view();
        static const char *const dirs[] = { "py", "py/pkgs", "py/pkgs/plot", "py/pkgs/plot/sub" };
        mkdirs(dirs, 4);
        write_at("py/pkgs/plot/__init__.py", "def rc():\n    yield '/etc/ld.so.conf'\n");
        write_at("py/pkgs/plot/sub/__init__.py", "x = '/etc/ld.so.conf.d'\n");
        write_at("py/pkgs/plot/other.py", "x = '/etc/host.conf'\n");
        char p[256];
        snprintf(p, sizeof p, "%s/py", dir);
        mcp_sysdeps *d = mcp_sysdeps_new(&view);
        ASSERT_NOT_NULL(d);
        mcp_sysdeps_tree(d, p, "__init__.py");
        mcp_sysdeps_free(d);
        ASSERT_TRUE(joined("/etc/ld.so.conf"));
        ASSERT_FALSE(joined("/etc/ld.so.conf.d"));
        ASSERT_FALSE(joined("/etc/host.conf"));
}

TEST(the_skeleton_has_the_mount_points_and_links)
{
        char sk[] = "/tmp/msp-sysview-skel-XXXXXX";
        ASSERT_NOT_NULL(mkdtemp(sk));
        mcp_sysview sys = { .n = 3 };
        sys.e[0] = (mcp_sysview_entry){ .kind = MCP_SYSVIEW_DIR, .path = "/etc/a/b" };
        sys.e[1] = (mcp_sysview_entry){ .kind = MCP_SYSVIEW_FILE, .path = "/etc/c" };
        sys.e[2] = (mcp_sysview_entry){ .kind = MCP_SYSVIEW_LINK, .path = "/etc/a/d",
                                        .target = "../c" };
        int fd = open(sk, O_PATH | O_DIRECTORY | O_CLOEXEC);
        msp_err err = { 0 };
        ASSERT_OK_ERR(mcp_sysview_skeleton(fd, &sys, &err), err);
        ASSERT_OK_ERR(mcp_sysview_skeleton(fd, &sys, &err), err);     /* idempotent */
        struct stat st;
        ASSERT_TRUE(fstatat(fd, "etc/a/b", &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode));
        ASSERT_TRUE(fstatat(fd, "etc/c", &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode));
        char t[16] = "";
        ASSERT_TRUE(readlinkat(fd, "etc/a/d", t, sizeof t - 1) == 4);
        ASSERT_STREQ(t, "../c");
        close(fd);
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", sk);
        ASSERT_EQ_INT(system(cmd), 0);
}

/* R (when installed): listed with /etc/R in the view; left out with the reason when its
 * configuration cannot join (the view is full). */
TEST(a_language_that_cannot_work_is_left_out_with_the_reason)
{
        if (access("/usr/bin/Rscript", X_OK) < 0) {
                tap_skip("a_language_that_cannot_work_is_left_out_with_the_reason",
                         "Rscript is not installed (contrib/install-deps.sh languages)");
                return;
        }
        msp_err err = { 0 };
        int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        mcp_hostview v;
        mcp_languages l;
        ASSERT_OK_ERR(mcp_hostview_probe(&v, &err), err);
        mcp_languages_detect(root, &v, &l);
        ASSERT_TRUE(mcp_language_find(&l, "R") >= 0);
        bool etc_r = false;
        for (size_t i = 0; i < v.sys.n; i++)
                etc_r |= strcmp(v.sys.e[i].path, "/etc/R") == 0;
        ASSERT_TRUE(etc_r);

        ASSERT_OK_ERR(mcp_hostview_probe(&v, &err), err);
        for (v.sys.n = 0; v.sys.n < MCP_SYSVIEW_MAX; v.sys.n++)
                snprintf(v.sys.e[v.sys.n].path, sizeof v.sys.e[0].path, "/nonexistent/%zu", v.sys.n);
        mcp_languages_detect(root, &v, &l);
        close(root);
        ASSERT_EQ_INT(mcp_language_find(&l, "R"), -1);
        ASSERT_TRUE(mcp_language_find(&l, "sh") >= 0);
        bool said = false;
        for (size_t i = 0; i < l.n_off; i++)
                said |= strcmp(l.off[i]->name, "R") == 0 && strstr(l.why[i], "/etc/R") != NULL;
        ASSERT_TRUE(said);
}

int
main(void)
{
        if (!mkdtemp(dir)) {
                printf("Bail out! mkdtemp: %s\n", strerror(errno));
                return 1;
        }
        RUN(a_link_into_etc_joins_the_view_once);
        RUN(secrets_and_paths_outside_etc_never_join);
        RUN(relative_links_dotdot_loops_and_dangling_links);
        RUN(the_scan_follows_links_two_levels_below_a_home);
        RUN(what_a_shared_object_names_under_etc_joins_secrets_never);
        RUN(a_package_source_names_its_configuration_subpackages_are_not_read);
        RUN(the_skeleton_has_the_mount_points_and_links);
        RUN(a_language_that_cannot_work_is_left_out_with_the_reason);
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        if (system(cmd) != 0)
                printf("# could not remove %s\n", dir);
        return tap_done();
}
