/* Device nodes in the container's /dev: the default set (null zero full random urandom
 * tty), linux.devices, the /dev/fd and stdio symlinks, /dev/ptmx, /dev/shm and /dev/pts.
 * Everything is created through fds resolved beneath the rootfs (CVE-2026-41579 family). */
#pragma once

#include <stdbool.h>

#include "err.h"
#include "spec.h"

/* Create the default devices and every linux.devices entry beneath rootfd/dev.
 * `in_userns`: mknod is not allowed, so bind-mount the host node onto an empty file. */
int rt_devices_create(int rootfd, const oci_linux *lnx, bool in_userns, msp_err *err);
/* The /dev/fd, stdin, stdout, stderr, ptmx symlinks and the /dev/shm, /dev/pts dirs,
 * each only when missing. */
int rt_devices_links(int rootfd, msp_err *err);
