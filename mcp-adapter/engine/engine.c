/* The run engine: instance directory, queue, a run's lifecycle (its workspace and bundle are
 * made by run-setup.c).
 *
 * Layout of the instance directory <state_dir>/inst-<pid>-<hex>/ (locked with flock for as
 * long as this process lives; recover.c cleans the ones whose lock is free):
 *   runtime-path   which runtime made the containers (for recovery)
 *   runtime/       the runtime's --root
 *   rootfs/        the shared skeleton (bundle.c), on a tmpfs of its own, with the host
 *                  view's read-only binds on it (sysbinds.h)
 *   b/<run_id>/    config.json, code/main.<ext>, runtime.log; b/ is a tmpfs holding the
 *                  init's copy too (mcp_private_view: no bind source names a host path)
 *   ws/<run_id>/   a fresh workspace: a size-capped tmpfs mounted there
 *   logs/<run_id>.out|.err   full output of the last run_log_keep runs (runlogs.c: within a
 *                  byte budget)
 *   kept/<n>       small out/ files of fresh runs, readable as resources (keptfiles.c:
 *                  within a server's and a tenant's byte budget)
 *
 * msp-mcp unshares its mount namespace (made private, recursively) in mcp_engine_new(), so
 * that the tmpfs mounts (workspaces, bundles, skeleton) and the system view's binds are
 * invisible to the host and vanish with the process. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "engine/artifacts.h"
#include "sandbox/sandbox.h"
#include "engine/engine-int.h"
#include "engine/engine.h"
#include "base/base.h"
#include "oci/oci.h"
#include "engine/recover.h"
#include "host/host.h"
#include "engine/run-setup.h"
#include "engine/runlogs.h"
#include "engine/runner.h"
#include "session/session.h"

static int
random_hex(char *buf, size_t nbytes)
{
        unsigned char r[16];
        if (nbytes > sizeof r || getrandom(r, nbytes, 0) != (ssize_t) nbytes)
                return -EIO;
        for (size_t i = 0; i < nbytes; i++)
                sprintf(buf + 2 * i, "%02x", r[i]);
        return 0;
}

static int
load_profile(const char *name, const char *file, const char *builtin, oci_json_doc **ret,
             msp_err *err)
{
        _cleanup_free_ char *text = NULL;
        size_t len;
        if (file) {
                _cleanup_fclose_ FILE *f = fopen(file, "re");
                if (!f)
                        return msp_err_sys(err, errno, "%s profile '%s'", name, file);
                text = malloc(1 << 20);
                if (!text)
                        return msp_err_set(err, ENOMEM, "out of memory");
                len = fread(text, 1, 1 << 20, f);
                if (len == 1 << 20)
                        return msp_err_set(err, EFBIG, "%s profile '%s': over 1 MiB", name, file);
                builtin = text;
        } else {
                len = strlen(builtin);
        }
        int r = oci_json_parse(name, builtin, len, ret, err);
        if (r >= 0 && oci_json_type_of(oci_json_doc_root(*ret)) != OCI_JSON_OBJECT) {
                *ret = oci_json_doc_free(*ret);
                return msp_err_set(err, EINVAL, "%s profile: not a JSON object", name);
        }
        return r;
}

/* <state>/inst-<pid>-<hex>, locked. */
static int
make_instance(mcp_engine *e, msp_err *err)
{
        const char *state = e->cfg->state_dir ? e->cfg->state_dir : "/run/msp-mcp";
        if (mkdir(state, 0711) < 0 && errno != EEXIST)
                return msp_err_sys(err, errno, "state dir '%s'", state);
        /* The containers' root (an unprivileged host uid) must be able to traverse it. */
        struct stat st;
        if (stat(state, &st) < 0)
                return msp_err_sys(err, errno, "state dir '%s'", state);
        if ((st.st_mode & 0011) != 0011 && chmod(state, (st.st_mode & 07777) | 0011) < 0)
                return msp_err_sys(err, errno, "state dir '%s': chmod", state);

        if (strlen(state) > 1900)
                return msp_err_set(err, ENAMETOOLONG, "state dir '%.64s...': path too long", state);
        char hex[17];
        int r = random_hex(hex, 8);
        if (r < 0)
                return msp_err_sys(err, -r, "getrandom");
        snprintf(e->inst_name, sizeof e->inst_name, "inst-%d-%s", (int) getpid(), hex);
        snprintf(e->inst_path, sizeof e->inst_path, "%s/%s", state, e->inst_name);
        if (mkdir(e->inst_path, 0711) < 0)
                return msp_err_sys(err, errno, "instance dir '%s'", e->inst_path);
        e->inst_fd = open(e->inst_path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (e->inst_fd < 0)
                return msp_err_sys(err, errno, "instance dir '%s'", e->inst_path);
        if (flock(e->inst_fd, LOCK_EX | LOCK_NB) < 0)
                return msp_err_sys(err, errno, "lock '%s'", e->inst_path);

        static const struct { const char *name; mode_t mode; } sub[] = {
                { "runtime", 0700 }, { "b", 0711 }, { "ws", 0711 }, { "logs", 0700 },
        };
        for (size_t i = 0; i < ARRAY_SIZE(sub); i++)
                if (mkdirat(e->inst_fd, sub[i].name, sub[i].mode) < 0)
                        return msp_err_sys(err, errno, "mkdir '%s/%s'", e->inst_path, sub[i].name);
        r = mcp_write_new_at(e->inst_fd, "runtime-path", e->cfg->runtime_path,
                             strlen(e->cfg->runtime_path), 0600, err);
        if (r < 0)
                return msp_err_prefix(err, "instance dir '%s'", e->inst_path);
        snprintf(e->runtime_root, sizeof e->runtime_root, "%s/runtime", e->inst_path);
        snprintf(e->skeleton, sizeof e->skeleton, "%s/rootfs", e->inst_path);
        if (e->cfg->init_path)
                snprintf(e->init_path, sizeof e->init_path, "%s/b/" MCP_INIT_COPY, e->inst_path);
        r = mcp_private_view(e->inst_fd, e->inst_path, e->cfg->init_path, err);
        e->view_mounted = true;
        if (r < 0)
                return r;
        if ((r = mcp_skeleton_create(e->inst_fd, "rootfs", &e->view, err)) < 0)
                return r;
        _cleanup_close_ int skel = openat(e->inst_fd, "rootfs",
                                          O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (skel < 0)
                return msp_err_sys(err, errno, "skeleton '%s'", e->skeleton);
        return mcp_sysbinds_mount(skel, &e->view, err);
}

/* A private mount namespace: the workspace mounts never reach the host's namespace and
 * disappear when msp-mcp dies, whatever the way. Run by a user, in a user namespace of our
 * own first (rootless.h), which is what lets a user mount at all. */
static int
private_mounts(const mcp_rootless *rl, const char *state, msp_err *err)
{
        int r = mcp_rootless_enter(rl, err);
        if (r < 0)
                return r;
        if (unshare(CLONE_NEWNS) < 0)
                return msp_err_sys(err, errno, "unshare(CLONE_NEWNS)");
        if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
                return msp_err_sys(err, errno, "make / private");
        return rl->on ? mcp_rootless_reach(state, err) : 0;
}

static void session_release(mcp_run *run);

/* A session closed with force while a run uses it: cancel the run, free the session. */
static void
session_evict(const char *id, void *data)
{
        mcp_engine *e = data;
        for (mcp_run *run = e->runs; run; run = run->next) {
                if (!run->session_id || strcmp(run->session_id, id) != 0)
                        continue;
                session_release(run);   /* first: a queued run is freed by the cancel */
                mcp_engine_cancel(e, run);
                return;
        }
}

/* A session goes (closed, expired): its live sandbox, with all it runs, goes first. */
static void
session_closing(const char *id, void *data)
{
        mcp_engine *e = data;
        mcp_live *l = mcp_live_find(e, id);
        if (l)
                mcp_live_stop(l);
        if (e->session_gone)
                e->session_gone(id, e->session_gone_data);
}

void
mcp_engine_set_session_gone(mcp_engine *e, mcp_session_gone_fn fn, void *data)
{
        e->session_gone = fn;
        e->session_gone_data = data;
}

/* Every sandbox runs the init as pid 1: without it no run could start, so say it now. */
static int
check_init(const char *path, msp_err *err)
{
        if (!path)
                return msp_err_set(err, ENOENT,
                                   "sandbox init: no msp-sandbox-init beside msp-mcp or at '%s'; "
                                   "name one with --sandbox-init PATH",
                                   MCP_SANDBOX_INIT_INSTALLED);
        if (path[0] != '/')
                return msp_err_set(err, EINVAL, "sandbox init '%s' is not absolute", path);
        _cleanup_close_ int fd = open(path, O_PATH | O_CLOEXEC);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0)
                return msp_err_sys(err, errno, "sandbox init '%s'", path);
        /* The sandbox's uid is "other" on the host side of the bind. */
        if (!S_ISREG(st.st_mode) || (st.st_mode & 0001) == 0)
                return msp_err_set(err, EACCES,
                                   "sandbox init '%s' is not a regular file executable by all",
                                   path);
        return 0;
}

/* Where the sandboxes' cgroups go: as root /msp-mcp/<inst>; run by a user, below the
 * cgroup it was delegated (rootless-cgroup.h), recorded in <inst>/cgroup for a later
 * server's recovery; else none, and the limits hold by other means (bundle.h). */
static int
choose_cgroups(mcp_engine *e, msp_err *err)
{
        char why[1024], dir[600];
        snprintf(e->cg_parent, sizeof e->cg_parent, "/msp-mcp/%s", e->inst_name);
        if (!e->rootless.on)
                return 0;
        e->no_cgroup = mcp_user_cgroup_enter(&e->user_cg, e->inst_name, why, sizeof why) < 0;
        if (e->no_cgroup && e->cfg->require_cgroups)
                return msp_err_set(err, ENOTSUP, "--require-cgroups: no cgroup for the sandboxes: %s",
                                   why);
        if (e->no_cgroup)
                return 0;
        snprintf(e->cg_parent, sizeof e->cg_parent, "%s", e->user_cg.inst);
        mcp_user_cgroup_dir(&e->user_cg, dir, sizeof dir);
        return mcp_write_new_at(e->inst_fd, "cgroup", dir, strlen(dir), 0600, err);
}

int
mcp_engine_new(mcp_loop *loop, const mcp_config *cfg, const mcp_host *host, mcp_engine **ret,
               msp_err *err)
{
        if (!cfg->runtime_path || cfg->runtime_path[0] != '/')
                return msp_err_set(err, EINVAL, "runtime path '%s' is not absolute",
                                   cfg->runtime_path ? cfg->runtime_path : "(null)");
        int r = check_init(cfg->init_path, err);
        if (r < 0)
                return r;
        /* The sandbox's own budgets are part of the policy: no run without the hook. */
        if (!cfg->userns_hook)
                return msp_err_set(err, ENOENT, "sandbox hook: no msp-sandbox-hook beside msp-mcp or at '%s'",
                                   MCP_HOOK_INSTALLED);
        mcp_engine *e = calloc(1, sizeof *e);
        if (!e)
                return msp_err_set(err, ENOMEM, "out of memory");
        e->loop = loop;
        e->cfg = cfg;
        e->inst_fd = -1;
        e->procs.loop = loop;
        e->qtail = &e->qhead;

        mcp_rootless_probe(&e->rootless);
        if (e->rootless.on && (r = mcp_rootless_state_check(cfg->state_dir, err)) < 0)
                goto fail;
        e->n_slices = mcp_sandbox_slices_needed(cfg->max_concurrent, cfg->max_sessions);
        if (!e->rootless.on && (r = mcp_sandbox_ids_claim(cfg->sandbox_ids, e->n_slices, err)) < 0)
                goto fail;
        /* Where the sandboxes' namespaces have one owner at the top (run by a user: the user;
         * a runtime that makes them as root: host root), every sandbox with processes
         * (--max-concurrent of them) and that owner itself share what the kernel counts
         * for it. */
        bool one_owner = e->rootless.on || !mcp_sandbox_userns_wanted(cfg->runtime_path);
        unsigned running = cfg->max_concurrent ? cfg->max_concurrent : 1;
        mcp_budget_share_compute(one_owner ? running + 1 : 1, &e->share);
        e->slice_views = calloc((size_t) MCP_ROOTFS_MAX * e->n_slices, sizeof *e->slice_views);
        if (!e->slice_views) {
                r = msp_err_set(err, ENOMEM, "out of memory");
                goto fail;
        }
        /* Best effort: dead servers' leftovers. Before our own user namespace: run by a user,
         * a dead server's sandboxes are in namespaces below its own, over which the user
         * holds capabilities only from the initial namespace. */
        (void) mcp_recover(cfg, NULL);
        if ((r = private_mounts(&e->rootless, cfg->state_dir, err)) < 0)
                goto fail;
        /* After our own user namespace: run by a user, the slices are of what it maps. */
        if ((r = mcp_slices_for(e->n_slices, e->rootless.on, &e->slices, err)) < 0)
                goto fail;
        /* Before the skeleton: what the languages link to are mount points in it. */
        mcp_host found;
        if (!host && (r = mcp_host_detect(&found, err)) < 0)
                goto fail;
        e->view = host ? host->view : found.view;
        e->langs = host ? host->langs : found.langs;
        if ((r = make_instance(e, err)) < 0)
                goto fail;
        for (size_t i = 0; i < cfg->n_rootfs && i < MCP_ROOTFS_MAX; i++) {
                if (!cfg->rootfs[i].path)
                        continue;
                char name[32];
                snprintf(name, sizeof name, "rootfs-%zu", i);
                if ((r = mcp_rootfs_view(e->inst_fd, e->inst_path, name, cfg->rootfs[i].path,
                                         -1, err)) < 0)
                        goto fail;
                e->rootfs_mounted[i] = true;
                _cleanup_close_ int rfd = openat(e->inst_fd, name, O_PATH | O_DIRECTORY | O_CLOEXEC);
                if (rfd >= 0)
                        mcp_languages_add_rootfs(&e->langs, rfd);
        }
        if ((r = load_profile("seccomp", cfg->seccomp_profile, mcp_profile_seccomp, &e->seccomp,
                              err)) < 0 ||
            (r = load_profile("landlock", cfg->landlock_profile, mcp_profile_landlock,
                              &e->landlock, err)) < 0)
                goto fail;
        e->v2 = access("/sys/fs/cgroup/cgroup.controllers", F_OK) == 0;
        e->unified = !e->v2 && access("/sys/fs/cgroup/unified/cgroup.controllers", F_OK) == 0;
        if ((r = choose_cgroups(e, err)) < 0)
                goto fail;
        if ((r = mcp_runlogs_init(&e->logs, e->inst_fd, cfg->run_log_keep, err)) < 0)
                goto fail;
        if ((r = mcp_keptfiles_init(&e->kept, e->inst_fd, cfg->kept_files_bytes,
                                    cfg->kept_files_tenant_bytes, err)) < 0)
                goto fail;
        if ((r = mcp_sessions_new(loop, cfg, &e->sessions, err)) < 0)
                goto fail;
        mcp_sessions_set_evict(e->sessions, session_evict, e);
        mcp_sessions_set_closing(e->sessions, session_closing, e);
        mcp_sessions_set_slices(e->sessions, e->slices);
        *ret = e;
        return 0;
fail:
        mcp_engine_free(e);
        return r;
}

const char *const *
mcp_engine_languages(const mcp_engine *e)
{
        return e->langs.names;
}

const char *
mcp_engine_language_off(const mcp_engine *e, size_t i, const char **why)
{
        if (i >= e->langs.n_off)
                return NULL;
        *why = e->langs.why[i];
        return e->langs.off[i]->name;
}

void
mcp_engine_language_drop(mcp_engine *e, const char *name, const char *why)
{
        mcp_languages_drop(&e->langs, name, why);
}

void
mcp_engine_load(const mcp_engine *e, unsigned *ret_running, unsigned *ret_queued)
{
        *ret_running = e->n_running;
        *ret_queued = e->n_queued;
}

mcp_session_store *
mcp_engine_sessions(mcp_engine *e)
{
        return e->sessions;
}

int
mcp_engine_run_log(mcp_engine *e, const char *run_id, mcp_stream stream, char **ret,
                   size_t *ret_len, msp_err *err)
{
        return mcp_runlogs_read(&e->logs, run_id, stream, ret, ret_len, err);
}

int
mcp_engine_keep_file(mcp_engine *e, const char *tenant, const char *uri, const char *mime,
                     const void *data, size_t len, mcp_kept_dropped_fn fn, void *fn_data,
                     msp_err *err)
{
        return mcp_keptfiles_add(&e->kept, tenant ? tenant : "", uri, mime, data, len, fn,
                                 fn_data, err);
}

int
mcp_engine_kept_file(mcp_engine *e, const char *tenant, const char *uri, unsigned char **ret,
                     size_t *ret_len, const char **ret_mime, msp_err *err)
{
        return mcp_keptfiles_read(&e->kept, tenant ? tenant : "", uri, ret, ret_len, ret_mime,
                                  err);
}

/* ---- one run ---- */

static void run_start_later(mcp_engine *e);

static void
session_release(mcp_run *run)
{
        if (!run->session_id)
                return;
        mcp_session_release(run->engine->sessions, run->session_id);
        free(run->session_id);
        run->session_id = NULL;
        run->ws_fd = -1;                /* the store's */
}

/* Everything the run made on the host; the container is already deleted (or never was). */
void
mcp_run_free(mcp_run *run)
{
        mcp_engine *e = run->engine;
        bool fresh = !run->session_id && !run->was_session;
        char name[64];
        if (run->ws_mounted) {
                (void) umount2(run->ws_path, MNT_DETACH);
                run->ws_mounted = false;
        }
        if (run->session_id)
                session_release(run);
        else if (run->ws_fd >= 0 && !run->serve)        /* a sandbox's is the store's */
                close(run->ws_fd);
        run->ws_fd = -1;
        if (run->serve_fd >= 0)
                close(run->serve_fd);
        run->serve_fd = -1;
        if (run->ws_path[0] && fresh) {
                snprintf(name, sizeof name, "ws/%s", run->id);
                (void) mcp_remove_tree_at(e->inst_fd, name, NULL);
        }
        mcp_sandbox_userns_close(&run->userns);
        /* Its processes and its workspace are gone: the slice may go to another sandbox. */
        if (run->slice >= 0)
                mcp_slice_unref(e->slices, (unsigned) run->slice);
        run->slice = -1;
        /* Ends the run's network helper or egress proxy, if any. */
        if (run->usernet_fd >= 0)
                close(run->usernet_fd);
        run->usernet_fd = -1;
        run->proxy = mcp_proxy_free(run->proxy);
        mcp_egress_policy_done(&run->allow);
        if (run->bundle[0]) {           /* made (a queued run has none) */
                if (run->serve) {       /* its kernels' tmpfs, if mounted */
                        char kdir[4200];
                        snprintf(kdir, sizeof kdir, "%s/kernel", run->bundle);
                        (void) umount2(kdir, MNT_DETACH | UMOUNT_NOFOLLOW);
                }
                snprintf(name, sizeof name, "b/%s", run->id);
                (void) mcp_remove_tree_at(e->inst_fd, name, NULL);
        }
        if (run->log_path[0] && !run->log_kept)  /* cancelled or failed before the run */
                mcp_runlogs_forget(&e->logs, run->id, &run->log_reserve);
        mcp_runner_done(&run->runner);
        mcp_artifacts_snap_done(&run->before);
        mcp_run_plan_done(&run->plan);
        free(run->stdin_copy);
        *run->pprev = run->next;
        if (run->next)
                run->next->pprev = run->pprev;
        free(run);
}

static void
run_gone(mcp_runner *rn, void *data)
{
        mcp_run *run = data;
        mcp_engine *e = run->engine;
        (void) rn;
        if (run->serve && run->live)
                mcp_live_sandbox_gone(run->live, run);
        else
                mcp_run_free(run);
        run_start_later(e);             /* a queued run may have waited for its slice */
}

static void
run_output(mcp_runner *rn, mcp_stream stream, const char *buf, size_t len, void *data)
{
        mcp_run *run = data;
        (void) rn;
        if (run->on_output && !run->cancelled)
                run->on_output(run, stream, buf, len, run->data);
}

static void
run_exit(mcp_runner *rn, void *data)
{
        mcp_run *run = data;
        mcp_engine *e = run->engine;
        run->state = RUN_EXITED;
        if (run->serve) {
                if (run->live)
                        mcp_live_sandbox_exited(run->live, run);
                return;
        }
        e->n_running--;

        mcp_run_result res = {
                .sandbox_failed = rn->sandbox_failed,
                .exit_code = rn->exit_code,
                .term_signal = rn->term_signal,
                .timed_out = rn->timed_out,
                .oom_killed = rn->oom_killed,
                .stdout_truncated = rn->out.truncated,
                .stderr_truncated = rn->err.truncated,
                .stdout_buf = rn->out.buf ? rn->out.buf : "",
                .stdout_len = rn->out.len,
                .stderr_buf = rn->err.buf ? rn->err.buf : "",
                .stderr_len = rn->err.len,
                .duration_ms = rn->duration_ms,
                .cpu_usec = rn->cpu_usec,
                .memory_peak_bytes = rn->memory_peak,
                .run_id = run->id,
        };
        if (rn->sandbox_failed)
                snprintf(res.error, sizeof res.error, "%s", rn->error);
        mcp_run_finish(run, &res);
}

/* The status is the program's own: an OOM kill of a child the program survived still
 * shows its exit code, with oom_killed set. */
void
mcp_run_finish(mcp_run *run, mcp_run_result *res)
{
        mcp_engine *e = run->engine;
        mcp_artifact *arts = NULL;
        size_t n_arts = 0;
        if (run->cancelled) {
                session_release(run);
                run_start_later(e);
                return;
        }
        /* A kernel cell's images come first, then out/'s files (the caller's: borrowed). */
        const mcp_artifact *shown = res->artifacts;
        size_t n_shown = res->n_artifacts;
        if (!res->sandbox_failed && run->ws_fd >= 0) {
                char prefix[256];
                if (run->session_id)
                        snprintf(prefix, sizeof prefix, "sandbox://sessions/%s/files/",
                                 run->session_id);
                else
                        snprintf(prefix, sizeof prefix, "sandbox://runs/%s/files/", run->id);
                (void) mcp_artifacts_scan(run->ws_fd, &run->before, prefix,
                                          e->cfg->max_image_bytes, &arts, &n_arts, NULL);
        }
        _cleanup_free_ mcp_artifact *all = NULL;
        if (n_shown && (all = calloc(n_shown + n_arts, sizeof *all))) {
                memcpy(all, shown, n_shown * sizeof *all);
                if (n_arts)
                        memcpy(all + n_shown, arts, n_arts * sizeof *all);
                res->artifacts = all;
                res->n_artifacts = n_shown + n_arts;
        } else {
                res->artifacts = arts;
                res->n_artifacts = n_arts;
        }
        if (run->proxy) {
                /* The sandbox is gone: its connections end (and are logged) before done. */
                mcp_proxy_shutdown(run->proxy);
                res->n_denied_hosts = mcp_proxy_denied(run->proxy, &res->denied_hosts);
                res->n_upstream_errors = mcp_proxy_failed(run->proxy, &res->upstream_errors);
                res->network_bytes = mcp_proxy_bytes(run->proxy);
        }
        /* The program is done: the session is free for the next run at once. */
        session_release(run);
        mcp_runlogs_keep(&e->logs, run->id, &run->log_reserve, &run->runner.out,
                         &run->runner.err);
        run->log_kept = true;
        mcp_run_done_fn done = run->on_done;
        run->on_done = NULL;
        run->on_output = NULL;
        run->on_network = NULL;
        if (done && !run->cancelled)
                done(run, res, run->data);
        mcp_artifacts_free(arts, n_arts);
        run->proxy = mcp_proxy_free(run->proxy);
        run_start_later(e);
}

static int
check_request(mcp_engine *e, const mcp_run_request *req, int *ret, msp_err *err)
{
        if (!req->language)
                return msp_err_set(err, EINVAL, "language: missing");
        int lang = mcp_language_find(&e->langs, req->language);
        if (lang < 0)
                return msp_err_set(err, EINVAL, "language: '%.64s' is not available on this server",
                                   req->language);
        if (!req->code && req->code_len)
                return msp_err_set(err, EINVAL, "code: missing");
        for (size_t i = 0; i < req->n_env; i++) {
                int r = mcp_env_check(req->env[i], i, err);
                if (r < 0)
                        return r;
        }
        for (size_t i = 0; i < req->n_args; i++)
                if (!req->args[i])
                        return msp_err_set(err, EINVAL, "args[%zu]: null", i);
        *ret = lang;
        return 0;
}


/* The run's sandbox, made when it starts, not while it waits in the queue: queued runs hold
 * no workspace, bundle or user namespace, and their setup does not compete with the runs
 * running. */
int
mcp_run_prepare(mcp_run *run, msp_err *err)
{
        int r = mcp_run_setup(run, err);
        if (r < 0)
                return r;
        mcp_runner *rn = &run->runner;
        rn->on_output = run_output;
        rn->on_exit = run_exit;
        rn->on_gone = run_gone;
        rn->data = run;
        return 0;
}

/* A run that failed before or at spawn: no container exists. */
static void
run_fail_early(mcp_run *run)
{
        mcp_run_free(run);
}

int
mcp_run_spawn(mcp_run *run, msp_err *err)
{
        mcp_engine *e = run->engine;
        /* What out/ holds before the run (a session's earlier files) is not reported. */
        mcp_artifacts_snap_done(&run->before);
        if (run->ws_fd >= 0)
                (void) mcp_artifacts_snapshot(run->ws_fd, &run->before, NULL);
        int r = mcp_runner_start(&run->runner, &e->procs, err);
        if (run->serve_fd >= 0) {       /* the runtime has it, and pid 1 after it */
                close(run->serve_fd);
                run->serve_fd = -1;
        }
        if (r < 0)
                return r;
        run->state = RUN_RUNNING;
        if (!run->serve)
                e->n_running++;
        return 0;
}

/* A run given a slot, at submit or when it leaves the queue. */
static int
run_start(mcp_run *run, msp_err *err)
{
        if (run->live) {
                /* What out/ holds before the call (the session's files) is not reported. */
                mcp_artifacts_snap_done(&run->before);
                (void) mcp_artifacts_snapshot(run->ws_fd, &run->before, NULL);
                int r = mcp_live_call_start(run, err);
                if (r < 0)
                        return r;
                run->state = RUN_RUNNING;
                run->engine->n_running++;
                return 0;
        }
        int r = mcp_run_prepare(run, err);
        return r < 0 ? r : mcp_run_spawn(run, err);
}

/* A run's start needs a place among the running and, a fresh one, an id slice: one whose
 * last holder is still being deleted is not yet free. */
static bool
can_start(const mcp_engine *e, bool in_session)
{
        unsigned max_running = e->cfg->max_concurrent ? e->cfg->max_concurrent : 1;
        return e->n_running < max_running && (in_session || mcp_slice_available(e->slices));
}

static void
run_start_next(mcp_engine *e)
{
        while (e->qhead && can_start(e, e->qhead->was_session)) {
                mcp_run *run = e->qhead;
                e->qhead = run->qnext;
                if (!e->qhead)
                        e->qtail = &e->qhead;
                e->n_queued--;
                msp_err err = { 0 };
                if (run_start(run, &err) < 0) {
                        mcp_run_result res = { .sandbox_failed = true, .run_id = run->id,
                                               .stdout_buf = "", .stderr_buf = "" };
                        snprintf(res.error, sizeof res.error, "%s", err.msg);
                        run->on_network = NULL;
                        if (run->on_done)
                                run->on_done(run, &res, run->data);
                        run_fail_early(run);
                }
        }
}

static int
on_start_next(mcp_loop *l, void *data)
{
        mcp_engine *e = data;
        (void) l;
        e->start_timer = NULL;
        run_start_next(e);
        return 0;
}

/* A slot freed in a run's exit handler: the next queued run is set up and started in the
 * loop's next round, after what the handler queued for it (an HTTP response goes out from
 * a zero timer added during the handler) and before the ended run's delete (added after). */
static void
run_start_later(mcp_engine *e)
{
        if (!e->qhead || e->start_timer)
                return;
        if (mcp_loop_add_timer(e->loop, 0, on_start_next, e, &e->start_timer) < 0)
                run_start_next(e);
}

mcp_run *
mcp_run_alloc(mcp_engine *e, msp_err *err)
{
        mcp_run *run = calloc(1, sizeof *run);
        if (!run) {
                msp_err_set(err, ENOMEM, "out of memory");
                return NULL;
        }
        run->engine = e;
        run->ws_fd = -1;
        run->usernet_fd = -1;
        run->slice = -1;
        run->serve_fd = -1;
        run->call.conn = run->call.out_fd = run->call.err_fd = run->call.in_fd = -1;
        run->userns = (mcp_sandbox_userns) MCP_SANDBOX_USERNS_NONE;
        run->runner.out.log_fd = run->runner.err.log_fd = -1;
        run->runner.serve_fd = -1;
        run->state = RUN_QUEUED;
        memcpy(run->id, "r-", 2);
        if (random_hex(run->id + 2, 8) < 0) {
                free(run);
                msp_err_set(err, EIO, "getrandom failed");
                return NULL;
        }
        run->next = e->runs;
        if (run->next)
                run->next->pprev = &run->next;
        run->pprev = &e->runs;
        e->runs = run;
        return run;
}

/* A session's run goes into its live sandbox: as a call of its own, or the session's
 * kernel's cell (language with a kernel, not fresh). */
static int
live_of(mcp_run *run, const mcp_run_request *req, msp_err *err)
{
        mcp_engine *e = run->engine;
        mcp_live *l = mcp_live_find(e, req->session_id);
        int r = l ? 0 : mcp_live_new(e, req->session_id, &l, err);
        if (r < 0)
                return r;
        if (req->background && l->n_procs >= MCP_PROCESS_MAX)
                return msp_err_set(err, EUSERS, "background: session %s already has %u processes "
                                   "(the most it keeps); kill one with process_kill first",
                                   req->session_id, l->n_procs);
        run->live = l;
        run->background = req->background;
        run->fresh = req->fresh;
        run->kernel_cell = mcp_live_kernel_wanted(l, run->plan.lang->name, req->fresh,
                                                  req->background);
        return 0;
}

const char *
mcp_engine_run_id(const mcp_run *run)
{
        return run->id;
}

int
mcp_engine_submit(mcp_engine *e, const mcp_run_request *req, mcp_run_output_fn on_output,
                  mcp_run_done_fn on_done, void *data, mcp_run **ret, msp_err *err)
{
        int lang = -1;
        int r = check_request(e, req, &lang, err);
        if (r < 0)
                return r;
        /* Behind a queued run even when a slot is free (its start is due in the loop's next
         * round): first in, first started. */
        bool start_now = !e->qhead && can_start(e, req->session_id != NULL);
        if (!start_now && e->n_queued >= e->cfg->max_queue)
                return msp_err_set(err, EBUSY, "server busy: %u runs running and %u queued (--max-queue)",
                                   e->n_running, e->n_queued);

        mcp_run *run = mcp_run_alloc(e, err);
        if (!run)
                return -ENOMEM;
        run->on_output = on_output;
        run->on_done = on_done;
        run->data = data;
        r = mcp_run_claim(run, req, lang, err);
        if (r >= 0 && req->session_id)
                r = live_of(run, req, err);
        if (r < 0) {
                run_fail_early(run);
                return r;
        }
        if (start_now) {
                r = run_start(run, err);
                if (r < 0) {
                        run_fail_early(run);
                        return r;
                }
        } else {
                *e->qtail = run;
                e->qtail = &run->qnext;
                e->n_queued++;
        }
        if (ret)
                *ret = run;
        return 0;
}

void
mcp_engine_cancel(mcp_engine *e, mcp_run *run)
{
        if (!run || run->cancelled)
                return;
        run->cancelled = true;
        run->on_done = NULL;
        run->on_output = NULL;
        if (run->state == RUN_QUEUED) {
                for (mcp_run **p = &e->qhead; *p; p = &(*p)->qnext) {
                        if (*p != run)
                                continue;
                        *p = run->qnext;
                        if (!*p)
                                e->qtail = p;
                        break;
                }
                e->n_queued--;
                run_fail_early(run);
                return;
        }
        if (run->live) {
                mcp_live_call_cancel(run);
                return;
        }
        run->runner.cancelled = true;
        mcp_runner_kill(&run->runner);
}

mcp_engine *
mcp_engine_free(mcp_engine *e)
{
        if (!e)
                return NULL;
        /* Live sessions first (their calls, then their sandboxes), then the other
         * containers (killed until their `run` exits, then deleted), then every child is
         * reaped. */
        while (e->lives)
                mcp_live_stop(e->lives);
        for (mcp_run *run = e->runs; run; run = run->next) {
                run->on_done = NULL;
                run->on_output = NULL;
                run->cancelled = run->runner.cancelled = true;
                if (run->state == RUN_RUNNING)
                        mcp_runner_kill_sync(&run->runner);
                else if (run->state == RUN_EXITED && !run->runner.gone) {
                        const char *argv[] = { e->cfg->runtime_path, "--root", e->runtime_root,
                                               "delete", "--force", run->id, NULL };
                        (void) mcp_spawn_wait(argv, NULL);
                }
        }
        if (e->start_timer)
                mcp_timer_cancel(e->loop, e->start_timer);
        e->start_timer = NULL;
        mcp_procset_wait_all(&e->procs);
        while (e->runs) {
                mcp_run *run = e->runs;
                /* Its children were reaped above. */
                run->runner.run = run->runner.killer = run->runner.deleter = NULL;
                mcp_run_free(run);
        }
        e->resolver = mcp_resolver_free(e->resolver);
        mcp_user_cgroup_leave(&e->user_cg);
        e->sessions = e->sessions ? mcp_sessions_free(e->sessions) : NULL;
        e->seccomp = e->seccomp ? oci_json_doc_free(e->seccomp) : NULL;
        e->landlock = e->landlock ? oci_json_doc_free(e->landlock) : NULL;
        for (size_t i = 0; i < MCP_ROOTFS_MAX; i++) {
                if (!e->rootfs_mounted[i])
                        continue;
                char name[64];
                for (unsigned k = 0; e->slice_views && k < e->n_slices; k++) {
                        if (!e->slice_views[i * e->n_slices + k])
                                continue;
                        snprintf(name, sizeof name, "rootfs-%zu-s%u", i, k);
                        mcp_rootfs_view_release(e->inst_path, name);
                }
                snprintf(name, sizeof name, "rootfs-%zu", i);
                mcp_rootfs_view_release(e->inst_path, name);
        }
        free(e->slice_views);
        e->slices = mcp_slices_free(e->slices);
        if (e->view_mounted)
                mcp_private_view_release(e->inst_path);
        if (e->inst_fd >= 0) {
                mcp_recover_instance(e->cfg, e->inst_path, e->inst_name, false);
                close(e->inst_fd);
        }
        mcp_runlogs_free(&e->logs);
        mcp_keptfiles_free(&e->kept);
        free(e);
        return NULL;
}
