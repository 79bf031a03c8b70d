/* Parent side of create and the other lifecycle operations. */
#include "lib/container.h"

#include <fcntl.h>
#include <limits.h>
#include <linux/sched.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/cgroup/cgroup.h"
#include "lib/fileio.h"
#include "lib/hooks.h"
#include "lib/init.h"
#include "lib/log.h"
#include "lib/lsm.h"
#include "lib/mountsrc.h"
#include "lib/ns.h"
#include "lib/process.h"
#include "lib/procfs.h"
#include "lib/rtspawn.h"
#include "lib/seccomp.h"
#include "lib/selfexe.h"
#include "lib/statedir.h"
#include "lib/sync.h"
#include "lib/terminal.h"

#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP 0x200000000ULL
#endif

rt_container *
rt_container_free(rt_container *c)
{
        if (!c)
                return NULL;
        if (c->dirfd >= 0)
                close(c->dirfd);
        if (c->rootfd >= 0)
                close(c->rootfd);
        if (c->pidfd >= 0)
                close(c->pidfd);
        oci_state_free(c->state);
        oci_spec_free(c->spec);
        free(c->id);
        free(c);
        return NULL;
}

static rt_container *
container_new(const char *id)
{
        rt_container *c = calloc(1, sizeof *c);

        if (!c)
                return NULL;
        c->id = strdup(id);
        if (!c->id) {
                free(c);
                return NULL;
        }
        c->rootfd = c->dirfd = c->pidfd = -1;
        return c;
}

/* Fields msp parses but cannot honour fail create by name (never silently ignored). */
static int
check_supported(const oci_spec *spec, msp_err *err)
{
        const oci_linux *lx = spec->linux_;

        if (!spec->process)
                return msp_err_set(err, EINVAL, "config.json: process: required by create");
        if (spec->process->args.n == 0)
                return msp_err_set(err, EINVAL, "config.json: process.args: must not be empty");
        if (!spec->root_path)
                return msp_err_set(err, EINVAL, "config.json: root.path: required property missing");
        if (spec->process->exec_cpu_affinity_initial || spec->process->exec_cpu_affinity_final)
                return msp_err_set(err, ENOTSUP,
                                   "config.json: process.execCPUAffinity is not supported by msp");
        int r = rt_lsm_check(spec->process, lx, err);
        if (r < 0)
                return r;
        if (!lx)
                return 0;
        if (lx->intel_rdt)
                return msp_err_set(err, ENOTSUP, "config.json: linux.intelRdt is not supported by msp");
        if (lx->n_net_devices)
                return msp_err_set(err, ENOTSUP,
                                   "config.json: linux.netDevices is not supported by msp");
        if (lx->memory_policy)
                return msp_err_set(err, ENOTSUP,
                                   "config.json: linux.memoryPolicy is not supported by msp");
        return 0;
}

static void
now_rfc3339(char *buf, size_t n)
{
        struct timespec ts;
        struct tm tm;

        clock_gettime(CLOCK_REALTIME, &ts);
        gmtime_r(&ts.tv_sec, &tm);
        size_t w = strftime(buf, n, "%Y-%m-%dT%H:%M:%S", &tm);
        snprintf(buf + w, n - w, ".%09ldZ", ts.tv_nsec);
}

/* The runtime's own namespaces of the kinds spawn_init enters on the init's behalf. */
typedef struct saved_ns {
        int fd[OCI_NS_TYPE_MAX];
} saved_ns;

static const char *const ns_proc_name[OCI_NS_TYPE_MAX] = {
        [OCI_NS_PID] = "pid", [OCI_NS_NETWORK] = "net", [OCI_NS_IPC] = "ipc",
        [OCI_NS_UTS] = "uts", [OCI_NS_CGROUP] = "cgroup", [OCI_NS_TIME] = "time",
};

/* Remember our namespace of kind t before entering another one. For pid and time our
 * own is also what pid_for_children and time_for_children go back to. */
static int
ns_save(saved_ns *s, oci_ns_type t, int keep_min, msp_err *err)
{
        char path[64];

        if (s->fd[t] >= 0)
                return 0;
        snprintf(path, sizeof path, "/proc/self/ns/%s", ns_proc_name[t]);
        s->fd[t] = rt_fd_above(open(path, O_RDONLY | O_CLOEXEC), keep_min);
        if (s->fd[t] < 0)
                return msp_err_sys(err, errno, "open '%s'", path);
        return 0;
}

static void
ns_forget(saved_ns *s)
{
        for (int t = 0; t < OCI_NS_TYPE_MAX; t++) {
                if (s->fd[t] >= 0)
                        close(s->fd[t]);
                s->fd[t] = -1;
        }
}

/* Back to our own namespaces once the init is cloned: what the runtime does next (the
 * prestart and createRuntime hooks; poststart and poststop under `run`) belongs in the
 * runtime's namespaces, and no later child of ours may be born in the container's pid
 * or time namespace. Best effort: a rootless runtime may lack the privilege over a
 * namespace of an ancestor user namespace, and then stays where it was. */
static void
ns_restore(saved_ns *s)
{
        for (int t = 0; t < OCI_NS_TYPE_MAX; t++)
                if (s->fd[t] >= 0)
                        (void) setns(s->fd[t], 0);
        ns_forget(s);
}

/* How the init gets into the container's cgroup. cgroup_join_plan picks it from the
 * host's mode before anything is made (which hierarchies are made before clone3);
 * cgroup_join_settle adjusts it to what clone3 managed. */
typedef enum cgroup_join {
        CGJ_NONE,               /* no cgroup (a rootless container without one) */
        /* A unified host: the cgroup is made and filled before clone3. */
        CGJ_AT_CLONE,           /* the init is born in it (CLONE_INTO_CGROUP) or joins it
                                 * itself through `tasks` fds (cgroup-join.h) */
        CGJ_PARENT_BEFORE_GO,   /* neither: the parent writes cgroup.procs before GO */
        /* A host with v1 hierarchies: only the cgroup2 leaf is made before clone3; the
         * v1 ones are made, filled and handed to the init while it builds its network
         * and mount namespaces (finish_v1_cgroups). */
        CGJ_V1_AFTER_GO,        /* the init joins the v1 ones through `tasks` fds */
        CGJ_ALL_AFTER_GO,       /* hybrid, and clone3 could not use the cgroup2 leaf: the
                                 * parent writes cgroup.procs of every hierarchy after GO */
} cgroup_join;

typedef struct create_run {
        const rt_ctx *ctx;
        const rt_create_opts *o;
        rt_container *c;
        char bundle[PATH_MAX];
        char rootfs[PATH_MAX];
        char cgroup[PATH_MAX];
        char created[64];
        char owner[64];
        rt_ns_plan plan;
        pid_t pid;
        int listen_fds;                 /* socket activation: fds 3.. handed on first */
        bool cgroup_made;
        bool statedir_made;
        cgroup_join join;
        rt_cgroup_mode cgroup_mode;
        rt_cgroup_facts cgroup_probe;   /* before anything is made, for every hierarchy */
        bool start_at_ready;
} create_run;

static void
cgroup_join_plan(create_run *cr)
{
        if (!cr->cgroup[0])
                cr->join = CGJ_NONE;
        else
                cr->join = cr->cgroup_mode == RT_CGROUP_UNIFIED ? CGJ_AT_CLONE : CGJ_V1_AFTER_GO;
}

/* After clone3: into_cgroup when the init was born in its cgroup2 leaf, child_fds when
 * it was given `tasks` fds to join the others itself. */
static void
cgroup_join_settle(create_run *cr, bool into_cgroup, bool child_fds)
{
        if (cr->join == CGJ_AT_CLONE && !into_cgroup && !child_fds)
                cr->join = CGJ_PARENT_BEFORE_GO;
        else if (cr->join == CGJ_V1_AFTER_GO && cr->cgroup_mode == RT_CGROUP_HYBRID && !into_cgroup)
                cr->join = CGJ_ALL_AFTER_GO;
}

static bool
cgroup_v1_after_go(const create_run *cr)
{
        return cr->join == CGJ_V1_AFTER_GO || cr->join == CGJ_ALL_AFTER_GO;
}

static int
run_parent_hooks(create_run *cr, msp_err *err)
{
        const oci_hooks *h = &cr->c->spec->hooks;
        int r;

        if (!cr->c->spec->has_hooks || (!h->prestart.n && !h->create_runtime.n))
                return 0;
        cr->c->state->status = (char *) "created";
        r = rt_hooks_run_state(cr->ctx, &h->prestart, "prestart", cr->c->state, err);
        if (r < 0)
                return r;
        return rt_hooks_run_state(cr->ctx, &h->create_runtime, "createRuntime", cr->c->state, err);
}

static int apply_cgroup_resources(create_run *cr, msp_err *err);

/* A cgroup that existed before create is not ours. Under the default path, which is
 * msp's own, it is another container's (of another state root) or a leftover: refused.
 * A linux.cgroupsPath may name an existing cgroup if it holds no process (runc 1.2's
 * rule): two containers in one cgroup would share kill --all and delete. */
static int
check_existing_cgroup(create_run *cr, msp_err *err)
{
        const oci_linux *lx = cr->c->spec->linux_;
        _cleanup_free_ pid_t *pids = NULL;
        size_t n = 0;
        int r;

        if (!lx || !lx->cgroups_path || !*lx->cgroups_path)
                return msp_err_set(err, EEXIST, "cgroup '%s' already exists: a container of "
                                   "another state root, or one left behind (remove it, or set "
                                   "linux.cgroupsPath)", cr->cgroup);
        r = rt_cgroup_pids(cr->cgroup, &pids, &n, err);
        if (r < 0 && r != -ENOENT)
                return r;
        if (n > 0)
                return msp_err_set(err, EBUSY, "container's cgroup is not empty: %zu process(es) "
                                   "found in '%s'", n, cr->cgroup);
        msp_err_clear(err);
        return 0;
}

/* Make the container's cgroup in the hierarchies `which` names, after the probe
 * (cr->cgroup_probe). state.json says that msp owns the cgroup before the first mkdir: a
 * create killed right after it leaves a leaf that `delete --force` must remove
 * (docs/CGROUPS.md, "Ownership"). */
static int
make_cgroup(create_run *cr, unsigned which, msp_err *err)
{
        oci_state *st = cr->c->state;
        int r;

        if (!st->cgroup_owned) {
                if (((which & RT_CGROUP_V2) && cr->cgroup_probe.exists_v2) ||
                    ((which & RT_CGROUP_V1) && cr->cgroup_probe.exists_v1))
                        r = check_existing_cgroup(cr, err);
                else {
                        st->cgroup_owned = true;
                        r = rt_state_save(cr->c->dirfd, st, err);
                }
                if (r < 0)
                        return r;
        }
        r = rt_cgroup_create_in(cr->cgroup, which, &cr->cgroup_made, err);
        if (r < 0)
                return r;
        if (st->cgroup_owned != cr->cgroup_made) {
                st->cgroup_owned = cr->cgroup_made;
                r = rt_state_save(cr->c->dirfd, st, err);
        }
        return r;
}

/* A send to the init failed: it is gone, most likely after it failed and said why. */
static int
init_gone(int sync_fd, msp_err *err)
{
        rt_sync_msg msg;
        if (rt_sync_recv(sync_fd, &msg, err) >= 0 && msg.type == RT_SYNC_ERROR)
                return rt_sync_error_of(&msg, err);
        return msp_err_set(err, EPIPE, "the container init exited during setup");
}

/* After GO, in parallel with the init's unshare of its network and mount namespaces
 * (the network namespace alone is ~0.4 ms of kernel work): make the v1 cgroups, record
 * them and the pid, write the limits and device rules, and send the init the `tasks`
 * files to move itself into. The rules are complete before the init joins the devices
 * cgroup, so it never sees a partial list. Without those fds (they could not be
 * opened, or clone3 could not place the init in its cgroup2 leaf) the parent moves the
 * init through cgroup.procs, as before cgroup-join.h. */
static int
finish_v1_cgroups(create_run *cr, int sync_fd, msp_err *err)
{
        char names[MSP_ERR_MSG_MAX] = "";
        rt_cgroup_join join;
        int r;

        r = make_cgroup(cr, RT_CGROUP_V1, err);
        if (r >= 0)
                r = rt_state_save(cr->c->dirfd, cr->c->state, err);
        if (r >= 0)
                r = apply_cgroup_resources(cr, err);
        if (r < 0)
                return r;
        rt_cgroup_join_init(&join);
        if (cr->join == CGJ_ALL_AFTER_GO ||
            rt_cgroup_join_prepare_parent(cr->cgroup, RT_CGROUP_V1, 3, &join, NULL) < 0 ||
            rt_cgroup_join_names(&join, names, sizeof names) < 0) {
                rt_cgroup_join_close(&join);
                r = rt_cgroup_enter(cr->cgroup, cr->pid, err);
                if (r < 0)
                        return r;
        }
        r = rt_sync_send_fds(sync_fd, RT_SYNC_CGROUP, names, join.tasks_fd, join.n);
        rt_cgroup_join_close(&join);
        if (r >= 0)
                return 0;
        return init_gone(sync_fd, err);
}

/* Everything the parent does between clone and the init's READY. */
static int
drive_init(create_run *cr, int sync_fd, msp_err *err)
{
        const oci_spec *spec = cr->c->spec;
        rt_sync_msg msg;
        int r;

        if (cr->plan.new_flags & CLONE_NEWUSER) {
                _cleanup_close_ int procfd = rt_procfs_open(err);
                if (procfd < 0)
                        return procfd;
                r = rt_userns_write_maps(cr->ctx, procfd, cr->pid, spec->linux_, err);
                if (r < 0)
                        return r;
        }
        if (cr->join == CGJ_PARENT_BEFORE_GO) {
                r = rt_cgroup_enter(cr->cgroup, cr->pid, err);
                if (r < 0)
                        return r;
        }
        if (spec->process->has_oom_score_adj) {
                _cleanup_close_ int procfd = rt_procfs_open(err);
                if (procfd < 0)
                        return procfd;
                r = rt_spawn_oom_score_adj(procfd, cr->pid, spec->process, err);
                if (r < 0)
                        return r;
        }
        /* The value is the init's pid as the runtime sees it (the seccomp agent needs it). */
        if (rt_sync_send(sync_fd, RT_SYNC_GO, (int32_t) cr->pid, NULL) < 0)
                return init_gone(sync_fd, err);
        /* Record the pid while the init builds the rootfs, before any hook can block: a
         * `delete --force` after this process is killed must find the init (which also
         * dies with us: PDEATHSIG, and the sync socket closes). The status is already
         * "created": with a live pid and the exec fifo present, that is what every reader
         * computes (rt_state_refresh), and it spares a last save after READY. */
        cr->c->state->status = (char *) "created";
        if (cgroup_v1_after_go(cr))
                r = finish_v1_cgroups(cr, sync_fd, err);
        else
                r = rt_state_save(cr->c->dirfd, cr->c->state, err);
        if (r < 0)
                return r;
        for (;;) {
                r = rt_spawn_recv(sync_fd, cr->cgroup, "create", &msg, err);
                /* start_at_ready: the init sends no READY; EOF is its close-on-exec. */
                if (r == -EPIPE && cr->start_at_ready) {
                        msp_err_clear(err);
                        return 0;
                }
                if (r < 0)
                        return r;
                switch (msg.type) {
                case RT_SYNC_RUN_HOOKS:
                        r = run_parent_hooks(cr, err);
                        if (r < 0) {
                                (void) rt_sync_send(sync_fd, RT_SYNC_ERROR, 0, err);
                                return r;
                        }
                        if (rt_sync_send(sync_fd, RT_SYNC_HOOKS_DONE, 0, NULL) < 0)
                                return msp_err_set(err, EPIPE, "the container init exited during setup");
                        break;
                case RT_SYNC_MOUNT_SOURCES:
                        r = rt_mountsrc_send(sync_fd, cr->pid, spec, cr->bundle, err);
                        if (r < 0)
                                return r;
                        break;
                case RT_SYNC_READY:
                        return 0;
                case RT_SYNC_ERROR:
                        return rt_sync_error_of(&msg, err);
                default:
                        return msp_err_set(err, EPROTO, "unexpected message %u from the container init",
                                           msg.type);
                }
        }
}

/* The namespaces the init is born into (they apply to children) or that must be
 * joined while the runtime still has its privileges in the initial user namespace:
 * entered here, left again by ns_restore after clone3. */
static int
enter_for_clone(create_run *cr, saved_ns *saved, int keep_min, msp_err *err)
{
        const oci_spec *spec = cr->c->spec;
        _cleanup_close_ int procfd = -1;
        int r;

        /* pid and time namespaces apply to children: enter/create them here (and leave
         * them again after clone3, see ns_restore). */
        if (cr->plan.join[OCI_NS_PID]) {
                r = ns_save(saved, OCI_NS_PID, keep_min, err);
                if (r >= 0)
                        r = rt_ns_join(OCI_NS_PID, cr->plan.join[OCI_NS_PID], err);
                if (r < 0)
                        return r;
        }
        if (cr->plan.join[OCI_NS_TIME]) {
                r = ns_save(saved, OCI_NS_TIME, keep_min, err);
                if (r >= 0)
                        r = rt_ns_join(OCI_NS_TIME, cr->plan.join[OCI_NS_TIME], err);
                if (r < 0)
                        return r;
        }
        if (cr->plan.new_flags & CLONE_NEWTIME) {
                r = ns_save(saved, OCI_NS_TIME, keep_min, err);
                if (r < 0)
                        return r;
                procfd = rt_procfs_open(err);
                if (procfd < 0)
                        return procfd;
                r = rt_timens_prepare_parent(procfd, spec->linux_, err);
                if (r < 0)
                        return r;
        }
        /* Namespaces joined by path (other than user and mount) are entered here too,
         * while the runtime still has its privileges in the initial user namespace. */
        for (int t = 0; t < OCI_NS_TYPE_MAX; t++) {
                if (!cr->plan.join[t] || t == OCI_NS_USER || t == OCI_NS_MOUNT || t == OCI_NS_PID ||
                    t == OCI_NS_TIME)
                        continue;
                r = ns_save(saved, (oci_ns_type) t, keep_min, err);
                if (r >= 0)
                        r = rt_ns_join((oci_ns_type) t, cr->plan.join[t], err);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* clone3 of the init: from inside a user namespace joined by path, so that the pid
 * namespace and those the init unshares belong to it. */
static long
clone_init(create_run *cr, struct clone_args *ca, msp_err *err)
{
        if (cr->plan.join[OCI_NS_USER])
                return rt_ns_clone_in_userns(ca, cr->plan.join[OCI_NS_USER], err);
        long pid = syscall(SYS_clone3, ca, sizeof *ca);
        return pid < 0 ? msp_err_sys(err, errno, "clone3 the container init") : pid;
}

static int
spawn_init(create_run *cr, int *ret_pidfd, msp_err *err)
{
        const oci_spec *spec = cr->c->spec;
        int keep_min = 3 + cr->listen_fds + cr->o->preserve_fds;
        _cleanup_close_ int fifo_fd = -1;
        rt_spawn_fds fds = RT_SPAWN_FDS_INIT;
        int pidfd = -1, r;
        rt_cgroup_join join;
        saved_ns saved;

        rt_cgroup_join_init(&join);
        for (int t = 0; t < OCI_NS_TYPE_MAX; t++)
                saved.fd[t] = -1;

        fifo_fd = rt_fd_above(openat(cr->c->dirfd, RT_FIFO_NAME, O_RDWR | O_CLOEXEC), keep_min);
        if (fifo_fd < 0)
                return msp_err_sys(err, errno, "open '%s'", RT_FIFO_NAME);
        r = rt_spawn_fds_open(&fds, cr->ctx, cr->c->rootfd, spec->process, spec->linux_,
                              cr->o->console_socket,
                              cr->o->has_console_fd ? cr->o->console_fd : -1, cr->o->stdio,
                              keep_min, err);
        if (r < 0)
                goto fail;

        r = enter_for_clone(cr, &saved, keep_min, err);
        if (r < 0)
                goto fail;

        /* Only the namespaces that must be made by clone: pid (it applies to children)
         * and user (the others must belong to it). The init unshares mount, uts, ipc
         * and network itself after GO, in parallel with the parent's cgroup work;
         * cgroup after it joined its cgroups, time was made above. */
        struct clone_args ca = {
                .flags = (uint64_t) (cr->plan.new_flags & (CLONE_NEWPID | CLONE_NEWUSER)) | CLONE_PIDFD,
                .pidfd = (uint64_t) (uintptr_t) &pidfd,
                .exit_signal = SIGCHLD,
        };
        /* Born in the v2 cgroup, the init moves itself into the v1 ones: no write to
         * cgroup.procs, whose global lock costs an RCU grace period (cgroup-join.h). */
        if (cr->join != CGJ_NONE &&
            rt_cgroup_join_prepare_parent(cr->cgroup, cgroup_v1_after_go(cr) ? RT_CGROUP_V2 : RT_CGROUP_ALL,
                                          keep_min, &join, NULL) >= 0 &&
            join.v2_fd >= 0) {
                ca.flags |= CLONE_INTO_CGROUP;
                ca.cgroup = (uint64_t) join.v2_fd;
        }
        long pid = clone_init(cr, &ca, err);
        if (pid < 0 && (ca.flags & CLONE_INTO_CGROUP)) {
                /* A kernel without it, or a cgroup it refuses: the parent writes
                 * cgroup.procs as before, with the same errors. */
                rt_cgroup_join_close(&join);
                ca.flags &= ~CLONE_INTO_CGROUP;
                ca.cgroup = 0;
                pid = clone_init(cr, &ca, err);
        }
        if (pid < 0) {
                rt_cgroup_join_close(&join);
                r = (int) pid;
                goto fail;
        }
        if (pid == 0) {
                close(fds.sync[0]);
                ns_forget(&saved);
                rt_init_args ia = {
                        .ctx = cr->ctx,
                        .spec = spec,
                        .state = cr->c->state,
                        .rootfs = cr->rootfs,
                        .bundle = cr->bundle,
                        .plan = &cr->plan,
                        .sync_fd = fds.sync[1],
                        .fifo_fd = fifo_fd,
                        .console_fd = fds.console,
                        .stdio = fds.stdio,
                        .seccomp_sock = fds.seccomp_sock,
                        .seccomp = fds.seccomp,
                        .lock_fd = cr->c->dirfd,
                        .state_root_fd = cr->c->rootfd,
                        .listen_fds = cr->listen_fds,
                        .preserve_fds = cr->o->preserve_fds,
                        .no_pivot = cr->o->no_pivot,
                        .no_new_keyring = cr->o->no_new_keyring,
                        .start_at_ready = cr->start_at_ready,
                        .cgroup_join = &join,
                        .cgroup_wait = cgroup_v1_after_go(cr),
                        .unshare_flags = cr->plan.new_flags &
                                         (CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWNET),
                };
                rt_init_child(&ia);
        }
        ns_restore(&saved);
        close(fds.sync[1]);
        fds.sync[1] = -1;
        cgroup_join_settle(cr, ca.flags & CLONE_INTO_CGROUP, join.n > 0);
        rt_cgroup_join_close(&join);
        cr->pid = (pid_t) pid;
        *ret_pidfd = pidfd;

        /* drive_init records them in state.json right after GO. */
        (void) rt_pid_start_time(cr->pid, &cr->c->state->pid_start_time, NULL);
        cr->c->state->pid = cr->pid;
        r = drive_init(cr, fds.sync[0], err);
fail:
        ns_restore(&saved);
        rt_spawn_fds_close(&fds);
        return r;
}

static void
kill_and_reap(pid_t pid, int pidfd)
{
        if (pid <= 0)
                return;
        if (pidfd >= 0)
                (void) syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
        else
                (void) kill(pid, SIGKILL);
        (void) waitpid(pid, NULL, 0);
}

/* Undo a failed create: process, cgroup, state directory. */
static void
create_rollback(create_run *cr, int pidfd)
{
        /* Frozen v1 tasks do not die until thawed. */
        if (cr->pid > 0 && cr->cgroup[0] && rt_cgroup_is_frozen(cr->cgroup))
                (void) rt_cgroup_freeze(cr->cgroup, false, NULL);
        kill_and_reap(cr->pid, pidfd);
        if (cr->cgroup_made)
                (void) rt_cgroup_destroy(cr->cgroup, NULL);
        if (cr->statedir_made)
                (void) rt_statedir_remove(cr->c->rootfd, cr->c->id, cr->c->dirfd, NULL);
}

/* linux.resources with the device rules runc gives a new container. */
static int
apply_cgroup_resources(create_run *cr, msp_err *err)
{
        const oci_linux *lx = cr->c->spec->linux_;
        oci_resources res = { 0 };
        _cleanup_free_ oci_device_cgroup *devs = NULL;
        int r;

        if (lx && lx->resources)
                res = *lx->resources;
        r = rt_cgroup_device_rules(lx, &devs, &res.n_devices, err);
        if (r < 0)
                return r;
        res.devices = devs;
        /* A rootless runtime cannot attach the eBPF device program (that needs
         * CAP_BPF/CAP_SYS_ADMIN of the host) and needs none: the user namespace gives
         * no device the caller could not open itself. runc skips them too. */
        if (cr->ctx->rootless)
                res.n_devices = 0;
        if (rt_cgroup_ignored_fields(&res))
                rt_log_warning(cr->ctx, "%s", rt_cgroup_ignored_fields(&res));
        return rt_cgroup_apply_resources(cr->cgroup, &res, err);
}

/* Without the host's root (euid != 0) every namespace but a user namespace needs
 * privilege the caller lacks: refuse before anything is made, saying how to get one, as
 * runc does. An euid 0 inside a user namespace (rootless podman) is not such a caller. */
static int
check_rootless_userns(const rt_ns_plan *plan, msp_err *err)
{
        if (geteuid() == 0 || (plan->new_flags & CLONE_NEWUSER) || plan->join[OCI_NS_USER])
                return 0;
        return msp_err_set(err, EPERM,
                           "config.json: linux.namespaces: a rootless container needs a user "
                           "namespace and the config has none (`msp spec --rootless` writes one)");
}

static int
prepare_create(create_run *cr, msp_err *err)
{
        const rt_create_opts *o = cr->o;
        char config[PATH_MAX * 2];
        _cleanup_free_ char *data = NULL;
        size_t len = 0;
        int r;

        r = rt_id_validate(o->id, err);
        if (r < 0)
                return r;
        if (!realpath(o->bundle ? o->bundle : ".", cr->bundle))
                return msp_err_sys(err, errno, "bundle '%s'", o->bundle ? o->bundle : ".");
        if (o->config_path)
                snprintf(config, sizeof config, "%s", o->config_path);
        else
                snprintf(config, sizeof config, "%s/config.json", cr->bundle);
        r = rt_read_file_at(AT_FDCWD, config, false, OCI_CONFIG_MAX_BYTES, &data, &len, err);
        if (r < 0)
                return r;
        r = oci_spec_parse_data("config.json", data, len, &cr->c->spec, err);
        if (r < 0)
                return r;
        r = check_supported(cr->c->spec, err);
        if (r < 0)
                return r;
        r = rt_ns_plan_make(cr->c->spec, &cr->plan, err);
        if (r < 0)
                return r;
        /* Before the first change: may re-execute msp from its sealed copy. */
        r = rt_selfexe_confirm_maps(cr->c->spec->linux_ ? cr->c->spec->linux_->uid_mappings : NULL,
                                    cr->c->spec->linux_ ? cr->c->spec->linux_->n_uid_mappings : 0,
                                    cr->plan.new_flags & CLONE_NEWUSER, err);
        if (r < 0)
                return r;
        if (!(cr->plan.new_flags & CLONE_NEWNS) && !cr->plan.join[OCI_NS_MOUNT])
                return msp_err_set(err, EINVAL, "config.json: linux.namespaces: msp needs a mount namespace");
        r = check_rootless_userns(&cr->plan, err);
        if (r < 0)
                return r;
        if (cr->c->spec->root_path[0] == '/')
                snprintf(config, sizeof config, "%s", cr->c->spec->root_path);
        else
                snprintf(config, sizeof config, "%s/%s", cr->bundle, cr->c->spec->root_path);
        if (!realpath(config, cr->rootfs))
                return msp_err_sys(err, errno, "config.json: root.path '%s'", cr->c->spec->root_path);

        r = rt_state_root_open(cr->ctx, true, &cr->c->rootfd, err);
        if (r < 0)
                return r;
        r = rt_statedir_create(cr->c->rootfd, o->id, &cr->c->dirfd, err);
        if (r < 0)
                return r;
        cr->statedir_made = true;
        r = rt_write_file_atomic(cr->c->dirfd, RT_CONFIG_NAME, data, len, 0600, err);
        if (r < 0)
                return r;
        if (mkfifoat(cr->c->dirfd, RT_FIFO_NAME, 0600) < 0)
                return msp_err_sys(err, errno, "mkfifo '%s'", RT_FIFO_NAME);
        return 0;
}

/* The owner's name as runc finds it: from /etc/passwd itself. getpwuid would go through
 * NSS (nsswitch.conf, an nscd probe, maybe modules to load), which a static msp cannot
 * use and which cost ~55 µs per create. No entry: "", as before. */
static void
owner_name(uid_t uid, char *buf, size_t size)
{
        _cleanup_fclose_ FILE *f = fopen("/etc/passwd", "re");
        struct passwd pwbuf, *pw;
        char line[1024];

        buf[0] = '\0';
        if (!f)
                return;
        while (fgetpwent_r(f, &pwbuf, line, sizeof line, &pw) == 0)
                if (pw->pw_uid == uid) {
                        snprintf(buf, size, "%s", pw->pw_name);
                        return;
                }
}

static int
init_state(create_run *cr, msp_err *err)
{
        oci_state *st = calloc(1, sizeof *st);

        if (!st)
                return msp_err_set(err, ENOMEM, "out of memory");
        cr->c->state = st;
        now_rfc3339(cr->created, sizeof cr->created);
        owner_name(geteuid(), cr->owner, sizeof cr->owner);
        st->oci_version = cr->c->spec->oci_version;
        st->id = cr->c->id;
        st->status = (char *) "creating";
        st->bundle = cr->bundle;
        st->rootfs = cr->rootfs;
        st->created = cr->created;
        st->owner = cr->owner;
        st->annotations = cr->c->spec->annotations;
        if (cr->ctx->cgroup_manager != RT_CGROUP_DISABLED) {
                rt_cgroup_caller who = {
                        .rootless = cr->ctx->rootless,
                        .systemd = cr->ctx->cgroup_manager == RT_CGROUP_SYSTEMD,
                };
                char why[PATH_MAX + 128];
                int r = rt_cgroup_choose_path(&who, cr->c->spec->linux_, cr->c->id, cr->cgroup,
                                              sizeof cr->cgroup, why, sizeof why, err);
                if (r < 0)
                        return r;
                if (cr->cgroup[0])
                        st->cgroup_path = cr->cgroup;
                else
                        rt_debug(cr->ctx, "create '%s': rootless, no cgroup: %s", cr->c->id, why);
        }
        st->systemd_cgroup = cr->ctx->systemd_cgroup;
        st->no_new_keyring = cr->o->no_new_keyring;
        /* Persist before creating anything else so that delete --force can find it. */
        return rt_state_save(cr->c->dirfd, st, err);
}

int
rt_container_create(const rt_ctx *ctx, const rt_create_opts *o, rt_container **ret, msp_err *err)
{
        _cleanup_container_ rt_container *c = container_new(o->id);
        create_run *cr = NULL;
        _cleanup_close_ int pidfd = -1;
        int r;

        if (!c)
                return msp_err_set(err, ENOMEM, "out of memory");
        cr = calloc(1, sizeof *cr);
        if (!cr)
                return msp_err_set(err, ENOMEM, "out of memory");
        cr->ctx = ctx;
        cr->o = o;
        cr->c = c;
        cr->listen_fds = rt_listen_fds();
        r = prepare_create(cr, err);
        if (r >= 0) {
                rt_debug(ctx, "create '%s': bundle '%s', rootfs '%s'", o->id, cr->bundle, cr->rootfs);
                rt_ns_plan_debug(ctx, o->id, &cr->plan);
        }
        if (r >= 0)
                cr->start_at_ready = o->start_at_ready &&
                                     !(c->spec->has_hooks && c->spec->hooks.poststart.n);
        if (r >= 0)
                r = init_state(cr, err);
        if (r >= 0 && cr->cgroup[0]) {
                r = rt_cgroup_mode_detect(&cr->cgroup_mode, err);
                if (r >= 0)
                        cgroup_join_plan(cr);
                if (r >= 0)
                        r = rt_cgroup_probe(cr->cgroup, &cr->cgroup_probe, err);
                if (r >= 0)
                        r = make_cgroup(cr, cgroup_v1_after_go(cr) ? RT_CGROUP_V2 : RT_CGROUP_ALL, err);
                if (r >= 0)
                        rt_debug(ctx, "create '%s': cgroup '%s' (%s%s)", o->id, cr->cgroup,
                                 cr->cgroup_made ? "made" : "existed",
                                 cgroup_v1_after_go(cr) ? "; v1 hierarchies after clone" : "");
                if (r >= 0 && !cgroup_v1_after_go(cr))
                        r = apply_cgroup_resources(cr, err);
        }
        if (r >= 0)
                r = spawn_init(cr, &pidfd, err);
        if (r >= 0)
                rt_debug(ctx, "create '%s': init pid %d parked, waiting for start", o->id,
                         (int) cr->pid);
        if (r >= 0 && o->pid_file)
                r = rt_write_pid_file(o->pid_file, cr->pid, err);
        if (r < 0) {
                create_rollback(cr, pidfd);
                free(cr);
                return r;
        }
        /* The state borrows strings from cr: re-read it so it owns them. */
        oci_state_free(TAKE_PTR(c->state));
        bool cr_start_at_ready = cr->start_at_ready;
        free(cr);
        r = rt_state_load(c->dirfd, c->id, &c->state, err);
        if (r < 0)
                return r;
        c->state->status = (char *) "created";
        c->pidfd = TAKE_FD(pidfd);
        c->released = cr_start_at_ready;
        *ret = TAKE_PTR(c);
        return 0;
}
