/* Files a run created or changed under /workspace/out/, found through fds. Owner: engine. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "engine/engine-types.h"
#include "oci/oci.h"

#define MCP_ARTIFACTS_MAX 64            /* files reported per run */
#define MCP_ARTIFACTS_DEPTH 4           /* directories below out/ */

#define MCP_ARTIFACTS_SNAP_MAX 4096     /* files remembered before a run */

/* The regular files under out/ before a run, by inode and ctime: a file the run writes,
 * replaces or creates differs (ctime cannot be set from user space, unlike mtime, and no
 * wall clock comparison is involved). */
typedef struct mcp_artifacts_snap {
        size_t n;
        struct mcp_artifacts_seen { uint64_t ino, ctime_ns; } *seen;
} mcp_artifacts_snap;

int mcp_artifacts_snapshot(int workspace_fd, mcp_artifacts_snap *ret, msp_err *err);
void mcp_artifacts_snap_done(mcp_artifacts_snap *snap);

/* Regular files under <workspace>/out/ that are not in before (NULL: all), never
 * following a symlink. uri_prefix + path is each file's URI ("sandbox://runs/<id>/files/").
 * Files of at most max_image_bytes carry their data (images by content: PNG, JPEG, GIF,
 * SVG, with an image/ mime type). */
int mcp_artifacts_scan(int workspace_fd, const mcp_artifacts_snap *before,
                       const char *uri_prefix, uint64_t max_image_bytes, mcp_artifact **ret,
                       size_t *ret_n, msp_err *err);
void mcp_artifacts_free(mcp_artifact *a, size_t n);
