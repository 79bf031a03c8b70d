/* msp-mcp run by a user who was delegated a cgroup v2 subtree (systemd's user@UID.service,
 * or any cgroup whose directory, cgroup.procs and cgroup.subtree_control the user may
 * write): each sandbox gets a cgroup there with real memory, pids and cpu limits. Owner:
 * rootless-cgroup.c.
 *
 * Layout, C being the cgroup msp-mcp was started in:
 *   C/                    cpu, memory, pids enabled for its children
 *   C/<inst>/             the same, for the sandboxes
 *   C/<inst>/server/      msp-mcp itself: a cgroup that gives its children controllers
 *                         may hold no process (cgroup v2's "no internal processes")
 *   C/<inst>/<run id>/    each sandbox, made and removed by the runtime (linux.cgroupsPath)
 * So C must hold no process but msp-mcp's own: started alone in it (a systemd user service
 * or `systemd-run --user --scope`), not in its MCP client's. When msp-mcp ends it moves back
 * into C, gives back the controllers enabled there since it started (by it, or by the
 * runtime, which enables every controller it manages on the way to a container's cgroup)
 * and removes what it made. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

typedef struct mcp_user_cgroup {
        char mnt[32];                   /* the cgroup2 mount, "" when not entered */
        char base[400];                 /* C, from the hierarchy's root */
        char inst[480];                 /* C/<inst>, from the root: the sandboxes' parent */
        char before[256];               /* C's cgroup.subtree_control before msp-mcp's start */
        bool moved;                     /* msp-mcp is in C/<inst>/server */
} mcp_user_cgroup;

/* Whether sandboxes can get cgroups: the user may write C, C has the cpu, memory and pids
 * controllers, and no process but this one is in C. why says what was found either way. */
bool mcp_rootless_delegated(char *why, size_t size);

/* Set up the layout above for instance `name` and move this process into its server leaf.
 * 0, or -errno with why filled and nothing left made. */
int mcp_user_cgroup_enter(mcp_user_cgroup *cg, const char *name, char *why, size_t size);

/* The absolute directory of C/<inst> (for recovery), "" when not entered. */
void mcp_user_cgroup_dir(const mcp_user_cgroup *cg, char *buf, size_t size);

/* Undo mcp_user_cgroup_enter once every sandbox is gone: back into C, the controllers
 * given back, C/<inst> removed. Best effort: what another instance still uses stays. */
void mcp_user_cgroup_leave(mcp_user_cgroup *cg);
