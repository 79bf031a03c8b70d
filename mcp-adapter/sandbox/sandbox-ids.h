/* The ids of every sandbox msp-mcp runs: the single definition shared by the bundle
 * (user namespace mappings, process.user) and the workspaces (ownership of what msp-mcp
 * writes for the sandbox). A sandbox's user namespace maps container ids 0..size-1 to
 * msp-mcp's ids from its slice's base (sandbox-slices.h): as root, the pool from
 * MCP_SANDBOX_ROOT_BASE (or --sandbox-ids): the storage range host_id..host_id+size-1
 * (image trees are unpacked into it; no sandbox runs as it) and one range of size ids per
 * slice above it; ids no account and no /etc/subuid or /etc/subgid range may hold (a user
 * granted them could act as a sandbox's ids through newuidmap: signal its processes, read
 * its workspace); run by a user (rootless.c), every sandbox maps to
 * the ids of msp-mcp's own user namespace, where 0 is the user (so that the runtime, as the
 * sandbox's root, reaches the state dir in the user's private directories) and 1.. its
 * subordinate range. The sandboxed process runs as MCP_SANDBOX_UID inside (0 when the map
 * has one id only: the user's), its slice's base + MCP_SANDBOX_UID outside (the owner of
 * its workspace files); MCP_SANDBOX_HOST_UID is that id in the storage range. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "oci/oci.h"

/* 2^30: above the subordinate ranges useradd allots (login.defs SUB_UID_MAX 600100000). */
#define MCP_SANDBOX_ROOT_BASE 1073741824u

typedef struct mcp_sandbox_ids {
        unsigned host_id, size;
        unsigned slices;                /* ranges of size ids above the storage range */
} mcp_sandbox_ids;

/* Set once at start, before the first run (mcp_sandbox_ids_claim as root, rootless.c run by
 * a user); never changed after. */
extern mcp_sandbox_ids mcp_sandbox_map;

/* As root: the 65536 * (1 + slices) ids from BASE become the sandboxes' host ids, after
 * checking that no /etc/subuid or /etc/subgid range and no account or group has any of
 * them. The pool once settled, claiming it again returns 0 without reading them again;
 * another base or size is checked afresh. */
int mcp_sandbox_ids_claim(unsigned long base, unsigned slices, msp_err *err);
/* More slices than the 32-bit id space holds of 65536 ids each: a count above it is
 * refused by the claim as root and shares one slice run by a user, as any large count. */
#define MCP_SANDBOX_SLICES_MAX 65536u
/* The slices a server needs: one per run that may be alive at once (running, or exited
 * and being deleted: twice --max-concurrent) and one per session; MCP_SANDBOX_SLICES_MAX at
 * most. */
unsigned mcp_sandbox_slices_needed(unsigned max_concurrent, unsigned max_sessions);

/* One line of /etc/subuid or /etc/subgid, "who:start:count" (a name or a uid): false for
 * any other line; who is the line's first who_len bytes. */
bool mcp_subid_parse(const char *line, size_t *who_len, unsigned long *start,
                     unsigned long *count);

#define MCP_SANDBOX_HOST_BASE (mcp_sandbox_map.host_id)        /* of container id 0 */
/* As root, the host id of container id 0 in slice `slot`. */
#define MCP_SANDBOX_SLICE_BASE(slot) (mcp_sandbox_map.host_id + mcp_sandbox_map.size * ((slot) + 1u))
#define MCP_SANDBOX_ID_COUNT (mcp_sandbox_map.size)
#define MCP_SANDBOX_UID (mcp_sandbox_map.size > 1000u ? 1000u : 0u)
#define MCP_SANDBOX_GID MCP_SANDBOX_UID
#define MCP_SANDBOX_HOST_UID (mcp_sandbox_map.host_id + MCP_SANDBOX_UID)
#define MCP_SANDBOX_HOST_GID (mcp_sandbox_map.host_id + MCP_SANDBOX_GID)

/* The ids a run's process has inside: MCP_SANDBOX_UID and GID, or an image's User, and the
 * host id of its container id 0 (its slice's base) and how many it maps. Its workspace, program file and proxy
 * socket belong to them shifted by that base. */
typedef struct mcp_run_ids {
        unsigned uid, gid;
        unsigned base, count;           /* the ids its namespace maps: count from base */
} mcp_run_ids;
#define MCP_RUN_IDS_IN(b, n) ((mcp_run_ids){ MCP_SANDBOX_UID, MCP_SANDBOX_GID, (b), (n) })
#define MCP_RUN_IDS_AT(b) MCP_RUN_IDS_IN(b, MCP_SANDBOX_ID_COUNT)
/* In the storage range (the unit tests' sandboxes, and every one run by a user). */
#define MCP_RUN_IDS_DEFAULT MCP_RUN_IDS_AT(MCP_SANDBOX_HOST_BASE)
#define MCP_HOST_UID_OF(ids) ((ids).base + (ids).uid)
#define MCP_HOST_GID_OF(ids) ((ids).base + (ids).gid)
