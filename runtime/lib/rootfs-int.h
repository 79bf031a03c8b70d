/* Internal to the rootfs module (rootfs.c, rootfs-finalize.c, rootfs-cgroup.c): what
 * the files share besides the mount primitives of mount-api.h. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "oci/oci.h"
#include "lib/mount-api.h"
#include "lib/rootfs.h"

/* Is the mount a tmpfs or /dev one that says "ro"? Setup mounts it writable; finalize
 * makes it read-only after everything below it exists (as runc). */
bool rt_rootfs_ro_last(const oci_mount *m);
/* The cgroup mount of a v1/hybrid host (rootfs-cgroup.c): a tmpfs attached onto
 * targetfd with, per v1 hierarchy, the container's own cgroup at its root. `attrs` are
 * the config's MOUNT_ATTR_* (RDONLY only when it says "ro"). Returns the tmpfs mount's
 * fd (for its propagation). */
int rt_rootfs_mount_cgroup_v1(const rt_rootfs_params *p, const char *label, int targetfd,
                              uint64_t attrs, msp_err *err);
