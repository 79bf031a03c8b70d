/* msp-mcp-unpack: an image's layers applied to its rootfs (image-unpack.c), the only
 * program that links libarchive, so that untrusted archives are parsed outside msp-mcp.
 * msp-mcp runs it (image-cache.c) with only these fds open beyond 0-2:
 *
 *   msp-mcp-unpack ROOT_FD RESULT_FD MAX_BYTES OWNERS {DIGEST SIZE COMPRESSION BLOB_FD}...
 *
 * ROOT_FD is the rootfs directory, each BLOB_FD a layer blob that must be SIZE bytes
 * hashing to DIGEST (the manifest's descriptor; checked here, on the bytes unpacked) and
 * COMPRESSION tar, gzip or zstd; OWNERS "HOST_ID:SIZE" (the sandboxes' ids, sandbox-ids.h)
 * to shift owners into, or "-" to leave them (image-unpack.h). It writes "<result> <bytes
 * used>\n" to RESULT_FD, then on failure the message (naming the layer and entry). */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/landlock.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/base.h"
#include "image/image-unpack.h"
#include "oci/oci.h"
#include "sandbox/sandbox.h"

static int
parse_fd(const char *s)
{
        char *end;
        errno = 0;
        long v = strtol(s, &end, 10);
        return errno || *end || end == s || v < 3 || v > INT_MAX ? -1 : (int) v;
}

static int
parse_compression(const char *s, mcp_layer_compression *ret)
{
        static const char *const names[] = { [MCP_LAYER_TAR] = "tar", [MCP_LAYER_GZIP] = "gzip",
                                             [MCP_LAYER_ZSTD] = "zstd" };
        for (size_t i = 0; i < ARRAY_SIZE(names); i++)
                if (strcmp(s, names[i]) == 0) {
                        *ret = (mcp_layer_compression) i;
                        return 0;
                }
        return -EINVAL;
}

/* No new privileges, and (where the kernel has Landlock) no file reached by path outside
 * the rootfs: the blobs are open already, and a parser bug cannot reach the cache's other
 * entries or the host. Without Landlock, no_new_privs alone. */
static int
confine(int root_fd, msp_err *err)
{
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                return msp_err_sys(err, errno, "image unpack: no_new_privs");
        long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
        if (abi < 1)
                return 0;
        struct landlock_ruleset_attr attr = {
                .handled_access_fs = ((LANDLOCK_ACCESS_FS_MAKE_SYM << 1) - 1) |
                                     (abi >= 2 ? LANDLOCK_ACCESS_FS_REFER : 0),
        };
        _cleanup_close_ int rs = (int) syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0);
        struct landlock_path_beneath_attr beneath = { .allowed_access = attr.handled_access_fs,
                                                      .parent_fd = root_fd };
        if (rs < 0 || syscall(SYS_landlock_add_rule, rs, LANDLOCK_RULE_PATH_BENEATH, &beneath, 0) < 0 ||
            syscall(SYS_landlock_restrict_self, rs, 0) < 0)
                return msp_err_sys(err, errno, "image unpack: Landlock");
        return 0;
}

/* Every layer in order, the budget shared. */
static int
unpack_layers(int root_fd, char **layers, int n, mcp_unpack_budget *budget, msp_err *err)
{
        for (int i = 0; i + 3 < n; i += 4) {
                mcp_image_layer y = { 0 };
                char *end;
                errno = 0;
                y.size = strtoull(layers[i + 1], &end, 10);
                int blob_fd = parse_fd(layers[i + 3]);
                if (snprintf(y.digest, sizeof y.digest, "%s", layers[i]) >= (int) sizeof y.digest ||
                    errno || *end || end == layers[i + 1] ||
                    parse_compression(layers[i + 2], &y.compression) < 0 || blob_fd < 0)
                        return msp_err_set(err, EINVAL, "layer %.80s: bad size \"%.30s\", "
                                           "compression \"%.10s\" or fd \"%.20s\"", layers[i],
                                           layers[i + 1], layers[i + 2], layers[i + 3]);
                int r = mcp_image_unpack_layer(root_fd, blob_fd, &y, budget, err);
                close(blob_fd);
                if (r < 0)
                        return r;
        }
        return 0;
}

int
main(int argc, char **argv)
{
        int root_fd = argc > 5 ? parse_fd(argv[1]) : -1;
        int result_fd = argc > 5 ? parse_fd(argv[2]) : -1;
        if (root_fd < 0 || result_fd < 0 || (argc - 5) % 4 != 0) {
                fprintf(stderr, "usage: msp-mcp-unpack ROOT_FD RESULT_FD MAX_BYTES OWNERS "
                        "{DIGEST SIZE tar|gzip|zstd BLOB_FD}... (run by msp-mcp)\n");
                return 2;
        }
        msp_err err = { 0 };
        mcp_unpack_budget budget = { .max_bytes = strtoull(argv[3], NULL, 10),
                                     .chown = strcmp(argv[4], "-") != 0 };
        if (budget.chown && sscanf(argv[4], "%u:%u", &mcp_sandbox_map.host_id,
                                   &mcp_sandbox_map.size) != 2) {
                fprintf(stderr, "msp-mcp-unpack: OWNERS \"%s\" is not HOST_ID:SIZE\n", argv[4]);
                return 2;
        }
        int r = confine(root_fd, &err);
        if (r == 0)
                r = unpack_layers(root_fd, argv + 5, argc - 5, &budget, &err);
        char head[64];
        int n = snprintf(head, sizeof head, "%d %" PRIu64 "\n", r < 0 ? r : 0, budget.used);
        bool sent = mcp_write_all(result_fd, head, (size_t) n) == 0 &&
                    (r >= 0 || mcp_write_all(result_fd, err.msg, strlen(err.msg)) == 0);
        return sent && r >= 0 ? 0 : 1;
}
