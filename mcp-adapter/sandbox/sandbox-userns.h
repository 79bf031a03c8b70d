/* The user namespace of a sandbox, made by msp-mcp itself when it runs as root, so that an
 * unprivileged id owns it. Owner: sandbox-userns.c.
 *
 * The kernel charges what a process takes from a per-user budget (inotify instances and
 * watches, namespaces; fs.inotify.max_user_instances and the like) to its uid in its user
 * namespace and then to the owner of each namespace up to the host's: a namespace the
 * runtime creates as root charges host root, and a sandbox could use up host root's share.
 * Made here by a short-lived child running as its slice's MCP_SANDBOX_UID
 * (sandbox-slices.h), the namespace's owner is that uid, which no other sandbox and nothing
 * else on the host uses. msp-mcp (root) writes its maps, keeps
 * an fd of it for the run, and the bundle names it by path; the runtime joins it and makes
 * the pid namespace and the others inside it (msp and runc both do). The namespace's own
 * budgets are still lowered by the createRuntime hook (userns-limits.h) once the runtime's
 * namespaces exist. */
#pragma once

#include <stdbool.h>

#include "oci/oci.h"

typedef struct mcp_sandbox_userns {
        int fd;                         /* the namespace; -1: none (the runtime makes one) */
        char path[64];                  /* /proc/<msp-mcp>/fd/<fd>, for linux.namespaces */
} mcp_sandbox_userns;

#define MCP_SANDBOX_USERNS_NONE { .fd = -1, .path = "" }

/* The one decision: msp-mcp makes the namespace when it runs as root of the host and the
 * runtime (RUNTIME_PATH) can then set the init's rlimits: msp sets them in the init itself,
 * another runtime needs CAP_SYS_RESOURCE. Otherwise the runtime makes it. Decided once. */
bool mcp_sandbox_userns_wanted(const char *runtime_path);
/* NULL when wanted, else why not (for --check). */
const char *mcp_sandbox_userns_why_not(const char *runtime_path);
/* A fresh namespace owned by MCP_SANDBOX_UID of the slice whose container id 0 is host id
 * `base`, mapped as the bundle's mappings say (0.. onto base..). */
int mcp_sandbox_userns_make(unsigned base, mcp_sandbox_userns *ret, msp_err *err);
/* The idmapping of a slice's views of image trees (engine/run-setup.c): a namespace, never
 * entered, mapping the storage range (sandbox-ids.h) onto the slice at base; its fd. */
int mcp_idmap_userns_make(unsigned base, msp_err *err);
void mcp_sandbox_userns_close(mcp_sandbox_userns *u);
