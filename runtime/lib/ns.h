/* Namespaces: which to create and which to join by path, user-namespace id maps
 * (written by the parent through the trusted procfs), and time-namespace offsets. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "lib/ctx.h"
#include "oci/oci.h"

struct clone_args;

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
/* clone3(ca) from inside the user namespace at path (a short-lived helper joins it and
 * clones with CLONE_PARENT), so that a new pid namespace in ca->flags belongs to it. As
 * clone3: 0 in the child, its pid in the caller (with ca->pidfd filled), or -errno. */
long rt_ns_clone_in_userns(struct clone_args *ca, const char *path, msp_err *err);
/* In a joined user namespace: linux.uidMappings/gidMappings, when given, are exactly the
 * namespace's own (/proc/self/uid_map, gid_map). */
int rt_userns_check_maps(const oci_linux *lx, msp_err *err);
/* ---- the maps of a new user namespace (idmap.c) ---- */

/* Whether the caller needs newuidmap/newgidmap for lx's maps: it is not root of its own
 * namespace and maps more than its own euid and egid, one id each. */
bool rt_userns_needs_helpers(const rt_ctx *ctx, const oci_linux *lx);
/* Whether the container's user namespace gets setgroups "deny": a caller that is not
 * root of its own namespace and writes gid_map itself must deny it first (the kernel's
 * rule); through newgidmap it stays "allow", as with runc. The final steps apply
 * supplementary groups only where it is allowed. */
bool rt_userns_setgroups_denied(const rt_ctx *ctx, const oci_linux *lx);
/* Whether a container process may call setgroups(2): not where the runtime's own user
 * namespace says "deny" (every namespace made below it inherits that, and a process that
 * stays in it is bound by it), nor in a new namespace rt_userns_setgroups_denied denies. */
bool rt_userns_setgroups_allowed(const rt_ctx *ctx, const oci_linux *lx, bool in_userns);
/* Write uid_map/gid_map of `pid`, itself or through the helpers. A mapping the helpers
 * refuse is an error naming the field, the mapping and the helper's message. */
int rt_userns_write_maps(const rt_ctx *ctx, int procfd, pid_t pid, const oci_linux *lx,
                         msp_err *err);
/* The processes in the pid namespace of `init` and in every pid namespace below it (a
 * container process may nest its own), as host pids, sorted: what a container without a
 * cgroup has instead of cgroup.procs. A process the caller may not inspect is not
 * listed (nor could the caller signal it). EOPNOTSUPP when that is the runtime's own pid
 * namespace. */
int rt_pidns_pids(pid_t init, pid_t **ret, size_t *ret_n, msp_err *err);
/* unshare(CLONE_NEWTIME) in the caller (affects its future children only) and write
 * linux.timeOffsets to /proc/self/timens_offsets. */
int rt_timens_prepare_parent(int procfd, const oci_linux *lx, msp_err *err);
