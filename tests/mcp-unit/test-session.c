/* mcp-adapter/session.c: the session store with the real loop (loop.c), real tmpfs and
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

#include "../unit/tap.h"
#include "files.h"
#include "json.h"
#include "loop.h"
#include "session.h"

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
        free(list);
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
        ASSERT_EQ_INT(a.st_uid, 101000);
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
        /* a live store's session survives another store's start */
        ASSERT_OK(mcp_loop_new(&loop));
        mcp_session_store *a = NULL, *b = NULL;
        mcp_session_info live;
        ASSERT_OK_ERR(mcp_sessions_new(loop, &cfg, &a, &err), err);
        ASSERT_FALSE(session_dir_exists(dead_id));
        ASSERT_OK_ERR(mcp_session_create(a, &(mcp_session_opts){ 0 }, &live, &err), err);
        int r = mcp_sessions_new(loop, &cfg, &b, &err);
        bool kept = session_dir_exists(live.id);
        mcp_sessions_free(b);
        mcp_sessions_free(a);
        ASSERT_EQ_INT(r, 0);
        ASSERT_TRUE(kept);
        ASSERT_FALSE(session_dir_exists(live.id));
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
        RUN(create_get_list_close);
        RUN(bad_options_and_ids);
        RUN(max_sessions);
        RUN(acquire_release_persists);
        RUN(workspace_cap);
        RUN(expiry);
        RUN(seed_overlay);
        RUN(dead_owner_cleaned_live_owner_kept);
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
