/* The cgroup v1 backend: one hierarchy per controller at /sys/fs/cgroup/<controller>
 * (cpu may be a symlink to cpu,cpuacct). On a hybrid host, hugetlb and
 * linux.resources.unified keys go to the v2 hierarchy when v1 lacks the controller. */
#include <fcntl.h>
#include <inttypes.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "lib/cgroup/cgroup-internal.h"

/* The cgroup directory of path in ctrl's v1 hierarchy; `what` names the config field. */
static bool
ctrl_mounted(int root, const char *ctrl)
{
        struct statfs sfs;
        _cleanup_close_ int fd = openat(root, ctrl, O_PATH | O_DIRECTORY | O_CLOEXEC);

        return fd >= 0 && fstatfs(fd, &sfs) == 0 && sfs.f_type == CGROUP_SUPER_MAGIC;
}

/* root: an fd of CG_ROOT (cg_open_dir_at says why). */
static int
open_ctrl(int root, const char *ctrl, const char *path, const char *what, msp_err *err)
{
        char hier[64];

        snprintf(hier, sizeof hier, CG_ROOT "/%s", ctrl);
        if (!ctrl_mounted(root, ctrl))
                return msp_err_set(err, EOPNOTSUPP, "%s: the '%s' cgroup v1 controller is not mounted",
                                   what, ctrl);
        return cg_open_dir_at(root, hier, path, err);
}

static uint64_t
read_u64(int dfd, const char *file)
{
        char buf[64];

        if (cg_read(dfd, file, buf, sizeof buf) <= 0)
                return UINT64_MAX;
        return strtoull(buf, NULL, 10);
}

/* Two files that constrain each other (period and quota, limit and memsw): write a then
 * b; when the kernel refuses a with EINVAL, b first. A NULL value is skipped. */
static int
write_pair(int dfd, const char *fa, const char *va, const char *fb, const char *vb, msp_err *err)
{
        int r = va ? cg_write(dfd, fa, va, err) : 0;

        if (r == -EINVAL && vb) {
                r = cg_write(dfd, fb, vb, err);
                return r < 0 ? r : cg_write(dfd, fa, va, err);
        }
        if (r < 0)
                return r;
        return vb ? cg_write(dfd, fb, vb, err) : 0;
}

/* memsw (memory+swap) must stay >= limit after every single write: when the limit goes
 * up, memsw goes first; when it goes down, the limit goes first. */
static int
memory_limit_swap(int dfd, const oci_memory *m, msp_err *err)
{
        bool swap = m->has_swap && m->swap != 0;
        int64_t swap_v = m->swap;
        char lim[32], sw[32];

        /* An unlimited memory with no swap value makes memory+swap unlimited too (as
         * runc): a memsw limit below the new memory limit would refuse it. */
        if (!swap && m->has_limit && m->limit == -1 && cg_exists(dfd, "memory.memsw.limit_in_bytes")) {
                swap = true;
                swap_v = -1;
        }

        if (swap && !cg_exists(dfd, "memory.memsw.limit_in_bytes")) {
                if (swap_v != -1)
                        return msp_err_set(err, EOPNOTSUPP,
                                           "linux.resources.memory.swap: swap accounting is not available on "
                                           "this host (no memory.memsw.limit_in_bytes; boot with swapaccount=1)");
                swap = false;   /* unlimited is what the host gives anyway */
        }
        snprintf(lim, sizeof lim, "%" PRId64, m->limit);
        snprintf(sw, sizeof sw, "%" PRId64, swap_v);
        if (!m->has_limit)
                return swap ? cg_write(dfd, "memory.memsw.limit_in_bytes", sw, err) : 0;
        if (!swap)
                return cg_write(dfd, "memory.limit_in_bytes", lim, err);
        uint64_t cur = read_u64(dfd, "memory.limit_in_bytes");
        uint64_t want = m->limit == -1 ? UINT64_MAX : (uint64_t) m->limit;
        if (want > cur)
                return write_pair(dfd, "memory.memsw.limit_in_bytes", sw, "memory.limit_in_bytes", lim,
                                  err);
        return write_pair(dfd, "memory.limit_in_bytes", lim, "memory.memsw.limit_in_bytes", sw, err);
}

static int
apply_memory(int root, const char *path, const oci_memory *m, msp_err *err)
{
        _cleanup_close_ int dfd = open_ctrl(root, "memory", path, "linux.resources.memory", err);
        int r;

        if (dfd < 0)
                return dfd;
        if (m->has_limit && m->limit >= 0 && m->has_check_before_update && m->check_before_update) {
                uint64_t usage = read_u64(dfd, "memory.usage_in_bytes");
                if (usage != UINT64_MAX && (uint64_t) m->limit < usage)
                        return msp_err_set(err, EBUSY,
                                           "linux.resources.memory.limit: %" PRId64 " is below the current "
                                           "usage %" PRIu64 " (checkBeforeUpdate)", m->limit, usage);
        }
        r = memory_limit_swap(dfd, m, err);
        if (r >= 0 && m->has_reservation)
                r = cg_writef(dfd, "memory.soft_limit_in_bytes", err, "%" PRId64, m->reservation);
        if (r >= 0 && m->has_swappiness)
                r = cg_writef(dfd, "memory.swappiness", err, "%" PRIu64, m->swappiness);
        if (r >= 0 && m->has_disable_oom_killer)
                r = cg_write(dfd, "memory.oom_control", m->disable_oom_killer ? "1" : "0", err);
        if (r >= 0 && m->has_use_hierarchy)
                r = cg_write(dfd, "memory.use_hierarchy", m->use_hierarchy ? "1" : "0", err);
        return r;
}

static int
apply_pids(int root, const char *path, int64_t limit, msp_err *err)
{
        _cleanup_close_ int dfd = open_ctrl(root, "pids", path, "linux.resources.pids", err);

        if (dfd < 0)
                return dfd;
        if (limit <= 0)
                return cg_write(dfd, "pids.max", "max", err);
        return cg_writef(dfd, "pids.max", err, "%" PRId64, limit);
}

/* A v1 file that only some kernels have; its absence is an error naming the field. */
static int
write_optional(int dfd, const char *file, const char *what, const char *value, msp_err *err)
{
        if (!cg_exists(dfd, file))
                return msp_err_set(err, EOPNOTSUPP, "%s: not supported by this kernel (no %s)", what,
                                   file);
        return cg_write(dfd, file, value, err);
}

static int
apply_cpu(int root, const char *path, const oci_cpu *c, msp_err *err)
{
        _cleanup_close_ int dfd = -1;
        char a[32], b[32];
        int r = 0;

        if (!(c->has_shares && c->shares) && !c->has_quota && !c->has_period && !c->has_burst &&
            !c->has_realtime_runtime && !c->has_realtime_period && !c->has_idle)
                return 0;
        dfd = open_ctrl(root, "cpu", path, "linux.resources.cpu", err);
        if (dfd < 0)
                return dfd;
        if (c->has_shares && c->shares)
                r = cg_writef(dfd, "cpu.shares", err, "%" PRIu64, c->shares);
        snprintf(a, sizeof a, "%" PRIu64, c->period);
        snprintf(b, sizeof b, "%" PRId64, c->quota);
        if (r >= 0 && (c->has_period || c->has_quota))
                r = write_pair(dfd, "cpu.cfs_period_us", c->has_period ? a : NULL, "cpu.cfs_quota_us",
                               c->has_quota ? b : NULL, err);
        if (r >= 0 && c->has_burst) {
                snprintf(a, sizeof a, "%" PRIu64, c->burst);
                r = write_optional(dfd, "cpu.cfs_burst_us", "linux.resources.cpu.burst", a, err);
        }
        snprintf(a, sizeof a, "%" PRIu64, c->realtime_period);
        snprintf(b, sizeof b, "%" PRId64, c->realtime_runtime);
        if (r >= 0 && (c->has_realtime_period || c->has_realtime_runtime))
                r = write_pair(dfd, "cpu.rt_period_us", c->has_realtime_period ? a : NULL,
                               "cpu.rt_runtime_us", c->has_realtime_runtime ? b : NULL, err);
        if (r >= 0 && c->has_idle)
                r = write_optional(dfd, "cpu.idle", "linux.resources.cpu.idle",
                                   c->idle ? "1" : "0", err);
        return r;
}

static int
apply_cpuset(int root, const char *path, const oci_cpu *c, msp_err *err)
{
        _cleanup_close_ int dfd = -1;
        int r = 0;

        /* An empty list would leave the cgroup with no CPU (v1 does not inherit). */
        if (!(c->cpus && *c->cpus) && !(c->mems && *c->mems))
                return 0;
        dfd = open_ctrl(root, "cpuset", path, "linux.resources.cpu.cpus", err);
        if (dfd < 0)
                return dfd;
        if (c->cpus && *c->cpus)
                r = cg_write(dfd, "cpuset.cpus", c->cpus, err);
        if (r >= 0 && c->mems && *c->mems)
                r = cg_write(dfd, "cpuset.mems", c->mems, err);
        return r;
}

static int
blkio_throttle(int dfd, const char *file, const oci_throttle_list *l, msp_err *err)
{
        for (size_t i = 0; i < l->n; i++) {
                int r = cg_writef(dfd, file, err, "%" PRId64 ":%" PRId64 " %" PRIu64, l->v[i].major,
                                  l->v[i].minor, l->v[i].rate);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* CFQ's blkio.weight is gone from current kernels; BFQ's blkio.bfq.weight has the
 * same 1..1000 scale. */
static const char *
weight_file(int dfd, bool device)
{
        if (cg_exists(dfd, device ? "blkio.weight_device" : "blkio.weight"))
                return device ? "blkio.weight_device" : "blkio.weight";
        if (cg_exists(dfd, device ? "blkio.bfq.weight_device" : "blkio.bfq.weight"))
                return device ? "blkio.bfq.weight_device" : "blkio.bfq.weight";
        return NULL;
}

static int
blkio_weights(int dfd, const oci_blockio *b, msp_err *err)
{
        const char *wf = weight_file(dfd, false), *wdf = weight_file(dfd, true);
        int r = 0;

        if (b->has_weight && b->weight) {
                if (!wf)
                        return msp_err_set(err, EOPNOTSUPP, "linux.resources.blockIO.weight: not supported "
                                           "by this kernel (no blkio.weight or blkio.bfq.weight)");
                r = cg_writef(dfd, wf, err, "%u", (unsigned) b->weight);
        }
        if (r >= 0 && b->has_leaf_weight) {
                char v[16];
                snprintf(v, sizeof v, "%u", (unsigned) b->leaf_weight);
                r = write_optional(dfd, "blkio.leaf_weight", "linux.resources.blockIO.leafWeight", v, err);
        }
        for (size_t i = 0; r >= 0 && i < b->n_weight_device; i++) {
                const oci_weight_device *w = &b->weight_device[i];
                if (w->has_weight && !wdf)
                        return msp_err_set(err, EOPNOTSUPP, "linux.resources.blockIO.weightDevice: not "
                                           "supported by this kernel (no blkio.bfq.weight_device)");
                if (w->has_weight)
                        r = cg_writef(dfd, wdf, err, "%" PRId64 ":%" PRId64 " %u", w->major, w->minor,
                                      (unsigned) w->weight);
                if (r >= 0 && w->has_leaf_weight)
                        r = cg_writef(dfd, "blkio.leaf_weight_device", err, "%" PRId64 ":%" PRId64 " %u",
                                      w->major, w->minor, (unsigned) w->leaf_weight);
        }
        return r;
}

static int
apply_blkio(int root, const char *path, const oci_blockio *b, msp_err *err)
{
        _cleanup_close_ int dfd = open_ctrl(root, "blkio", path, "linux.resources.blockIO", err);
        int r;

        if (dfd < 0)
                return dfd;
        r = blkio_weights(dfd, b, err);
        if (r >= 0)
                r = blkio_throttle(dfd, "blkio.throttle.read_bps_device", &b->throttle_read_bps, err);
        if (r >= 0)
                r = blkio_throttle(dfd, "blkio.throttle.write_bps_device", &b->throttle_write_bps, err);
        if (r >= 0)
                r = blkio_throttle(dfd, "blkio.throttle.read_iops_device", &b->throttle_read_iops, err);
        if (r >= 0)
                r = blkio_throttle(dfd, "blkio.throttle.write_iops_device", &b->throttle_write_iops,
                                   err);
        return r;
}

static int
apply_hugetlb(int root, const char *path, const oci_resources *res, bool hybrid, msp_err *err)
{
        _cleanup_close_ int dfd = -1;

        if (ctrl_mounted(root, "hugetlb") || !hybrid) {
                dfd = open_ctrl(root, "hugetlb", path, "linux.resources.hugepageLimits", err);
                if (dfd < 0)
                        return dfd;
                return cg_apply_hugetlb(dfd, res->hugepage_limits, res->n_hugepage_limits, false, err);
        }
        dfd = cg_open_dir_at(root, CG_HYBRID_UNIFIED, path, err);
        if (dfd < 0)
                return dfd;
        if (!cg_has_controller(dfd, "hugetlb"))
                return msp_err_set(err, EOPNOTSUPP, "linux.resources.hugepageLimits: the hugetlb "
                                   "controller is available neither on cgroup v1 nor on the v2 hierarchy");
        return cg_apply_hugetlb(dfd, res->hugepage_limits, res->n_hugepage_limits, true, err);
}

static int
apply_network(int root, const char *path, const oci_resources *res, msp_err *err)
{
        if (res->has_net_class_id) {
                _cleanup_close_ int dfd = open_ctrl(root, "net_cls", path, "linux.resources.network.classID",
                                                    err);
                if (dfd < 0)
                        return dfd;
                int r = cg_writef(dfd, "net_cls.classid", err, "%" PRIu32, res->net_class_id);
                if (r < 0)
                        return r;
        }
        if (res->n_net_priorities == 0)
                return 0;
        _cleanup_close_ int dfd = open_ctrl(root, "net_prio", path, "linux.resources.network.priorities",
                                            err);
        if (dfd < 0)
                return dfd;
        for (size_t i = 0; i < res->n_net_priorities; i++) {
                int r = cg_writef(dfd, "net_prio.ifpriomap", err, "%s %" PRIu32,
                                  res->net_priorities[i].name, res->net_priorities[i].priority);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int
apply_rdma(int root, const char *path, const oci_resources *res, msp_err *err)
{
        _cleanup_close_ int dfd = open_ctrl(root, "rdma", path, "linux.resources.rdma", err);

        if (dfd < 0)
                return dfd;
        return cg_apply_rdma(dfd, res->rdma, res->n_rdma, err);
}

static int
apply_devices(int root, const char *path, const oci_resources *res, msp_err *err)
{
        _cleanup_close_ int dfd = open_ctrl(root, "devices", path, "linux.resources.devices", err);

        if (dfd < 0)
                return dfd;
        return cg_devices_apply_v1(dfd, res->devices, res->n_devices, err);
}

static int
apply_unified(int root, const char *path, const oci_map *unified, bool hybrid, msp_err *err)
{
        _cleanup_close_ int dfd = -1;

        if (!hybrid)
                return msp_err_set(err, EOPNOTSUPP, "linux.resources.unified: needs cgroup v2; this host "
                                   "has only cgroup v1");
        dfd = cg_open_dir_at(root, CG_HYBRID_UNIFIED, path, err);
        if (dfd < 0)
                return dfd;
        return cg_v2_apply_unified(dfd, unified, true, err);
}

int
cg_v1_apply(int root, const char *path, const oci_resources *res, bool hybrid, msp_err *err)
{
        int r = 0;

        if (res->has_cpu)
                r = apply_cpuset(root, path, &res->cpu, err);
        if (r >= 0 && res->has_memory)
                r = apply_memory(root, path, &res->memory, err);
        if (r >= 0 && res->has_pids)
                r = apply_pids(root, path, res->pids_limit, err);
        if (r >= 0 && res->has_cpu)
                r = apply_cpu(root, path, &res->cpu, err);
        if (r >= 0 && res->has_blockio)
                r = apply_blkio(root, path, &res->blockio, err);
        if (r >= 0 && res->n_hugepage_limits)
                r = apply_hugetlb(root, path, res, hybrid, err);
        if (r >= 0 && (res->has_net_class_id || res->n_net_priorities))
                r = apply_network(root, path, res, err);
        if (r >= 0 && res->n_rdma)
                r = apply_rdma(root, path, res, err);
        if (r >= 0 && res->n_devices)
                r = apply_devices(root, path, res, err);
        /* Last, so that a raw key can refine what the typed fields set. */
        if (r >= 0 && res->unified.n)
                r = apply_unified(root, path, &res->unified, hybrid, err);
        return r;
}
