/* One image layer (a tar stream, optionally gzip or zstd) applied to a rootfs directory
 * through fds: whiteouts and opaque directories remove what lower layers put there; no
 * entry may leave the rootfs or pass through a symlink; device nodes are not created and
 * setuid/setgid bits are dropped; ownership is shifted into the sandbox's user namespace.
 * Owner: image-unpack.c. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "oci/oci.h"
#include "image/image-layout.h"

typedef struct mcp_unpack_budget {
        uint64_t max_bytes;             /* file contents + MCP_UNPACK_ENTRY_COST per entry */
        uint64_t used;
        bool chown;                     /* shift owners (needs CAP_CHOWN: msp-mcp as root) */
} mcp_unpack_budget;

#define MCP_UNPACK_ENTRY_COST 512u      /* what an entry costs the budget besides its data */

/* Apply the layer read from blob_fd to the directory root_fd, checking the blob as it
 * streams: each byte libarchive reads is hashed once on its way in (the rest of the file
 * after the archive's end too), and the layer is refused, naming its digest, unless those
 * bytes are exactly the size and sha256 the manifest names, whatever else failed. A
 * refused layer may have applied entries: the caller keeps the rootfs only on success. */
int mcp_image_unpack_layer(int root_fd, int blob_fd, const mcp_image_layer *layer,
                           mcp_unpack_budget *budget, msp_err *err);
