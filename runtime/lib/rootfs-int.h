/* Internal to the rootfs module (rootfs.c, rootfs-finalize.c, rootfs-cgroup.c, devices.c): the
 * new-mount-API primitives every mount goes through. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "oci/err.h"
#include "lib/mount-opts.h"
#include "lib/rootfs.h"

/* move_mount() a detached mount (from fsmount/open_tree) onto the object targetfd
 * refers to. Returns 0 or -errno; no message. */
int rt_mount_attach(int mfd, int targetfd);
/* mount_setattr(mfd, "", AT_EMPTY_PATH [| AT_RECURSIVE]). 0 or -errno; no message. */
int rt_mount_setattr(int mfd, bool recursive, uint64_t set, uint64_t clr, uint64_t propagation);
/* A detached mount of a new `type` filesystem: fsopen, "source", the superblock flags of
 * `o` (may be NULL), each item of `data`, create, fsmount with MOUNT_ATTR_* `attrs`.
 * Messages start with `label` and carry the kernel's fs_context log. */
int rt_mount_new_fs(const char *label, const char *type, const char *source, const char *data,
                    const rt_mount_opts *o, uint64_t attrs, msp_err *err);
/* Is the mount a tmpfs or /dev one that says "ro"? Setup mounts it writable; finalize
 * makes it read-only after everything below it exists (as runc). */
bool rt_rootfs_ro_last(const oci_mount *m);
/* The cgroup mount of a v1/hybrid host (rootfs-cgroup.c): a tmpfs attached onto
 * targetfd with, per v1 hierarchy, the container's own cgroup at its root. `attrs` are
 * the config's MOUNT_ATTR_* (RDONLY only when it says "ro"). Returns the tmpfs mount's
 * fd (for its propagation). */
int rt_rootfs_mount_cgroup_v1(const rt_rootfs_params *p, const char *label, int targetfd,
                              uint64_t attrs, msp_err *err);
