/* The new mount API primitives every mount of the container's filesystem goes through
 * (rootfs.c, rootfs-finalize.c, rootfs-cgroup.c, devices.c): a detached mount is made
 * (fsopen ... fsmount) or cloned (open_tree), gets its attributes (mount_setattr), and is
 * attached onto an fd (move_mount). No path is looked up. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "lib/mount-opts.h"
#include "oci/oci.h"

/* move_mount() a detached mount (from fsmount/open_tree) onto the object targetfd
 * refers to. Returns 0 or -errno; no message. */
int rt_mount_attach(int mfd, int targetfd);
/* mount_setattr(mfd, "", AT_EMPTY_PATH [| AT_RECURSIVE]). 0 or -errno; no message. */
int rt_mount_setattr(int mfd, bool recursive, uint64_t set, uint64_t clr, uint64_t propagation);
/* Bind the object `srcfd` refers to (an O_PATH fd, a directory, a tty from TIOCGPTPEER,
 * ...) onto the object `targetfd` refers to, with open_tree(OPEN_TREE_CLONE |
 * AT_EMPTY_PATH) + move_mount. */
int rt_mount_bind_fd(int srcfd, int targetfd, bool recursive, msp_err *err);
/* A detached mount of a new `type` filesystem: fsopen, "source", the superblock flags of
 * `o` (may be NULL), each item of `data`, create, fsmount with MOUNT_ATTR_* `attrs`.
 * Messages start with `label` and carry the kernel's fs_context log. */
int rt_mount_new_fs(const char *label, const char *type, const char *source, const char *data,
                    const rt_mount_opts *o, uint64_t attrs, msp_err *err);
