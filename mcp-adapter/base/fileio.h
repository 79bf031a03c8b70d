/* Generic file helpers of the server's own files (bundles, the instance, images, /proc and
 * /sys): whole writes, whole small reads, trees removed without following symlinks or
 * crossing mounts, openat2 with its retry, the check of a directory of the user's own. Owner: fileio.c. They know nothing of
 * workspaces (session/files.h confines those). */
#pragma once

#include <dirent.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "oci/oci.h"

/* openat2(2) with O_CLOEXEC added, retried on EAGAIN (a concurrent rename raced a
 * RESOLVE_IN_ROOT lookup): the fd, or -errno. */
int mcp_openat2(int dirfd, const char *path, uint64_t flags, uint64_t mode, uint64_t resolve);

/* Remove name (a file or a tree) under dirfd without following symlinks or crossing into
 * other mounts (a mount point inside fails with -EBUSY). -ENOENT is success. */
int mcp_remove_tree_at(int dirfd, const char *name, msp_err *err);

/* All len bytes to fd (EINTR retried): 0 or -errno. */
int mcp_write_all(int fd, const void *data, size_t len);

/* name below dir_fd opened for readdir (O_NOFOLLOW), or NULL with errno. */
DIR *mcp_image_opendir_at(int dir_fd, const char *name);

/* path is a directory of this user's own: not a symlink (lstat), owned by the effective
 * uid, none of the mode bits in `refused` set (0022: no one else may write; 0077: no one
 * else may enter). 0, or -errno of lstat, -ENOTDIR, -EPERM (not the user's or too open);
 * *st holds what lstat saw. */
int mcp_own_dir(const char *path, mode_t refused, struct stat *st);

/* The absolute directory path and its missing parents, each made with mode. */
int mcp_mkdir_parents(const char *path, mode_t mode, msp_err *err);

/* A new file name under dirfd (O_EXCL: an existing one or a symlink is -EEXIST) holding
 * all of data; err names the file. The server's own files: bundles, the instance, images. */
/* Both ends of a pipe (or socket pair) closed, the -1 ones skipped. */
void mcp_close_pair(int p[2]);

int mcp_write_new_at(int dirfd, const char *name, const void *data, size_t len, mode_t mode,
                     msp_err *err);

/* An existing file (one of /proc's) given all of text in one write, as /proc files want:
 * 0, or -errno (-EIO for a short write). */
int mcp_write_text(const char *path, const char *text);
/* The start of a small file (one of /proc's or /sys's) in one read, NUL-terminated in buf
 * ("" on failure): its length, or -errno. */
ssize_t mcp_read_text(const char *path, char *buf, size_t size);

/* What fd holds from its offset, at most max bytes (a caller that refuses more passes its
 * limit + 1 and compares), in a malloc'd copy with a NUL after it. */
int mcp_read_fd(int fd, size_t max, char **ret, size_t *ret_len, msp_err *err);
