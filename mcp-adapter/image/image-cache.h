/* Images as prepared root filesystems: `oci:DIR[:TAG]` or `containers-storage:NAME`
 * unpacked once into a content-addressed cache (one directory per manifest digest, made
 * complete in a temporary directory and renamed into place) and reused by every later
 * start. Owner: image-cache.c. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "oci/oci.h"
#include "image/image-layout.h"

/* Where meson installs msp-mcp-unpack (mcp-adapter/meson.build sets it). */
#ifndef MCP_UNPACK_INSTALLED
#define MCP_UNPACK_INSTALLED "/usr/local/libexec/msp/msp-mcp-unpack"
#endif

typedef struct mcp_image_opts {
        const char *cache_dir;          /* made 0700 when missing */
        uint64_t max_bytes;             /* the unpacked size (image-unpack.h's budget) */
        const char *podman;             /* containers-storage: the podman that exports it */
        const char *unpack_helper;      /* msp-mcp-unpack (unpack-main.c), or NULL: not found */
} mcp_image_opts;

typedef struct mcp_image_rootfs {
        char *rootfs;                   /* <cache>/sha256-<hex>/rootfs */
        char *digest;                   /* the manifest's */
        bool unpacked;                  /* false: found in the cache */
        char **top_dirs;                /* "/srv"...: its top-level directories, NULL-terminated */
        char **top_files;               /* "/app.py"...: its top-level regular files, likewise */
        mcp_image_defaults defaults;
        bool has_user;                  /* the config names a User: its runs' ids (inside) */
        unsigned uid, gid;
} mcp_image_rootfs;

int mcp_image_prepare(const mcp_image_opts *opts, const char *ref, mcp_image_rootfs *ret,
                      msp_err *err);
void mcp_image_rootfs_done(mcp_image_rootfs *r);
/* What mcp_image_prepare needs of the cache dir, for --check: made (0700) when missing,
 * a directory msp-mcp can write. */
int mcp_image_cache_usable(const char *dir, msp_err *err);
