/* Reading whole files with a size cap: config.json, the state dir's copies, update's
 * resources file. One implementation so every reader has the same limits and errors. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "err.h"

/* Read all of fd (which may be a pipe). `name` is used in messages. The buffer is
 * NUL-terminated; E2BIG past max bytes. */
int rt_read_fd_all(int fd, const char *name, size_t max, char **ret, size_t *ret_len,
                   msp_err *err);
/* Open dirfd/path (AT_FDCWD allowed), require a regular file, and read it all. With
 * nofollow a final symlink is refused (files msp itself wrote). */
int rt_read_file_at(int dirfd, const char *path, bool nofollow, size_t max, char **ret,
                    size_t *ret_len, msp_err *err);
