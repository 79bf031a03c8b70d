/* The container's filesystem: rootfs propagation and self-bind, config mounts (all types
 * podman/runc use, options incl. recursive mount_setattr attributes and tmpcopyup),
 * default and configured devices, /dev symlinks and ptmx, the console, pivot_root,
 * maskedPaths, readonlyPaths and root.readonly. Every path inside the rootfs is resolved
 * through fds (pathres.h); mounts are made onto fds, never re-resolved strings. */
#pragma once

#include <stdbool.h>

#include "lib/ctx.h"
#include "oci/oci.h"

typedef struct rt_rootfs_params {
        const oci_spec *spec;           /* borrowed */
        const char *rootfs;             /* absolute host path of root.path */
        const char *bundle;             /* absolute; relative mount sources resolve here */
        bool in_userns;                 /* new user ns: mknod is impossible, bind host nodes */
        bool has_cgroupns;              /* cgroup mounts show the namespace root */
        bool no_pivot;
        const int *src_fds;             /* NULL, or per mount: its bind source opened by
                                         * the runtime (mountsrc.h), -1 where none */
        const rt_ctx *ctx;              /* --debug: a line per mount */
} rt_rootfs_params;

/* Child, inside the new mount namespace, before pivot_root: set propagation of / from
 * linux.rootfsPropagation (default rslave), bind the rootfs onto itself, perform every
 * config mount in order, create default devices (null zero full random urandom tty)
 * plus linux.devices, the /dev/fd, stdin, stdout, stderr, ptmx symlinks and /dev/shm if
 * missing. Returns an O_PATH|O_DIRECTORY fd of the rootfs mount in *ret_rootfd. */
int rt_rootfs_setup_child(const rt_rootfs_params *p, int *ret_rootfd, msp_err *err);
/* pivot_root into rootfd and detach the old root (or MS_MOVE + chroot with no_pivot).
 * Afterwards "/" is the container root and the cwd is "/". */
int rt_rootfs_pivot_child(int rootfd, bool no_pivot, msp_err *err);
/* After pivot_root: maskedPaths (verified /dev/null or a read-only empty tmpfs for
 * directories), readonlyPaths (recursive read-only bind), the "ro" of tmpfs and /dev
 * mounts (writable until now), root.readonly, and the final propagation of "/". */
int rt_rootfs_finalize_child(const rt_rootfs_params *p, msp_err *err);

