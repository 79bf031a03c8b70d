/* Files a run created or changed under /workspace/out/, found through fds. Owner: engine. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "engine.h"
#include "err.h"

#define MCP_ARTIFACTS_MAX 64            /* files reported per run */
#define MCP_ARTIFACTS_DEPTH 4           /* directories below out/ */

/* Regular files under <workspace>/out/ whose mtime is >= since_ns (CLOCK_REALTIME), never
 * following a symlink. uri_prefix + path is each file's URI ("sandbox://runs/<id>/files/").
 * Files of at most max_image_bytes carry their data (images by content: PNG, JPEG, GIF,
 * SVG, with an image/ mime type). */
int mcp_artifacts_scan(int workspace_fd, uint64_t since_ns, const char *uri_prefix,
                       uint64_t max_image_bytes, mcp_artifact **ret, size_t *ret_n,
                       msp_err *err);
void mcp_artifacts_free(mcp_artifact *a, size_t n);
