/* Cgroups of a live container: freeze and thaw (pause, resume), the processes in it
 * (ps, kill --all) and its resource usage (events). v2 uses cgroup.freeze and the
 * "frozen" key of cgroup.events; v1 the freezer controller's freezer.state. */
#include "lib/cgroup/cgroup.h"

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/cgroup/cgroup-internal.h"

#define FREEZE_TIMEOUT_MS 5000
#define CG_FREEZER CG_ROOT "/freezer"

/* ---- freezer ---- */

static int
freeze_v2(const char *path, bool frozen, msp_err *err)
{
        _cleanup_close_ int dfd = cg_open_dir(CG_ROOT, path, err);
        int r;

        if (dfd < 0)
                return dfd;
        r = cg_write(dfd, "cgroup.freeze", frozen ? "1" : "0", err);
        if (r < 0)
                return r;
        /* The write only asks: tasks stop at their next return to user space, and
         * "frozen 1" appears in cgroup.events once all of them have. */
        r = cg_wait_event(dfd, "frozen", frozen ? '1' : '0', FREEZE_TIMEOUT_MS);
        if (r == -ETIMEDOUT) {
                /* Never leave a half-frozen container behind a failed pause. */
                if (frozen)
                        (void) cg_write(dfd, "cgroup.freeze", "0", NULL);
                return msp_err_set(err, ETIMEDOUT,
                                   "cgroup '%s': cgroup.events did not report 'frozen %d' within %d s",
                                   path, frozen ? 1 : 0, FREEZE_TIMEOUT_MS / 1000);
        }
        if (r < 0)
                return msp_err_sys(err, -r, "cgroup '%s': read 'frozen' from cgroup.events", path);
        return 0;
}

static int
freeze_v1(const char *path, bool frozen, msp_err *err)
{
        const char *want = frozen ? "FROZEN" : "THAWED";
        _cleanup_close_ int dfd = -1;
        int64_t deadline = cg_now_ms() + FREEZE_TIMEOUT_MS;
        long delay_us = 100;
        char buf[32] = "";

        if (access(CG_FREEZER, F_OK) < 0)
                return msp_err_set(err, EOPNOTSUPP,
                                   "cgroup '%s': the freezer controller is not mounted at %s", path,
                                   CG_FREEZER);
        dfd = cg_open_dir(CG_FREEZER, path, err);
        if (dfd < 0)
                return dfd;
        /* v1 has no event: FREEZING means a task could not be stopped yet (it is in an
         * uninterruptible sleep, or a vfork parent). Writing FROZEN again makes the
         * kernel retry, so write, read back, and back off, for a bounded time. */
        for (;;) {
                int r = cg_write(dfd, "freezer.state", want, err);
                if (r < 0)
                        return r;
                r = cg_read(dfd, "freezer.state", buf, sizeof buf);
                if (r < 0)
                        return msp_err_sys(err, -r, "cgroup: read '%s%s/freezer.state'", CG_FREEZER,
                                           path);
                buf[strcspn(buf, "\n")] = '\0';
                if (strcmp(buf, want) == 0)
                        return 0;
                if (cg_now_ms() >= deadline)
                        break;
                struct timespec ts = { 0, delay_us * 1000 };
                nanosleep(&ts, NULL);
                if (delay_us < 10000)
                        delay_us *= 2;
        }
        if (frozen)
                (void) cg_write(dfd, "freezer.state", "THAWED", NULL);
        return msp_err_set(err, ETIMEDOUT, "cgroup '%s': freezer.state is %s, not %s after %d s", path,
                           buf, want, FREEZE_TIMEOUT_MS / 1000);
}

int
rt_cgroup_freeze(const char *path, bool frozen, msp_err *err)
{
        rt_cgroup_mode mode;
        int r;

        if (!cg_path_is_safe(path))
                return msp_err_set(err, EINVAL, "cgroup path '%s': refusing a hierarchy root", path);
        r = rt_cgroup_mode_detect(&mode, err);
        if (r < 0)
                return r;
        return mode == RT_CGROUP_UNIFIED ? freeze_v2(path, frozen, err) : freeze_v1(path, frozen, err);
}

/* ---- processes ---- */

typedef struct pid_set {
        pid_t *v;
        size_t n, cap;
        bool found;             /* the cgroup exists in at least one hierarchy */
} pid_set;

static int
pid_set_add(pid_set *s, pid_t pid)
{
        if (s->n == s->cap) {
                size_t cap = s->cap ? s->cap * 2 : 64;
                pid_t *v = reallocarray(s->v, cap, sizeof *v);
                if (!v)
                        return -ENOMEM;
                s->v = v;
                s->cap = cap;
        }
        s->v[s->n++] = pid;
        return 0;
}

static int
add_pid(pid_t pid, void *userdata)
{
        return pid_set_add(userdata, pid);
}

/* The cgroup.procs of the container's cgroup and of every sub-cgroup below it (a
 * container that may write its cgroup can make any, named and nested as it likes). */
static int
pids_in(const char *hier, int root, bool v2, void *userdata, msp_err *err)
{
        pid_set *s = ((void **) userdata)[0];
        const char *path = ((void **) userdata)[1];
        _cleanup_close_ int dfd = cg_open_dir_at(root, hier, path, NULL);
        int r;

        (void) v2;
        if (dfd < 0)
                return 0;
        s->found = true;
        r = cg_walk_pids(dfd, add_pid, s);
        if (r < 0)
                return msp_err_sys(err, -r, "cgroup '%s%s': read the processes of its tree", hier, path);
        return 0;
}

static int
cmp_pid(const void *a, const void *b)
{
        pid_t x = *(const pid_t *) a, y = *(const pid_t *) b;

        return (x > y) - (x < y);
}

int
rt_cgroup_pids(const char *path, pid_t **ret, size_t *ret_n, msp_err *err)
{
        pid_set s = { 0 };
        void *args[2] = { &s, (void *) path };
        int r;

        *ret = NULL;
        *ret_n = 0;
        if (!cg_path_is_safe(path))
                return msp_err_set(err, EINVAL, "cgroup path '%s': refusing a hierarchy root", path);
        /* The union over every hierarchy: normally each lists the same processes, but
         * one moved elsewhere in a single hierarchy is still the container's. */
        r = cg_for_each_hierarchy(pids_in, args, err);
        if (r >= 0 && !s.found)
                r = msp_err_set(err, ENOENT, "cgroup '%s' does not exist", path);
        if (r < 0) {
                free(s.v);
                return r;
        }
        if (s.n) {
                size_t o = 1;
                qsort(s.v, s.n, sizeof *s.v, cmp_pid);
                for (size_t i = 1; i < s.n; i++)
                        if (s.v[i] != s.v[o - 1])
                                s.v[o++] = s.v[i];
                s.n = o;
        }
        *ret = s.v;
        *ret_n = s.n;
        return 0;
}

/* ---- statistics ---- */

/* One number from a file: "max" (v2's unlimited) gives `max_value`. */
static bool
read_u64(int dfd, const char *file, uint64_t max_value, uint64_t *ret)
{
        char buf[64];
        char *end;

        if (dfd < 0 || cg_read(dfd, file, buf, sizeof buf) <= 0)
                return false;
        if (strncmp(buf, "max", 3) == 0) {
                *ret = max_value;
                return true;
        }
        errno = 0;
        unsigned long long v = strtoull(buf, &end, 10);
        if (errno || end == buf)
                return false;
        *ret = v;
        return true;
}

/* "key value" lines (memory.stat, cpu.stat, memory.events, memory.oom_control). */
static bool
keyed_u64(const char *buf, const char *key, uint64_t *ret)
{
        size_t kl = strlen(key);

        for (const char *p = buf; *p; ) {
                if (strncmp(p, key, kl) == 0 && p[kl] == ' ') {
                        *ret = strtoull(p + kl + 1, NULL, 10);
                        return true;
                }
                const char *nl = strchr(p, '\n');
                if (!nl)
                        break;
                p = nl + 1;
        }
        return false;
}

static bool
read_keyed(int dfd, const char *file, const char *key, uint64_t *ret)
{
        char buf[8192];

        return dfd >= 0 && cg_read(dfd, file, buf, sizeof buf) > 0 && keyed_u64(buf, key, ret);
}

static int
open_v1(const char *ctrl, const char *path)
{
        char hier[64];

        snprintf(hier, sizeof hier, CG_ROOT "/%s", ctrl);
        return cg_open_dir(hier, path, NULL);
}

static int
stats_v1(const char *path, oci_stats *s)
{
        _cleanup_close_ int cpuacct = open_v1("cpuacct", path), cpu = open_v1("cpu", path);
        _cleanup_close_ int mem = open_v1("memory", path), pids = open_v1("pids", path);
        uint64_t ticks;

        if (cpuacct < 0 && cpu < 0 && mem < 0 && pids < 0)
                return -ENOENT;
        (void) read_u64(cpuacct, "cpuacct.usage", 0, &s->cpu.usage.total);
        if (!read_u64(cpuacct, "cpuacct.usage_user", 0, &s->cpu.usage.user) &&
            read_keyed(cpuacct, "cpuacct.stat", "user", &ticks)) {
                long hz = sysconf(_SC_CLK_TCK);
                s->cpu.usage.user = ticks * (1000000000ULL / (uint64_t) (hz > 0 ? hz : 100));
        }
        if (!read_u64(cpuacct, "cpuacct.usage_sys", 0, &s->cpu.usage.kernel) &&
            read_keyed(cpuacct, "cpuacct.stat", "system", &ticks)) {
                long hz = sysconf(_SC_CLK_TCK);
                s->cpu.usage.kernel = ticks * (1000000000ULL / (uint64_t) (hz > 0 ? hz : 100));
        }
        (void) read_keyed(cpu, "cpu.stat", "nr_periods", &s->cpu.throttling.periods);
        (void) read_keyed(cpu, "cpu.stat", "nr_throttled", &s->cpu.throttling.throttled_periods);
        (void) read_keyed(cpu, "cpu.stat", "throttled_time", &s->cpu.throttling.throttled_time);

        (void) read_keyed(mem, "memory.stat", "cache", &s->memory.cache);
        (void) read_u64(mem, "memory.usage_in_bytes", 0, &s->memory.usage.usage);
        (void) read_u64(mem, "memory.limit_in_bytes", 0, &s->memory.usage.limit);
        (void) read_u64(mem, "memory.max_usage_in_bytes", 0, &s->memory.usage.max);
        (void) read_u64(mem, "memory.failcnt", 0, &s->memory.usage.failcnt);
        /* memsw is memory + swap, as runc reports it. */
        s->memory.has_swap = read_u64(mem, "memory.memsw.usage_in_bytes", 0, &s->memory.swap.usage);
        if (s->memory.has_swap) {
                (void) read_u64(mem, "memory.memsw.limit_in_bytes", 0, &s->memory.swap.limit);
                (void) read_u64(mem, "memory.memsw.max_usage_in_bytes", 0, &s->memory.swap.max);
                (void) read_u64(mem, "memory.memsw.failcnt", 0, &s->memory.swap.failcnt);
        }

        (void) read_u64(pids, "pids.current", 0, &s->pids.current);
        (void) read_u64(pids, "pids.max", 0, &s->pids.limit);
        return 0;
}

static int
stats_v2(const char *path, oci_stats *s)
{
        _cleanup_close_ int dfd = cg_open_dir(CG_ROOT, path, NULL);
        uint64_t v;

        if (dfd < 0)
                return -ENOENT;
        /* cpu.stat is a core file: present even without the cpu controller. */
        if (read_keyed(dfd, "cpu.stat", "usage_usec", &v))
                s->cpu.usage.total = v * 1000;
        if (read_keyed(dfd, "cpu.stat", "user_usec", &v))
                s->cpu.usage.user = v * 1000;
        if (read_keyed(dfd, "cpu.stat", "system_usec", &v))
                s->cpu.usage.kernel = v * 1000;
        (void) read_keyed(dfd, "cpu.stat", "nr_periods", &s->cpu.throttling.periods);
        (void) read_keyed(dfd, "cpu.stat", "nr_throttled", &s->cpu.throttling.throttled_periods);
        if (read_keyed(dfd, "cpu.stat", "throttled_usec", &v))
                s->cpu.throttling.throttled_time = v * 1000;

        (void) read_keyed(dfd, "memory.stat", "file", &s->memory.cache);
        (void) read_u64(dfd, "memory.current", 0, &s->memory.usage.usage);
        (void) read_u64(dfd, "memory.max", UINT64_MAX, &s->memory.usage.limit);
        (void) read_u64(dfd, "memory.peak", 0, &s->memory.usage.max);
        (void) read_keyed(dfd, "memory.events", "max", &s->memory.usage.failcnt);
        s->memory.has_swap = read_u64(dfd, "memory.swap.current", 0, &s->memory.swap.usage);
        if (s->memory.has_swap) {
                (void) read_u64(dfd, "memory.swap.max", UINT64_MAX, &s->memory.swap.limit);
                (void) read_u64(dfd, "memory.swap.peak", 0, &s->memory.swap.max);
                (void) read_keyed(dfd, "memory.swap.events", "max", &s->memory.swap.failcnt);
        }

        (void) read_u64(dfd, "pids.current", 0, &s->pids.current);
        (void) read_u64(dfd, "pids.max", 0, &s->pids.limit);
        return 0;
}

int
rt_cgroup_stats(const char *path, oci_stats *ret, msp_err *err)
{
        rt_cgroup_mode mode;
        int r;

        if (!cg_path_is_safe(path))
                return msp_err_set(err, EINVAL, "cgroup path '%s': refusing a hierarchy root", path);
        r = rt_cgroup_mode_detect(&mode, err);
        if (r < 0)
                return r;
        /* Missing files (a controller that is not there) leave their fields at 0. */
        r = mode == RT_CGROUP_UNIFIED ? stats_v2(path, ret) : stats_v1(path, ret);
        if (r < 0)
                return msp_err_set(err, -r, "cgroup '%s' does not exist", path);
        return 0;
}

int
rt_cgroup_oom_kills(const char *path, uint64_t *ret)
{
        rt_cgroup_mode mode;
        _cleanup_close_ int dfd = -1;

        *ret = 0;
        if (!cg_path_is_safe(path) || rt_cgroup_mode_detect(&mode, NULL) < 0)
                return -EINVAL;
        if (mode == RT_CGROUP_UNIFIED) {
                dfd = cg_open_dir(CG_ROOT, path, NULL);
                return read_keyed(dfd, "memory.events", "oom_kill", ret) ? 0 : -ENOENT;
        }
        dfd = open_v1("memory", path);
        return read_keyed(dfd, "memory.oom_control", "oom_kill", ret) ? 0 : -ENOENT;
}
