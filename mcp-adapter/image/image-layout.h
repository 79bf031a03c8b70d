/* An OCI image layout directory (index.json, blobs/sha256/...) read into one image: its
 * manifest, layers and the config's run defaults. Every blob is checked against the
 * digest and size its descriptor names on the one read that uses it (blob-check.h): the
 * index, manifest and config here, each layer by msp-mcp-unpack as it unpacks it.
 * Owner: image-layout.c. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "oci/oci.h"

#define MCP_DIGEST_MAX 80               /* "sha256:" + 64 hex + NUL, with room */

typedef enum mcp_layer_compression {
        MCP_LAYER_TAR,
        MCP_LAYER_GZIP,
        MCP_LAYER_ZSTD,
} mcp_layer_compression;

typedef struct mcp_image_layer {
        char digest[MCP_DIGEST_MAX];
        uint64_t size;
        mcp_layer_compression compression;
} mcp_image_layer;

typedef struct mcp_image_layout {
        int dir_fd;                     /* the layout directory, O_PATH */
        char manifest_digest[MCP_DIGEST_MAX];
        char config_digest[MCP_DIGEST_MAX];     /* of config_json */
        size_t n_layers;
        mcp_image_layer *layers;        /* bottom first */
        char *config_json;              /* the verified config blob, NUL-terminated */
        size_t config_len;
} mcp_image_layout;

/* Open the layout at dir and choose its image: the manifest tagged tag
 * (org.opencontainers.image.ref.name), or the only one when tag is NULL; an image index
 * is followed to the manifest of this machine's linux platform. */
int mcp_image_layout_open(const char *dir, const char *tag, mcp_image_layout *ret, msp_err *err);
void mcp_image_layout_done(mcp_image_layout *l);

/* An fd (O_RDONLY, at offset 0) of the layer's blob: a regular file, as long as the
 * manifest says. Its content is not checked here: the one reader of it, msp-mcp-unpack,
 * hashes the stream it unpacks (mcp_image_unpack_layer), so that a blob rewritten while
 * open cannot pass a check done on an earlier read. */
int mcp_image_layer_open(const mcp_image_layout *l, const mcp_image_layer *layer, msp_err *err);

/* The image config's defaults of a run. env: NULL-terminated "KEY=VALUE"; workdir and user
 * NULL when unset. One malloc'd block each; free with mcp_image_defaults_done. */
typedef struct mcp_image_defaults {
        char **env;
        size_t n_env;
        char *workdir;
        char *user;
} mcp_image_defaults;

int mcp_image_defaults_parse(const char *config_json, size_t len, mcp_image_defaults *ret,
                             msp_err *err);
void mcp_image_defaults_done(mcp_image_defaults *d);
