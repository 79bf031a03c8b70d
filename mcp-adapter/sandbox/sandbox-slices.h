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
 * Run by a user, the user's subordinate range is all there is: a sandbox on an image tree
 * maps it whole (the tree's files may belong to any id), and every other sandbox a slice of
 * it of its own (its program's uid, and so its per-uid budgets, its own). What the kernel
 * counts at the top belongs to the user anyway: each sandbox's share of that is bounded
 * (budget-share.h). With too many sandboxes for slices of more than 1024 ids, or no
 * range, the pool is shared: every holder gets the whole range. */
#pragma once

#include <stdbool.h>

#include "oci/oci.h"

typedef struct mcp_slices mcp_slices;

/* n slots of `size` ids, slot k's first at host id first + size * k; shared: one slot of
 * the whole range (sandbox-ids.h) that every holder shares. */
int mcp_slices_new(unsigned n, unsigned first, unsigned size, bool shared, mcp_slices **ret,
                   msp_err *err);
/* The pool msp-mcp needs for n sandboxes: as root slices of 65536 above the storage range;
 * run by a user, slices of the user's range (rootless). */
int mcp_slices_for(unsigned n, bool rootless, mcp_slices **ret, msp_err *err);
/* Whether a sandbox on an image tree holds a slice (as root) or maps the whole range. */
bool mcp_slices_image_slices(const mcp_slices *s);
mcp_slices *mcp_slices_free(mcp_slices *s);
/* A free slot, held once; -EUSERS when every one is held (err says so). */
int mcp_slice_take(mcp_slices *s, unsigned *ret_slot, msp_err *err);
bool mcp_slice_available(const mcp_slices *s);
void mcp_slice_ref(mcp_slices *s, unsigned slot);
void mcp_slice_unref(mcp_slices *s, unsigned slot);
/* The host id of container id 0 in the slot's sandbox, and how many ids it maps. */
unsigned mcp_slice_base(const mcp_slices *s, unsigned slot);
unsigned mcp_slice_size(const mcp_slices *s);
/* Slots in use, for --check and tests. */
unsigned mcp_slices_used(const mcp_slices *s);
