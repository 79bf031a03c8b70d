/* Namespaces: which to create and which to join by path, user-namespace id maps
 * (written by the parent through the trusted procfs), and time-namespace offsets. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "ctx.h"
#include "err.h"
#include "spec.h"

typedef struct rt_ns_plan {
        int new_flags;                          /* CLONE_NEW* to create */
        const char *join[OCI_NS_TYPE_MAX];      /* path to join, or NULL (borrowed) */
        bool has[OCI_NS_TYPE_MAX];              /* listed in the config at all */
} rt_ns_plan;

int rt_ns_clone_flag(oci_ns_type t);
/* --debug: the namespaces a create makes and joins ("namespaces: new pid,mount; join
 * network=/var/run/netns/x"); exec's (one fd per type it joins, -1 for none). */
void rt_ns_plan_debug(const rt_ctx *ctx, const char *id, const rt_ns_plan *p);
void rt_ns_fds_debug(const rt_ctx *ctx, const char *id, pid_t pid, const int fds[OCI_NS_TYPE_MAX]);
int rt_ns_plan_make(const oci_spec *spec, rt_ns_plan *ret, msp_err *err);
/* Open the namespace file, check its type (NS_GET_NSTYPE) and setns into it. */
int rt_ns_join(oci_ns_type t, const char *path, msp_err *err);
/* Write uid_map/gid_map of `pid` (setgroups "deny" first when deny_setgroups). */
int rt_userns_write_maps(int procfd, pid_t pid, const oci_linux *lx, bool deny_setgroups,
                         msp_err *err);
/* unshare(CLONE_NEWTIME) in the caller (affects its future children only) and write
 * linux.timeOffsets to /proc/self/timens_offsets. */
int rt_timens_prepare_parent(int procfd, const oci_linux *lx, msp_err *err);
