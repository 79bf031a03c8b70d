/* Confined file access inside a workspace given by a directory fd (a session's workspace or
 * a fresh per-run one). Owner: files.c. Used by session.c and the engine.
 *
 * Path rules (docs/MCP.md, "Sessions and workspaces"): a path is relative to /workspace; a
 * leading "/workspace/" or "/" is accepted and dropped; "." and empty components are
 * skipped; ".." is refused (-EXDEV); control characters and NUL are refused (-EINVAL);
 * at most MCP_PATH_MAX bytes, components at most NAME_MAX. Reads and listings follow
 * symlinks only inside the workspace (openat2 RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS |
 * RESOLVE_NO_XDEV); writes follow no symlink at all (RESOLVE_NO_SYMLINKS on every
 * component: -ELOOP). Only regular files are read or written (a FIFO or device never
 * blocks: O_NONBLOCK, then fstat). Errors name the path. */
#pragma once

#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "oci/err.h"
#include "session/session.h"

#define MCP_PATH_MAX 4096
#define MCP_FILE_MAX_BYTES (8u << 20)           /* one write_file */
#define MCP_LIST_MAX_ENTRIES 100000u            /* entries read from one directory */

/* Check a path given with its length (the JSON layer's strings may hold NUL bytes):
 * 0 when the path is acceptable to the functions below. */
int mcp_path_check(const char *path, size_t len, msp_err *err);

/* What mcp_workspace_write_file() checks before it touches a workspace: the path (not the
 * workspace itself, no "..") and the size. */
int mcp_workspace_file_check(const char *path, size_t len, msp_err *err);

/* mcp_workspace_write_file() is declared in session.h. Created directories and the file
 * belong to the run's user (sandbox-ids.h), modes 0755 / 0644 (0755 when executable);
 * -EFBIG when the file is over MCP_FILE_MAX_BYTES or the workspace has no room. */
int mcp_workspace_read_file(int workspace_fd, const char *path, size_t max, char **ret,
                            size_t *ret_len, uint64_t *ret_size, bool *ret_truncated,
                            msp_err *err);
/* One directory, entries sorted by name, at most max_entries (*ret_truncated if more). */
int mcp_workspace_list_files(int workspace_fd, const char *path, size_t max_entries,
                             mcp_dirent **ret, size_t *ret_n, bool *ret_truncated,
                             msp_err *err);

/* The directory of files a run returns, below /workspace (artifacts.h). */
#define MCP_OUT_DIR "out"
/* Make MCP_OUT_DIR in the workspace, mode 0755, the run's user's (sandbox-ids.h), when it is
 * missing (the code may have removed it). Whatever has that name already is left as it is,
 * never followed; a workspace with no room goes without it (the code can still free some). */
int mcp_workspace_make_out(int workspace_fd, mcp_run_ids ids, msp_err *err);

/* Remove name (a file or a tree) under dirfd without following symlinks or crossing into
 * other mounts (a mount point inside fails with -EBUSY). -ENOENT is success. */
int mcp_remove_tree_at(int dirfd, const char *name, msp_err *err);

/* All len bytes to fd (EINTR retried): 0 or -errno. */
int mcp_write_all(int fd, const void *data, size_t len);

/* name below dir_fd opened for readdir (O_NOFOLLOW), or NULL with errno. */
DIR *mcp_image_opendir_at(int dir_fd, const char *name);

/* The absolute directory path and its missing parents, each made with mode. */
int mcp_mkdir_parents(const char *path, mode_t mode, msp_err *err);

/* A new file name under dirfd (O_EXCL: an existing one or a symlink is -EEXIST) holding
 * all of data; err names the file. The server's own files: bundles, the instance, images. */
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
