/* Device nodes in the container's /dev: the default set (null zero full random urandom
 * tty), linux.devices, the /dev/fd and stdio symlinks, /dev/ptmx, /dev/shm and /dev/pts.
 * Everything is created through fds resolved beneath the rootfs; a symlink anywhere in
 * the parent path of a device is refused (CVE-2026-41579 / CVE-2026-47766), and the final
 * component is made with mknodat()/symlinkat(), which never follow a symlink. */
#pragma once

#include <stdbool.h>

#include "oci/oci.h"

/* Create every linux.devices entry (paths must be under /dev) and, when `defaults`, the
 * default devices that linux.devices does not override. An existing non-directory at a
 * device path is replaced. `in_userns`: mknod is not allowed, so the host node of the
 * same path is bind-mounted onto an empty file instead (after checking its type and
 * major:minor). Runs before pivot_root (the host /dev must be reachable). */
int rt_devices_create(int rootfd, const oci_linux *lnx, bool defaults, bool in_userns,
                      msp_err *err);
/* The /dev/fd, stdin, stdout, stderr, ptmx symlinks and the /dev/shm, /dev/pts dirs,
 * each only when missing. */
int rt_devices_links(int rootfd, msp_err *err);
/* Open <root>/<dir> as an O_PATH directory, refusing symlinks in every component and
 * creating it (mode 0755) when missing. */
int rt_devices_open_dir(int rootfd, const char *dir, msp_err *err);
/* Bind the pty slave (an fd from TIOCGPTPEER) onto <rootfs>/dev/console. */
int rt_devices_mount_console_child(int rootfd, int pty_slave_fd, msp_err *err);
