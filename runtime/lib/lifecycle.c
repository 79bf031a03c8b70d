/* start, kill, delete and loading an existing container. */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/cgroup/cgroup.h"
#include "lib/fileio.h"
#include "lib/container.h"
#include "lib/hooks.h"
#include "lib/log.h"
#include "lib/ns.h"
#include "lib/procfs.h"
#include "lib/statedir.h"

int
rt_container_load_config(rt_container *c, msp_err *err)
{
        _cleanup_free_ char *buf = NULL;
        size_t len = 0;

        if (c->spec)
                return 0;
        int r = rt_read_file_at(c->dirfd, RT_CONFIG_NAME, true, OCI_CONFIG_MAX_BYTES, &buf, &len,
                                err);

        if (r < 0)
                return msp_err_prefix(err, "container '%s'", c->id);
        return oci_spec_parse_data(RT_CONFIG_NAME, buf, len, &c->spec, err);
}

int
rt_container_load(const rt_ctx *ctx, const char *id, bool exclusive, rt_container **ret,
                  msp_err *err)
{
        _cleanup_container_ rt_container *c = calloc(1, sizeof *c);
        int r;

        if (!c)
                return msp_err_set(err, ENOMEM, "out of memory");
        c->rootfd = c->dirfd = c->pidfd = -1;
        c->id = strdup(id);
        if (!c->id)
                return msp_err_set(err, ENOMEM, "out of memory");
        r = rt_id_validate(id, err);
        if (r < 0)
                return r;
        r = rt_state_root_open(ctx, false, &c->rootfd, err);
        if (r == -ENOENT)
                return msp_err_set(err, ENOENT, "container '%s' does not exist", id);
        if (r < 0)
                return r;
        r = rt_statedir_open(c->rootfd, id, exclusive, &c->dirfd, err);
        if (r < 0)
                return r;
        r = rt_state_load(c->dirfd, id, &c->state, err);
        if (r < 0)
                return r;
        rt_state_refresh(c->state, c->dirfd);
        *ret = TAKE_PTR(c);
        return 0;
}

/* After the start byte: wait until the user process has been exec'd. The init keeps its
 * fifo fd (close-on-exec) until execve, so the fifo loses its last reader, which poll()
 * reports to a writer as POLLERR; the pidfd covers an init that dies first. An init
 * that fails before its execve leaves a byte in the fifo (so does one that died before
 * taking the start byte): a byte there means the process never ran. Returns 0 when it
 * was exec'd, -ESRCH when not. */
static int
wait_exec(int dirfd, int fifo_wr, const oci_state *st)
{
        _cleanup_close_ int pidfd = (int) syscall(SYS_pidfd_open, st->pid, 0);
        struct pollfd p[2] = { { .fd = fifo_wr, .events = 0 }, { .fd = pidfd, .events = POLLIN } };
        char byte;
        int r;

        do
                r = poll(p, pidfd >= 0 ? 2 : 1, -1);
        while (r < 0 && errno == EINTR);
        if (r < 0)
                return -errno;
        _cleanup_close_ int rd = openat(dirfd, RT_FIFO_NAME, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        if (rd < 0)
                return -errno;
        return read(rd, &byte, 1) == 1 ? -ESRCH : 0;
}

int
rt_container_start(const rt_ctx *ctx, rt_container *c, msp_err *err)
{
        _cleanup_close_ int fd = -1;
        int r;

        if (strcmp(c->state->status, "created") != 0)
                return msp_err_set(err, EINVAL, "cannot start container '%s': it is %s, not created",
                                   c->id, c->state->status);
        rt_debug(ctx, "start '%s': releasing init pid %d", c->id, (int) c->state->pid);
        if (c->released) {
                /* The init went on by itself after READY (start_at_ready, no poststart
                 * hooks): the fifo only marks "created" for other readers. */
                c->state->status = (char *) "running";
                (void) unlinkat(c->dirfd, RT_FIFO_NAME, 0);
                return 0;
        }
        if (!c->spec) {
                r = rt_container_load_config(c, err);
                if (r < 0)
                        return r;
        }
        /* O_NONBLOCK: if the init died, there is no reader and open fails with ENXIO
         * instead of blocking forever. */
        fd = openat(c->dirfd, RT_FIFO_NAME, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0)
                return msp_err_sys(err, errno, "cannot start container '%s'", c->id);
        if (write(fd, "0", 1) != 1)
                return msp_err_sys(err, errno, "cannot start container '%s'", c->id);
        c->state->status = (char *) "running";
        if (c->spec->has_hooks && c->spec->hooks.poststart.n) {
                /* Spec: poststart hooks run after the user process has started (after
                 * the startContainer hooks and the exec), not as soon as it is released. */
                r = wait_exec(c->dirfd, fd, c->state);
                (void) unlinkat(c->dirfd, RT_FIFO_NAME, 0);
                if (r == -ESRCH)
                        return msp_err_set(err, ESRCH, "container '%s': the process exited before "
                                           "it started (a startContainer hook failed?)", c->id);
                if (r < 0)
                        return msp_err_sys(err, -r, "container '%s': waiting for the process to start",
                                           c->id);
                r = rt_hooks_run_state(ctx, &c->spec->hooks.poststart, "poststart", c->state, err);
                if (r < 0) {
                        /* Spec: a failing poststart hook stops the container. */
                        (void) kill(c->state->pid, SIGKILL);
                        return r;
                }
        }
        (void) unlinkat(c->dirfd, RT_FIFO_NAME, 0);
        return 0;
}

static int
open_pidfd(const oci_state *st)
{
        int fd = (int) syscall(SYS_pidfd_open, st->pid, 0);
        if (fd < 0)
                return -errno;
        /* Opened after the liveness check: re-check so a reused pid is never signalled. */
        if (!rt_pid_alive(st->pid, st->pid_start_time)) {
                close(fd);
                return -ESRCH;
        }
        return fd;
}

/* Every process of the cgroup. Frozen meanwhile: none can fork a child past the signal,
 * or exit and have its pid reused before it is signalled. A paused container stays
 * paused (the signal is delivered on resume), except for SIGKILL: thawed, as runc does,
 * because v1 frozen tasks cannot die. */
static int
kill_all(rt_container *c, int sig, msp_err *err)
{
        const char *path = c->state->cgroup_path;
        bool paused = strcmp(c->state->status, "paused") == 0;
        bool froze = !paused && rt_cgroup_freeze(path, true, NULL) == 0;
        int r = rt_cgroup_signal_all(path, sig, err);

        if (froze || (paused && sig == SIGKILL))
                (void) rt_cgroup_freeze(path, false, NULL);
        if (r < 0)
                return msp_err_prefix(err, "kill container '%s'", c->id);
        return 0;
}

/* kill --all without a cgroup: every process of the container's pid namespace and of
 * the ones nested below it (a rootless container without a delegated cgroup).
 * -EOPNOTSUPP when the container shares the runtime's pid namespace: then only the init
 * is signalled, below. A process that could not be signalled is an error naming it. */
static int
kill_pidns(rt_container *c, int sig, msp_err *err)
{
        _cleanup_free_ pid_t *pids = NULL;
        size_t n = 0;
        int r = rt_pidns_pids(c->state->pid, &pids, &n, err);

        if (r < 0)
                return r;
        if (n == 0)
                return -EOPNOTSUPP;
        for (size_t i = 0; i < n; i++)
                if (kill(pids[i], sig) < 0 && errno != ESRCH && r == 0)
                        r = msp_err_sys(err, errno, "signal process %d", (int) pids[i]);
        return r;
}

int
rt_container_kill(const rt_ctx *ctx, rt_container *c, int sig, bool all, msp_err *err)
{
        const char *status = c->state->status;
        _cleanup_close_ int pidfd = -1;

        (void) ctx;
        /* The init is in the cgroup too: signalled once, with the others. */
        if (all && c->state->cgroup_path)
                return kill_all(c, sig, err);
        if (all && strcmp(status, "stopped") != 0) {
                int r = kill_pidns(c, sig, err);
                if (r >= 0)
                        return 0;
                /* An init that is gone leaves nothing to list: the checks below say so. */
                if (r != -EOPNOTSUPP && r != -ESRCH)
                        return msp_err_prefix(err, "kill container '%s'", c->id);
                msp_err_clear(err);
        }
        if (strcmp(status, "stopped") == 0)
                return msp_err_set(err, ESRCH, "cannot kill container '%s': it is not running",
                                   c->id);
        pidfd = open_pidfd(c->state);
        if (pidfd < 0) {
                if (all)
                        return 0;
                return msp_err_set(err, ESRCH, "cannot kill container '%s': it is not running", c->id);
        }
        if (syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0) < 0)
                return msp_err_sys(err, errno, "kill container '%s'", c->id);
        if (sig == SIGKILL && strcmp(status, "paused") == 0 && c->state->cgroup_path)
                (void) rt_cgroup_freeze(c->state->cgroup_path, false, NULL);
        return 0;
}

/* Wait for a process that is not our child to exit (bounded). */
static int
wait_pidfd_exit(int pidfd, int timeout_ms)
{
        struct pollfd p = { .fd = pidfd, .events = POLLIN };
        int r;

        do
                r = poll(&p, 1, timeout_ms);
        while (r < 0 && errno == EINTR);
        if (r < 0)
                return -errno;
        return r == 0 ? -ETIMEDOUT : 0;
}

int
rt_container_delete(const rt_ctx *ctx, rt_container *c, bool force, msp_err *err)
{
        oci_state *st = c->state;
        int r;

        if (!c->spec)
                (void) rt_container_load_config(c, NULL);
        if (strcmp(st->status, "running") == 0 || strcmp(st->status, "paused") == 0) {
                if (!force)
                        return msp_err_set(err, EBUSY,
                                           "cannot delete container '%s' that is %s (stop it first, "
                                           "or use --force)",
                                           c->id, st->status);
        }
        if (st->pid > 0) {
                _cleanup_close_ int pidfd = open_pidfd(st);
                if (pidfd >= 0) {
                        (void) syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
                        /* v1 frozen tasks cannot die: kill them all, then thaw. */
                        if (strcmp(st->status, "paused") == 0 && st->cgroup_path) {
                                (void) rt_cgroup_signal_all(st->cgroup_path, SIGKILL, NULL);
                                (void) rt_cgroup_freeze(st->cgroup_path, false, NULL);
                        }
                        if (wait_pidfd_exit(pidfd, 10000) < 0)
                                rt_log_warning(ctx, "container '%s': init %d did not exit after SIGKILL",
                                               c->id, (int) st->pid);
                        /* Reap it if it is our child (run --keep); harmless otherwise. */
                        (void) waitpid(st->pid, NULL, WNOHANG);
                }
        }
        if (st->cgroup_path && st->cgroup_owned) {
                r = rt_cgroup_destroy(st->cgroup_path, err);
                if (r < 0)
                        return r;
        }
        if (st->cgroup_path && st->systemd_cgroup && ctx->rootless) {
                msp_err serr = { 0 };
                if (rt_cgroup_stop_scope(st->cgroup_path, &serr) < 0)
                        rt_log_warning(ctx, "container '%s': %s", c->id, serr.msg);
        }
        r = rt_statedir_remove(c->rootfd, c->id, c->dirfd, err);
        if (r < 0)
                return r;
        if (c->spec && c->spec->has_hooks && c->spec->hooks.poststop.n) {
                msp_err herr = { 0 };
                st->status = (char *) "stopped";
                _cleanup_free_ char *json = NULL;
                size_t len;
                rt_hooks_debug(ctx, &c->spec->hooks.poststop, "poststop");
                if (oci_state_to_json(st, 0, &json, &len, &herr) < 0)
                        rt_log_warning(ctx, "%s, poststop hooks not run", herr.msg);
                else
                        rt_hooks_run_all(ctx, &c->spec->hooks.poststop, "poststop", json);
        }
        return 0;
}

/* ---- cgroup operations on a live container ---- */

/* The container's cgroup, or an error naming the operation. */
static int
need_cgroup(const rt_container *c, const char *op, msp_err *err)
{
        if (!c->state->cgroup_path)
                return msp_err_set(err, EOPNOTSUPP,
                                   "cannot %s container '%s': it has no cgroup (created with "
                                   "--cgroup-manager disabled, or rootless without a delegated "
                                   "cgroup v2 subtree)", op, c->id);
        return 0;
}

int
rt_container_pause(const rt_ctx *ctx, rt_container *c, msp_err *err)
{
        const char *status = c->state->status;
        int r;

        (void) ctx;
        if (strcmp(status, "paused") == 0)
                return msp_err_set(err, EINVAL, "cannot pause container '%s': it is already paused",
                                   c->id);
        /* A created container is parked on its fifo: freezing it would only make start
         * hang, so only running ones (crun's rule; runc also takes created). */
        if (strcmp(status, "running") != 0)
                return msp_err_set(err, EINVAL, "cannot pause container '%s': it is %s, not running",
                                   c->id, status);
        r = need_cgroup(c, "pause", err);
        if (r < 0)
                return r;
        r = rt_cgroup_freeze(c->state->cgroup_path, true, err);
        if (r < 0)
                return msp_err_prefix(err, "pause container '%s'", c->id);
        c->state->status = (char *) "paused";
        return 0;
}

int
rt_container_resume(const rt_ctx *ctx, rt_container *c, msp_err *err)
{
        int r;

        (void) ctx;
        if (strcmp(c->state->status, "paused") != 0)
                return msp_err_set(err, EINVAL, "cannot resume container '%s': it is %s, not paused",
                                   c->id, c->state->status);
        r = rt_cgroup_freeze(c->state->cgroup_path, false, err);
        if (r < 0)
                return msp_err_prefix(err, "resume container '%s'", c->id);
        c->state->status = (char *) "running";
        return 0;
}

int
rt_container_update(const rt_ctx *ctx, rt_container *c, const oci_resources *res,
                    msp_err *err)
{
        oci_resources copy = *res;
        int r;

        if (strcmp(c->state->status, "stopped") == 0)
                return msp_err_set(err, EINVAL, "cannot update container '%s': it is stopped", c->id);
        r = need_cgroup(c, "update", err);
        if (r < 0)
                return r;
        if (copy.n_devices) {
                rt_log_warning(ctx, "container '%s': update leaves the device rules unchanged "
                                    "(linux.resources.devices ignored)", c->id);
                copy.devices = NULL;
                copy.n_devices = 0;
        }
        if (rt_cgroup_ignored_fields(&copy))
                rt_log_warning(ctx, "%s", rt_cgroup_ignored_fields(&copy));
        r = rt_cgroup_update(c->state->cgroup_path, &copy, err);
        if (r < 0)
                return msp_err_prefix(err, "update container '%s'", c->id);
        return 0;
}

int
rt_container_pids(const rt_ctx *ctx, rt_container *c, pid_t **ret, size_t *ret_n,
                  msp_err *err)
{
        int r;

        (void) ctx;
        *ret = NULL;
        *ret_n = 0;
        if (!c->state->cgroup_path) {
                if (strcmp(c->state->status, "stopped") == 0)
                        return 0;
                r = rt_pidns_pids(c->state->pid, ret, ret_n, err);
                if (r < 0)
                        return msp_err_prefix(err, "cannot list the processes of container '%s' "
                                              "(it has no cgroup)", c->id);
                return 0;
        }
        r = rt_cgroup_pids(c->state->cgroup_path, ret, ret_n, err);
        /* A stopped container's cgroup may already be gone: no processes. */
        if (r == -ENOENT && strcmp(c->state->status, "stopped") == 0)
                return 0;
        if (r < 0)
                return msp_err_prefix(err, "container '%s'", c->id);
        return 0;
}

int
rt_container_stats(const rt_ctx *ctx, rt_container *c, oci_stats *ret, msp_err *err)
{
        int r;

        (void) ctx;
        if (strcmp(c->state->status, "stopped") == 0)
                return msp_err_set(err, ESRCH, "container '%s' is not running", c->id);
        r = need_cgroup(c, "read the statistics of", err);
        if (r < 0)
                return r;
        *ret = (oci_stats) { .id = c->id };
        r = rt_cgroup_stats(c->state->cgroup_path, ret, err);
        if (r < 0)
                return msp_err_prefix(err, "container '%s'", c->id);
        return 0;
}
