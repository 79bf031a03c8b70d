/* Resolving paths inside a container rootfs through fds, never by joining strings:
 * openat2(RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS), plus helpers to create the missing
 * components of a mount target with mkdirat() walks beneath the root fd. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "oci/oci.h"

/* openat2(rootfd, path, flags|O_CLOEXEC, RESOLVE_IN_ROOT|RESOLVE_NO_MAGICLINKS).
 * Returns an fd or -errno (ENOSYS when the kernel lacks openat2). */
int rt_open_in_root(int rootfd, const char *path, int flags, msp_err *err);
/* Like rt_open_in_root, creating missing parent directories (mode 0755) and the final
 * component (a directory when `dir`, else an empty regular file, mode 0644) if absent.
 * Every step is resolved beneath rootfd. Returns an O_PATH fd to the final object. */
int rt_mkpath_in_root(int rootfd, const char *path, bool dir, msp_err *err);
/* The raw openat2(dirfd, path, flags|O_CLOEXEC, resolve), retried on EAGAIN (a racing
 * rename); RESOLVE_* from <linux/openat2.h>. Returns an fd or -errno, sets no message. */
int rt_openat2(int dirfd, const char *path, int flags, unsigned long long resolve);
/* Copy the contents of directory srcdirfd into directory dstdirfd (tmpcopyup): regular
 * files, directories, symlinks and device/fifo/socket nodes, preserving owner, mode and
 * timestamps; nothing is followed (O_NOFOLLOW, AT_SYMLINK_NOFOLLOW). Hard links are
 * copied as separate files; xattrs and ACLs are not copied. Both must be O_RDONLY dir fds
 * and the destination must be private to the caller (e.g. a detached tmpfs). */
int rt_copy_tree(int srcdirfd, int dstdirfd, msp_err *err);
