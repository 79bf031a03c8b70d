/* One sandbox's share of the per-uid budgets (budget-share.h). */
#include "sandbox/budget-share.h"

#include <stdlib.h>
#include <sys/resource.h>

#include "base/base.h"

/* What one sandbox needs at most: a few inotify instances (file watchers of dev servers and
 * test runners). */
#define INOTIFY_INSTANCES_MAX 16u
#define INOTIFY_WATCHES_MAX 8192u

static uint64_t
share_of(uint64_t total, unsigned sharers, uint64_t max)
{
        uint64_t v = total / (sharers ? sharers : 1);
        return v < max ? v : max;
}

static uint64_t
read_number(const char *path, uint64_t dflt)
{
        char buf[32];
        char *end;
        if (mcp_read_text(path, buf, sizeof buf) <= 0)
                return dflt;
        unsigned long long v = strtoull(buf, &end, 10);
        return end == buf ? dflt : v;
}

static uint64_t
rlimit_cur(int resource)
{
        struct rlimit rl;
        return getrlimit(resource, &rl) == 0 ? rl.rlim_cur : 0;
}

void
mcp_budget_share_compute(unsigned sharers, mcp_budget_share *ret)
{
        uint64_t inst = read_number("/proc/sys/fs/inotify/max_user_instances", 128);
        uint64_t watches = read_number("/proc/sys/fs/inotify/max_user_watches", 8192);
        *ret = (mcp_budget_share){
                .inotify_instances = (unsigned) share_of(inst, sharers, INOTIFY_INSTANCES_MAX),
                .inotify_watches = (unsigned) share_of(watches, sharers, INOTIFY_WATCHES_MAX),
                .sigpending = share_of(rlimit_cur(RLIMIT_SIGPENDING), sharers, UINT64_MAX),
                .msgqueue = share_of(rlimit_cur(RLIMIT_MSGQUEUE), sharers, UINT64_MAX),
                .memlock = share_of(rlimit_cur(RLIMIT_MEMLOCK), sharers, UINT64_MAX),
        };
}
