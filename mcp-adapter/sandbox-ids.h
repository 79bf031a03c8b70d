/* The ids of every sandbox msp-mcp runs: the single definition shared by the bundle
 * (user namespace mappings, process.user) and the workspaces (ownership of what msp-mcp
 * writes for the sandbox). The sandbox's user namespace maps container ids 0..size-1 to
 * msp-mcp's ids host_id.. : as root, to host MCP_SANDBOX_ROOT_BASE.. (or --sandbox-ids),
 * ids no account and no /etc/subuid or /etc/subgid range may hold (a user granted them
 * could act as a sandbox's ids through newuidmap: signal its processes, read its
 * workspace); run by a user (rootless.c), to
 * the ids of msp-mcp's own user namespace, where 0 is the user (so that the runtime, as the
 * sandbox's root, reaches the state dir in the user's private directories) and 1.. its
 * subordinate range. The sandboxed process runs as MCP_SANDBOX_UID inside (0 when the map
 * has one id only: the user's), which is MCP_SANDBOX_HOST_UID outside (the owner of
 * workspace files). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "err.h"

/* 2^30: above the subordinate ranges useradd allots (login.defs SUB_UID_MAX 600100000). */
#define MCP_SANDBOX_ROOT_BASE 1073741824u

typedef struct mcp_sandbox_ids {
        unsigned host_id, size;
} mcp_sandbox_ids;

/* Set once at start, before the first run (mcp_sandbox_ids_claim as root, rootless.c run by
 * a user); never changed after. */
extern mcp_sandbox_ids mcp_sandbox_map;

/* As root: the 65536 ids from BASE become the sandboxes' host ids, after checking that no
 * /etc/subuid or /etc/subgid range and no account or group has any of them. The base once
 * settled, claiming it again returns 0 without reading them again; another base is checked
 * afresh. */
int mcp_sandbox_ids_claim(unsigned long base, msp_err *err);

/* One line of /etc/subuid or /etc/subgid, "who:start:count" (a name or a uid): false for
 * any other line; who is the line's first who_len bytes. */
bool mcp_subid_parse(const char *line, size_t *who_len, unsigned long *start,
                     unsigned long *count);

#define MCP_SANDBOX_HOST_BASE (mcp_sandbox_map.host_id)        /* of container id 0 */
#define MCP_SANDBOX_ID_COUNT (mcp_sandbox_map.size)
#define MCP_SANDBOX_UID (mcp_sandbox_map.size > 1000u ? 1000u : 0u)
#define MCP_SANDBOX_GID MCP_SANDBOX_UID
#define MCP_SANDBOX_HOST_UID (mcp_sandbox_map.host_id + MCP_SANDBOX_UID)
#define MCP_SANDBOX_HOST_GID (mcp_sandbox_map.host_id + MCP_SANDBOX_GID)

/* The ids a run's process has inside: MCP_SANDBOX_UID and GID, or an image's User. Its
 * workspace, program file and proxy socket belong to them shifted by the map. */
typedef struct mcp_run_ids {
        unsigned uid, gid;
} mcp_run_ids;
#define MCP_RUN_IDS_DEFAULT ((mcp_run_ids){ MCP_SANDBOX_UID, MCP_SANDBOX_GID })
#define MCP_HOST_ID(id) (mcp_sandbox_map.host_id + (id))
