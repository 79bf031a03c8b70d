/* The cgroup v2 backend: every controller's files in the one cgroup directory, after
 * the controller has been delegated by the ancestors (cg_v2_enable_controllers). Also
 * the conversions from the v1-shaped OCI values and the unified key checks. */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/cgroup/cgroup-internal.h"

uint64_t
cg_shares_to_weight(uint64_t shares)
{
        if (shares < 2)
                shares = 2;
        if (shares > 262144)
                shares = 262144;
        return 1 + ((shares - 2) * 9999) / 262142;
}

uint64_t
cg_blkio_to_io_weight(uint64_t weight)
{
        if (weight < 10)
                weight = 10;
        if (weight > 1000)
                weight = 1000;
        return 1 + ((weight - 10) * 9999) / 990;
}

/* cgroup.* files that set limits on the cgroup itself; every other cgroup.* file moves
 * processes, restructures the tree or belongs to the runtime (kill, freeze). */
static const char *const unified_cgroup_keys[] = {
        "cgroup.max.depth", "cgroup.max.descendants", "cgroup.pressure",
};

int
cg_unified_key_check(const char *key, msp_err *err)
{
        size_t len = strlen(key);

        if (len == 0 || len > 255 || strchr(key, '/') || strstr(key, ".."))
                return msp_err_set(err, EINVAL, "linux.resources.unified[\"%.64s\"]: not a file name "
                                   "of the cgroup", key);
        if (key[0] == '.' || !strchr(key, '.') || key[strspn(key, "abcdefghijklmnopqrstuvwxyz"
                                                              "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")])
                return msp_err_set(err, EINVAL, "linux.resources.unified[\"%.64s\"]: not a "
                                   "\"<controller>.<file>\" key", key);
        if (strncmp(key, "cgroup.", 7) != 0)
                return 0;
        for (size_t i = 0; i < ARRAY_SIZE(unified_cgroup_keys); i++)
                if (strcmp(key, unified_cgroup_keys[i]) == 0)
                        return 0;
        return msp_err_set(err, EPERM, "linux.resources.unified[\"%s\"]: refused, it would move "
                           "processes or change the cgroup tree that the runtime manages", key);
}

int
cg_v2_apply_unified(int dfd, const oci_map *unified, bool hybrid, msp_err *err)
{
        for (size_t i = 0; i < unified->n; i++) {
                const char *key = unified->v[i].key;
                int r = cg_unified_key_check(key, err);
                if (r < 0)
                        return r;
                char ctrl[256];         /* the key is at most 255 bytes */
                snprintf(ctrl, sizeof ctrl, "%.*s", (int) strcspn(key, "."), key);
                if (hybrid && strcmp(ctrl, "cgroup") == 0)
                        return msp_err_set(err, EOPNOTSUPP, "linux.resources.unified[\"%s\"]: cgroup.* "
                                           "keys need a cgroup v2 host", key);
                if (strcmp(ctrl, "cgroup") != 0 && !cg_has_controller(dfd, ctrl))
                        return msp_err_set(err, EOPNOTSUPP, "linux.resources.unified[\"%s\"]: the '%s' "
                                           "controller is not available %s", key, ctrl,
                                           hybrid ? "on the cgroup v2 hierarchy of this hybrid host "
                                           "(it is a v1 controller here)" : "in this cgroup");
                if (!cg_exists(dfd, key))
                        return msp_err_set(err, ENOENT, "linux.resources.unified[\"%s\"]: no such cgroup "
                                           "file", key);
                r = cg_write(dfd, key, unified->v[i].value, err);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* v1-only fields are refused before anything is written. */
static int
refuse_v1_only(const oci_resources *res, msp_err *err)
{
        const oci_memory *m = &res->memory;
        const char *field = NULL;

        if (res->has_memory && m->has_swappiness)
                field = "memory.swappiness";
        else if (res->has_memory && m->has_disable_oom_killer && m->disable_oom_killer)
                field = "memory.disableOOMKiller";
        else if (res->has_memory && m->has_use_hierarchy && !m->use_hierarchy)
                field = "memory.useHierarchy";
        else if (res->has_cpu && res->cpu.has_realtime_runtime && res->cpu.realtime_runtime != 0)
                field = "cpu.realtimeRuntime";
        else if (res->has_cpu && res->cpu.has_realtime_period && res->cpu.realtime_period != 0)
                field = "cpu.realtimePeriod";
        else if (res->has_blockio && res->blockio.has_leaf_weight)
                field = "blockIO.leafWeight";
        else if (res->has_net_class_id || res->n_net_priorities)
                field = "network";
        if (field)
                return msp_err_set(err, EOPNOTSUPP, "linux.resources.%s: not supported on cgroup v2",
                                   field);
        for (size_t i = 0; res->has_blockio && i < res->blockio.n_weight_device; i++)
                if (res->blockio.weight_device[i].has_leaf_weight)
                        return msp_err_set(err, EOPNOTSUPP, "linux.resources.blockIO.weightDevice[%zu]."
                                           "leafWeight: not supported on cgroup v2", i);
        return 0;
}

static int
need_controller(int dfd, const char *ctrl, const char *what, msp_err *err)
{
        if (cg_has_controller(dfd, ctrl))
                return 0;
        return msp_err_set(err, EOPNOTSUPP, "%s: the '%s' controller is not enabled for this cgroup "
                           "(missing from cgroup.controllers)", what, ctrl);
}

static int
write_max(int dfd, const char *file, int64_t v, msp_err *err)
{
        if (v < 0)
                return cg_write(dfd, file, "max", err);
        return cg_writef(dfd, file, err, "%" PRId64, v);
}

/* OCI swap is the memory+swap total; memory.swap.max is the swap alone. */
static int
memory_swap(int dfd, const oci_memory *m, msp_err *err)
{
        /* An unlimited memory with no swap value: swap unlimited too (as runc, and as v1). */
        if ((!m->has_swap || m->swap == 0) && m->has_limit && m->limit == -1)
                return cg_exists(dfd, "memory.swap.max") ? cg_write(dfd, "memory.swap.max", "max", err)
                                                         : 0;
        if (!m->has_swap || m->swap == 0)
                return 0;
        if (!cg_exists(dfd, "memory.swap.max")) {
                if (m->swap == -1)
                        return 0;       /* no swap accounting: unlimited anyway */
                return msp_err_set(err, EOPNOTSUPP, "linux.resources.memory.swap: swap accounting is not "
                                   "available (no memory.swap.max)");
        }
        if (m->swap == -1)
                return cg_write(dfd, "memory.swap.max", "max", err);
        if (!m->has_limit || m->limit < 0)
                return msp_err_set(err, EINVAL, "linux.resources.memory.swap: a swap limit needs "
                                   "memory.limit on cgroup v2 (swap is the memory+swap total)");
        return cg_writef(dfd, "memory.swap.max", err, "%" PRId64, m->swap - m->limit);
}

static int
apply_memory(int dfd, const oci_memory *m, msp_err *err)
{
        char buf[64];
        int r = need_controller(dfd, "memory", "linux.resources.memory", err);

        if (r < 0)
                return r;
        if (m->has_limit && m->limit >= 0 && m->has_check_before_update && m->check_before_update &&
            cg_read(dfd, "memory.current", buf, sizeof buf) > 0) {
                uint64_t usage = strtoull(buf, NULL, 10);
                if ((uint64_t) m->limit < usage)
                        return msp_err_set(err, EBUSY, "linux.resources.memory.limit: %" PRId64 " is below "
                                           "the current usage %" PRIu64 " (checkBeforeUpdate)", m->limit,
                                           usage);
        }
        if (m->has_limit)
                r = write_max(dfd, "memory.max", m->limit, err);
        if (r >= 0)
                r = memory_swap(dfd, m, err);
        if (r >= 0 && m->has_reservation)
                r = write_max(dfd, "memory.low", m->reservation, err);
        return r;
}

/* cpu.max is "quota period" in one file: a field the config leaves out keeps its value. */
static int
cpu_max(int dfd, const oci_cpu *c, msp_err *err)
{
        char cur[64] = "max 100000", quota[64];
        uint64_t period = 100000;

        if (cg_read(dfd, "cpu.max", cur, sizeof cur) > 0) {
                char *sp = strchr(cur, ' ');
                if (sp)
                        period = strtoull(sp + 1, NULL, 10);
        }
        cur[strcspn(cur, " \n")] = '\0';
        if (c->has_period)
                period = c->period;
        if (c->has_quota && c->quota > 0)
                snprintf(quota, sizeof quota, "%" PRId64, c->quota);
        else
                snprintf(quota, sizeof quota, "%s", c->has_quota ? "max" : cur);
        return cg_writef(dfd, "cpu.max", err, "%s %" PRIu64, quota, period);
}

static int
apply_cpu(int dfd, const oci_cpu *c, msp_err *err)
{
        int r = 0;

        if (!(c->has_shares && c->shares) && !c->has_quota && !c->has_period && !c->has_burst &&
            !c->has_idle)
                return 0;
        r = need_controller(dfd, "cpu", "linux.resources.cpu", err);
        if (r >= 0 && c->has_shares && c->shares)
                r = cg_writef(dfd, "cpu.weight", err, "%" PRIu64, cg_shares_to_weight(c->shares));
        if (r >= 0 && (c->has_quota || c->has_period))
                r = cpu_max(dfd, c, err);
        if (r >= 0 && c->has_burst)
                r = cg_writef(dfd, "cpu.max.burst", err, "%" PRIu64, c->burst);
        if (r >= 0 && c->has_idle)
                r = cg_write(dfd, "cpu.idle", c->idle ? "1" : "0", err);
        return r;
}

static int
apply_cpuset(int dfd, const oci_cpu *c, msp_err *err)
{
        int r = 0;

        if (!(c->cpus && *c->cpus) && !(c->mems && *c->mems))
                return 0;
        r = need_controller(dfd, "cpuset", "linux.resources.cpu.cpus", err);
        if (r >= 0 && c->cpus && *c->cpus)
                r = cg_write(dfd, "cpuset.cpus", c->cpus, err);
        if (r >= 0 && c->mems && *c->mems)
                r = cg_write(dfd, "cpuset.mems", c->mems, err);
        return r;
}

/* One io.max line per device with every limit the config gives for it. */
static int
io_max(int dfd, const oci_blockio *b, msp_err *err)
{
        const oci_throttle_list *lists[4] = { &b->throttle_read_bps, &b->throttle_write_bps,
                                              &b->throttle_read_iops, &b->throttle_write_iops };
        static const char *const keys[4] = { "rbps", "wbps", "riops", "wiops" };

        for (size_t l = 0; l < 4; l++) {
                for (size_t i = 0; i < lists[l]->n; i++) {
                        const oci_throttle_device *d = &lists[l]->v[i];
                        char line[256];
                        bool seen = false;
                        /* Written with the first list that names the device. */
                        for (size_t pl = 0; pl < l && !seen; pl++)
                                for (size_t pi = 0; pi < lists[pl]->n && !seen; pi++)
                                        seen = lists[pl]->v[pi].major == d->major &&
                                               lists[pl]->v[pi].minor == d->minor;
                        if (seen)
                                continue;
                        char part[4][32] = { "", "", "", "" };
                        for (size_t k = l; k < 4; k++)
                                for (size_t j = 0; j < lists[k]->n; j++)
                                        if (lists[k]->v[j].major == d->major &&
                                            lists[k]->v[j].minor == d->minor)
                                                snprintf(part[k], sizeof part[k], " %s=%" PRIu64, keys[k],
                                                         lists[k]->v[j].rate);
                        snprintf(line, sizeof line, "%" PRId64 ":%" PRId64 "%s%s%s%s", d->major, d->minor,
                                 part[0], part[1], part[2], part[3]);
                        int r = cg_write(dfd, "io.max", line, err);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

/* io.bfq.weight takes the blkio scale as is; io.weight needs the conversion. */
static int
io_weights(int dfd, const oci_blockio *b, msp_err *err)
{
        bool bfq = cg_exists(dfd, "io.bfq.weight");
        const char *file = bfq ? "io.bfq.weight" : "io.weight";
        int r = 0;

        if (b->has_weight && b->weight)
                r = cg_writef(dfd, file, err, "default %" PRIu64,
                              bfq ? b->weight : cg_blkio_to_io_weight(b->weight));
        for (size_t i = 0; r >= 0 && i < b->n_weight_device; i++) {
                const oci_weight_device *w = &b->weight_device[i];
                if (w->has_weight)
                        r = cg_writef(dfd, file, err, "%" PRId64 ":%" PRId64 " %" PRIu64, w->major,
                                      w->minor, bfq ? w->weight : cg_blkio_to_io_weight(w->weight));
        }
        return r;
}

static int
apply_io(int dfd, const oci_blockio *b, msp_err *err)
{
        int r = need_controller(dfd, "io", "linux.resources.blockIO", err);

        if (r >= 0)
                r = io_weights(dfd, b, err);
        if (r >= 0)
                r = io_max(dfd, b, err);
        return r;
}

static int
apply_rest(int dfd, const oci_resources *res, msp_err *err)
{
        int r = 0;

        if (res->n_hugepage_limits) {
                r = need_controller(dfd, "hugetlb", "linux.resources.hugepageLimits", err);
                if (r >= 0)
                        r = cg_apply_hugetlb(dfd, res->hugepage_limits, res->n_hugepage_limits, true,
                                             err);
        }
        if (r >= 0 && res->n_rdma) {
                r = need_controller(dfd, "rdma", "linux.resources.rdma", err);
                if (r >= 0)
                        r = cg_apply_rdma(dfd, res->rdma, res->n_rdma, err);
        }
        if (r >= 0 && res->n_devices)
                r = cg_devices_apply_v2(dfd, res->devices, res->n_devices, err);
        /* Last, so that a raw key can refine what the typed fields set. */
        if (r >= 0 && res->unified.n)
                r = cg_v2_apply_unified(dfd, &res->unified, false, err);
        return r;
}

int
cg_v2_apply(const char *hier, const char *path, const oci_resources *res, msp_err *err)
{
        _cleanup_close_ int dfd = -1;
        int r = refuse_v1_only(res, err);

        if (r < 0)
                return r;
        dfd = cg_open_dir(hier, path, err);
        if (dfd < 0)
                return dfd;
        if (res->has_cpu)
                r = apply_cpuset(dfd, &res->cpu, err);
        if (r >= 0 && res->has_memory)
                r = apply_memory(dfd, &res->memory, err);
        if (r >= 0 && res->has_pids) {
                r = need_controller(dfd, "pids", "linux.resources.pids", err);
                if (r >= 0)
                        r = write_max(dfd, "pids.max", res->pids_limit > 0 ? res->pids_limit : -1, err);
        }
        if (r >= 0 && res->has_cpu)
                r = apply_cpu(dfd, &res->cpu, err);
        if (r >= 0 && res->has_blockio)
                r = apply_io(dfd, &res->blockio, err);
        if (r >= 0)
                r = apply_rest(dfd, res, err);
        return r;
}
