/* mcp-adapter/sandbox/bundle.c: the config.json of a sandbox run, parsed back with msp's own OCI
 * parser (oci/spec.h), has every hardened field; env keys are checked; the embedded
 * profiles are the files of contrib/profiles/; the skeleton has every mount point and the
 * system view's binds on it are read-only and locked for a less privileged namespace. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/lib/tap.h"
#include "sandbox/bundle.h"
#include "oci/json.h"
#include "sandbox/languages.h"
#include "oci/spec.h"
#include "sandbox/sysbinds.h"
#include "sandbox/usernet.h"

static oci_json_doc *seccomp_doc, *landlock_doc;
static mcp_hostview view;

static mcp_bundle_spec
test_spec(bool network)
{
        static const char *const argv[] = { "/bin/sh", "/.msp/main.sh", "arg", NULL };
        static const char *const env[] = { "FOO=bar", "LANG=C" };
        return (mcp_bundle_spec){
                .root_path = "/state/inst/rootfs",
                .host_view = true,
                .argv = argv,
                .env = env,
                .n_env = 2,
                .ids = MCP_RUN_IDS_DEFAULT,
                .workspace_path = "/state/inst/ws/r-1",
                .code_path = "/state/inst/b/r-1/code",
                .cgroups_path = "/msp-mcp/inst/r-1",
                .network = network,
                .limits = { .memory_bytes = 64u << 20, .pids = 32, .cpu_millis = 500,
                            .timeout_ms = 1000, .output_bytes = 1000, .tmp_bytes = 8u << 20,
                            .workspace_bytes = 4u << 20 },
                .nproc = 2048,
                .seccomp = oci_json_doc_root(seccomp_doc),
                .landlock = oci_json_doc_root(landlock_doc),
        };
}

static oci_spec *
parse(const mcp_bundle_spec *s, msp_err *err)
{
        char *json = NULL;
        size_t len;
        oci_spec *spec = NULL;
        if (mcp_bundle_config(s, &json, &len, err) < 0)
                return NULL;
        if (oci_spec_parse_data("config.json", json, len, &spec, err) < 0)
                spec = NULL;
        free(json);
        return spec;
}

static bool
has_ns(const oci_spec *s, oci_ns_type t)
{
        for (size_t i = 0; i < s->linux_->n_namespaces; i++)
                if (s->linux_->namespaces[i].type == t && !s->linux_->namespaces[i].path)
                        return true;
        return false;
}

static const oci_mount *
mount_at(const oci_spec *s, const char *dest)
{
        for (size_t i = 0; i < s->n_mounts; i++)
                if (strcmp(s->mounts[i].destination, dest) == 0)
                        return &s->mounts[i];
        return NULL;
}

static bool
has_opt(const oci_mount *m, const char *opt)
{
        for (size_t i = 0; m && i < m->options.n; i++)
                if (strcmp(m->options.v[i], opt) == 0)
                        return true;
        return false;
}

TEST(hardened_fields)
{
        msp_err err = { 0 };
        mcp_bundle_spec bs = test_spec(false);
        _cleanup_spec_ oci_spec *s = parse(&bs, &err);
        if (!s)
                TAP_FAIL_("parse: %s", err.msg);
        const oci_process *p = s->process;
        ASSERT_NOT_NULL(p);
        ASSERT_EQ_INT(p->user.uid, MCP_SANDBOX_UID);
        ASSERT_EQ_INT(p->user.gid, MCP_SANDBOX_GID);
        ASSERT_STREQ(p->cwd, "/workspace");
        ASSERT_TRUE(p->no_new_privileges);
        ASSERT_TRUE(p->has_capabilities);
        ASSERT_EQ_U64(p->capabilities.bounding | p->capabilities.effective |
                      p->capabilities.permitted | p->capabilities.inheritable |
                      p->capabilities.ambient, 0);
        ASSERT_TRUE(p->has_oom_score_adj);
        ASSERT_EQ_INT(p->oom_score_adj, 1000);
        ASSERT_STREQ(p->args.v[0], "/bin/sh");
        ASSERT_STREQ(p->args.v[2], "arg");
        /* base env, with the request's LANG replacing the base one */
        ASSERT_EQ_INT(p->env.n, 6);
        ASSERT_STREQ(p->env.v[0], "PATH=/usr/local/bin:/usr/bin:/bin:/workspace/.local/bin");
        ASSERT_STREQ(p->env.v[1], "HOME=/workspace");
        ASSERT_STREQ(p->env.v[2], "TERM=dumb");
        ASSERT_STREQ(p->env.v[3], "PIP_BREAK_SYSTEM_PACKAGES=1");
        ASSERT_STREQ(p->env.v[4], "FOO=bar");
        ASSERT_STREQ(p->env.v[5], "LANG=C");
        bool core0 = false, nproc = false, nofile = false, fsize = false, cpu = false;
        for (size_t i = 0; i < p->n_rlimits; i++) {
                const oci_rlimit *r = &p->rlimits[i];
                core0 |= r->resource == RLIMIT_CORE && r->hard == 0;
                nproc |= r->resource == RLIMIT_NPROC && r->hard == 2048;
                nofile |= r->resource == RLIMIT_NOFILE && r->hard == 1024;
                fsize |= r->resource == RLIMIT_FSIZE && r->hard == (8u << 20);
                cpu |= r->resource == RLIMIT_CPU && r->hard == 2;       /* 1 s at 0.5 CPU, + 1 */
        }
        ASSERT_TRUE(core0 && nproc && nofile && fsize && cpu);

        /* Landlock: the profile's handled rights and scopes, plus the program's dir. */
        ASSERT_NOT_NULL(p->landlock);
        ASSERT_TRUE(p->landlock->handled_access_fs != 0);
        /* TCP is left to the network namespace: loopback inside must work. */
        ASSERT_EQ_U64(p->landlock->handled_access_net, 0);
        ASSERT_TRUE(p->landlock->scoped != 0);
        bool code_rule = false, ws_rule = false;
        for (size_t i = 0; i < p->landlock->n_path_beneath; i++)
                for (size_t k = 0; k < p->landlock->path_beneath[i].paths.n; k++) {
                        const char *path = p->landlock->path_beneath[i].paths.v[k];
                        code_rule |= strcmp(path, MCP_CODE_DIR) == 0;
                        ws_rule |= strcmp(path, "/workspace") == 0;
                }
        ASSERT_TRUE(code_rule && ws_rule);

        ASSERT_TRUE(s->root_readonly);
        ASSERT_STREQ(s->root_path, "/state/inst/rootfs");
        const oci_linux *l = s->linux_;
        ASSERT_NOT_NULL(l);
        ASSERT_TRUE(has_ns(s, OCI_NS_USER) && has_ns(s, OCI_NS_PID) && has_ns(s, OCI_NS_MOUNT) &&
                    has_ns(s, OCI_NS_IPC) && has_ns(s, OCI_NS_UTS) && has_ns(s, OCI_NS_CGROUP) &&
                    has_ns(s, OCI_NS_NETWORK));
        ASSERT_EQ_INT(l->n_uid_mappings, 1);
        ASSERT_EQ_INT(l->uid_mappings[0].container_id, 0);
        ASSERT_EQ_INT(l->uid_mappings[0].host_id, MCP_SANDBOX_HOST_BASE);
        ASSERT_EQ_INT(l->uid_mappings[0].size, MCP_SANDBOX_ID_COUNT);
        ASSERT_EQ_INT(l->n_gid_mappings, 1);
        ASSERT_STREQ(l->cgroups_path, "/msp-mcp/inst/r-1");
        ASSERT_NOT_NULL(l->resources);
        ASSERT_TRUE(l->resources->has_memory && l->resources->memory.has_limit &&
                    l->resources->memory.has_swap);
        ASSERT_EQ_INT(l->resources->memory.limit, 64 << 20);
        ASSERT_EQ_INT(l->resources->memory.swap, 64 << 20);
        ASSERT_EQ_INT(l->resources->pids_limit, 32);
        ASSERT_EQ_INT(l->resources->cpu.quota, 50000);
        ASSERT_EQ_U64(l->resources->cpu.period, 100000);
        ASSERT_NOT_NULL(l->seccomp);
        ASSERT_EQ_INT(l->seccomp->default_action, OCI_SECCOMP_ERRNO);
        ASSERT_TRUE(l->seccomp->n_syscalls > 5);
        ASSERT_TRUE(l->masked_paths.n >= 5);
        ASSERT_TRUE(l->readonly_paths.n >= 5);

        const oci_mount *ws = mount_at(s, "/workspace"), *code = mount_at(s, MCP_CODE_DIR);
        const oci_mount *usr = mount_at(s, "/usr"), *tmp = mount_at(s, "/tmp");
        ASSERT_NOT_NULL(ws);
        ASSERT_STREQ(ws->source, "/state/inst/ws/r-1");
        ASSERT_TRUE(has_opt(ws, "rw") && has_opt(ws, "nosuid") && has_opt(ws, "nodev"));
        ASSERT_TRUE(has_opt(code, "ro") && has_opt(code, "noexec"));
        /* The system view is the skeleton's (sysbinds.h): the config names the run's own
         * mounts only. */
        ASSERT_NULL(usr);
        static const char *const own[] = { "/proc", "/dev", "/dev/pts", "/dev/shm", "/tmp",
                                           "/workspace", MCP_CODE_DIR };
        ASSERT_EQ_U64(s->n_mounts, ARRAY_SIZE(own));
        for (size_t i = 0; i < ARRAY_SIZE(own); i++)
                ASSERT_NOT_NULL(mount_at(s, own[i]));
        ASSERT_TRUE(has_opt(tmp, "size=8388608"));
        ASSERT_NOT_NULL(mount_at(s, "/proc"));
        ASSERT_NOT_NULL(mount_at(s, "/dev/pts"));
        ASSERT_NULL(mount_at(s, "/etc/resolv.conf"));
        /* never the host's secrets or homes */
        ASSERT_NULL(mount_at(s, "/etc"));
        ASSERT_NULL(mount_at(s, "/root"));
        ASSERT_NULL(mount_at(s, "/home"));
        ASSERT_NULL(mount_at(s, "/etc/shadow"));
        ASSERT_NULL(mount_at(s, "/etc/passwd"));
}

TEST(init_is_pid1)
{
        /* With an init: args start with it, it is bound read-only but executable over the
         * code dir's placeholder, and Landlock grants execute on it and on nothing else of
         * /.msp. Without one (the default of test_spec): the program is args[0]. */
        msp_err err = { 0 };
        mcp_bundle_spec bs = test_spec(false);
        bs.init_path = "/usr/libexec/msp/msp-sandbox-init";
        _cleanup_spec_ oci_spec *s = parse(&bs, &err);
        if (!s)
                TAP_FAIL_("parse: %s", err.msg);
        const oci_process *p = s->process;
        ASSERT_EQ_INT(p->args.n, 5);
        ASSERT_STREQ(p->args.v[0], "/.msp/init");
        ASSERT_STREQ(p->args.v[0], MCP_INIT_PATH);
        ASSERT_STREQ(p->args.v[1], "--");
        ASSERT_STREQ(p->args.v[2], "/bin/sh");
        ASSERT_STREQ(p->args.v[3], "/.msp/main.sh");
        ASSERT_STREQ(p->args.v[4], "arg");

        size_t code_i = s->n_mounts, init_i = s->n_mounts;
        for (size_t i = 0; i < s->n_mounts; i++) {
                if (strcmp(s->mounts[i].destination, MCP_CODE_DIR) == 0)
                        code_i = i;
                if (strcmp(s->mounts[i].destination, MCP_INIT_PATH) == 0)
                        init_i = i;
        }
        ASSERT_TRUE(code_i < init_i && init_i < s->n_mounts);   /* over the code dir */
        const oci_mount *m = &s->mounts[init_i];
        ASSERT_STREQ(m->source, "/usr/libexec/msp/msp-sandbox-init");
        ASSERT_TRUE(has_opt(m, "ro") && has_opt(m, "nosuid") && has_opt(m, "nodev"));
        ASSERT_FALSE(has_opt(m, "noexec") || has_opt(m, "rw"));
        ASSERT_TRUE(has_opt(&s->mounts[code_i], "noexec"));

        uint64_t init_rights = 0, code_rights = 0;
        for (size_t i = 0; i < p->landlock->n_path_beneath; i++)
                for (size_t k = 0; k < p->landlock->path_beneath[i].paths.n; k++) {
                        const char *path = p->landlock->path_beneath[i].paths.v[k];
                        if (strcmp(path, MCP_INIT_PATH) == 0)
                                init_rights |= p->landlock->path_beneath[i].allowed_access;
                        if (strcmp(path, MCP_CODE_DIR) == 0)
                                code_rights |= p->landlock->path_beneath[i].allowed_access;
                }
        ASSERT_EQ_U64(init_rights, OCI_LL_FS_EXECUTE);
        ASSERT_EQ_U64(code_rights & OCI_LL_FS_EXECUTE, 0);

        bs.init_path = NULL;
        _cleanup_spec_ oci_spec *s2 = parse(&bs, &err);
        if (!s2)
                TAP_FAIL_("parse: %s", err.msg);
        ASSERT_STREQ(s2->process->args.v[0], "/bin/sh");
        ASSERT_NULL(mount_at(s2, MCP_INIT_PATH));
}

/* The rights a config's Landlock rules give path (0: none names it). */
static uint64_t
rights_of(const oci_spec *s, const char *path)
{
        uint64_t r = 0;
        const oci_landlock *ll = s->process->landlock;
        for (size_t i = 0; i < ll->n_path_beneath; i++)
                for (size_t k = 0; k < ll->path_beneath[i].paths.n; k++)
                        if (strcmp(ll->path_beneath[i].paths.v[k], path) == 0)
                                r |= ll->path_beneath[i].allowed_access;
        return r;
}

TEST(image_top_level_grants)
{
        /* An image's top-level directories: read and execute beneath; its top-level files:
         * read and execute, no directory right and no write; the root itself: listing only. */
        static const char *const dirs[] = { "/srv", "/data", NULL };
        static const char *const files[] = { "/app.py", "/entrypoint.sh", NULL };
        msp_err err = { 0 };
        mcp_bundle_spec bs = test_spec(false);
        bs.host_view = false;
        bs.read_dirs = dirs;
        bs.read_files = files;
        _cleanup_spec_ oci_spec *s = parse(&bs, &err);
        if (!s)
                TAP_FAIL_("parse: %s", err.msg);
        const uint64_t rx = OCI_LL_FS_EXECUTE | OCI_LL_FS_READ_FILE;
        ASSERT_EQ_U64(rights_of(s, "/srv"), rx | OCI_LL_FS_READ_DIR);
        ASSERT_EQ_U64(rights_of(s, "/data"), rx | OCI_LL_FS_READ_DIR);
        ASSERT_EQ_U64(rights_of(s, "/app.py"), rx);
        ASSERT_EQ_U64(rights_of(s, "/entrypoint.sh"), rx);
        ASSERT_EQ_U64(rights_of(s, "/"), OCI_LL_FS_READ_DIR);

        bs.read_dirs = bs.read_files = NULL;    /* the host view: none of them */
        _cleanup_spec_ oci_spec *h = parse(&bs, &err);
        if (!h)
                TAP_FAIL_("parse: %s", err.msg);
        ASSERT_EQ_U64(rights_of(h, "/srv") | rights_of(h, "/app.py"), 0);
}

TEST(network_session)
{
        msp_err err = { 0 };
        mcp_bundle_spec bs = test_spec(true);
        /* Without a helper to attach there is no network config at all. */
        char *json = NULL;
        size_t len;
        ASSERT_EQ_INT(mcp_bundle_config(&bs, &json, &len, &err), -ENOTSUP);
        ASSERT_NULL(json);
        ASSERT_TRUE(strstr(err.msg, "slirp4netns") != NULL);

        bs.userns_hook = "/usr/libexec/msp/msp-sandbox-hook";
        bs.usernet_helper = "/usr/bin/slirp4netns";
        _cleanup_spec_ oci_spec *s = parse(&bs, &err);
        if (!s)
                TAP_FAIL_("parse: %s", err.msg);
        /* Its own network namespace, never the host's; the helper attached by the second
         * createRuntime hook, after the user namespace's budgets. */
        ASSERT_TRUE(has_ns(s, OCI_NS_NETWORK));
        ASSERT_TRUE(has_ns(s, OCI_NS_USER));
        ASSERT_EQ_U64(s->hooks.create_runtime.n, 2);
        const oci_hook *h = &s->hooks.create_runtime.v[1];
        ASSERT_STREQ(h->path, "/usr/libexec/msp/msp-sandbox-hook");
        ASSERT_EQ_U64(h->args.n, 3);
        ASSERT_STREQ(h->args.v[1], MCP_USERNET_HOOK_ARG);
        ASSERT_STREQ(h->args.v[2], "/usr/bin/slirp4netns");
        ASSERT_NOT_NULL(mount_at(s, "/etc/resolv.conf"));
        /* Landlock does not handle TCP (the profile has no port rules). */
        ASSERT_EQ_U64(s->process->landlock->handled_access_net, 0);
        ASSERT_TRUE(s->process->landlock->scoped != 0);
}

TEST(hostile_strings_stay_strings)
{
        /* Quotes, backslashes, control characters and JSON syntax in args and env values
         * come back byte for byte: nothing the caller sends can add a config field. */
        static const char *const argv[] = {
                "/bin/sh", "\",\"privileged\":true,\"x\":\"", "a\\b\n\t\x01\x7f", "é\u2028}", "",
                NULL
        };
        static const char *const env[] = { "K=\"},\"linux\":{\"namespaces\":[]},\"a\":{\"b\":\"" };
        mcp_bundle_spec bs = test_spec(false);
        bs.argv = argv;
        bs.env = env;
        bs.n_env = 1;
        msp_err err = { 0 };
        _cleanup_spec_ oci_spec *s = parse(&bs, &err);
        if (!s)
                TAP_FAIL_("parse: %s", err.msg);
        ASSERT_EQ_INT(s->process->args.n, 5);
        for (size_t i = 0; i < 5; i++)
                ASSERT_STREQ(s->process->args.v[i], argv[i]);
        ASSERT_STREQ(s->process->env.v[s->process->env.n - 1], env[0]);
        ASSERT_TRUE(has_ns(s, OCI_NS_USER) && has_ns(s, OCI_NS_NETWORK));
}

TEST(env_check)
{
        msp_err err = { 0 };
        ASSERT_OK(mcp_env_check("A=1", 0, &err));
        ASSERT_OK(mcp_env_check("_x9=", 0, &err));
        ASSERT_OK(mcp_env_check("K=a=b", 0, &err));
        static const char *const bad[] = { "=1", "NOVALUE", "1A=x", "A B=x", "A-B=x", "Ä=x" };
        for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
                int r = mcp_env_check(bad[i], i, &err);
                tap_check(r == -EINVAL && strstr(err.msg, "env[") != NULL, "env '%s' refused",
                          bad[i]);
        }
        char big[400];
        memset(big, 'A', 300);
        strcpy(big + 300, "=1");
        ASSERT_EQ_INT(mcp_env_check(big, 0, &err), -EINVAL);
}

static char *
slurp(const char *path)
{
        FILE *f = fopen(path, "re");
        if (!f)
                return NULL;
        char *buf = calloc(1, 1 << 20);
        size_t n = buf ? fread(buf, 1, (1 << 20) - 1, f) : 0;
        (void) n;
        fclose(f);
        return buf;
}

/* contrib/profiles/<name> in the source tree (MSP_SOURCE_ROOT) */
static void
profile_path(const char *name, char *buf, size_t size)
{
        snprintf(buf, size, "%s/contrib/profiles/%s", tap_source_root(), name);
}

TEST(embedded_profiles_match_contrib)
{
        char p[8192];
        profile_path("seccomp-default.json", p, sizeof p);
        _cleanup_free_ char *sc = slurp(p);
        if (!sc)
                tap_diag("cannot read %s", p);
        profile_path("landlock-default.json", p, sizeof p);
        _cleanup_free_ char *ll = slurp(p);
        ASSERT_NOT_NULL(sc);
        ASSERT_NOT_NULL(ll);
        ASSERT_TRUE(strcmp(sc, mcp_profile_seccomp) == 0);
        ASSERT_TRUE(strcmp(ll, mcp_profile_landlock) == 0);
}

TEST(skeleton)
{
        char dir[] = "/tmp/mcp-bundle-XXXXXX";
        ASSERT_NOT_NULL(mkdtemp(dir));
        int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        msp_err err = { 0 };
        int r = mcp_skeleton_create(fd, "rootfs", &view, &err);
        char cmd[1024];
        snprintf(cmd, sizeof cmd, "cd %s/rootfs && test -d proc && test -d dev && test -d tmp && "
                 "test -d workspace && test -d .msp && test -d usr && test -f etc/passwd && "
                 "test -f etc/ld.so.cache && test -f etc/resolv.conf && ! test -e etc/shadow && "
                 "grep -q '^sandbox:x:1000:1000:' etc/passwd", dir);
        int ok = system(cmd);
        /* merged /usr: the symlinks as the host has them */
        struct stat st;
        bool bin_ok = true;
        if (lstat("/bin", &st) == 0 && S_ISLNK(st.st_mode)) {
                char a[256], b[256];
                snprintf(a, sizeof a, "%s/rootfs/bin", dir);
                ssize_t n1 = readlink(a, b, sizeof b - 1);
                char c[256];
                ssize_t n2 = readlink("/bin", c, sizeof c - 1);
                bin_ok = n1 > 0 && n1 == n2 && memcmp(b, c, (size_t) n1) == 0;
        }
        snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
        (void) system(cmd);
        close(fd);
        ASSERT_OK_ERR(r, err);
        ASSERT_EQ_INT(ok, 0);
        ASSERT_TRUE(bin_ok);
}

/* statvfs flags of <root>/<rel>, or ~0 when it cannot be read. */
static unsigned long
vfs_flags(const char *root, const char *rel)
{
        char p[512];
        struct statvfs v;
        snprintf(p, sizeof p, "%s/%s", root, rel);
        return statvfs(p, &v) < 0 ? ~0UL : v.f_flag;
}

/* In a child: a user namespace and a mount namespace of its own (root in it, as the
 * sandbox's runtime is), trying to make the bind at <root>/<rel> writable again and to
 * unmount it. Exit status: bit 0 the remount succeeded, bit 1 the unmount did. */
static int
try_unlock(const char *root, const char *rel)
{
        char p[512];
        snprintf(p, sizeof p, "%s/%s", root, rel);
        pid_t pid = fork();
        if (pid == 0) {
                if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
                        _exit(8);
                int r = mount(NULL, p, NULL, MS_REMOUNT | MS_BIND, NULL) == 0 ? 1 : 0;
                r |= umount2(p, MNT_DETACH) == 0 ? 2 : 0;
                _exit(r);
        }
        int st = 0;
        if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st))
                return -1;
        return WEXITSTATUS(st);
}

TEST(skeleton_binds)
{
        /* The system view on a skeleton in a private mount namespace, as msp-mcp mounts
         * it: a tmpfs that is writable, suid and dev below /usr (a host's submount) is
         * read-only, nosuid and nodev inside the bind; the files are noexec too; nothing of
         * the deny list is there; a user namespace's root cannot clear the flags nor
         * unmount a bind (the kernel locks them when the sandbox's namespaces are made). */
        if (geteuid() != 0) {
                tap_skip("skeleton_binds", "needs root (mounts in a private mount namespace)");
                return;
        }
        if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
                tap_skip("skeleton_binds", "no private mount namespace");
                return;
        }
        char dir[] = "/tmp/mcp-binds-XXXXXX", root[64];
        ASSERT_NOT_NULL(mkdtemp(dir));
        snprintf(root, sizeof root, "%s/rootfs", dir);
        ASSERT_EQ_INT(mount("msp-test-sub", "/usr/local", "tmpfs", 0, "size=1m,mode=0755"), 0);
        ASSERT_EQ_INT(mount("tmpfs", dir, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m"), 0);
        int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        msp_err err = { 0 };
        int r = mcp_skeleton_create(fd, "rootfs", &view, &err);
        ASSERT_OK_ERR(r, err);
        int skel = openat(fd, "rootfs", O_PATH | O_DIRECTORY | O_CLOEXEC);
        r = mcp_sysbinds_mount(skel, &view, &err);
        ASSERT_OK_ERR(r, err);
        unsigned long sys = ST_RDONLY | ST_NOSUID | ST_NODEV;
        ASSERT_EQ_U64(vfs_flags(root, "usr") & (sys | ST_NOEXEC), sys);
        ASSERT_EQ_U64(vfs_flags(root, "usr/local") & (sys | ST_NOEXEC), sys);
        ASSERT_EQ_U64(vfs_flags(root, "etc/ld.so.cache") & (sys | ST_NOEXEC), sys | ST_NOEXEC);
        ASSERT_EQ_U64(vfs_flags(root, "etc/ssl/certs") & sys, sys);
        ASSERT_EQ_U64(vfs_flags(root, "etc/passwd") & ST_RDONLY, 0);   /* the tmpfs itself */
        char cmd[1024];
        snprintf(cmd, sizeof cmd, "cd %s && cmp -s usr/bin/sh /usr/bin/sh && cmp -s "
                 "etc/ld.so.cache /etc/ld.so.cache && ! test -e etc/shadow && ! test -e etc/ssh "
                 "&& ! test -e etc/sudoers && ! test -e root && ! touch usr/local/x 2>/dev/null "
                 "&& ! touch usr/x 2>/dev/null", root);
        ASSERT_EQ_INT(system(cmd), 0);
        ASSERT_EQ_INT(try_unlock(root, "usr"), 0);
        ASSERT_EQ_INT(try_unlock(root, "etc/ld.so.cache"), 0);
        /* The tmpfs goes with every bind on it. */
        ASSERT_EQ_INT(umount2(dir, MNT_DETACH), 0);
        snprintf(cmd, sizeof cmd, "! grep -q ' %s' /proc/self/mountinfo", dir);
        ASSERT_EQ_INT(system(cmd), 0);
        close(skel);
        close(fd);
        (void) umount2("/usr/local", MNT_DETACH);
        rmdir(dir);
}

TEST(languages_from_system_dirs)
{
        /* A fake root: python3 only in /usr/local/bin, a non-executable perl, a node dir. */
        char dir[] = "/tmp/mcp-lang-XXXXXX";
        ASSERT_NOT_NULL(mkdtemp(dir));
        char cmd[1024];
        snprintf(cmd, sizeof cmd,
                 "cd %s && mkdir -p usr/bin usr/local/bin usr/bin/node && ln -s usr/bin bin && "
                 "printf '' > usr/local/bin/python3 && chmod 755 usr/local/bin/python3 && "
                 "printf '' > usr/bin/perl && chmod 644 usr/bin/perl && "
                 "printf '' > usr/bin/sh && chmod 755 usr/bin/sh && "
                 "ln -s /usr/bin/sh usr/bin/bash", dir);
        int ok = system(cmd);
        int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        mcp_languages l;
        mcp_languages_detect(fd, NULL, &l);
        close(fd);
        snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
        (void) system(cmd);
        ASSERT_EQ_INT(ok, 0);
        ASSERT_EQ_INT(l.n, 3);                  /* sh, bash (a symlink inside the root), python */
        ASSERT_STREQ(l.names[0], "sh");
        ASSERT_STREQ(l.names[1], "bash");
        ASSERT_STREQ(l.names[2], "python");
        ASSERT_NULL(l.names[3]);
        ASSERT_STREQ(l.interp[0], "/usr/bin/sh");
        ASSERT_STREQ(l.interp[2], "/usr/local/bin/python3");

        msp_err err = { 0 };
        const char **argv = NULL;
        const char *args[] = { "a b", "c" };
        ASSERT_OK_ERR(mcp_language_argv(l.langs[2], l.interp[2], "/.msp/main.py", args, 2, &argv,
                                        &err), err);
        ASSERT_STREQ(argv[0], "/usr/local/bin/python3");
        ASSERT_STREQ(argv[1], "-u");
        ASSERT_STREQ(argv[2], "/.msp/main.py");
        ASSERT_STREQ(argv[3], "a b");
        ASSERT_STREQ(argv[4], "c");
        ASSERT_NULL(argv[5]);
        free(argv);
}

TEST(languages_only_a_rootfs_has)
{
        /* The host: sh only. A rootfs (an image): sh, ruby, and an Rscript not executable. */
        char host[] = "/tmp/mcp-lang-host-XXXXXX", image[] = "/tmp/mcp-lang-image-XXXXXX";
        ASSERT_NOT_NULL(mkdtemp(host));
        ASSERT_NOT_NULL(mkdtemp(image));
        char cmd[1024];
        snprintf(cmd, sizeof cmd,
                 "mkdir -p %s/bin %s/usr/bin && printf '' > %s/bin/sh && chmod 755 %s/bin/sh && "
                 "cp -a %s/bin/sh %s/usr/bin/sh && printf '' > %s/usr/bin/ruby && "
                 "chmod 755 %s/usr/bin/ruby && printf '' > %s/usr/bin/Rscript",
                 host, image, host, host, host, image, image, image, image);
        int ok = system(cmd);
        int hfd = open(host, O_PATH | O_DIRECTORY | O_CLOEXEC);
        int ifd = open(image, O_PATH | O_DIRECTORY | O_CLOEXEC);
        mcp_languages l;
        mcp_languages_detect(hfd, NULL, &l);
        mcp_languages_add_rootfs(&l, ifd);
        mcp_languages_add_rootfs(&l, ifd);      /* a second rootfs with the same: listed once */
        close(hfd);
        close(ifd);
        snprintf(cmd, sizeof cmd, "rm -rf %s %s", host, image);
        (void) system(cmd);
        ASSERT_EQ_INT(ok, 0);
        ASSERT_EQ_INT(l.n, 2);
        ASSERT_STREQ(l.names[0], "sh");
        ASSERT_STREQ(l.interp[0], "/bin/sh");   /* the host's, kept */
        ASSERT_STREQ(l.names[1], "ruby");
        ASSERT_STREQ(l.interp[1], "");          /* no host interpreter: runs only in the rootfs */
        ASSERT_NULL(l.names[2]);
        mcp_languages_drop(&l, "sh", "broken");
        ASSERT_STREQ(l.names[0], "ruby");
        ASSERT_STREQ(l.interp[0], "");
}

int
main(void)
{
        msp_err err = { 0 };
        if (mcp_hostview_probe(&view, &err) < 0 ||
            oci_json_parse("seccomp", mcp_profile_seccomp, strlen(mcp_profile_seccomp),
                           &seccomp_doc, &err) < 0 ||
            oci_json_parse("landlock", mcp_profile_landlock, strlen(mcp_profile_landlock),
                           &landlock_doc, &err) < 0) {
                printf("Bail out! %s\n", err.msg);
                return 1;
        }
        RUN(hardened_fields);
        RUN(init_is_pid1);
        RUN(image_top_level_grants);
        RUN(network_session);
        RUN(hostile_strings_stay_strings);
        RUN(env_check);
        RUN(embedded_profiles_match_contrib);
        RUN(skeleton);
        RUN(skeleton_binds);
        RUN(languages_from_system_dirs);
        RUN(languages_only_a_rootfs_has);
        oci_json_doc_free(seccomp_doc);
        oci_json_doc_free(landlock_doc);
        return tap_done();
}
