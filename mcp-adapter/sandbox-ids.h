/* The ids of every sandbox msp-mcp runs: the single definition shared by the bundle
 * (user namespace mappings, process.user) and the workspaces (ownership of what msp-mcp
 * writes for the sandbox). Container uid/gid 0..MCP_SANDBOX_ID_COUNT-1 map to host
 * MCP_SANDBOX_HOST_BASE.. ; the sandboxed process runs as MCP_SANDBOX_UID inside, which is
 * MCP_SANDBOX_HOST_UID on the host (the owner of workspace files). */
#pragma once

#define MCP_SANDBOX_HOST_BASE 100000u   /* host id of container uid/gid 0 */
#define MCP_SANDBOX_ID_COUNT 65536u     /* size of the uid and gid mappings */
#define MCP_SANDBOX_UID 1000u           /* uid and gid of the process inside */
#define MCP_SANDBOX_GID 1000u
#define MCP_SANDBOX_HOST_UID (MCP_SANDBOX_HOST_BASE + MCP_SANDBOX_UID)
#define MCP_SANDBOX_HOST_GID (MCP_SANDBOX_HOST_BASE + MCP_SANDBOX_GID)
