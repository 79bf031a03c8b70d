/* The cgroup operations on a live cgroup (cgroup-ctl.c) against the real kernel:
 * freeze/thaw (a counting child stops and resumes), the pid list with a sub-cgroup,
 * signal_all delivering a handled signal once, statistics and the OOM kill count,
 * destroy of a frozen cgroup; and the stats / pid list JSON of oci/stats.c. Mode-aware:
 * v1 on this hybrid host, v2 in the guest of tests/vm. Test cgroups are
 * /msp-unit-ctl-<pid>-<case>; the last test checks that none is left. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/cgroup/cgroup-internal.h"
#include "lib/cgroup/cgroup.h"
#include "tests/lib/cg-test.h"
#include "oci/stats.h"
#include "tests/lib/tap.h"

static pid_t runner;
static rt_cgroup_mode mode;

static void
make_cg(char *path, size_t sz, const char *tag)
{
        bool created = false;
        msp_err e;

        snprintf(path, sz, "/msp-unit-ctl-%d-%s", (int) runner, tag);
        CHECK_OK(rt_cgroup_create(path, &created, &e), e);
        CHECK(created);
}

static void
sleep_ms(long ms)
{
        struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
}

/* Fork fn into the cgroup (the child waits until it is in). */
static pid_t
spawn_in(const char *path, void (*fn)(void))
{
        int p[2];
        msp_err e;
        char c;

        CHECK(pipe2(p, O_CLOEXEC) == 0);
        fflush(stdout);
        pid_t pid = fork();
        CHECK(pid >= 0);
        if (pid == 0) {
                close(p[1]);
                if (read(p[0], &c, 1) != 1)
                        _exit(99);
                fn();
                _exit(0);
        }
        close(p[0]);
        CHECK_OK(rt_cgroup_enter(path, pid, &e), e);
        CHECK(write(p[1], "x", 1) == 1);
        close(p[1]);
        return pid;
}

static int
wait_status(pid_t pid)
{
        int st = 0;

        CHECK(waitpid(pid, &st, 0) == pid);
        return st;
}

static void
child_pause(void)
{
        for (;;)
                pause();
}

/* ---- JSON (oci/stats.c) ---- */

static void
test_stats_json(void)
{
        oci_stats s = { .id = "c1" };
        pid_t pids[] = { 1, 42, 7 };
        char *json = NULL;
        size_t len;
        msp_err e;

        s.cpu.usage.total = 3;
        s.cpu.throttling.throttled_time = 9;
        s.memory.usage = (oci_stats_memory_entry) { .limit = UINT64_MAX, .usage = 4096, .max = 8192 };
        s.pids.current = 2;
        s.pids.limit = 20;
        CHECK_OK(oci_stats_to_json(&s, &json, &len, &e), e);
        CHECK_STR(json, "{\"type\":\"stats\",\"id\":\"c1\",\"data\":{\"cpu\":{\"usage\":{\"total\":3,"
                  "\"kernel\":0,\"user\":0},\"throttling\":{\"periods\":0,\"throttledPeriods\":0,"
                  "\"throttledTime\":9}},\"memory\":{\"cache\":0,\"usage\":{\"limit\":"
                  "18446744073709551615,\"usage\":4096,\"max\":8192,\"failcnt\":0}},"
                  "\"pids\":{\"current\":2,\"limit\":20}}}");
        CHECK(len == strlen(json));
        free(json);
        CHECK_OK(oci_pid_list_to_json(pids, 3, &json, &len, &e), e);
        CHECK_STR(json, "[1,42,7]");
        free(json);
        CHECK_OK(oci_pid_list_to_json(NULL, 0, &json, &len, &e), e);
        CHECK_STR(json, "[]");
        free(json);
        CHECK_OK(oci_event_to_json("oom", "c1", &json, &len, &e), e);
        CHECK_STR(json, "{\"type\":\"oom\",\"id\":\"c1\"}");
        free(json);
}

/* ---- freezer ---- */

static volatile uint64_t *counter;

static void
child_count(void)
{
        for (;;)
                (*counter)++;
}

static void
test_freeze_thaw(void)
{
        char path[128];
        msp_err e;

        counter = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        CHECK(counter != MAP_FAILED);
        make_cg(path, sizeof path, "freeze");
        pid_t pid = spawn_in(path, child_count);
        for (int i = 0; i < 500 && *counter == 0; i++)
                sleep_ms(10);
        CHECK(*counter > 0);

        CHECK_OK(rt_cgroup_freeze(path, true, &e), e);
        CHECK(rt_cgroup_is_frozen(path));
        uint64_t c0 = *counter;
        sleep_ms(200);
        printf("# frozen: counter %llu -> %llu\n", (unsigned long long) c0,
               (unsigned long long) *counter);
        CHECK(*counter == c0);
        /* Freezing twice is harmless. */
        CHECK_OK(rt_cgroup_freeze(path, true, &e), e);

        CHECK_OK(rt_cgroup_freeze(path, false, &e), e);
        CHECK(!rt_cgroup_is_frozen(path));
        for (int i = 0; i < 500 && *counter == c0; i++)
                sleep_ms(10);
        CHECK(*counter > c0);

        /* destroy of a frozen cgroup: thawed, so that the kill lands (v1). */
        CHECK_OK(rt_cgroup_freeze(path, true, &e), e);
        CHECK_OK(rt_cgroup_destroy(path, &e), e);
        int st = wait_status(pid);
        CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
}

static void
test_freeze_errors(void)
{
        msp_err e = { 0 };
        char path[128];

        CHECK(rt_cgroup_freeze("/", true, &e) == -EINVAL);
        CHECK(strstr(e.msg, "refusing a hierarchy root"));
        snprintf(path, sizeof path, "/msp-unit-ctl-%d-missing", (int) runner);
        msp_err_clear(&e);
        CHECK(rt_cgroup_freeze(path, true, &e) == -ENOENT);
        printf("# %s\n", e.msg);
        CHECK(strstr(e.msg, path));
}

/* ---- pids and signals ---- */

static void
test_pids(void)
{
        char path[128], sub[160];
        pid_t *pids = NULL;
        size_t n = 0;
        msp_err e;

        make_cg(path, sizeof path, "pids");
        CHECK_OK(rt_cgroup_pids(path, &pids, &n, &e), e);
        CHECK(n == 0);
        free(pids);
        pid_t a = spawn_in(path, child_pause);
        snprintf(sub, sizeof sub, "%s/sub", path);
        bool created;
        CHECK_OK(rt_cgroup_create(sub, &created, &e), e);
        pid_t b = spawn_in(sub, child_pause);
        CHECK_OK(rt_cgroup_pids(path, &pids, &n, &e), e);
        printf("# pids: %zu (%d %d)\n", n, (int) a, (int) b);
        CHECK(n == 2);
        CHECK(pids[0] == (a < b ? a : b) && pids[1] == (a < b ? b : a));
        free(pids);
        CHECK_OK(rt_cgroup_destroy(path, &e), e);
        (void) wait_status(a);
        (void) wait_status(b);

        msp_err_clear(&e);
        CHECK(rt_cgroup_pids(path, &pids, &n, &e) == -ENOENT);
        CHECK(strstr(e.msg, "does not exist"));
}

static int usr1_pipe = -1;

static void
on_usr1(int sig)
{
        (void) sig;
        (void) !write(usr1_pipe, "u", 1);
}

static void
child_usr1(void)
{
        struct sigaction sa = { .sa_handler = on_usr1 };

        sigaction(SIGUSR1, &sa, NULL);
        (void) !write(usr1_pipe, "r", 1);
        child_pause();
}

static void
test_signal_once(void)
{
        int p[2];
        char path[128], buf[16];
        msp_err e;

        CHECK(pipe2(p, O_CLOEXEC) == 0);
        usr1_pipe = p[1];
        make_cg(path, sizeof path, "usr1");
        pid_t pid = spawn_in(path, child_usr1);
        CHECK(read(p[0], buf, 1) == 1 && buf[0] == 'r');
        CHECK_OK(rt_cgroup_signal_all(path, SIGUSR1, &e), e);
        struct pollfd pfd = { .fd = p[0], .events = POLLIN };
        CHECK(poll(&pfd, 1, 5000) == 1);
        CHECK(read(p[0], buf, 1) == 1 && buf[0] == 'u');
        /* A second delivery would arrive well within this window. */
        CHECK(poll(&pfd, 1, 300) == 0);
        CHECK_OK(rt_cgroup_destroy(path, &e), e);
        (void) wait_status(pid);
        close(p[0]);
        close(p[1]);
}

/* ---- statistics ---- */

static void
child_touch_8m(void)
{
        size_t sz = 8 << 20;
        char *m = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

        if (m == MAP_FAILED)
                _exit(2);
        for (size_t i = 0; i < sz; i += 4096)
                m[i] = 1;
        (void) !write(usr1_pipe, "r", 1);
        child_pause();
}

static void
test_stats(void)
{
        oci_resources res = { .has_pids = true, .pids_limit = 17, .has_memory = true };
        char path[128], c;
        int p[2];
        msp_err e;

        res.memory = (oci_memory) { .has_limit = true, .limit = 64 << 20 };
        CHECK(pipe2(p, O_CLOEXEC) == 0);
        usr1_pipe = p[1];
        make_cg(path, sizeof path, "stats");
        CHECK_OK(rt_cgroup_apply_resources(path, &res, &e), e);
        pid_t pid = spawn_in(path, child_touch_8m);
        CHECK(read(p[0], &c, 1) == 1);
        oci_stats s = { .id = "x" };
        CHECK_OK(rt_cgroup_stats(path, &s, &e), e);
        printf("# memory %llu/%llu, pids %llu/%llu, cpu %llu ns\n",
               (unsigned long long) s.memory.usage.usage, (unsigned long long) s.memory.usage.limit,
               (unsigned long long) s.pids.current, (unsigned long long) s.pids.limit,
               (unsigned long long) s.cpu.usage.total);
        CHECK(s.memory.usage.usage >= 8 << 20);
        CHECK(s.memory.usage.limit == 64 << 20);
        CHECK(s.pids.current == 1 && s.pids.limit == 17);
        CHECK(s.cpu.usage.total > 0);
        uint64_t kills = 99;
        CHECK(rt_cgroup_oom_kills(path, &kills) == 0 && kills == 0);
        CHECK_OK(rt_cgroup_destroy(path, &e), e);
        (void) wait_status(pid);
        close(p[0]);
        close(p[1]);

        msp_err_clear(&e);
        CHECK(rt_cgroup_stats(path, &s, &e) == -ENOENT);
        CHECK(strstr(e.msg, "does not exist"));
}

static void
child_hog(void)
{
        size_t sz = 256 << 20;
        char *m = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

        if (m == MAP_FAILED)
                _exit(2);
        for (size_t i = 0; i < sz; i += 4096)
                m[i] = 1;
}

static void
test_oom_count(void)
{
        oci_resources res = { .has_memory = true };
        char path[128], f[256];
        uint64_t kills = 0;
        msp_err e;

        res.memory = (oci_memory) { .has_limit = true, .limit = 16 << 20 };
        make_cg(path, sizeof path, "oom");
        /* memory+swap = memory where swap is accounted: no swapping out of the limit */
        snprintf(f, sizeof f, CG_ROOT "/memory%s/memory.memsw.limit_in_bytes", path);
        if (mode == RT_CGROUP_UNIFIED || access(f, F_OK) == 0)
                res.memory.has_swap = true, res.memory.swap = 16 << 20;
        CHECK_OK(rt_cgroup_apply_resources(path, &res, &e), e);
        int st = wait_status(spawn_in(path, child_hog));
        CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
        CHECK(rt_cgroup_oom_kills(path, &kills) == 0);
        printf("# oom kills: %llu\n", (unsigned long long) kills);
        CHECK(kills >= 1);
        CHECK_OK(rt_cgroup_destroy(path, &e), e);
}

/* ---- the walk of a cgroup's tree (cgroup-walk.c) ---- */

/* dfd/name/name/... depth levels, made through fds; returns an fd of the deepest. */
static int
nest_at(int dfd, const char *name, int depth)
{
        int fd = fcntl(dfd, F_DUPFD_CLOEXEC, 3);

        for (int i = 0; i < depth; i++) {
                CHECK(mkdirat(fd, name, 0755) == 0 || errno == EEXIST);
                int sub = openat(fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                CHECK(sub >= 0);
                close(fd);
                fd = sub;
        }
        return fd;
}

static int
count_fds(void)
{
        DIR *d = opendir("/proc/self/fd");
        int n = 0;

        CHECK(d);
        while (readdir(d))
                n++;
        closedir(d);
        return n;
}

static int
cmp_pid_t(const void *a, const void *b)
{
        pid_t x = *(const pid_t *) a, y = *(const pid_t *) b;

        return (x > y) - (x < y);
}

static int
collect(pid_t pid, void *userdata)
{
        pid_t *v = userdata;

        CHECK(v[0] < 7);
        v[++v[0]] = pid;
        return 0;
}

#define WALK_DEEP 10000

/* Plain directories stand for cgroups (the walk only reads cgroup.procs and rmdirs): a
 * tmpfs in a private mount namespace, so a 10000-deep chain costs no cgroup. */
static void
test_walk_tmpfs(void)
{
        char top[] = "/tmp/msp-walk-XXXXXX";
        pid_t got[8] = { 0 };

        CHECK(unshare(CLONE_NEWNS) == 0);
        CHECK(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0);
        CHECK(mkdtemp(top));
        CHECK(mount("tmpfs", top, "tmpfs", 0, NULL) == 0);
        int t = open(top, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        CHECK(t >= 0);
        int f = openat(t, "cgroup.procs", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        CHECK(f >= 0 && write(f, "1\n", 2) == 2);
        close(f);
        /* Names the walk must not skip: a dot first, "..." and "..x". */
        const struct { const char *name; int depth; const char *pid; } park[] = {
                { ".x", 1, "101\n" }, { "...", 2, "102\n" }, { "..x", 1, "103\n" }, { "d", WALK_DEEP, "202\n" },
        };
        for (size_t i = 0; i < ARRAY_SIZE(park); i++) {
                int b = nest_at(t, park[i].name, park[i].depth);
                f = openat(b, "cgroup.procs", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
                CHECK(f >= 0 && write(f, park[i].pid, strlen(park[i].pid)) == (ssize_t) strlen(park[i].pid));
                close(f);
                close(b);
        }
        int fds = count_fds();
        CHECK(cg_walk_pids(t, collect, got) == 0);
        CHECK(count_fds() == fds);
        printf("# walk found %d pids\n", (int) got[0]);
        CHECK(got[0] == 5);
        qsort(got + 1, 5, sizeof *got, cmp_pid_t);
        CHECK(got[1] == 1 && got[2] == 101 && got[3] == 102 && got[4] == 103 && got[5] == 202);

        /* Removal: children first, every name, the top stays. A plain directory with a
         * file is not removable, unlike a cgroup: drop the files first. */
        int r2 = openat(t, "rm", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        CHECK(r2 < 0 && mkdirat(t, "rm", 0755) == 0);
        r2 = openat(t, "rm", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        close(nest_at(r2, ".x", 3));
        close(nest_at(r2, "d", WALK_DEEP));
        close(nest_at(r2, "..d", 2));
        CHECK(cg_walk_rmdir_below(r2) == 0);
        CHECK(count_fds() == fds + 1);
        CHECK(unlinkat(t, "rm", AT_REMOVEDIR) == 0);
        /* One the kernel refuses (here: not empty) ends the walk with its errno. */
        CHECK(cg_walk_rmdir_below(t) == -ENOTEMPTY);
        close(r2);
        close(t);
}

/* Where a child is parked: `name` `depth` levels deep below the cgroup, in every
 * hierarchy (a process hides only if it hides in all of them). */
typedef struct park_args {
        const char *path;
        const char *name;
        int depth;
        pid_t pid;              /* 0: only make the chain */
} park_args;

static int
park_in(const char *hier, int root, bool v2, void *userdata, msp_err *err)
{
        const park_args *a = userdata;
        int dfd = cg_open_dir_at(root, hier, a->path, err);

        CHECK(dfd >= 0);
        /* v1 cpuset: a new cgroup copies cpus and mems from its parent only with this. */
        if (!v2 && cg_exists(dfd, "cpuset.cpus"))
                CHECK_OK(cg_write(dfd, "cgroup.clone_children", "1", err), *err);
        int b = nest_at(dfd, a->name, a->depth);
        if (a->pid)
                CHECK_OK(cg_writef(b, "cgroup.procs", err, "%d", (int) a->pid), *err);
        close(b);
        close(dfd);
        return 0;
}

static void
park(const char *path, const char *name, int depth, pid_t pid)
{
        park_args a = { path, name, depth, pid };
        msp_err e;

        CHECK_OK(cg_for_each_hierarchy(park_in, &a, &e), e);
}

/* A container that may write its cgroup hides nothing: a process in ".x" and one 17
 * levels deep are listed and signalled, and destroy removes them with a chain deeper
 * than PATH_MAX. */
static void
test_tree(void)
{
        char path[128];
        pid_t *pids = NULL;
        size_t n = 0;
        msp_err e;

        make_cg(path, sizeof path, "tree");
        for (int round = 0; round < 2; round++) {
                pid_t a = spawn_in(path, child_pause), b = spawn_in(path, child_pause);
                park(path, ".x", 1, a);
                park(path, "c", 17, b);
                CHECK_OK(rt_cgroup_pids(path, &pids, &n, &e), e);
                printf("# pids: %zu (%d %d)\n", n, (int) a, (int) b);
                CHECK(n == 2);
                CHECK(pids[0] == (a < b ? a : b) && pids[1] == (a < b ? b : a));
                free(pids);
                if (round == 0) {
                        CHECK_OK(rt_cgroup_signal_all(path, SIGTERM, &e), e);
                        CHECK(WIFSIGNALED(wait_status(a)) && WIFSIGNALED(wait_status(b)));
                        continue;
                }
                /* 2100 levels of "d/": longer than PATH_MAX from the hierarchy root. */
                park_args deep = { path, "d", 2100, 0 };
                msp_err pe;
                const char *one = mode == RT_CGROUP_UNIFIED ? CG_ROOT :
                                  mode == RT_CGROUP_HYBRID ? CG_HYBRID_UNIFIED : CG_ROOT "/pids";
                CHECK_OK(park_in(one, -1, mode != RT_CGROUP_LEGACY, &deep, &pe), pe);
                park(path, "..e", 200, 0);
                CHECK_OK(rt_cgroup_destroy(path, &e), e);
                CHECK(WIFSIGNALED(wait_status(a)) && WIFSIGNALED(wait_status(b)));
        }
        msp_err_clear(&e);
        CHECK(rt_cgroup_pids(path, &pids, &n, &e) == -ENOENT);
}

static const tap_fork_test tests[] = {
        { "stats, event and pid list JSON", test_stats_json },
        { "freeze stops a counting process, thaw resumes it; destroy when frozen", test_freeze_thaw },
        { "freeze refuses '/' and names a missing cgroup", test_freeze_errors },
        { "pids: the cgroup and its sub-cgroups, sorted", test_pids },
        { "signal_all: a handled signal arrives once", test_signal_once },
        { "stats: memory usage and limit, pids, cpu", test_stats },
        { "oom_kills counts an OOM kill", test_oom_count },
        { "walk: every name but . and .., 10000 deep, by fds (tmpfs)", test_walk_tmpfs },
        { "tree: '.x' and 17 deep are listed, signalled and destroyed, with a PATH_MAX-deep chain",
          test_tree },
};

int
main(void)
{
        return cg_test_main(tests, ARRAY_SIZE(tests), "msp-unit-ctl-", &runner, &mode);
}
