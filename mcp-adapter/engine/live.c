/* A live session's sandbox: started with the session, started again by the next call
 * after it stopped, frozen and thawed, stopped with the session (live.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/engine-int.h"
#include "engine/engine.h"
#include "engine/live.h"
#include "engine/run-setup.h"
#include "session/session.h"

mcp_live *
mcp_live_find(mcp_engine *e, const char *session_id)
{
        for (mcp_live *l = e->lives; l; l = l->next)
                if (strcmp(l->session_id, session_id) == 0)
                        return l;
        return NULL;
}

/* Where its cgroup's counters and freezer are (none without a cgroup). */
static void
cgroup_files(mcp_live *l, const char *run_id)
{
        mcp_engine *e = l->engine;
        l->cg_dir[0] = l->freeze_file[0] = l->oom_file[0] = '\0';
        if (e->no_cgroup)
                return;
        if (e->v2) {
                snprintf(l->cg_dir, sizeof l->cg_dir, "/sys/fs/cgroup%s/%s", e->cg_parent, run_id);
                snprintf(l->freeze_file, sizeof l->freeze_file, "%s/cgroup.freeze", l->cg_dir);
                snprintf(l->oom_file, sizeof l->oom_file, "%s/memory.events", l->cg_dir);
        } else {
                snprintf(l->cg_dir, sizeof l->cg_dir, "/sys/fs/cgroup/memory%s/%s", e->cg_parent,
                         run_id);
                snprintf(l->freeze_file, sizeof l->freeze_file,
                         "/sys/fs/cgroup/freezer%s/%s/freezer.state", e->cg_parent, run_id);
                snprintf(l->oom_file, sizeof l->oom_file, "%s/memory.oom_control", l->cg_dir);
        }
}

static int
start_sandbox(mcp_live *l, msp_err *err)
{
        mcp_engine *e = l->engine;
        mcp_run *run = mcp_run_alloc(e, err);
        if (!run)
                return -ENOMEM;
        run->live = l;
        int r = mcp_run_claim_sandbox(run, l->session_id, err);
        if (r >= 0)
                r = mcp_run_prepare(run, err);
        if (r >= 0)
                r = mcp_run_spawn(run, err);
        if (r < 0) {
                run->live = NULL;
                mcp_run_free(run);
                return msp_err_prefix(err, "session %s: its sandbox", l->session_id);
        }
        cgroup_files(l, run->id);
        l->sandbox = run;
        l->serving = true;
        l->paused = false;
        l->starts++;
        return 0;
}

int
mcp_live_new(mcp_engine *e, const char *session_id, mcp_live **ret, msp_err *err)
{
        mcp_live *l = calloc(1, sizeof *l);
        if (!l)
                return msp_err_set(err, ENOMEM, "out of memory");
        l->engine = e;
        snprintf(l->session_id, sizeof l->session_id, "%s", session_id);
        int r = start_sandbox(l, err);
        if (r < 0) {
                mcp_strv_free(l->env);
                mcp_live_kernels_free(l);
                free(l);
                return r;
        }
        l->next = e->lives;
        e->lives = l;
        mcp_live_idle_start(l);
        *ret = l;
        return 0;
}

static int
write_text(const char *path, const char *text)
{
        int fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        ssize_t n = write(fd, text, strlen(text));
        int e = n < 0 ? errno : 0;
        close(fd);
        return n < 0 ? -e : 0;
}

static int
set_frozen(mcp_live *l, bool frozen, msp_err *err)
{
        if (!l->freeze_file[0])
                return msp_err_set(err, ENOTSUP, "session %s: pause needs a cgroup freezer, and "
                                   "this server runs its sandboxes without a cgroup", l->session_id);
        bool v2 = l->engine->v2;
        int r = write_text(l->freeze_file, v2 ? (frozen ? "1" : "0") : (frozen ? "FROZEN" : "THAWED"));
        if (r < 0)
                return msp_err_sys(err, -r, "session %s: %s '%s'", l->session_id,
                                   frozen ? "freeze" : "thaw", l->freeze_file);
        l->paused = frozen;
        return 0;
}

int
mcp_live_ensure(mcp_live *l, msp_err *err)
{
        if (l->sandbox && l->serving)
                return l->paused ? set_frozen(l, false, err) : 0;
        mcp_live_kernels_stop(l);
        /* Stopped: a sandbox still being deleted stays the old run's until it is gone. */
        if (l->sandbox && l->sandbox->state == RUN_EXITED)
                l->sandbox->live = NULL;
        l->sandbox = NULL;
        return start_sandbox(l, err);
}

void
mcp_live_stop(mcp_live *l)
{
        mcp_engine *e = l->engine;
        mcp_live_idle_stop(l);
        if (l->call)
                mcp_live_call_cancel(l->call);
        mcp_live_kernels_free(l);
        mcp_live_procs_free(l);
        if (l->paused)
                (void) set_frozen(l, false, NULL);     /* a frozen cgroup's processes cannot die */
        mcp_run *run = l->sandbox;
        if (run) {
                mcp_runner *rn = &run->runner;
                run->live = NULL;
                if (run->state == RUN_RUNNING) {
                        mcp_runner_kill_sync(rn);
                } else if (!rn->gone) {
                        const char *argv[] = { e->cfg->runtime_path, "--root", e->runtime_root,
                                               "delete", "--force", run->id, NULL };
                        (void) mcp_spawn_wait(argv, NULL);
                }
                mcp_run_free(run);
        }
        for (mcp_live **p = &e->lives; *p; p = &(*p)->next)
                if (*p == l) {
                        *p = l->next;
                        break;
                }
        mcp_strv_free(l->env);
        free(l);
}

void
mcp_live_sandbox_exited(mcp_live *l, mcp_run *sandbox)
{
        const mcp_runner *rn = &sandbox->runner;
        if (l->sandbox != sandbox)
                return;
        l->serving = false;
        l->paused = false;
        if (rn->sandbox_failed)
                snprintf(l->stop_reason, sizeof l->stop_reason, "%s", rn->error);
        else if (rn->oom_killed)
                snprintf(l->stop_reason, sizeof l->stop_reason,
                         "its pid 1 was killed for lack of memory (the session's memory limit)");
        else if (rn->term_signal)
                snprintf(l->stop_reason, sizeof l->stop_reason, "its pid 1 was killed by signal %d%s%.300s",
                         rn->term_signal, rn->err.len ? ": " : "", rn->err.buf ? rn->err.buf : "");
        else
                snprintf(l->stop_reason, sizeof l->stop_reason, "its pid 1 exited with code %d%s%.300s",
                         rn->exit_code, rn->err.len ? ": " : "", rn->err.buf ? rn->err.buf : "");
        if (l->call)
                mcp_live_call_sandbox_stopped(l->call);
        /* Its kernels went with it; the next cell starts one in the next sandbox. */
        mcp_live_kernels_stop(l);
}

void
mcp_live_sandbox_gone(mcp_live *l, mcp_run *sandbox)
{
        if (l && l->sandbox == sandbox)
                l->sandbox = NULL;
        mcp_run_free(sandbox);
}

static uint64_t
read_u64_file(const char *dir, const char *name, const char *key)
{
        char path[800], buf[4096];
        snprintf(path, sizeof path, "%s/%s", dir, name);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return 0;
        ssize_t n = read(fd, buf, sizeof buf - 1);
        close(fd);
        if (n <= 0)
                return 0;
        buf[n] = '\0';
        if (!key)
                return strtoull(buf, NULL, 10);
        size_t klen = strlen(key);
        for (char *line = buf; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
                if (strncmp(line, key, klen) == 0 && line[klen] == ' ')
                        return strtoull(line + klen + 1, NULL, 10);
        return 0;
}

static unsigned
count_lines(const char *path)
{
        char buf[8192];
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return 0;
        unsigned lines = 0;
        ssize_t n;
        while ((n = read(fd, buf, sizeof buf)) > 0)
                for (ssize_t i = 0; i < n; i++)
                        lines += buf[i] == '\n';
        close(fd);
        return lines;
}

void
mcp_live_usage(const mcp_live *l, unsigned *ret_procs, uint64_t *ret_memory, uint64_t *ret_oom)
{
        bool v2 = l->engine->v2;
        unsigned procs = 0;
        uint64_t mem = 0, oom = 0;
        /* Only what is asked: every call reads the OOM count twice, nothing else. */
        if (l->cg_dir[0] && l->serving) {
                char path[800];
                snprintf(path, sizeof path, "%s/cgroup.procs", l->cg_dir);
                procs = ret_procs ? count_lines(path) : 0;
                mem = ret_memory ? read_u64_file(l->cg_dir, v2 ? "memory.current" : "memory.usage_in_bytes", NULL) : 0;
                oom = !ret_oom ? 0
                      : v2 ? read_u64_file(l->cg_dir, "memory.events", "oom_kill")
                           : read_u64_file(l->cg_dir, "memory.oom_control", "oom_kill");
        }
        if (ret_procs)
                *ret_procs = procs;
        if (ret_memory)
                *ret_memory = mem;
        if (ret_oom)
                *ret_oom = oom;
}

/* ---- the engine's interface (engine.h) ---- */

int
mcp_engine_session_start(mcp_engine *e, const char *session_id, msp_err *err)
{
        mcp_live *l;
        return mcp_live_find(e, session_id) ? 0 : mcp_live_new(e, session_id, &l, err);
}

int
mcp_engine_session_info(mcp_engine *e, const char *session_id, mcp_live_info *ret)
{
        const mcp_live *l = mcp_live_find(e, session_id);
        if (!l)
                return -ENOENT;
        *ret = (mcp_live_info){
                .state = !l->serving ? MCP_LIVE_STOPPED : l->paused ? MCP_LIVE_PAUSED : MCP_LIVE_RUNNING,
                .background = mcp_live_procs_running(l),
                .kernel = mcp_live_kernel_running(l),
        };
        mcp_live_usage(l, &ret->processes, &ret->memory_bytes, NULL);
        return 0;
}

int
mcp_engine_session_pause(mcp_engine *e, const char *session_id, msp_err *err)
{
        mcp_live *l = mcp_live_find(e, session_id);
        if (!l)
                return msp_err_set(err, ENOENT, "session %s: no such live session", session_id);
        if (l->paused)
                return msp_err_set(err, EALREADY, "session %s: already paused", session_id);
        if (!l->serving)
                return msp_err_set(err, EALREADY, "session %s: its sandbox is stopped (%s)",
                                   session_id, l->stop_reason);
        return set_frozen(l, true, err);
}

int
mcp_engine_session_resume(mcp_engine *e, const char *session_id, msp_err *err)
{
        mcp_live *l = mcp_live_find(e, session_id);
        if (!l)
                return msp_err_set(err, ENOENT, "session %s: no such live session", session_id);
        if (!l->paused)
                return msp_err_set(err, EALREADY, "session %s: not paused", session_id);
        return set_frozen(l, false, err);
}

int
mcp_live_set_frozen(mcp_live *l, bool frozen, msp_err *err)
{
        return set_frozen(l, frozen, err);
}

bool
mcp_engine_uses_kernel(mcp_engine *e, const char *session_id, const char *language, bool fresh)
{
        /* The session's kernel decides, as live_of does at submit: a language with a
         * kernelspec in the sandbox, not fresh. */
        mcp_live *l = mcp_live_find(e, session_id);
        return l && mcp_live_kernel_wanted(l, language, fresh, false);
}
