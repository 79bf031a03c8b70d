/* Cgroups: detect the host mode (unified, hybrid, legacy) and create, join, signal,
 * freeze-check and remove the container's cgroup in every mounted hierarchy.
 * Resource limits and the v2/v1 backends grow here (docs/CGROUPS.md). */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "ctx.h"
#include "err.h"

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
/* mkdir the path in every hierarchy; *ret_created tells whether msp made the leaf. */
int rt_cgroup_create(const char *path, bool *ret_created, msp_err *err);
int rt_cgroup_enter(const char *path, pid_t pid, msp_err *err);
/* Send sig to every process in the cgroup (cgroup.procs of each hierarchy). */
int rt_cgroup_signal_all(const char *path, int sig, msp_err *err);
/* Kill what is left, wait until empty (bounded), rmdir in every hierarchy. */
int rt_cgroup_destroy(const char *path, msp_err *err);
bool rt_cgroup_is_frozen(const char *path);
