/* The run engine: instance directory, queue, one bundle and workspace per run.
 *
 * Layout of the instance directory <state_dir>/inst-<pid>-<hex>/ (locked with flock for as
 * long as this process lives; recover.c cleans the ones whose lock is free):
 *   runtime-path   which runtime made the containers (for recovery)
 *   runtime/       the runtime's --root
 *   rootfs/        the shared skeleton (bundle.c), on a tmpfs of its own
 *   b/<run_id>/    config.json, code/main.<ext>, runtime.log; b/ is a tmpfs holding the
 *                  init's copy too (mcp_private_view: no bind source names a host path)
 *   ws/<run_id>/   a fresh workspace: a size-capped tmpfs mounted there
 *   logs/<run_id>.out|.err   full output of the last run_log_keep runs (runlogs.c: within a
 *                  byte budget)
 *
 * msp-mcp unshares its mount namespace (made private, recursively) in mcp_engine_new(), so
 * that the tmpfs mounts (workspaces, bundles, skeleton) are invisible to the host and
 * vanish with the process. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "artifacts.h"
#include "bundle.h"
#include "engine.h"
#include "sandbox-ids.h"
#include "files.h"
#include "json.h"
#include "languages.h"
#include "recover.h"
#include "rootless.h"
#include "runlogs.h"
#include "runner.h"
#include "sandbox-userns.h"
#include "session.h"
#include "usernet.h"

#define RUN_ID_LEN 18                   /* "r-" + 16 hex */
#define MCP_ROOTFS_MAX 32               /* prepared rootfs views per instance */

typedef enum run_state { RUN_QUEUED, RUN_RUNNING, RUN_EXITED } run_state;

struct mcp_run {
        mcp_run *next, **pprev;         /* engine->runs */
        mcp_run *qnext;                 /* engine->queue */
        mcp_engine *engine;
        run_state state;
        char id[RUN_ID_LEN + 1];
        mcp_runner runner;
        mcp_run_output_fn on_output;
        mcp_run_done_fn on_done;
        void *data;
        bool cancelled;
        char *stdin_copy;
        char *session_id;               /* acquired until the container exits */
        bool was_session;
        bool log_kept;                  /* its logs are in engine->logs */
        uint64_t log_reserve;           /* its share of the logs' budget while it runs */
        int ws_fd;                      /* fresh: owned; session: borrowed */
        int usernet_fd;                 /* with network: the only writer of the helper's exit
                                         * FIFO (usernet.h); -1 otherwise */
        mcp_sandbox_userns userns;      /* kept until the run is gone */
        mcp_proxy *proxy;               /* an allowlist run's egress proxy (proxy.h) */
        mcp_egress_policy allow;        /* its policy */
        mcp_proxy_event_fn on_network;
        bool ws_mounted;
        mcp_artifacts_snap before;      /* out/ before the run */
        char bundle[4096];
        char ws_path[4096];
        char log_path[4200];            /* the runtime's --log */
        char root_path[2100];           /* a prepared rootfs' view */
};

struct mcp_engine {
        mcp_loop *loop;
        const mcp_config *cfg;
        char inst_name[64];
        char inst_path[2048];
        char runtime_root[2100];
        char skeleton[2100];
        char init_path[2100];           /* the init's copy (mcp_private_view), "" for none */
        bool view_mounted;
        int inst_fd;                    /* holds the flock */
        bool v2;                        /* pure cgroup v2 */
        bool unified;                   /* hybrid with a v2 mount at /sys/fs/cgroup/unified */
        mcp_rootless rootless;          /* run by a user: in a user namespace of our own */
        bool no_cgroup;                 /* rootless without a delegated cgroup: the limits are
                                         * rlimits, tmpfs sizes and the timeout (bundle.h) */
        mcp_hostview view;
        mcp_languages langs;
        oci_json_doc *seccomp, *landlock;
        mcp_session_store *sessions;
        mcp_procset procs;
        mcp_run *runs;
        mcp_run *qhead, **qtail;
        unsigned n_running, n_queued;
        mcp_runlogs logs;
        bool rootfs_mounted[MCP_ROOTFS_MAX];    /* <inst>/rootfs-<i>: overlay of cfg->rootfs[i] */
};

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
        _cleanup_close_ int fd = openat(e->inst_fd, "runtime-path",
                                        O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd < 0 || write(fd, e->cfg->runtime_path, strlen(e->cfg->runtime_path)) < 0)
                return msp_err_sys(err, errno, "write '%s/runtime-path'", e->inst_path);
        snprintf(e->runtime_root, sizeof e->runtime_root, "%s/runtime", e->inst_path);
        snprintf(e->skeleton, sizeof e->skeleton, "%s/rootfs", e->inst_path);
        if (e->cfg->init_path)
                snprintf(e->init_path, sizeof e->init_path, "%s/b/" MCP_INIT_COPY, e->inst_path);
        r = mcp_private_view(e->inst_fd, e->inst_path, e->cfg->init_path, err);
        e->view_mounted = true;
        if (r < 0)
                return r;
        return mcp_skeleton_create(e->inst_fd, "rootfs", &e->view, err);
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

int
mcp_engine_new(mcp_loop *loop, const mcp_config *cfg, mcp_engine **ret, msp_err *err)
{
        if (!cfg->runtime_path || cfg->runtime_path[0] != '/')
                return msp_err_set(err, EINVAL, "runtime path '%s' is not absolute",
                                   cfg->runtime_path ? cfg->runtime_path : "(null)");
        int r = check_init(cfg->init_path, err);
        if (r < 0)
                return r;
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
        if (!e->rootless.on && (r = mcp_sandbox_ids_claim(cfg->sandbox_ids, err)) < 0)
                goto fail;
        /* Best effort: dead servers' leftovers. Before our own user namespace: run by a user,
         * a dead server's sandboxes are in namespaces below its own, over which the user
         * holds capabilities only from the initial namespace. */
        (void) mcp_recover(cfg, NULL);
        if ((r = private_mounts(&e->rootless, cfg->state_dir, err)) < 0)
                goto fail;
        if ((r = mcp_hostview_probe(&e->view, err)) < 0)
                goto fail;
        /* Before the skeleton: what the languages link to are mount points in it. */
        {
                _cleanup_close_ int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
                mcp_languages_detect(root, &e->view, &e->langs);
        }
        if ((r = make_instance(e, err)) < 0)
                goto fail;
        for (size_t i = 0; i < cfg->n_rootfs && i < MCP_ROOTFS_MAX; i++) {
                if (!cfg->rootfs[i].path)
                        continue;
                char name[32];
                snprintf(name, sizeof name, "rootfs-%zu", i);
                if ((r = mcp_rootfs_view(e->inst_fd, e->inst_path, name, cfg->rootfs[i].path,
                                         err)) < 0)
                        goto fail;
                e->rootfs_mounted[i] = true;
        }
        if ((r = load_profile("seccomp", cfg->seccomp_profile, mcp_profile_seccomp, &e->seccomp,
                              err)) < 0 ||
            (r = load_profile("landlock", cfg->landlock_profile, mcp_profile_landlock,
                              &e->landlock, err)) < 0)
                goto fail;
        e->no_cgroup = e->rootless.on;
        e->v2 = access("/sys/fs/cgroup/cgroup.controllers", F_OK) == 0;
        e->unified = !e->v2 && access("/sys/fs/cgroup/unified/cgroup.controllers", F_OK) == 0;
        if ((r = mcp_runlogs_init(&e->logs, e->inst_fd, cfg->run_log_keep, err)) < 0)
                goto fail;
        if ((r = mcp_sessions_new(loop, cfg, &e->sessions, err)) < 0)
                goto fail;
        mcp_sessions_set_evict(e->sessions, session_evict, e);
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

/* ---- one run ---- */

static void run_start_next(mcp_engine *e);

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
static void
run_cleanup(mcp_run *run)
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
        else if (run->ws_fd >= 0)
                close(run->ws_fd);
        run->ws_fd = -1;
        if (run->ws_path[0] && fresh) {
                snprintf(name, sizeof name, "ws/%s", run->id);
                (void) mcp_remove_tree_at(e->inst_fd, name, NULL);
        }
        mcp_sandbox_userns_close(&run->userns);
        /* Ends the run's network helper or egress proxy, if any. */
        if (run->usernet_fd >= 0)
                close(run->usernet_fd);
        run->usernet_fd = -1;
        run->proxy = mcp_proxy_free(run->proxy);
        mcp_egress_policy_done(&run->allow);
        snprintf(name, sizeof name, "b/%s", run->id);
        (void) mcp_remove_tree_at(e->inst_fd, name, NULL);
        if (!run->log_kept)             /* cancelled or failed before the run */
                mcp_runlogs_forget(&e->logs, run->id, &run->log_reserve);
        mcp_runner_done(&run->runner);
        mcp_artifacts_snap_done(&run->before);
        free(run->stdin_copy);
        *run->pprev = run->next;
        if (run->next)
                run->next->pprev = run->pprev;
        free(run);
}

static void
run_gone(mcp_runner *rn, void *data)
{
        (void) rn;
        run_cleanup(data);
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
                .run_id = run->id,
        };
        if (rn->sandbox_failed)
                snprintf(res.error, sizeof res.error, "%s", rn->error);
        /* The status is the program's own: an OOM kill of a child the program survived
         * still shows its exit code, with oom_killed set. */
        mcp_artifact *arts = NULL;
        size_t n_arts = 0;
        if (run->cancelled) {
                session_release(run);
                run_start_next(e);
                return;
        }
        if (!rn->sandbox_failed && run->ws_fd >= 0) {
                char prefix[256];
                if (run->session_id)
                        snprintf(prefix, sizeof prefix, "sandbox://sessions/%s/files/",
                                 run->session_id);
                else
                        snprintf(prefix, sizeof prefix, "sandbox://runs/%s/files/", run->id);
                (void) mcp_artifacts_scan(run->ws_fd, &run->before, prefix,
                                          e->cfg->max_image_bytes, &arts, &n_arts, NULL);
        }
        res.artifacts = arts;
        res.n_artifacts = n_arts;
        if (run->proxy) {
                /* The sandbox is gone: its connections end (and are logged) before done. */
                mcp_proxy_shutdown(run->proxy);
                res.n_denied_hosts = mcp_proxy_denied(run->proxy, &res.denied_hosts);
                res.network_bytes = mcp_proxy_bytes(run->proxy);
        }
        /* The container is dead: the session is free for the next run at once. */
        session_release(run);
        mcp_runlogs_keep(&e->logs, run->id, &run->log_reserve, &run->runner.out,
                         &run->runner.err);
        run->log_kept = true;
        mcp_run_done_fn done = run->on_done;
        run->on_done = NULL;
        run->on_output = NULL;
        run->on_network = NULL;
        if (done && !run->cancelled)
                done(run, &res, run->data);
        mcp_artifacts_free(arts, n_arts);
        run->proxy = mcp_proxy_free(run->proxy);
        run_start_next(e);
}

static uint64_t
pick(uint64_t req, uint64_t dflt)
{
        return req ? req : dflt;
}

static mcp_limits
effective_limits(const mcp_limits *req, const mcp_limits *base)
{
        return (mcp_limits){
                .memory_bytes = pick(req->memory_bytes, base->memory_bytes),
                .pids = pick(req->pids, base->pids),
                .cpu_millis = pick(req->cpu_millis, base->cpu_millis),
                .timeout_ms = pick(req->timeout_ms, base->timeout_ms),
                .output_bytes = pick(req->output_bytes, base->output_bytes),
                .tmp_bytes = pick(req->tmp_bytes, base->tmp_bytes),
                .workspace_bytes = pick(req->workspace_bytes, base->workspace_bytes),
        };
}

/* A fresh workspace: ws/<id> with a tmpfs of workspace_bytes owned by the sandbox user. */
static int
fresh_workspace(mcp_run *run, uint64_t bytes, msp_err *err)
{
        mcp_engine *e = run->engine;
        char name[64], opts[128];
        snprintf(name, sizeof name, "ws/%s", run->id);
        snprintf(run->ws_path, sizeof run->ws_path, "%s/%s", e->inst_path, name);
        if (mkdirat(e->inst_fd, name, 0700) < 0)
                return msp_err_sys(err, errno, "workspace '%s'", run->ws_path);
        /* 0700: the sandbox's files are the sandbox's and the server's only (the state dir
         * must be traversable by the sandbox's ids, so by everyone). */
        snprintf(opts, sizeof opts, "size=%" PRIu64 ",nr_inodes=65536,mode=0700,uid=%u,gid=%u", bytes,
                 MCP_SANDBOX_HOST_UID, MCP_SANDBOX_HOST_GID);
        if (mount("tmpfs", run->ws_path, "tmpfs", MS_NOSUID | MS_NODEV, opts) < 0)
                return msp_err_sys(err, errno, "workspace '%s': mount tmpfs", run->ws_path);
        run->ws_mounted = true;
        run->ws_fd = openat(e->inst_fd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (run->ws_fd < 0)
                return msp_err_sys(err, errno, "workspace '%s'", run->ws_path);
        return 0;
}

static int
write_at(int dirfd, const char *name, const char *data, size_t len, mode_t mode, msp_err *err)
{
        _cleanup_close_ int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
        if (fd < 0)
                return msp_err_sys(err, errno, "create '%s'", name);
        while (len > 0) {
                ssize_t n = write(fd, data, len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return msp_err_sys(err, n < 0 ? errno : EIO, "write '%s'", name);
                data += n;
                len -= (size_t) n;
        }
        return 0;
}

static void
net_event(mcp_proxy_event ev, const char *host, uint16_t port, const char *reason,
          uint64_t bytes, void *data)
{
        mcp_run *run = data;
        if (run->on_network && !run->cancelled)
                run->on_network(ev, host, port, reason, bytes, run->data);
}

/* An allowlist run: the proxy's socket in the bundle (b/<id>/proxy.sock, connectable by
 * the sandbox's group only), the empty file in the code dir it is bound over, and the proxy
 * serving it in the loop. Bound through /proc/self/fd: the bundle's path may be longer than
 * a socket address holds. */
static int
make_proxy(mcp_run *run, int bfd, int cfd, char *sock_path, size_t size, msp_err *err)
{
        mcp_engine *e = run->engine;
        int r = write_at(cfd, "proxy.sock", "", 0, 0600, err);
        if (r < 0)
                return r;
        _cleanup_close_ int lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        snprintf(sa.sun_path, sizeof sa.sun_path, "/proc/self/fd/%d/proxy.sock", bfd);
        if (lfd < 0 || bind(lfd, (struct sockaddr *) &sa, sizeof sa) < 0 || listen(lfd, 64) < 0)
                return msp_err_sys(err, errno, "egress proxy: socket in '%s'", run->bundle);
        if (fchownat(bfd, "proxy.sock", 0, MCP_SANDBOX_HOST_GID, AT_SYMLINK_NOFOLLOW) < 0 ||
            fchmodat(bfd, "proxy.sock", 0660, 0) < 0)
                return msp_err_sys(err, errno, "egress proxy: chown 'proxy.sock'");
        snprintf(sock_path, size, "%s/proxy.sock", run->bundle);
        mcp_proxy_conf conf = { .policy = &run->allow, .pins = e->cfg->resolve,
                                .n_pins = e->cfg->n_resolve,
                                .max_conns = e->cfg->network_max_conns,
                                .max_bytes = e->cfg->network_max_bytes,
                                .idle_ms = e->cfg->network_idle_ms };
        return mcp_proxy_new(e->loop, TAKE_FD(lfd), &conf, net_event, run, &run->proxy, err);
}

/* The bundle: b/<id>/{code/main.<ext>, config.json}. */
static int
make_bundle(mcp_run *run, const mcp_run_request *req, const mcp_language *lang,
            const char *interp, const mcp_limits *lim, bool network, bool proxy, const char *root_path,
            bool host_view, const mcp_rootfs *rootfs, msp_err *err)
{
        mcp_engine *e = run->engine;
        char name[64];
        snprintf(name, sizeof name, "b/%s", run->id);
        snprintf(run->bundle, sizeof run->bundle, "%s/%s", e->inst_path, name);
        if (mkdirat(e->inst_fd, name, 0711) < 0)
                return msp_err_sys(err, errno, "bundle '%s'", run->bundle);
        _cleanup_close_ int bfd = openat(e->inst_fd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        /* The agent's code is readable by the sandbox's group and root only: the state dir
         * is traversable by everyone (the runtime's remapped root must get through), the
         * bundle path shows in ps, and the program's name is predictable. */
        if (bfd < 0 || mkdirat(bfd, "code", 0711) < 0)
                return msp_err_sys(err, errno, "bundle '%s'", run->bundle);
        _cleanup_close_ int cfd = openat(bfd, "code", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        char prog[64], code_path[4200], cg[256];
        snprintf(prog, sizeof prog, "main.%s", lang->ext);
        int r = write_at(cfd, prog, req->code, req->code_len, 0640, err);
        if (r < 0)
                return r;
        if (fchownat(cfd, prog, 0, MCP_SANDBOX_HOST_GID, AT_SYMLINK_NOFOLLOW) < 0)
                return msp_err_sys(err, errno, "chown '%s'", prog);
        /* The mount point of the init's bind (the code dir is mounted read-only first). */
        if ((r = write_at(cfd, "init", "", 0, 0600, err)) < 0)
                return r;

        /* argv: the language's template, then the request's args. */
        char prog_path[96];
        snprintf(prog_path, sizeof prog_path, MCP_CODE_DIR "/%s", prog);
        _cleanup_free_ const char **argv = NULL;
        if ((r = mcp_language_argv(lang, interp, prog_path, req->args, req->n_args, &argv,
                                   err)) < 0)
                return r;

        char sock_path[4200];
        if (proxy && (r = make_proxy(run, bfd, cfd, sock_path, sizeof sock_path, err)) < 0)
                return r;
        snprintf(code_path, sizeof code_path, "%s/code", run->bundle);
        snprintf(cg, sizeof cg, "/msp-mcp/%s/%s", e->inst_name, run->id);
        /* Counted per user id; without a cgroup it is the processes limit itself, and each
         * sandbox's own user namespace keeps the count to that sandbox (the kernel counts
         * per namespace since Linux 5.14). */
        uint64_t nproc = e->no_cgroup ? lim->pids : lim->pids * (e->cfg->max_concurrent + 1);
        if (mcp_sandbox_userns_wanted(e->cfg->runtime_path) && (r = mcp_sandbox_userns_make(&run->userns, err)) < 0)
                return r;
        mcp_bundle_spec spec = {
                .root_path = root_path,
                .host_view = host_view,
                .view = &e->view,
                .argv = argv,
                .env = req->env,
                .n_env = req->n_env,
                .image_env = rootfs ? rootfs->env : NULL,
                .cwd = rootfs ? rootfs->workdir : NULL,
                .read_dirs = rootfs ? rootfs->read_dirs : NULL,
                .workspace_path = run->ws_path,
                .code_path = code_path,
                .init_path = e->init_path[0] ? e->init_path : NULL,
                .cgroups_path = e->no_cgroup ? NULL : cg,
                .network = network,
                .usernet_helper = e->cfg->usernet_path,
                .proxy_port = proxy ? MCP_PROXY_PORT : 0,
                .proxy_socket = proxy ? sock_path : NULL,
                .limits = *lim,
                .nproc = nproc < 1024 && !e->no_cgroup ? 1024 : nproc,
                .seccomp = oci_json_doc_root(e->seccomp),
                .landlock = oci_json_doc_root(e->landlock),
                .userns_hook = e->cfg->userns_hook,
                .userns_path = run->userns.fd >= 0 ? run->userns.path : NULL,
        };
        _cleanup_free_ char *json = NULL;
        size_t json_len;
        if ((r = mcp_bundle_config(&spec, &json, &json_len, err)) < 0)
                return r;
        if ((r = write_at(bfd, "config.json", json, json_len, 0600, err)) < 0)
                return r;
        if (network && (r = mcp_usernet_prepare(bfd, &run->usernet_fd, err)) < 0)
                return r;

        mcp_runner *rn = &run->runner;
        if (e->no_cgroup) {
                /* The timeout kills pid 1 through the runtime: the pid namespace goes with it. */
        } else if (e->v2) {
                snprintf(rn->oom_file, sizeof rn->oom_file, "/sys/fs/cgroup%s/memory.events", cg);
                snprintf(rn->kill_file, sizeof rn->kill_file, "/sys/fs/cgroup%s/cgroup.kill", cg);
        } else {
                snprintf(rn->oom_file, sizeof rn->oom_file,
                         "/sys/fs/cgroup/memory%s/memory.oom_control", cg);
                if (e->unified)
                        snprintf(rn->kill_file, sizeof rn->kill_file,
                                 "/sys/fs/cgroup/unified%s/cgroup.kill", cg);
        }
        return 0;
}

/* The index of a configured rootfs with a view mounted, or -1. */
static int
find_rootfs(const mcp_engine *e, const char *name)
{
        for (size_t i = 0; i < e->cfg->n_rootfs && i < MCP_ROOTFS_MAX; i++)
                if (strcmp(e->cfg->rootfs[i].name, name) == 0 && e->rootfs_mounted[i])
                        return (int) i;
        return -1;
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

static int
copy_policy(mcp_run *run, const mcp_egress_policy *allow, msp_err *err)
{
        for (size_t i = 0; allow && i < allow->n; i++) {
                int r = mcp_egress_policy_add(&run->allow, allow->rules[i].text, err);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int
run_prepare(mcp_run *run, const mcp_run_request *req, int lang_index, msp_err *err)
{
        mcp_engine *e = run->engine;
        const mcp_language *lang = e->langs.langs[lang_index];
        char interp[MCP_INTERP_MAX];
        snprintf(interp, sizeof interp, "%s", e->langs.interp[lang_index]);
        mcp_limits lim;
        bool network = false;
        const char *root_path = e->skeleton;
        bool host_view = true;
        const mcp_rootfs *rootfs = NULL;
        int r;

        if (req->session_id) {
                const char *path;
                mcp_session_info info;
                r = mcp_session_acquire(e->sessions, req->session_id, &run->ws_fd, &path, &info,
                                        err);
                if (r == -EBUSY)
                        return -EAGAIN;         /* not the server's queue: err says why */
                if (r < 0)
                        return r;
                run->was_session = true;
                run->session_id = strdup(req->session_id);
                if (!run->session_id) {
                        mcp_session_release(e->sessions, req->session_id);
                        return msp_err_set(err, ENOMEM, "out of memory");
                }
                snprintf(run->ws_path, sizeof run->ws_path, "%s", path);
                lim = effective_limits(&req->limits, &info.limits);
                lim = effective_limits(&lim, &e->cfg->defaults);
                network = info.network && e->cfg->allow_network;
                if (network && (r = mcp_usernet_check(e->cfg->usernet_path, err)) < 0)
                        return r;
                if ((r = copy_policy(run, info.allow, err)) < 0)
                        return r;
                if (info.rootfs && strcmp(info.rootfs, "host") != 0) {
                        int i = find_rootfs(e, info.rootfs);
                        if (i < 0)
                                return msp_err_set(err, ENOENT, "session rootfs '%s' is not configured",
                                                   info.rootfs);
                        snprintf(run->root_path, sizeof run->root_path, "%s/rootfs-%d",
                                 e->inst_path, i);
                        root_path = run->root_path;
                        host_view = false;
                        rootfs = &e->cfg->rootfs[i];
                        _cleanup_close_ int rfd = open(root_path, O_PATH | O_DIRECTORY | O_CLOEXEC);
                        if (rfd < 0 || !mcp_language_resolve(lang, rfd, interp))
                                return msp_err_set(err, ENOENT,
                                                   "language: '%s' is not available in rootfs '%s' "
                                                   "(no %s in /usr/bin, /bin or /usr/local/bin)",
                                                   lang->name, info.rootfs, lang->prog);
                }
        } else {
                lim = effective_limits(&req->limits, &e->cfg->defaults);
                if ((r = fresh_workspace(run, lim.workspace_bytes, err)) < 0)
                        return r;
                network = req->network == MCP_NET_FULL && e->cfg->allow_network;
                if (network && (r = mcp_usernet_check(e->cfg->usernet_path, err)) < 0)
                        return r;
                if (req->network == MCP_NET_ALLOW && (r = copy_policy(run, req->allow, err)) < 0)
                        return r;
        }
        for (size_t i = 0; i < req->n_files; i++) {
                const mcp_file_in *f = &req->files[i];
                r = mcp_workspace_write_file(run->ws_fd, f->path, f->data, f->len, f->executable,
                                             err);
                if (r < 0)
                        return msp_err_prefix(err, "files[%zu]", i);
        }
        run->on_network = req->on_network;
        if ((r = make_bundle(run, req, lang, interp, &lim, network, run->allow.n > 0, root_path,
                             host_view, rootfs, err)) < 0)
                return r;

        mcp_runner *rn = &run->runner;
        snprintf(run->log_path, sizeof run->log_path, "%s/runtime.log", run->bundle);
        rn->log_path = run->log_path;
        rn->runtime = e->cfg->runtime_path;
        rn->runtime_root = e->runtime_root;
        rn->bundle = run->bundle;
        rn->id = run->id;
        rn->timeout_ms = lim.timeout_ms;
        rn->init_status = e->cfg->init_path != NULL;
        rn->out = (mcp_capture){ .limit = lim.output_bytes, .log_fd = -1 };
        rn->err = (mcp_capture){ .limit = lim.output_bytes, .log_fd = -1 };
        mcp_runlogs_open(&e->logs, run->id, &rn->out, &rn->err, &run->log_reserve);
        if (req->stdin_data) {
                run->stdin_copy = malloc(req->stdin_len ? req->stdin_len : 1);
                if (!run->stdin_copy)
                        return msp_err_set(err, ENOMEM, "out of memory");
                memcpy(run->stdin_copy, req->stdin_data, req->stdin_len);
                rn->stdin_data = run->stdin_copy;
                rn->stdin_len = req->stdin_len;
        }
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
        run_cleanup(run);
}

static int
run_spawn(mcp_run *run, msp_err *err)
{
        mcp_engine *e = run->engine;
        /* What out/ holds before the run (a session's earlier files) is not reported. */
        mcp_artifacts_snap_done(&run->before);
        if (run->ws_fd >= 0)
                (void) mcp_artifacts_snapshot(run->ws_fd, &run->before, NULL);
        int r = mcp_runner_start(&run->runner, &e->procs, err);
        if (r < 0)
                return r;
        run->state = RUN_RUNNING;
        e->n_running++;
        return 0;
}

static void
run_start_next(mcp_engine *e)
{
        while (e->qhead && e->n_running < (e->cfg->max_concurrent ? e->cfg->max_concurrent : 1)) {
                mcp_run *run = e->qhead;
                e->qhead = run->qnext;
                if (!e->qhead)
                        e->qtail = &e->qhead;
                e->n_queued--;
                msp_err err = { 0 };
                if (run_spawn(run, &err) < 0) {
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
        unsigned max_running = e->cfg->max_concurrent ? e->cfg->max_concurrent : 1;
        if (e->n_running >= max_running && e->n_queued >= e->cfg->max_queue)
                return msp_err_set(err, EBUSY, "server busy: %u runs running and %u queued (--max-queue)",
                                   e->n_running, e->n_queued);

        mcp_run *run = calloc(1, sizeof *run);
        if (!run)
                return msp_err_set(err, ENOMEM, "out of memory");
        run->engine = e;
        run->ws_fd = -1;
        run->usernet_fd = -1;
        run->userns = (mcp_sandbox_userns) MCP_SANDBOX_USERNS_NONE;
        run->runner.out.log_fd = run->runner.err.log_fd = -1;
        run->on_output = on_output;
        run->on_done = on_done;
        run->data = data;
        run->state = RUN_QUEUED;
        memcpy(run->id, "r-", 2);
        if (random_hex(run->id + 2, 8) < 0) {
                free(run);
                return msp_err_set(err, EIO, "getrandom failed");
        }
        run->next = e->runs;
        if (run->next)
                run->next->pprev = &run->next;
        run->pprev = &e->runs;
        e->runs = run;

        r = run_prepare(run, req, lang, err);
        if (r < 0) {
                run_fail_early(run);
                return r;
        }
        if (e->n_running < max_running) {
                r = run_spawn(run, err);
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
        run->runner.cancelled = true;
        mcp_runner_kill(&run->runner);
}

mcp_engine *
mcp_engine_free(mcp_engine *e)
{
        if (!e)
                return NULL;
        /* Containers first (killed until their `run` exits, then deleted), then every
         * child is reaped. */
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
        mcp_procset_wait_all(&e->procs);
        while (e->runs) {
                mcp_run *run = e->runs;
                /* Its children were reaped above. */
                run->runner.run = run->runner.killer = run->runner.deleter = NULL;
                run_cleanup(run);
        }
        e->sessions = e->sessions ? mcp_sessions_free(e->sessions) : NULL;
        e->seccomp = e->seccomp ? oci_json_doc_free(e->seccomp) : NULL;
        e->landlock = e->landlock ? oci_json_doc_free(e->landlock) : NULL;
        for (size_t i = 0; i < MCP_ROOTFS_MAX; i++) {
                if (!e->rootfs_mounted[i])
                        continue;
                char p[2200];
                snprintf(p, sizeof p, "%s/rootfs-%zu", e->inst_path, i);
                (void) umount2(p, MNT_DETACH);
        }
        if (e->view_mounted)
                mcp_private_view_release(e->inst_path);
        if (e->inst_fd >= 0) {
                mcp_recover_instance(e->cfg, e->inst_path, e->inst_name, false);
                close(e->inst_fd);
        }
        mcp_runlogs_free(&e->logs);
        free(e);
        return NULL;
}
