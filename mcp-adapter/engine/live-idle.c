/* The idle pause of a live session (--session-idle-pause, live.h): one timer per live
 * session, every period; a sandbox with no call running whose cgroup's CPU time did not
 * move since the previous check (a whole period) is frozen. Its next call, port connect or
 * process kill thaws it (mcp_live_ensure), as after session_pause. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine-int.h"
#include "engine/live.h"

/* The CPU time its cgroup used so far, in the hierarchy's unit; 0: unknown. v2: cpu.stat's
 * usage_usec in its dir; v1: cpuacct.usage at the same path in the cpuacct hierarchy
 * (mounted alone or with cpu). */
static uint64_t
cpu_used(const mcp_live *l)
{
        char path[800], buf[1024];
        if (!l->cg_dir[0])
                return 0;
        if (l->engine->v2) {
                snprintf(path, sizeof path, "%s/cpu.stat", l->cg_dir);
                if (mcp_read_text(path, buf, sizeof buf) <= 0)
                        return 0;
                const char *p = strstr(buf, "usage_usec ");
                return p && (p == buf || p[-1] == '\n') ? strtoull(p + 11, NULL, 10) : 0;
        }
        static const char mem[] = "/sys/fs/cgroup/memory";
        if (strncmp(l->cg_dir, mem, sizeof mem - 1) != 0)
                return 0;
        static const char *const acct[] = { "cpuacct", "cpu,cpuacct" };
        for (size_t i = 0; i < 2; i++) {
                snprintf(path, sizeof path, "/sys/fs/cgroup/%s%s/cpuacct.usage", acct[i],
                         l->cg_dir + sizeof mem - 1);
                if (mcp_read_text(path, buf, sizeof buf) > 0)
                        return strtoull(buf, NULL, 10);
        }
        return 0;
}

static int idle_check(mcp_loop *loop, void *data);

static void
arm(mcp_live *l)
{
        uint64_t period_s = l->engine->cfg->session_idle_pause_s;
        if (mcp_loop_add_timer(l->engine->loop, period_s * 1000000, idle_check, l, &l->idle_timer) < 0)
                l->idle_timer = NULL;   /* out of memory: this session is never paused idle */
}

static int
idle_check(mcp_loop *loop, void *data)
{
        mcp_live *l = data;
        (void) loop;
        l->idle_timer = NULL;
        /* Only a serving, running sandbox between calls is watched; anything else starts
         * the count again. */
        uint64_t cpu = l->serving && !l->paused && !l->call ? cpu_used(l) : 0;
        if (cpu && cpu == l->idle_cpu) {
                /* A failed freeze leaves it running; the next period tries again. */
                (void) mcp_live_set_frozen(l, true, NULL);
                cpu = 0;
        }
        l->idle_cpu = cpu;
        arm(l);
        return 0;
}

void
mcp_live_idle_start(mcp_live *l)
{
        if (!l->engine->cfg->session_idle_pause_s || !l->freeze_file[0] || l->idle_timer)
                return;
        l->idle_cpu = 0;
        arm(l);
}

void
mcp_live_idle_stop(mcp_live *l)
{
        if (l->idle_timer)
                mcp_timer_cancel(l->engine->loop, l->idle_timer);
        l->idle_timer = NULL;
}
