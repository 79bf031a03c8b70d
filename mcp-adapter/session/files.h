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

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "oci/oci.h"
#include "sandbox/sandbox.h"

#define MCP_PATH_MAX 4096
#define MCP_FILE_MAX_BYTES (8u << 20)           /* one write_file */
#define MCP_LIST_MAX_ENTRIES 100000u            /* entries read from one directory */

typedef enum mcp_file_type { MCP_FILE_REG, MCP_FILE_DIR, MCP_FILE_SYMLINK, MCP_FILE_OTHER } mcp_file_type;

typedef struct mcp_dirent {
        char *name;
        mcp_file_type type;
        uint64_t size;
} mcp_dirent;

/* Check a path given with its length (the JSON layer's strings may hold NUL bytes):
 * 0 when the path is acceptable to the functions below. */
int mcp_path_check(const char *path, size_t len, msp_err *err);

/* What mcp_workspace_write_file() checks before it touches a workspace: the path (not the
 * workspace itself, no "..") and the size. */
int mcp_workspace_file_check(const char *path, size_t len, msp_err *err);

/* The confined write for a workspace given by fd (fresh per-run workspaces, and a
 * session's). Created directories and the file belong to the run's user ids (inside)
 * shifted by the map (sandbox-ids.h), modes 0755 / 0644 (0755 when executable); -EFBIG when
 * the file is over MCP_FILE_MAX_BYTES or the workspace has no room. */
int mcp_workspace_write_file(int workspace_fd, const char *path, const void *data, size_t len,
                             bool executable, mcp_run_ids ids, msp_err *err);
int mcp_workspace_read_file(int workspace_fd, const char *path, size_t max, char **ret,
                            size_t *ret_len, uint64_t *ret_size, bool *ret_truncated,
                            msp_err *err);
/* One directory, entries sorted by name, at most max_entries (*ret_truncated if more). */
int mcp_workspace_list_files(int workspace_fd, const char *path, size_t max_entries,
                             mcp_dirent **ret, size_t *ret_n, bool *ret_truncated,
                             msp_err *err);
void mcp_dirents_free(mcp_dirent *ents, size_t n);

/* The directory of files a run returns, below /workspace (artifacts.h). */
#define MCP_OUT_DIR "out"
/* Make MCP_OUT_DIR in the workspace, mode 0755, the run's user's (sandbox-ids.h), when it is
 * missing (the code may have removed it). Whatever has that name already is left as it is,
 * never followed; a workspace with no room goes without it (the code can still free some). */
int mcp_workspace_make_out(int workspace_fd, mcp_run_ids ids, msp_err *err);
