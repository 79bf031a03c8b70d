/* One sandbox's share of the kernel's per-uid budgets, from the host's limits. Owner:
 * budget-share.c; given to the bundle (bundle.h: process rlimits, and the createRuntime
 * hook's inotify counts, helpers/userns-limits.h). */
#pragma once

#include <stdint.h>

/* One sandbox's share of the budgets the kernel counts per uid up to the host's namespace
 * (ucounts): as root each sandbox has its own uid (sandbox-slices.h) and the share is what
 * one sandbox needs; run by a user every sandbox charges the user at the top, so each gets
 * at most 1/sharers of the user's total: --max-concurrent sandboxes with processes at once
 * and the user itself. inotify goes to the hook (the namespace's max_inotify_*), the rest
 * are the process's rlimits (the first level of the count is checked against them). */
typedef struct mcp_budget_share {
        unsigned inotify_instances, inotify_watches;
        uint64_t sigpending, msgqueue, memlock;         /* RLIMIT_SIGPENDING, _MSGQUEUE, _MEMLOCK */
} mcp_budget_share;

/* From the host's fs.inotify.max_user_* and msp-mcp's own rlimits, once at start. */
void mcp_budget_share_compute(unsigned sharers, mcp_budget_share *ret);
