/* Each sandbox's own host ids. Owner: sandbox-slices.c.
 *
 * The kernel keeps budgets per host uid (struct user_struct: epoll watches, pipe buffers,
 * key quotas) and per (user namespace, uid) charged up to the host's namespace (ucounts:
 * processes, pending signals, message queue bytes, locked memory, inotify and fanotify,
 * namespaces). Sandboxes sharing host ids share those budgets: one sandbox could take what
 * every other one needs. As root, each sandbox (a run, or a session for its whole life)
 * holds a slice of its own: container ids 0..65535 at host MCP_SANDBOX_SLICE_BASE(slot),
 * above the storage range (sandbox-ids.h: where image trees are unpacked, which no sandbox
 * runs as), and its user namespace is owned by the slice's MCP_SANDBOX_UID. A slice is
 * reference counted (its session and the run using it) and reused only once every holder
 * let go: no process and no workspace of the previous holder is left then.
 *
 * Run by a user, there is one range (the user's subordinate ids) and every sandbox shares
 * slot 0 of a shared pool: what the kernel counts at the host level belongs to the user
 * anyway; each sandbox's share is bounded instead (userns-limits.h). */
#pragma once

#include <stdbool.h>

#include "err.h"

typedef struct mcp_slices mcp_slices;

/* n slots; shared: one slot every holder shares (run by a user). */
int mcp_slices_new(unsigned n, bool shared, mcp_slices **ret, msp_err *err);
mcp_slices *mcp_slices_free(mcp_slices *s);
/* A free slot, held once; -EUSERS when every one is held (err says so). */
int mcp_slice_take(mcp_slices *s, unsigned *ret_slot, msp_err *err);
bool mcp_slice_available(const mcp_slices *s);
void mcp_slice_ref(mcp_slices *s, unsigned slot);
void mcp_slice_unref(mcp_slices *s, unsigned slot);
/* The host id of container id 0 in the slot's sandbox. */
unsigned mcp_slice_base(const mcp_slices *s, unsigned slot);
/* Slots in use, for --check and tests. */
unsigned mcp_slices_used(const mcp_slices *s);
