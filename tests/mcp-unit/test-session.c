/* mcp-adapter/session/session.c: the session store with the real loop (loop.c), real tmpfs and
 * overlay mounts in a private mount namespace. Root only. */
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
#include "base/fileio.h"
#include "oci/json.h"
#include "base/loop.h"
#include "sandbox/sandbox-ids.h"
#include "session/session.h"

static char base[64];                   /* /tmp/mcp-session-XXXXXX */
static char state[128];                 /* base/state */
static char seed[128];                  /* base/seed */
static mcp_rootfs rootfs[] = { { "host", NULL }, { "alpine", "/nonexistent" } };

static mcp_config
test_config(void)
{
        mcp_config c = { 0 };
        c.state_dir = state;
        c.defaults = (mcp_limits){ .memory_bytes = 256u << 20, .pids = 64, .cpu_millis = 1000,
                                   .timeout_ms = 10000, .output_bytes = 65536,
                                   .tmp_bytes = 16u << 20, .workspace_bytes = 4u << 20 };
        c.maxima = c.defaults;
        c.max_sessions = 3;
        c.session_ttl_s = 600;
        c.session_max_ttl_s = 3600;
        c.rootfs = rootfs;
        c.n_rootfs = 2;
        return c;
}

static bool
session_dir_exists(const char *id)
{
        char p[256];
        snprintf(p, sizeof p, "%s/sessions/%s", state, id);
        return access(p, F_OK) == 0;
}

/* Mounts of ours still in this namespace under base. */
static int
mounts_under_base(void)
{
        FILE *f = fopen("/proc/self/mountinfo", "re");
        char line[4096];
        int n = 0;
        if (!f)
                return -1;
        while (fgets(line, sizeof line, f))
                n += strstr(line, base) != NULL;
        fclose(f);
        return n;
}

TEST(create_get_list_close)
{
        _cleanup_loop_ mcp_loop *loop = NULL;
        mcp_session_store *st = NULL;
        mcp_config cfg = test_config();
        msp_err err = { 0 };
        ASSERT_OK(mcp_loop_new(&loop));
        ASSERT_OK_ERR(mcp_sessions_new(loop, &cfg, &st, &err), err);
        mcp_session_info info;
        uint64_t before = mcp_wallclock_usec();
        ASSERT_OK_ERR(mcp_session_create(st, &(mcp_session_opts){ .ttl_s = 100 }, &info, &err),
                      err);
        ASSERT_TRUE(mcp_session_id_valid(info.id));
        ASSERT_STREQ(info.rootfs, "host");
        ASSERT_FALSE(info.network);
        ASSERT_EQ_U64(info.limits.workspace_bytes, 4u << 20);
        ASSERT_EQ_U64(info.limits.pids, 64);
        ASSERT_TRUE(info.created_usec >= before);
        ASSERT_EQ_U64(info.expires_usec, info.created_usec + 100 * 1000000ull);
        ASSERT_TRUE(session_dir_exists(info.id));
        /* meta.json is JSON with the expiry */
        char p[256], buf[4096];
        snprintf(p, sizeof p, "%s/sessions/%s/meta.json", state, info.id);
        int fd = open(p, O_RDONLY | O_CLOEXEC);
        ASSERT_TRUE(fd >= 0);
        ssize_t n = read(fd, buf, sizeof buf);
        close(fd);
        ASSERT_TRUE(n > 0);
        oci_json_doc *doc = NULL;
        ASSERT_OK_ERR(oci_json_parse("meta.json", buf, (size_t) n, &doc, &err), err);
        const oci_json *id = oci_json_get(oci_json_doc_root(doc), "id");
        bool id_ok = id && strcmp(oci_json_string(id), info.id) == 0;
        bool has_exp = oci_json_get(oci_json_doc_root(doc), "expires_usec") != NULL;
        oci_json_doc_free(doc);
        ASSERT_TRUE(id_ok && has_exp);

        mcp_session_info got, other;
        ASSERT_OK_ERR(mcp_session_get(st, info.id, &got, &err), err);
        ASSERT_STREQ(got.id, info.id);
        ASSERT_OK_ERR(mcp_session_create(st, &(mcp_session_opts){ .rootfs = "alpine" }, &other,
                                         &err), err);
        ASSERT_STREQ(other.rootfs, "alpine");
        mcp_session_info *list = NULL;
        size_t ln = 0;
        ASSERT_OK_ERR(mcp_session_list(st, &list, &ln, &err), err);
        ASSERT_EQ_INT(ln, 2);
        bool ordered = strcmp(list[0].id, info.id) == 0 && strcmp(list[1].id, other.id) == 0;
        free(list);
        ASSERT_TRUE(ordered);           /* oldest first */
        ASSERT_OK_ERR(mcp_session_close(st, info.id, false, &err), err);
        ASSERT_EQ_INT(mcp_session_get(st, info.id, &got, &err), -ENOENT);
        ASSERT_TRUE(strstr(err.msg, info.id) != NULL);
        ASSERT_FALSE(session_dir_exists(info.id));
        ASSERT_EQ_INT(mcp_session_close(st, info.id, false, &err), -ENOENT);
        mcp_sessions_free(st);
        ASSERT_FALSE(session_dir_exists(other.id));
}

TEST(bad_options_and_ids)
{
        _cleanup_loop_ mcp_loop *loop = NULL;
        mcp_session_store *st = NULL;
        mcp_config cfg = test_config();
        msp_err err = { 0 };
        mcp_session_info info;
        ASSERT_OK(mcp_loop_new(&loop));
        ASSERT_OK_ERR(mcp_sessions_new(loop, &cfg, &st, &err), err);
        int r1 = mcp_session_create(st, &(mcp_session_opts){ .rootfs = "nope" }, &info, &err);
        bool m1 = strstr(err.msg, "rootfs \"nope\"") != NULL;
        int r2 = mcp_session_create(st, &(mcp_session_opts){ .network = true }, &info, &err);
        int r3 = mcp_session_create(st, &(mcp_session_opts){ .ttl_s = 3601 }, &info, &err);
        bool m3 = strstr(err.msg, "3601") != NULL;
        const char *bad[] = { "", "../x", "s-../../../etc", "s-0123456789ABCDEF",
                              "s-0123456789abcde", "s-0123456789abcdef0", "/etc/passwd" };
        int bad_ok = 0;
        for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
                bad_ok += mcp_session_get(st, bad[i], &info, &err) == -ENOENT &&
                          !mcp_session_id_valid(bad[i]);
        int r4 = mcp_session_write_file(st, "s-../../../../tmp", "x", "x", 1, false, &err);
        mcp_sessions_free(st);
        ASSERT_EQ_INT(r1, -EINVAL);
        ASSERT_TRUE(m1);
        ASSERT_EQ_INT(r2, -EINVAL);
        ASSERT_EQ_INT(r3, -EINVAL);
        ASSERT_TRUE(m3);
        ASSERT_EQ_INT(bad_ok, (int) ARRAY_SIZE(bad));
        ASSERT_EQ_INT(r4, -ENOENT);
        ASSERT_TRUE(mcp_session_id_valid("s-0123456789abcdef"));
        cfg.seed_dir = "relative/seed";
        st = NULL;
        ASSERT_EQ_INT(mcp_sessions_new(loop, &cfg, &st, &err), -EINVAL);
        ASSERT_TRUE(strstr(err.msg, "--seed-dir") != NULL);
        cfg.seed_dir = "/nonexistent/seed";
        ASSERT_EQ_INT(mcp_sessions_new(loop, &cfg, &st, &err), -EINVAL);
        ASSERT_NULL(st);
}

TEST(max_sessions)
{
        _cleanup_loop_ mcp_loop *loop = NULL;
        mcp_session_store *st = NULL;
        mcp_config cfg = test_config();
        msp_err err = { 0 };
        mcp_session_info s[4];
        ASSERT_OK(mcp_loop_new(&loop));
        ASSERT_OK_ERR(mcp_sessions_new(loop, &cfg, &st, &err), err);
        int ok = 0;
        for (int i = 0; i < 3; i++)
                ok += mcp_session_create(st, &(mcp_session_opts){ 0 }, &s[i], &err) == 0;
        int r = mcp_session_create(st, &(mcp_session_opts){ 0 }, &s[3], &err);
        bool msg = strstr(err.msg, "--max-sessions") != NULL;
        int closed = mcp_session_close(st, s[1].id, false, &err);
        int again = mcp_session_create(st, &(mcp_session_opts){ 0 }, &s[3], &err);
        mcp_sessions_free(st);
        ASSERT_EQ_INT(ok, 3);
        ASSERT_EQ_INT(r, -EUSERS);
        ASSERT_TRUE(msg);
        ASSERT_EQ_INT(closed, 0);
        ASSERT_EQ_INT(again, 0);
}

static int evicted;
static mcp_session_store *evict_store;

static void
on_evict(const char *id, void *data)
{
        (void) data;
        evicted++;
        mcp_session_release(evict_store, id);   /* as the engine does after cancelling */
}

TEST(acquire_release_persists)
{
        _cleanup_loop_ mcp_loop *loop = NULL;
        mcp_session_store *st = NULL;
        mcp_config cfg = test_config();
        msp_err err = { 0 };
        mcp_session_info info, ai;
        ASSERT_OK(mcp_loop_new(&loop));
        ASSERT_OK_ERR(mcp_sessions_new(loop, &cfg, &st, &err), err);
        ASSERT_OK_ERR(mcp_session_create(st, &(mcp_session_opts){ 0 }, &info, &err), err);
        ASSERT_OK_ERR(mcp_session_write_file(st, info.id, "keep.txt", "kept", 4, false, &err),
                      err);
        int wsfd = -1;
        const char *wspath = NULL;
        ASSERT_OK_ERR(mcp_session_acquire(st, info.id, &wsfd, &wspath, &ai, &err), err);
        ASSERT_TRUE(ai.busy);
        ASSERT_EQ_INT(ai.runs, 1);
        /* the path and the fd are the same directory, a tmpfs owned by the sandbox user */
        struct stat a, b;
        ASSERT_OK(NERRNO(fstat(wsfd, &a)));
        ASSERT_OK(NERRNO(stat(wspath, &b)));
        ASSERT_TRUE(a.st_ino == b.st_ino && a.st_dev == b.st_dev);
        ASSERT_EQ_INT(a.st_uid, MCP_SANDBOX_HOST_UID);
        ASSERT_OK(NERRNO(faccessat(wsfd, "keep.txt", F_OK, 0)));
        /* "the run" writes a file */
        int fd = openat(wsfd, "made-by-run", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        ASSERT_TRUE(fd >= 0);
        ASSERT_EQ_INT(write(fd, "run", 3), 3);
        close(fd);
        int wsfd2;
        const char *p2;
        ASSERT_EQ_INT(mcp_session_acquire(st, info.id, &wsfd2, &p2, NULL, &err), -EBUSY);
        ASSERT_EQ_INT(mcp_session_close(st, info.id, false, &err), -EBUSY);
        mcp_session_release(st, info.id);
        char *buf = NULL;
        size_t len;
        uint64_t size;
        bool trunc;
        ASSERT_OK_ERR(mcp_session_read_file(st, info.id, "made-by-run", 100, &buf, &len, &size,
                                            &trunc, &err), err);
        ASSERT_STREQ(buf, "run");
        free(buf);
        ASSERT_OK_ERR(mcp_session_acquire(st, info.id, &wsfd, &wspath, &ai, &err), err);
        ASSERT_EQ_INT(ai.runs, 2);
        ASSERT_OK(NERRNO(faccessat(wsfd, "keep.txt", F_OK, 0)));
        ASSERT_OK(NERRNO(faccessat(wsfd, "made-by-run", F_OK, 0)));
        /* force-close of a busy session: the engine's callback cancels and releases */
        evicted = 0;
        evict_store = st;
        mcp_sessions_set_evict(st, on_evict, NULL);
        ASSERT_OK_ERR(mcp_session_close(st, info.id, true, &err), err);
        ASSERT_EQ_INT(evicted, 1);
        ASSERT_FALSE(session_dir_exists(info.id));
        mcp_sessions_free(st);
        ASSERT_EQ_INT(mounts_under_base(), 0);
}

TEST(workspace_cap)
{
        _cleanup_loop_ mcp_loop *loop = NULL;
        mcp_session_store *st = NULL;
        mcp_config cfg = test_config();
        msp_err err = { 0 };
        mcp_session_info info;
        ASSERT_OK(mcp_loop_new(&loop));
        ASSERT_OK_ERR(mcp_sessions_new(loop, &cfg, &st, &err), err);
        ASSERT_OK_ERR(mcp_session_create(st, &(mcp_session_opts){ 0 }, &info, &err), err);
        char *data = calloc(1, 3u << 20);
        ASSERT_NOT_NULL(data);
        int r1 = mcp_session_write_file(st, info.id, "one", data, 3u << 20, false, &err);
        int r2 = mcp_session_write_file(st, info.id, "two", data, 3u << 20, false, &err);
        free(data);
        mcp_sessions_free(st);
        ASSERT_EQ_INT(r1, 0);
        ASSERT_EQ_INT(r2, -EFBIG);
}

/* Drive the loop until the session's dir is gone (the expiry timer fired), bounded. */
typedef struct expiry_wait {
        const char *id;
        uint64_t deadline;
} expiry_wait;

static int
check_gone(mcp_loop *loop, void *data)
{
        expiry_wait *w = data;
        if (!session_dir_exists(w->id))
                mcp_loop_exit(loop, 0);
        else if (mcp_now_usec() > w->deadline)
                mcp_loop_exit(loop, -ETIMEDOUT);
        else
                return mcp_loop_add_timer(loop, 20000, check_gone, w, NULL);
        return 0;
}

TEST(expiry)
{
        _cleanup_loop_ mcp_loop *loop = NULL;
        mcp_session_store *st = NULL;
        mcp_config cfg = test_config();
        msp_err err = { 0 };
        mcp_session_info idle, busy, got;
        ASSERT_OK(mcp_loop_new(&loop));
        ASSERT_OK_ERR(mcp_sessions_new(loop, &cfg, &st, &err), err);
        ASSERT_OK_ERR(mcp_session_create(st, &(mcp_session_opts){ .ttl_s = 1 }, &idle, &err), err);
        ASSERT_OK_ERR(mcp_session_create(st, &(mcp_session_opts){ .ttl_s = 1 }, &busy, &err), err);
        int wsfd;
        const char *wspath;
        ASSERT_OK_ERR(mcp_session_acquire(st, busy.id, &wsfd, &wspath, NULL, &err), err);
        expiry_wait w = { idle.id, mcp_now_usec() + 5000000 };
        ASSERT_OK(mcp_loop_add_timer(loop, 900000, check_gone, &w, NULL));
        int r = mcp_loop_run(loop);
        ASSERT_EQ_INT(r, 0);
        ASSERT_EQ_INT(mcp_session_get(st, idle.id, &got, &err), -ENOENT);
        /* the busy one is gone for callers but kept for its run until released */
        ASSERT_EQ_INT(mcp_session_get(st, busy.id, &got, &err), -ENOENT);
        ASSERT_TRUE(session_dir_exists(busy.id));
        ASSERT_OK(NERRNO(faccessat(wsfd, ".", F_OK, 0)));
        mcp_session_info *list = NULL;
        size_t n = 9;
        ASSERT_OK_ERR(mcp_session_list(st, &list, &n, &err), err);
        free(list);
        ASSERT_EQ_INT(n, 0);
        mcp_session_release(st, busy.id);
        ASSERT_FALSE(session_dir_exists(busy.id));
        mcp_sessions_free(st);
        ASSERT_EQ_INT(mounts_under_base(), 0);
}

TEST(seed_overlay)
{
        _cleanup_loop_ mcp_loop *loop = NULL;
        mcp_session_store *st = NULL;
        mcp_config cfg = test_config();
        cfg.seed_dir = seed;
        msp_err err = { 0 };
        mcp_session_info info;
        ASSERT_OK(mcp_loop_new(&loop));
        ASSERT_OK_ERR(mcp_sessions_new(loop, &cfg, &st, &err), err);
        ASSERT_OK_ERR(mcp_session_create(st, &(mcp_session_opts){ 0 }, &info, &err), err);
        char *buf = NULL;
        size_t len;
        uint64_t size;
        bool trunc;
        ASSERT_OK_ERR(mcp_session_read_file(st, info.id, "data/seed.txt", 100, &buf, &len, &size,
                                            &trunc, &err), err);
        ASSERT_STREQ(buf, "from the seed\n");
        free(buf);
        ASSERT_OK_ERR(mcp_session_write_file(st, info.id, "data/seed.txt", "changed", 7, false,
                                             &err), err);
        ASSERT_OK_ERR(mcp_session_read_file(st, info.id, "data/seed.txt", 100, &buf, &len, &size,
                                            &trunc, &err), err);
        ASSERT_STREQ(buf, "changed");
        free(buf);
        /* the change is in the upper layer; the seed is untouched */
        char p[256], sbuf[64] = { 0 };
        snprintf(p, sizeof p, "%s/data/seed.txt", seed);
        int fd = open(p, O_RDONLY | O_CLOEXEC);
        ASSERT_TRUE(fd >= 0);
        ssize_t n = read(fd, sbuf, sizeof sbuf - 1);
        close(fd);
        ASSERT_TRUE(n > 0);
        ASSERT_STREQ(sbuf, "from the seed\n");
        snprintf(p, sizeof p, "%s/sessions/%s/ws/upper/data/seed.txt", state, info.id);
        ASSERT_OK(NERRNO(access(p, F_OK)));
        mcp_dirent *ents = NULL;
        size_t ne = 0;
        ASSERT_OK_ERR(mcp_session_list_files(st, info.id, "data", 10, &ents, &ne, &trunc, &err),
                      err);
        ASSERT_EQ_INT(ne, 1);
        mcp_dirents_free(ents, ne);
        /* the run sees the same merged view */
        int wsfd;
        const char *wspath;
        ASSERT_OK_ERR(mcp_session_acquire(st, info.id, &wsfd, &wspath, NULL, &err), err);
        ASSERT_OK(NERRNO(faccessat(wsfd, "data/seed.txt", F_OK, 0)));
        mcp_session_release(st, info.id);
        mcp_sessions_free(st);
        ASSERT_EQ_INT(mounts_under_base(), 0);
        ASSERT_FALSE(session_dir_exists(info.id));
}

TEST(dead_owner_cleaned_live_owner_kept)
{
        _cleanup_loop_ mcp_loop *loop = NULL;
        mcp_config cfg = test_config();
        msp_err err = { 0 };
        int pipefd[2];
        ASSERT_OK(NERRNO(pipe2(pipefd, O_CLOEXEC)));
        pid_t pid = fork();
        ASSERT_TRUE(pid >= 0);
        if (pid == 0) {
                /* a server that dies without cleaning up: its mounts die with its namespace */
                mcp_loop *l = NULL;
                mcp_session_store *s = NULL;
                mcp_session_info i;
                if (unshare(CLONE_NEWNS) < 0 || mcp_loop_new(&l) < 0 ||
                    mcp_sessions_new(l, &cfg, &s, NULL) < 0 ||
                    mcp_session_create(s, &(mcp_session_opts){ 0 }, &i, NULL) < 0 ||
                    mcp_session_write_file(s, i.id, "f", "x", 1, false, NULL) < 0)
                        _exit(1);
                (void) !write(pipefd[1], i.id, strlen(i.id) + 1);
                _exit(0);
        }
        close(pipefd[1]);
        char dead_id[64] = { 0 };
        ssize_t n = read(pipefd[0], dead_id, sizeof dead_id - 1);
        close(pipefd[0]);
        int status;
        ASSERT_EQ_INT(waitpid(pid, &status, 0), pid);
        ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        ASSERT_TRUE(n > 0);
        ASSERT_TRUE(session_dir_exists(dead_id));
        /* lock-less dirs: a fresh one may be a live server's being created, an old one not */
        char young[256], old[256];
        snprintf(young, sizeof young, "%s/sessions/s-00000000000000aa", state);
        snprintf(old, sizeof old, "%s/sessions/s-00000000000000bb", state);
        ASSERT_OK(NERRNO(mkdir(young, 0711)));
        ASSERT_OK(NERRNO(mkdir(old, 0711)));
        struct timespec ts[2] = { { .tv_sec = 1000000 }, { .tv_sec = 1000000 } };
        ASSERT_OK(NERRNO(utimensat(AT_FDCWD, old, ts, 0)));
        /* a live store's session survives another store's start */
        ASSERT_OK(mcp_loop_new(&loop));
        mcp_session_store *a = NULL, *b = NULL;
        mcp_session_info live;
        ASSERT_OK_ERR(mcp_sessions_new(loop, &cfg, &a, &err), err);
        ASSERT_FALSE(session_dir_exists(dead_id));
        ASSERT_FALSE(session_dir_exists("s-00000000000000bb"));
        bool young_kept = session_dir_exists("s-00000000000000aa");
        (void) rmdir(young);
        ASSERT_TRUE(young_kept);
        ASSERT_OK_ERR(mcp_session_create(a, &(mcp_session_opts){ 0 }, &live, &err), err);
        int r = mcp_sessions_new(loop, &cfg, &b, &err);
        bool kept = session_dir_exists(live.id);
        mcp_sessions_free(b);
        mcp_sessions_free(a);
        ASSERT_EQ_INT(r, 0);
        ASSERT_TRUE(kept);
        ASSERT_FALSE(session_dir_exists(live.id));
}

/* ---- a real container on the session workspace (the runtime from $MSP) ---- */

static int
write_text(const char *path, const char *text)
{
        FILE *f = fopen(path, "we");
        if (!f)
                return -errno;
        int r = fputs(text, f) < 0 ? -EIO : 0;
        if (fclose(f) != 0 && r == 0)
                r = -errno;
        return r;
}

/* A bundle whose rootfs is the host's /usr (read-only) with merged-usr links, the user
 * namespace msp-mcp uses (sandbox-ids.h), uid 1000, and ws_path bound at /workspace. */
static int
make_bundle(const char *bundle, const char *ws_path, const char *script)
{
        char p[512], cfg[8192];
        snprintf(p, sizeof p, "%s/rootfs", bundle);
        (void) mkdir(bundle, 0711);
        (void) mkdir(p, 0755);
        const char *dirs[] = { "usr", "proc", "dev", "workspace" };
        for (size_t i = 0; i < ARRAY_SIZE(dirs); i++) {
                snprintf(p, sizeof p, "%s/rootfs/%s", bundle, dirs[i]);
                (void) mkdir(p, 0755);
        }
        const char *links[][2] = { { "bin", "usr/bin" }, { "lib", "usr/lib" },
                                   { "lib64", "usr/lib64" }, { "sbin", "usr/sbin" } };
        for (size_t i = 0; i < ARRAY_SIZE(links); i++) {
                snprintf(p, sizeof p, "%s/rootfs/%s", bundle, links[i][0]);
                (void) symlink(links[i][1], p);
        }
        snprintf(cfg, sizeof cfg,
                 "{\"ociVersion\":\"1.0.2\","
                 "\"process\":{\"user\":{\"uid\":%u,\"gid\":%u},"
                 "\"args\":[\"/bin/sh\",\"-c\",\"%s\"],\"cwd\":\"/workspace\","
                 "\"env\":[\"PATH=/usr/bin:/bin\"],\"noNewPrivileges\":true},"
                 "\"root\":{\"path\":\"rootfs\",\"readonly\":true},"
                 "\"mounts\":[{\"destination\":\"/proc\",\"type\":\"proc\",\"source\":\"proc\"},"
                 "{\"destination\":\"/dev\",\"type\":\"tmpfs\",\"source\":\"tmpfs\","
                 "\"options\":[\"nosuid\",\"mode=755\"]},"
                 "{\"destination\":\"/usr\",\"type\":\"bind\",\"source\":\"/usr\","
                 "\"options\":[\"rbind\",\"ro\"]},"
                 "{\"destination\":\"/workspace\",\"type\":\"bind\",\"source\":\"%s\","
                 "\"options\":[\"rbind\",\"rw\",\"nosuid\",\"nodev\"]}],"
                 "\"linux\":{\"namespaces\":[{\"type\":\"user\"},{\"type\":\"mount\"},"
                 "{\"type\":\"pid\"},{\"type\":\"ipc\"},{\"type\":\"uts\"}],"
                 "\"uidMappings\":[{\"containerID\":0,\"hostID\":%u,\"size\":%u}],"
                 "\"gidMappings\":[{\"containerID\":0,\"hostID\":%u,\"size\":%u}]}}",
                 MCP_SANDBOX_UID, MCP_SANDBOX_GID, script, ws_path, MCP_SANDBOX_HOST_BASE,
                 MCP_SANDBOX_ID_COUNT, MCP_SANDBOX_HOST_BASE, MCP_SANDBOX_ID_COUNT);
        snprintf(p, sizeof p, "%s/config.json", bundle);
        return write_text(p, cfg);
}

/* Runs the bundle to completion; the container's exit status, or -errno. */
static int
run_bundle(const char *runtime, const char *bundle, const char *id)
{
        char root[256];
        snprintf(root, sizeof root, "%s/rt", base);
        pid_t pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0) {
                dup2(2, 1);     /* keep TAP's stdout clean */
                execl(runtime, runtime, "--root", root, "run", "--bundle", bundle, id, (char *) NULL);
                _exit(127);
        }
        int status;
        if (waitpid(pid, &status, 0) != pid)
                return -errno;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static char *
session_read(mcp_session_store *st, const char *id, const char *path)
{
        char *buf = NULL;
        size_t len;
        uint64_t size;
        bool trunc;
        msp_err err = { 0 };
        if (mcp_session_read_file(st, id, path, 4096, &buf, &len, &size, &trunc, &err) < 0) {
                tap_diag("read %s: %s", path, err.msg);
                return NULL;
        }
        return buf;
}

static void
container_on_workspace(bool seeded)
{
        const char *runtime = getenv("MSP");
        if (!runtime || access(runtime, X_OK) < 0) {
                tap_skip(seeded ? "container_on_seeded_workspace" : "container_on_workspace",
                         "$MSP (the msp runtime) not set: run through meson test");
                return;
        }
        _cleanup_loop_ mcp_loop *loop = NULL;
        mcp_session_store *st = NULL;
        mcp_config cfg = test_config();
        cfg.seed_dir = seeded ? seed : NULL;
        msp_err err = { 0 };
        mcp_session_info info;
        char bundle[256], b2[256];
        snprintf(bundle, sizeof bundle, "%s/bundle1", base);
        snprintf(b2, sizeof b2, "%s/bundle2", base);
        tap_current_failed = false;
        bool ok = mcp_loop_new(&loop) == 0 && mcp_sessions_new(loop, &cfg, &st, &err) == 0 &&
                  mcp_session_create(st, &(mcp_session_opts){ 0 }, &info, &err) == 0;
        int wsfd;
        const char *wspath = NULL;
        ok = ok && mcp_session_write_file(st, info.id, "in.txt", "from the client\n", 16, false,
                                          &err) == 0;
        ok = ok && mcp_session_acquire(st, info.id, &wsfd, &wspath, NULL, &err) == 0;
        const char *script1 = seeded
                ? "id -u > uid && cat in.txt >> uid && echo more >> data/seed.txt && "
                  "echo c > data/new"
                : "id -u > uid && cat in.txt >> uid && echo x >> in.txt";
        int r1 = ok ? make_bundle(bundle, wspath, script1) : -1;
        if (r1 == 0)
                r1 = run_bundle(runtime, bundle, seeded ? "mcp-unit-ws-s1" : "mcp-unit-ws-1");
        if (ok)
                mcp_session_release(st, info.id);
        /* a second run of the same session sees what the first left */
        int r2 = -1;
        if (ok && mcp_session_acquire(st, info.id, &wsfd, &wspath, NULL, &err) == 0) {
                r2 = make_bundle(b2, wspath, "test -f uid && echo again >> uid");
                if (r2 == 0)
                        r2 = run_bundle(runtime, b2, seeded ? "mcp-unit-ws-s2" : "mcp-unit-ws-2");
                mcp_session_release(st, info.id);
        }
        char *uid = ok ? session_read(st, info.id, "uid") : NULL;
        char *in = ok ? session_read(st, info.id, "in.txt") : NULL;
        char *sd = ok && seeded ? session_read(st, info.id, "data/seed.txt") : NULL;
        struct stat sst = { 0 };
        char sp[256];
        snprintf(sp, sizeof sp, "%s/data/seed.txt", seed);
        (void) stat(sp, &sst);
        if (st)
                mcp_sessions_free(st);
        msp_err rm = { 0 };
        int bfd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        (void) mcp_remove_tree_at(bfd, "bundle1", &rm);
        (void) mcp_remove_tree_at(bfd, "bundle2", &rm);
        close(bfd);
        if (!ok)
                tap_diag("setup: %s", err.msg);
        tap_check(ok && r1 == 0 && r2 == 0, "%s: two runs in one session (exit %d, %d)",
                  seeded ? "seeded" : "plain", r1, r2);
        if (!tap_check(uid && strcmp(uid, "1000\nfrom the client\nagain\n") == 0,
                       "%s: the container ran as uid 1000, read the client's file, the second "
                       "run saw the first's", seeded ? "seeded" : "plain"))
                tap_diag("uid file: %s", uid ? uid : "(none)");
        if (seeded) {
                tap_check(sd && strcmp(sd, "from the seed\nmore\n") == 0,
                          "seeded: the container changed a seed file in its upper layer");
                tap_check(sst.st_size == 14, "seeded: the seed itself is untouched");
        } else {
                tap_check(in && strcmp(in, "from the client\nx\n") == 0,
                          "plain: the container could modify the file the client wrote");
        }
        free(uid);
        free(in);
        free(sd);
}

static int
rm_rf(const char *path)
{
        int fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        msp_err err = { 0 };
        int r = mcp_remove_tree_at(fd, path + 1, &err);
        close(fd);
        return r;
}

int
main(void)
{
        if (geteuid() != 0) {
                tap_skip("session", "needs root (tmpfs and overlay mounts, chown)");
                return tap_done();
        }
        if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
                tap_skip("session", "no private mount namespace");
                return tap_done();
        }
        alarm(120);
        snprintf(base, sizeof base, "/tmp/mcp-session-XXXXXX");
        if (!mkdtemp(base)) {
                perror("mkdtemp");
                return 1;
        }
        snprintf(state, sizeof state, "%s/state", base);
        snprintf(seed, sizeof seed, "%s/seed", base);
        char p[256];
        snprintf(p, sizeof p, "%s/data", seed);
        if (mkdir(seed, 0755) < 0 || mkdir(p, 0755) < 0) {
                perror("seed");
                return 1;
        }
        snprintf(p, sizeof p, "%s/data/seed.txt", seed);
        FILE *f = fopen(p, "we");
        if (!f || fputs("from the seed\n", f) < 0 || fclose(f) != 0) {
                perror("seed file");
                return 1;
        }
        /* the runtime's mapped root must reach the bundles and the state dir; the sandbox
         * user may change the seed's data/ (in its upper layer) */
        snprintf(p, sizeof p, "%s/data", seed);
        if (chmod(base, 0711) < 0 || chown(p, MCP_SANDBOX_HOST_UID, MCP_SANDBOX_HOST_GID) < 0) {
                perror("seed owner");
                return 1;
        }
        snprintf(p, sizeof p, "%s/data/seed.txt", seed);
        if (chown(p, MCP_SANDBOX_HOST_UID, MCP_SANDBOX_HOST_GID) < 0) {
                perror("seed owner");
                return 1;
        }
        RUN(create_get_list_close);
        RUN(bad_options_and_ids);
        RUN(max_sessions);
        RUN(acquire_release_persists);
        RUN(workspace_cap);
        RUN(expiry);
        RUN(seed_overlay);
        RUN(dead_owner_cleaned_live_owner_kept);
        container_on_workspace(false);
        container_on_workspace(true);
        snprintf(p, sizeof p, "%s/sessions", state);
        tap_check(mounts_under_base() == 0, "no mounts left under %s", base);
        int left = 0;
        DIR *d = opendir(p);
        for (struct dirent *de; d && (de = readdir(d));)
                left += de->d_name[0] != '.';
        if (d)
                closedir(d);
        tap_check(left == 0, "no session dirs left (%d)", left);
        rm_rf(base);
        tap_check(access(base, F_OK) < 0, "no leftovers in /tmp");
        return tap_done();
}
