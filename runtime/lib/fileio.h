/* Reading whole files with a size cap: config.json, the state dir's copies, update's
 * resources file, exec's process file; writing a file atomically (the state dir's files,
 * the --pid-file). One implementation so every reader has the same limits and errors. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "oci/oci.h"

/* Read all of fd (which may be a pipe). `name` is used in messages. The buffer is
 * NUL-terminated; E2BIG past max bytes. */
int rt_read_fd_all(int fd, const char *name, size_t max, char **ret, size_t *ret_len,
                   msp_err *err);
/* Open dirfd/path (AT_FDCWD allowed) and read it all. With nofollow (files msp itself
 * wrote) a final symlink is refused and the file must be a regular one; without (a path
 * the caller gave) it may also be a pipe, as `--process <(...)` or /dev/fd/N. */
int rt_read_file_at(int dirfd, const char *path, bool nofollow, size_t max, char **ret,
                    size_t *ret_len, msp_err *err);
/* Write pid in decimal to path: replaced atomically (a temporary file renamed over it),
 * or, for /dev/fd/N and /proc/self/fd/N (the caller's open fd: a pipe, a file), written
 * to that fd's file in place. */
int rt_write_pid_file(const char *path, pid_t pid, msp_err *err);
/* Write a file atomically relative to dirfd (AT_FDCWD allowed): temp + rename. */
int rt_write_file_atomic(int dirfd, const char *path, const char *data, size_t len, mode_t mode,
                         msp_err *err);
/* The same, but an existing regular file at path is swapped out with
 * renameat2(RENAME_EXCHANGE) and unlinked rather than renamed over. On ext4 a rename over
 * an existing file (auto_da_alloc) starts writeback of the new data, so its blocks are
 * allocated at once and freed again, with a discard where the filesystem is mounted so,
 * by the next save or the delete (docs/PERFORMANCE.md, "state.json by RENAME_EXCHANGE",
 * has the cost), for files whose contents die with the processes they describe. For the
 * private state directory (state.json). */
int rt_write_file_exchange(int dirfd, const char *path, const char *data, size_t len, mode_t mode,
                           msp_err *err);
