/* Cgroups: detect the host mode (unified, hybrid, legacy), choose the container's cgroup
 * and create, join, signal, freeze, limit and remove it in every mounted hierarchy
 * (docs/CGROUPS.md). What lib/cgroup/ offers the runtime, with cgroup-join.h (the join
 * across the fork); lib/cgroup/ itself uses only oci/. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "oci/oci.h"
#include "lib/cgroup/cgroup-join.h"

typedef enum rt_cgroup_mode {
        RT_CGROUP_UNIFIED,      /* cgroup2 at /sys/fs/cgroup */
        RT_CGROUP_HYBRID,       /* v1 controllers + cgroup2 at /sys/fs/cgroup/unified */
        RT_CGROUP_LEGACY,       /* v1 only */
} rt_cgroup_mode;

int rt_cgroup_mode_detect(rt_cgroup_mode *ret, msp_err *err);
/* The cgroup path for a container: linux.cgroupsPath absolute as is, relative under
 * "/msp", the systemd form "slice:prefix:name" as "/<slice path>/<prefix>-<name>.scope",
 * default "/msp/<id>". */
int rt_cgroup_path_for(const char *cgroups_path, const char *id, char *buf, size_t bufsz,
                       msp_err *err);
/* Who asks rt_cgroup_choose_path: a rootless caller or not, and whether systemd is the
 * cgroup manager (--systemd-cgroup, --cgroup-manager systemd). */
typedef struct rt_cgroup_caller {
        bool rootless;
        bool systemd;
} rt_cgroup_caller;
/* The container's cgroup path into buf, or "" for none (cgroup-path.c). Root, or an
 * explicit linux.cgroupsPath: rt_cgroup_path_for. Rootless without one: runc's
 * placement, "<the caller's cgroup2 cgroup>/<id>" (the parent of a .scope), only in a
 * subtree delegated to the caller on a unified host; with none, "" and why says why
 * (for the caller's debug log), and a limit in linux.resources (devices aside) is an
 * error naming it and why. Rootless "slice:prefix:name": below the caller's systemd user
 * manager (user@UID.service). Rootless with systemd (default or systemd-form path): a
 * leaf below a transient scope the user's manager made with this process in it, which
 * moved on to a leaf of its own. */
int rt_cgroup_choose_path(const rt_cgroup_caller *who, const oci_linux *lx, const char *id,
                          char *buf, size_t bufsz, char *why, size_t whysz, msp_err *err);
/* Rootless --systemd-cgroup: below the transient scope the user's manager made, the
 * container's leaf and the leaf the creating msp moves itself to (cgroup-rootless.c). */
#define RT_CGROUP_SCOPE_LEAF "container"
#define RT_CGROUP_SCOPE_SELF "msp-create"
/* The unit of a container's cgroup made that way ("/.../NAME.scope/container"): stop it
 * through the user's manager. 0 when the path is no such cgroup. */
int rt_cgroup_stop_scope(const char *cgroup_path, msp_err *err);
/* Which hierarchies a call works on: RT_CGROUP_V2, RT_CGROUP_V1, RT_CGROUP_ALL (cgroup-join.h). */
/* What create must know before it makes anything, from one walk of the hierarchies:
 * whether the leaf exists in the cgroup2 one and in any v1 one. Fails (EBUSY,
 * "container's cgroup unexpectedly frozen") when the leaf, or the ancestor a new leaf
 * would be made in, is frozen (v2 cgroup.events, v1 freezer.state), and (EINVAL) for a
 * hierarchy root or a path with "..". */
typedef struct rt_cgroup_facts {
        bool exists_v2;
        bool exists_v1;
} rt_cgroup_facts;
int rt_cgroup_probe(const char *path, rt_cgroup_facts *ret, msp_err *err);
/* rt_cgroup_probe, then mkdir the path in every hierarchy; *ret_created tells whether
 * msp made the leaf. */
int rt_cgroup_create(const char *path, bool *ret_created, msp_err *err);
/* mkdir the path in the hierarchies `which` names, after rt_cgroup_probe; *ret_created
 * is set when msp made a leaf and left alone otherwise (so two calls accumulate). */
int rt_cgroup_create_in(const char *path, unsigned which, bool *ret_created, msp_err *err);
int rt_cgroup_enter(const char *path, pid_t pid, msp_err *err);

/* exec --cgroup (cgroup-sub.c), as runc-exec(8): "PATH" for every hierarchy ("/" is the
 * container's cgroup itself) or, repeatable, "CONTROLLER[,CONTROLLER...]:PATH" for those
 * v1 hierarchies; PATH is below the container's cgroup and must exist. */
#define RT_CGROUP_SUB_MAX 16
typedef struct rt_cgroup_sub {
        const char *all;                /* the sub path of every hierarchy, or NULL */
        size_t n;
        struct {
                char ctrl[64];          /* "cpu", "name=systemd" */
                const char *path;       /* borrowed from the argument */
                const char *arg;        /* the whole argument, for messages */
                bool known;
        } v[RT_CGROUP_SUB_MAX];
} rt_cgroup_sub;
/* Parse the arguments (borrowed: they must outlive *ret). Refuses a malformed one, a
 * path that leaves the container's cgroup and a controller no mounted v1 hierarchy
 * has, naming the argument. */
int rt_cgroup_sub_parse(char *const *args, size_t n, rt_cgroup_sub *ret, msp_err *err);
/* rt_cgroup_enter into path + each hierarchy's sub path (sub NULL: path itself). */
int rt_cgroup_enter_sub(const char *path, const rt_cgroup_sub *sub, pid_t pid, msp_err *err);
/* Send sig to every process in the cgroup and its sub-cgroups: SIGKILL through
 * cgroup.kill on v2, else each pid once (the union of every hierarchy's cgroup.procs).
 * A missing cgroup is not an error. */
int rt_cgroup_signal_all(const char *path, int sig, msp_err *err);
/* Kill what is left (cgroup.kill on v2), wait until empty (cgroup.events on v2, bounded
 * retries on v1), rmdir the cgroup and any sub-cgroups in every hierarchy. Only for a
 * cgroup msp created (state cgroup_owned); "/" and paths with ".." are refused. */
int rt_cgroup_destroy(const char *path, msp_err *err);
bool rt_cgroup_is_frozen(const char *path);

/* ---- a live container's cgroup (cgroup-ctl.c) ---- */

/* Freeze (pause) or thaw (resume) every process in the cgroup and wait until the
 * kernel says it is done: v2 writes cgroup.freeze and waits for "frozen 1|0" in
 * cgroup.events (poll, no sleep loop); v1 writes freezer.state until it reads back
 * FROZEN/THAWED (FREEZING is retried with back-off). At most 5 s; a freeze that times
 * out is undone. v1 needs the freezer controller. */
int rt_cgroup_freeze(const char *path, bool frozen, msp_err *err);
/* The pids in the cgroup and its sub-cgroups, sorted, each once (malloc'd; *ret is
 * NULL when there is none). ENOENT: the cgroup exists in no hierarchy. */
int rt_cgroup_pids(const char *path, pid_t **ret, size_t *ret_n, msp_err *err);
/* Fill the cpu, memory and pids parts of *ret (the caller zeroes it and sets id).
 * Files of a controller that is missing leave their fields at 0. */
int rt_cgroup_stats(const char *path, oci_stats *ret, msp_err *err);
/* The number of OOM kills so far (memory.events oom_kill on v2, memory.oom_control on
 * v1); -ENOENT when the memory controller is not there. */
int rt_cgroup_oom_kills(const char *path, uint64_t *ret);
/* Write linux.resources into the existing cgroup at path: the v2 backend on a unified
 * host, the v1 one on hybrid and legacy hosts (hugetlb and unified keys go to the v2
 * hierarchy of a hybrid host when v1 has no such controller). Adds nothing implicit;
 * also used on a live cgroup (update). Errors name the config field or the file. */
int rt_cgroup_apply_resources(const char *path, const oci_resources *res, msp_err *err);
/* The fields of res that are accepted and not applied, as runc 1.1 does: the deprecated
 * kernel memory limits (the kernel no longer enforces memory.kmem.limit_in_bytes, and v2
 * has neither). A message for the caller's warning, or NULL. */
const char *rt_cgroup_ignored_fields(const oci_resources *res);
/* rt_cgroup_apply_resources on a live cgroup, all or nothing: when the kernel refuses
 * a write, the files written before it are restored (last first) and the error names
 * the config field, the file and the value, and what could not be restored. */
int rt_cgroup_update(const char *path, const oci_resources *res, msp_err *err);
/* The device rules of a new container, as runc composes them: linux.resources.devices
 * in order, then runc's implicit rules (mknod of any c and b node; null, random, full,
 * tty, zero and urandom unless linux.devices lists the same path; pts, ptmx, tun).
 * linux.devices itself adds no rule. *ret is malloc'd (shallow copies of the config's). */
int rt_cgroup_device_rules(const oci_linux *lx, oci_device_cgroup **ret, size_t *ret_n,
                           msp_err *err);
