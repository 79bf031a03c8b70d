/* Cgroups: path mapping, create / signal / destroy in every hierarchy and the resources
 * entry point. The files, the host's mode and the hierarchy walk they use are
 * cgroup-fs.c; the v1 and v2 backends cgroup-v1.c and cgroup-v2.c, with the writers
 * they share in cgroup-res.c; devices cgroup-devices.c. */
#include "lib/cgroup/cgroup.h"

#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/cgroup/cgroup-internal.h"

/* "a-b-c.slice" lives at "/a.slice/a-b.slice/a-b-c.slice" (systemd's nesting rule). */
static int
expand_slice(const char *slice, char *buf, size_t bufsz)
{
        size_t len = strlen(slice), o = 0;

        if (len < 6 || strcmp(slice + len - 6, ".slice") != 0 || strchr(slice, '/'))
                return -EINVAL;
        if (strcmp(slice, "-.slice") == 0) {
                buf[0] = '\0';
                return 0;
        }
        for (size_t i = 0; i < len - 6; i++) {
                if (slice[i] != '-' && i != len - 7)
                        continue;
                size_t end = slice[i] == '-' ? i : i + 1;
                int n = snprintf(buf + o, bufsz - o, "/%.*s.slice", (int) end, slice);
                if (n < 0 || (size_t) n >= bufsz - o)
                        return -ENAMETOOLONG;
                o += (size_t) n;
        }
        return 0;
}

int
rt_cgroup_path_for(const char *cgroups_path, const char *id, char *buf, size_t bufsz,
                   msp_err *err)
{
        int n;

        if (!cgroups_path || !*cgroups_path)
                n = snprintf(buf, bufsz, "/msp/%s", id);
        else if (cgroups_path[0] == '/')
                n = snprintf(buf, bufsz, "%s", cgroups_path);
        else if (strchr(cgroups_path, ':')) {
                char slice[256], prefix[256], name[1024], sp[2048];
                if (sscanf(cgroups_path, "%255[^:]:%255[^:]:%1023s", slice, prefix, name) != 3)
                        return msp_err_set(err, EINVAL,
                                           "linux.cgroupsPath: expected \"slice:prefix:name\", got \"%.64s\"",
                                           cgroups_path);
                if (expand_slice(slice, sp, sizeof sp) < 0)
                        return msp_err_set(err, EINVAL, "linux.cgroupsPath: invalid slice \"%.64s\"",
                                           slice);
                n = snprintf(buf, bufsz, "%s/%s-%s.scope", sp, prefix, name);
        } else
                n = snprintf(buf, bufsz, "/msp/%s", cgroups_path);
        if (n < 0 || (size_t) n >= bufsz)
                return msp_err_set(err, ENAMETOOLONG, "linux.cgroupsPath is too long");
        if (strstr(buf, "/../") || (strlen(buf) >= 3 && strcmp(buf + strlen(buf) - 3, "/..") == 0))
                return msp_err_set(err, EINVAL, "linux.cgroupsPath: \"%.64s\" escapes the cgroup root",
                                   cgroups_path);
        return 0;
}

/* A v1 cpuset cgroup with empty cpus/mems (a new one, or one left so by whoever made
 * it) refuses tasks: copy the parent's values into the empty ones. Called for every
 * level of the path from the top, so each parent has its values first (as runc). */
static void
cpuset_inherit(int root, const char *reldir)
{
        static const char *const files[] = { "cpuset.cpus", "cpuset.mems" };
        char parent[PATH_MAX], val[4096];
        _cleanup_close_ int dfd = openat(root, reldir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        snprintf(parent, sizeof parent, "%s", reldir);
        char *slash = strrchr(parent, '/');
        if (dfd < 0 || !slash)
                return;
        *slash = '\0';
        /* The parent is opened only for a level that needs it (most have values). */
        _cleanup_close_ int pfd = -1;
        for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
                if (cg_read(dfd, files[i], val, sizeof val) < 0 || (val[0] != '\n' && val[0] != '\0'))
                        continue;
                if (pfd < 0)
                        pfd = openat(root, parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (pfd < 0 || cg_read(pfd, files[i], val, sizeof val) <= 0)
                        continue;
                (void) cg_write(dfd, files[i], val, NULL);
        }
}

#define CG_MAX_HIERARCHIES 32

struct create_data {
        const char *path;
        unsigned which;
        bool created;
        char *made[CG_MAX_HIERARCHIES];         /* owned: leaves msp made, for a rollback */
        size_t n_made;
};

/* A cgroup frozen before create (the leaf itself, or the ancestor a new leaf would be made
 * in) would stop the init before it could report anything: create refuses it up front,
 * as runc does, before it makes or changes anything. The deepest existing level of path
 * tells: v2 "frozen 1" in cgroup.events (it counts frozen ancestors); v1 FROZEN or
 * FREEZING in the freezer hierarchy's freezer.state (likewise). rel is the leaf below the
 * fd of CG_ROOT, top where the container's path starts in it. */
static int
frozen_check(int root, bool v2, char *rel, char *top, msp_err *err)
{
        char file[PATH_MAX + 32], buf[256];
        struct stat st;

        while (fstatat(root, rel, &st, 0) < 0) {
                char *slash = strrchr(top, '/');
                if (!slash || slash == top)
                        return 0;       /* only the hierarchy root exists: never frozen */
                *slash = '\0';
        }
        snprintf(file, sizeof file, "%s/%s", rel, v2 ? "cgroup.events" : "freezer.state");
        _cleanup_close_ int fd = openat(root, file, O_RDONLY | O_CLOEXEC);
        ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
        if (n <= 0)
                return 0;
        buf[n] = '\0';
        if (v2 ? strncmp(buf, "frozen 1", 8) == 0 || strstr(buf, "\nfrozen 1")
               : strncmp(buf, "FROZEN", 6) == 0 || strncmp(buf, "FREEZING", 8) == 0)
                return msp_err_set(err, EBUSY, "container's cgroup unexpectedly frozen: '%s/%s' is "
                                   "frozen (thaw it, or choose another linux.cgroupsPath)", CG_ROOT,
                                   rel);
        return 0;
}

struct probe_data {
        const char *path;
        rt_cgroup_facts *p;
};

/* One hierarchy for rt_cgroup_probe: does the leaf exist here, and is it (or the
 * ancestor it would be made in) frozen? */
static int
probe_in(const char *hier, int root, bool v2, void *userdata, msp_err *err)
{
        struct probe_data *pd = userdata;
        size_t rl = strlen(CG_ROOT), hl = strlen(hier);
        char rel[PATH_MAX];
        struct stat st;

        if (cg_relpath(hier, pd->path, rel, sizeof rel) < 0)
                return 0;       /* create reports the length */
        if (fstatat(root, rel, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode)) {
                if (v2)
                        pd->p->exists_v2 = true;
                else
                        pd->p->exists_v1 = true;
        }
        if (!v2 && !strstr(hier, "freezer"))
                return 0;
        /* The walk up stops at the hierarchy's own directory ("unified", or none). */
        return frozen_check(root, v2, rel, rel + (hl > rl ? hl - rl - 1 : 0), err);
}

int
rt_cgroup_probe(const char *path, rt_cgroup_facts *ret, msp_err *err)
{
        struct probe_data pd = { path, ret };

        *ret = (rt_cgroup_facts) { 0 };
        if (!cg_path_is_safe(path))
                return msp_err_set(err, EINVAL, "cgroup path '%s': refusing a hierarchy root or '..'",
                                   path);
        return cg_for_each_hierarchy_in(RT_CGROUP_ALL, probe_in, &pd, err);
}

static int
create_in(const char *hier, int root, bool v2, void *userdata, msp_err *err)
{
        struct create_data *cd = userdata;
        char dir[PATH_MAX];
        size_t hl = strlen(hier), rl = strlen(CG_ROOT);

        if (!(cd->which & (v2 ? RT_CGROUP_V2 : RT_CGROUP_V1)))
                return 0;
        if ((size_t) snprintf(dir, sizeof dir, "%s%s", hier, cd->path) >= sizeof dir)
                return msp_err_set(err, ENAMETOOLONG, "cgroup path too long");
        if (strncmp(dir, CG_ROOT "/", rl + 1) != 0)
                return msp_err_set(err, EINVAL, "cgroup '%s' is not below %s", dir, CG_ROOT);
        /* dir for messages, rel (the same buffer, below CG_ROOT) for the *at() calls. */
        const char *rel = dir + rl + 1;
        /* v2 controllers reach a leaf only if every ancestor delegates them. */
        if (v2)
                cg_v2_enable_controllers_at(root, hl > rl ? hier + rl + 1 : ".", true);
        for (char *p = dir + hl + 1; ; p++) {
                bool last = *p == '\0';
                if (*p != '/' && !last)
                        continue;
                *p = '\0';
                if (mkdirat(root, rel, 0755) == 0) {
                        if (last && cd->n_made < CG_MAX_HIERARCHIES) {
                                cd->created = true;
                                cd->made[cd->n_made++] = strdup(dir);
                        }
                } else if (errno != EEXIST)
                        return msp_err_sys(err, errno, "create cgroup '%s'", dir);
                if (strstr(hier, "cpuset"))
                        cpuset_inherit(root, rel);
                if (last)
                        break;
                if (v2)
                        cg_v2_enable_controllers_at(root, rel, false);
                *p = '/';
        }
        return 0;
}

int
rt_cgroup_create(const char *path, bool *ret_created, msp_err *err)
{
        rt_cgroup_facts probe;
        int r = rt_cgroup_probe(path, &probe, err);

        *ret_created = false;
        return r < 0 ? r : rt_cgroup_create_in(path, RT_CGROUP_ALL, ret_created, err);
}

int
rt_cgroup_create_in(const char *path, unsigned which, bool *ret_created, msp_err *err)
{
        struct create_data cd = { .path = path, .which = which };

        if (!cg_path_is_safe(path))
                return msp_err_set(err, EINVAL, "cgroup path '%s': refusing a hierarchy root or '..'",
                                   path);
        int r = cg_for_each_hierarchy_in(which, create_in, &cd, err);
        /* Roll back only the leaves made here: they are still empty. A cgroup that
         * existed before is never removed. */
        for (size_t i = cd.n_made; i > 0; i--) {
                if (r < 0 && cd.made[i - 1])
                        (void) rmdir(cd.made[i - 1]);
                free(cd.made[i - 1]);
        }
        if (r < 0)
                return r;
        if (cd.created)
                *ret_created = true;
        return 0;
}

/* ---- signal and remove: a cgroup and the sub-cgroups a container made ---- */

static int
kill_pid(pid_t pid, void *userdata)
{
        (void) kill(pid, *(const int *) userdata);
        return 0;
}

struct signal_args {
        const char *path;
        int sig;
        int r;                  /* the first failure, in first_err */
        msp_err *first_err;
};

/* SIGKILL to the cgroup's tree in one hierarchy. A walk that fails does not stop the
 * others: it is remembered, and the kill goes on. */
static int
signal_in(const char *hier, int root, bool v2, void *userdata, msp_err *err)
{
        struct signal_args *a = userdata;
        _cleanup_close_ int dfd = cg_open_dir_at(root, hier, a->path, NULL);
        int r;

        (void) err;
        if (dfd < 0)
                return 0;
        /* cgroup.kill kills the whole subtree and races no fork. */
        if (v2 && cg_exists(dfd, "cgroup.kill") && cg_write(dfd, "cgroup.kill", "1", NULL) == 0)
                return 0;
        r = cg_walk_pids(dfd, kill_pid, &a->sig);
        if (r < 0 && a->r == 0)
                a->r = msp_err_sys(a->first_err, -r, "cgroup '%s%s': signal its processes", hier,
                                   a->path);
        return 0;
}

int
rt_cgroup_signal_all(const char *path, int sig, msp_err *err)
{
        struct signal_args a = { path, sig, 0, err };
        int r;

        if (!cg_path_is_safe(path))
                return msp_err_set(err, EINVAL, "cgroup path '%s': refusing a hierarchy root", path);
        if (sig != SIGKILL) {
                /* Each pid once: a process is listed in every hierarchy, and a handled
                 * signal sent N times runs its handler N times. */
                _cleanup_free_ pid_t *pids = NULL;
                size_t n = 0;
                r = rt_cgroup_pids(path, &pids, &n, err);
                if (r == -ENOENT)
                        return 0;
                if (r < 0)
                        return r;
                for (size_t i = 0; i < n; i++)
                        (void) kill(pids[i], sig);
                return 0;
        }
        /* SIGKILL is idempotent: every hierarchy, so that a process moved out of the
         * cgroup in one hierarchy is still reached. */
        r = cg_for_each_hierarchy(signal_in, &a, err);
        return r < 0 ? r : a.r;
}

static int
wait_in(const char *hier, int root, bool v2, void *userdata, msp_err *err)
{
        _cleanup_close_ int dfd = -1;

        (void) err;
        if (!v2)
                return 0;
        dfd = cg_open_dir_at(root, hier, userdata, NULL);
        if (dfd >= 0)
                (void) cg_wait_event(dfd, "populated", '0', 5000);
        return 0;
}

struct remove_args {
        const char *path;
        bool tree;
};

/* rmdir the leaf in one hierarchy; `tree`: its sub-cgroups first (a container that may
 * write its cgroup can make any), children before parents. The usual leaf has none and
 * no process left: one rmdir, no open. */
static int
remove_in(const char *hier, int root, bool v2, void *userdata, msp_err *err)
{
        const struct remove_args *a = userdata;
        char rel[PATH_MAX];

        (void) v2;
        if (cg_relpath(hier, a->path, rel, sizeof rel) < 0)
                return msp_err_set(err, ENAMETOOLONG, "cgroup path too long");
        if (unlinkat(root, rel, AT_REMOVEDIR) == 0 || errno == ENOENT)
                return 0;
        if (errno != EBUSY || !a->tree)
                return msp_err_sys(err, errno, "remove cgroup '%s%s'", hier, a->path);
        _cleanup_close_ int dfd = openat(root, rel, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dfd < 0)
                return errno == ENOENT ? 0 : msp_err_sys(err, errno, "open cgroup '%s%s'", hier, a->path);
        int r = cg_walk_rmdir_below(dfd);
        if (r < 0)
                return msp_err_sys(err, -r, "remove cgroup '%s%s': a sub-cgroup", hier, a->path);
        if (unlinkat(root, rel, AT_REMOVEDIR) < 0 && errno != ENOENT)
                return msp_err_sys(err, errno, "remove cgroup '%s%s'", hier, a->path);
        return 0;
}

int
rt_cgroup_destroy(const char *path, msp_err *err)
{
        char clean[PATH_MAX];
        struct remove_args leaf = { clean, false }, tree = { clean, true };
        int r = 0;

        if (!cg_path_is_safe(path))
                return msp_err_set(err, EINVAL, "cgroup path '%s': refusing to remove a hierarchy root",
                                   path);
        /* "/a//b/" -> "/a//b": the last component names the leaf to remove. */
        snprintf(clean, sizeof clean, "%s", path);
        for (size_t l = strlen(clean); l > 1 && clean[l - 1] == '/'; l--)
                clean[l - 1] = '\0';
        /* Usually nothing is left (`run` reaped the init, and a pid namespace dies with
         * it) and the leaf has no sub-cgroup: then one rmdir per hierarchy is all there is
         * to do. The kernel refuses it (EBUSY) while a process or a sub-cgroup is left, so
         * trying it first skips no kill, and saves reading every hierarchy's cgroup.procs. */
        r = cg_for_each_hierarchy(remove_in, &leaf, err);
        if (r != -EBUSY)
                return r;
        msp_err_clear(err);
        /* The processes first, in the whole tree, then the sub-cgroups, children first. */
        (void) rt_cgroup_signal_all(clean, SIGKILL, NULL);
        /* A paused (or half-frozen) container: on v1, frozen tasks do not die until
         * thawed. */
        (void) rt_cgroup_freeze(clean, false, NULL);
        (void) cg_for_each_hierarchy(wait_in, clean, NULL);
        /* v1 has no populated event: bounded retries (~2 s), re-killing stragglers (a
         * fork that raced the first kill). */
        for (int attempt = 0; attempt < 200; attempt++) {
                msp_err_clear(err);
                r = cg_for_each_hierarchy(remove_in, &tree, err);
                if (r != -EBUSY)
                        return r;
                (void) rt_cgroup_signal_all(clean, SIGKILL, NULL);
                struct timespec ts = { 0, 10 * 1000 * 1000 };
                nanosleep(&ts, NULL);
        }
        return r;
}

bool
rt_cgroup_is_frozen(const char *path)
{
        char file[PATH_MAX], buf[64];
        rt_cgroup_mode mode;

        if (rt_cgroup_mode_detect(&mode, NULL) < 0)
                return false;
        if (mode == RT_CGROUP_UNIFIED)
                snprintf(file, sizeof file, CG_ROOT "%s/cgroup.freeze", path);
        else
                snprintf(file, sizeof file, CG_ROOT "/freezer%s/freezer.state", path);
        _cleanup_close_ int fd = open(file, O_RDONLY | O_CLOEXEC);
        ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
        if (n <= 0)
                return false;
        buf[n] = '\0';
        return mode == RT_CGROUP_UNIFIED ? buf[0] == '1' : strncmp(buf, "FROZEN", 6) == 0;
}

/* ---- resources: checks shared by both backends, then dispatch ---- */

#define KMEM_IGNORED ": deprecated kernel memory limits are ignored (kernel memory counts toward " \
                     "memory.limit)"

const char *
rt_cgroup_ignored_fields(const oci_resources *res)
{
        const oci_memory *m = &res->memory;
        const bool kernel = res->has_memory && m->has_kernel && m->kernel != 0;
        const bool tcp = res->has_memory && m->has_kernel_tcp && m->kernel_tcp != 0;

        if (kernel && tcp)
                return "linux.resources.memory.kernel, kernelTCP" KMEM_IGNORED;
        if (kernel)
                return "linux.resources.memory.kernel" KMEM_IGNORED;
        if (tcp)
                return "linux.resources.memory.kernelTCP" KMEM_IGNORED;
        return NULL;
}

/* Config errors are found before anything is written, so a bad value leaves a live
 * cgroup (update) untouched. */
static int
validate_memory(const oci_memory *m, msp_err *err)
{
        if (m->has_swappiness && m->swappiness > 100)
                return msp_err_set(err, EINVAL,
                                   "linux.resources.memory.swappiness: %" PRIu64 " is out of range 0-100",
                                   m->swappiness);
        if ((m->has_limit && m->limit < -1) || (m->has_reservation && m->reservation < -1) ||
            (m->has_swap && m->swap < -1))
                return msp_err_set(err, EINVAL, "linux.resources.memory: negative value other than -1");
        if (m->has_swap && m->swap > 0 && m->has_limit && m->limit > 0 && m->swap < m->limit)
                return msp_err_set(err, EINVAL,
                                   "linux.resources.memory.swap: %" PRId64 " is less than memory.limit %"
                                   PRId64 " (swap is the memory+swap total)", m->swap, m->limit);
        return 0;
}

static int
validate_resources(const oci_resources *res, msp_err *err)
{
        int r;

        if (res->has_memory && (r = validate_memory(&res->memory, err)) < 0)
                return r;
        if (res->has_cpu && res->cpu.has_idle && res->cpu.idle != 0 && res->cpu.idle != 1)
                return msp_err_set(err, EINVAL, "linux.resources.cpu.idle: %" PRId64 " is not 0 or 1",
                                   res->cpu.idle);
        if (res->has_blockio && res->blockio.has_weight && res->blockio.weight != 0 &&
            (res->blockio.weight < 10 || res->blockio.weight > 1000))
                return msp_err_set(err, EINVAL,
                                   "linux.resources.blockIO.weight: %u is out of range 10-1000",
                                   (unsigned) res->blockio.weight);
        for (size_t i = 0; i < res->n_hugepage_limits; i++)
                if (!cg_hugepage_size_valid(res->hugepage_limits[i].page_size))
                        return msp_err_set(err, EINVAL,
                                           "linux.resources.hugepageLimits[%zu].pageSize: '%.32s' is not "
                                           "a size like '2MB'", i, res->hugepage_limits[i].page_size);
        return 0;
}

int
rt_cgroup_apply_resources(const char *path, const oci_resources *res, msp_err *err)
{
        rt_cgroup_mode mode = RT_CGROUP_UNIFIED;
        int r;

        if (!res)
                return 0;
        if (!cg_path_is_safe(path))
                return msp_err_set(err, EINVAL, "cgroup path '%s': refusing a hierarchy root", path);
        r = validate_resources(res, err);
        if (r < 0)
                return r;
        _cleanup_close_ int root = cg_root_open();
        if (root < 0)
                return msp_err_sys(err, -root, "open '%s'", CG_ROOT);
        r = cg_mode_at(root, &mode, err);
        if (r < 0)
                return r;
        switch (mode) {
        case RT_CGROUP_UNIFIED:
                return cg_v2_apply(CG_ROOT, path, res, err);
        case RT_CGROUP_HYBRID:
                return cg_v1_apply(root, path, res, true, err);
        case RT_CGROUP_LEGACY:
                return cg_v1_apply(root, path, res, false, err);
        }
        return msp_err_set(err, EINVAL, "unknown cgroup mode");
}

/* The config field a cgroup file carries, for the error of an update the kernel
 * refused. */
static const char *
field_of_file(const char *file)
{
        static const struct {
                const char *file, *field;
        } fields[] = {
                { "memory.limit_in_bytes", "memory.limit" },
                { "memory.max", "memory.limit" },
                { "memory.memsw.limit_in_bytes", "memory.swap" },
                { "memory.swap.max", "memory.swap" },
                { "memory.soft_limit_in_bytes", "memory.reservation" },
                { "memory.low", "memory.reservation" },
                { "memory.swappiness", "memory.swappiness" },
                { "memory.oom_control", "memory.disableOOMKiller" },
                { "pids.max", "pids.limit" },
                { "cpu.shares", "cpu.shares" },
                { "cpu.weight", "cpu.shares" },
                { "cpu.cfs_quota_us", "cpu.quota" },
                { "cpu.cfs_period_us", "cpu.period" },
                { "cpu.max", "cpu.quota" },
                { "cpu.cfs_burst_us", "cpu.burst" },
                { "cpu.max.burst", "cpu.burst" },
                { "cpu.rt_runtime_us", "cpu.realtimeRuntime" },
                { "cpu.rt_period_us", "cpu.realtimePeriod" },
                { "cpu.idle", "cpu.idle" },
                { "cpuset.cpus", "cpu.cpus" },
                { "cpuset.mems", "cpu.mems" },
                { "blkio.weight", "blockIO.weight" },
                { "blkio.bfq.weight", "blockIO.weight" },
                { "io.weight", "blockIO.weight" },
                { "io.bfq.weight", "blockIO.weight" },
        };

        for (size_t i = 0; i < ARRAY_SIZE(fields); i++)
                if (strcmp(file, fields[i].file) == 0)
                        return fields[i].field;
        return NULL;
}

int
rt_cgroup_update(const char *path, const oci_resources *res, msp_err *err)
{
        char unrestored[256];

        cg_undo_begin();
        int r = rt_cgroup_apply_resources(path, res, err);
        if (r < 0 && err) {
                const char *field = field_of_file(cg_undo_failed_file());
                int bad = cg_undo_rollback(unrestored, sizeof unrestored);
                char msg[MSP_ERR_MSG_MAX];

                if (field)
                        msp_err_prefix(err, "linux.resources.%s", field);
                snprintf(msg, sizeof msg, "%s", err->msg);
                if (!bad)
                        r = msp_err_set(err, -r, "%s (nothing changed)", msg);
                else
                        r = msp_err_set(err, -r, "%s (could not restore %s)", msg,
                                        unrestored[0] ? unrestored : "a file written before");
        } else if (r < 0) {
                (void) cg_undo_rollback(unrestored, sizeof unrestored);
        }
        cg_undo_end();
        return r;
}
