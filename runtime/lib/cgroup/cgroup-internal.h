/* Internal to the cgroup module (the cgroup-*.c files of lib/cgroup/).
 * Other modules use cgroup.h; the unit tests include this header for the pure parts
 * (conversions, key checks, the eBPF device program) and to drive the v2 backend
 * against a directory of plain files. docs/CGROUPS.md describes the behaviour. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/cgroup/cgroup.h"
#include "oci/oci.h"

#define CG_ROOT "/sys/fs/cgroup"
#define CG_HYBRID_UNIFIED CG_ROOT "/unified"

struct bpf_insn;

/* ---- files of one cgroup directory (cgroup-fs.c) ---- */

/* Open hier + path as an O_DIRECTORY fd; a missing directory says which. */
int cg_open_dir(const char *hier, const char *path, msp_err *err);
/* The same, resolved from root, an fd of CG_ROOT (hier is CG_ROOT or below it): a
 * lookup that starts there never walks through /sys again. Each step through sysfs takes
 * its lock, which a new network namespace holds for writing while it registers its
 * loopback, so the parent's cgroup work that overlaps the init's unshare would wait for
 * it (and hold it up) at every absolute path. root < 0: as cg_open_dir. */
int cg_open_dir_at(int root, const char *hier, const char *path, msp_err *err);
/* hier + path relative to CG_ROOT ("." for CG_ROOT itself), for the *at() calls. */
int cg_relpath(const char *hier, const char *path, char *buf, size_t size);
/* An O_PATH fd of CG_ROOT; -errno. */
int cg_root_open(void);
/* One write(2) of value into dfd/file. The error names the file and the value:
 * "cgroup: write 'memory.limit_in_bytes' = '1024': Device or resource busy". */
int cg_write(int dfd, const char *file, const char *value, msp_err *err);
/* One write(2) of value into fd, an open `file` (for the message), as cg_write. */
int cg_write_fd(int fd, const char *file, const char *value, msp_err *err);
int cg_writef(int dfd, const char *file, msp_err *err, const char *fmt, ...) _printf_(4, 5);
/* Read up to bufsz - 1 bytes (NUL-terminated); returns the length or -errno. */
int cg_read(int dfd, const char *file, char *buf, size_t bufsz);
bool cg_exists(int dfd, const char *file);
/* Whether ctrl is listed in dfd's cgroup.controllers (v2). */
bool cg_has_controller(int dfd, const char *ctrl);
/* A cgroup path msp may create, fill and remove: absolute, at least one component, no
 * "." or ".." component. "/" and "" are refused so that nothing can walk a hierarchy
 * root. */
bool cg_path_is_safe(const char *path);
/* CLOCK_MONOTONIC in milliseconds. */
int64_t cg_now_ms(void);
/* v2: wait until the "key" line of dfd's cgroup.events reads `want` ('0' or '1'),
 * sleeping in poll(POLLPRI) (the kernel notifies every change), at most timeout_ms.
 * -ETIMEDOUT, -ENOENT when the file or the key is missing. */
int cg_wait_event(int dfd, const char *key, char want, int timeout_ms);

/* The host's mode from root, an fd of CG_ROOT (rt_cgroup_mode_detect without the open). */
int cg_mode_at(int root, rt_cgroup_mode *ret, msp_err *err);
/* Each mounted hierarchy under CG_ROOT (v1 controllers, name=systemd, the hybrid
 * cgroup2), or CG_ROOT itself on a unified host: fn(hierarchy_dir, root, is_v2) for
 * each, stopping at the first error; root is an fd of CG_ROOT for cg_open_dir_at(). */
typedef int (*cg_hierarchy_fn)(const char *hier, int root, bool v2, void *userdata, msp_err *err);
int cg_for_each_hierarchy(cg_hierarchy_fn fn, void *userdata, msp_err *err);
/* The same for the hierarchies `which` names (RT_CGROUP_V1/V2 of cgroup.h). The cgroup2
 * one alone is found without the walk: /sys/fs/cgroup itself or, on a hybrid host,
 * /sys/fs/cgroup/unified (a walk of 10 hierarchies is ~10 µs, and create does several). */
int cg_for_each_hierarchy_in(unsigned which, cg_hierarchy_fn fn, void *userdata, msp_err *err);

/* ---- the walk of a cgroup's sub-cgroups (cgroup-walk.c) ---- */

/* Each sub-cgroup below a cgroup is every directory entry but "." and "..", at any depth;
 * the walk goes by fds (no path length limit) with its stack on the heap. A sub-cgroup
 * removed meanwhile is skipped; any other failure ends the walk with its -errno. */
typedef int (*cg_pid_fn)(pid_t pid, void *userdata);
/* fn for each pid in the cgroup.procs of dfd and of every sub-cgroup below it, parents
 * first; a negative return ends the walk with it. */
int cg_walk_pids(int dfd, cg_pid_fn fn, void *userdata);
/* rmdir every sub-cgroup below dfd, children before parents (dfd itself stays): the
 * first the kernel refuses (EBUSY: it still has a process) ends the walk. */
int cg_walk_rmdir_below(int dfd);

/* ---- the undo journal of an update (cgroup-fs.c, kept by cg_write) ---- */

/* What a file held before a write (one line, without its newline). */
typedef struct cg_undo_old {
        char value[256];
} cg_undo_old;

/* Open a journal: from here every cg_write that succeeds records the file's old value. */
void cg_undo_begin(void);
/* Forget the journal (the update is complete, or rolled back). */
void cg_undo_end(void);
/* The first file whose write failed while the journal was open ("" when none). */
const char *cg_undo_failed_file(void);
/* Write back every recorded value, last first, and close the journal to recording.
 * Returns how many could not be restored (files listed in unrestored, comma-separated;
 * a write that could not be recorded counts too). */
int cg_undo_rollback(char *unrestored, size_t size);

/* ---- pure helpers (cgroup-v2.c) ---- */

/* cpu.shares (2..262144) to cpu.weight (1..10000): 1 + ((shares - 2) * 9999) / 262142. */
uint64_t cg_shares_to_weight(uint64_t shares);
/* blkio weight (10..1000) to io.weight (1..10000): 1 + ((w - 10) * 9999) / 990. */
uint64_t cg_blkio_to_io_weight(uint64_t weight);
/* A linux.resources.unified key msp may write: a plain "<controller>.<name>" file name,
 * not one that moves processes or restructures the tree (cgroup.procs, .threads,
 * .subtree_control, .type, .kill, .freeze...). */
int cg_unified_key_check(const char *key, msp_err *err);

/* ---- backends ---- */

/* v1 controllers at CG_ROOT/<controller>; `hybrid`: hugetlb and unified keys may use
 * the v2 hierarchy at CG_HYBRID_UNIFIED. */
/* root: an fd of CG_ROOT. */
int cg_v1_apply(int root, const char *path, const oci_resources *res, bool hybrid, msp_err *err);
/* v2: every controller in one directory, hier + path (hier is CG_ROOT on a unified
 * host; the tests pass a directory of plain files). */
int cg_v2_apply(const char *hier, const char *path, const oci_resources *res, msp_err *err);
/* linux.resources.unified into a v2 directory; `hybrid`: only keys whose controller is
 * available in that directory (the v2 side of a hybrid host), no cgroup.* keys. */
int cg_v2_apply_unified(int dfd, const oci_map *unified, bool hybrid, msp_err *err);
/* Enable the controllers msp manages that dir's cgroup.controllers offers in its
 * cgroup.subtree_control. Skipped for a non-root cgroup with processes (the
 * no-internal-processes rule); failures are left for the resource writes to report. */
void cg_v2_enable_controllers(const char *dir, bool is_root);
/* The same for dir relative to root (an fd of CG_ROOT). */
void cg_v2_enable_controllers_at(int root, const char *reldir, bool is_root);

/* ---- the writers both backends share (cgroup-res.c) ---- */

/* "2MB", "1GB", "64KB": digits and a unit, nothing that could name another file. */
bool cg_hugepage_size_valid(const char *size);
/* hugetlb.<size>.max (v2) or hugetlb.<size>.limit_in_bytes (v1) in dfd. */
int cg_apply_hugetlb(int dfd, const oci_hugepage_limit *l, size_t n, bool v2, msp_err *err);
/* rdma.max lines, "<device> hca_handle=N hca_object=M" (same format on v1 and v2). */
int cg_apply_rdma(int dfd, const oci_rdma_limit *l, size_t n, msp_err *err);

/* ---- the rootless caller's places, for rt_cgroup_choose_path (cgroup-rootless.c) ---- */

/* runc's rootless placement: "<the caller's cgroup2 cgroup>/<id>" (its parent's when that
 * is a .scope), on a unified host where the caller may make cgroups there and move
 * processes (a delegated subtree). 1: buf holds it; 0: none can be made, why says why
 * (buf ""); -errno when /proc/self/cgroup or the mode cannot be read. */
int cg_rootless_path(const char *id, char *buf, size_t bufsz, char *why, size_t whysz);
/* The cgroup of the caller's systemd user manager ("/user.slice/user-1000.slice/
 * user@1000.service"), which systemd delegates to the user: 1 and buf filled when the
 * caller runs below one, else 0. */
int cg_systemd_user_root(char *buf, size_t bufsz);
/* Rootless --systemd-cgroup: the container's cgroup belongs to the user's systemd
 * manager, as with runc. The manager makes a transient scope (the unit named by
 * "slice:prefix:name", else msp-ID.scope in user.slice) with Delegate=yes and this
 * process in it; this process then moves to a leaf of its own below the scope so that
 * the scope holds no process and can hand controllers to the container's leaf
 * (RT_CGROUP_SCOPE_LEAF), where msp writes the limits: the manager owns only the
 * scope's own files and never rewrites them. The path of that leaf into buf. */
int cg_user_scope_path(const char *path, const char *id, char *buf, size_t bufsz,
                       msp_err *err);

/* ---- devices (cgroup-devices.c) ---- */

/* v1: "a" into devices.deny, then each rule in order into devices.allow / devices.deny. */
int cg_devices_apply_v1(int dfd, const oci_device_cgroup *rules, size_t n, msp_err *err);
/* v2: build, load and attach (BPF_F_ALLOW_MULTI) the device program to dfd, then detach
 * the programs that were attached there before (an update never leaves a gap). */
int cg_devices_apply_v2(int dfd, const oci_device_cgroup *rules, size_t n, msp_err *err);
/* The BPF_PROG_TYPE_CGROUP_DEVICE program for rules (malloc'ed, *ret_n instructions):
 * the last matching rule decides; no match denies. */
int cg_devices_build_prog(const oci_device_cgroup *rules, size_t n, struct bpf_insn **ret,
                          size_t *ret_n, msp_err *err);
/* BPF_PROG_LOAD; returns the program fd (O_CLOEXEC). The verifier log goes into the error. */
int cg_devices_load_prog(const struct bpf_insn *insns, size_t n, msp_err *err);
