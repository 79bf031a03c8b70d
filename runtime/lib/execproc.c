/* `exec`: the runtime side (parent) and the child that enters a live container.
 *
 * Parent: open the init's namespace files through a verified procfs, then check that
 * the init's pid still has the start time recorded at create (the fds then surely
 * belong to the container, not to a process that reused the pid). setns(pid) in the
 * runtime only changes where its children are born (pid_for_children): clone3 puts the
 * child straight into the container's pid namespace and the runtime goes back to its
 * own at once. Rootless, the runtime has no privilege over that pid namespace from
 * outside the container's user namespace: a middle process joins the user namespace,
 * then the pid namespace, and clones the child with CLONE_PARENT (the runtime stays its
 * parent). The parent moves the child into the container's cgroup (every hierarchy;
 * none with --cgroup-manager disabled), then lets it go. The seccomp program is compiled
 * or read from the state root's cache (seccomp-cache.h) by the parent before any of
 * that, as at create; the child only loads it.
 *
 * Child: joins the user namespace first (when the container has its own), then mnt,
 * net, ipc, uts, cgroup (after the cgroup move, so its root is the container's) and
 * time. setns(mnt) sets the caller's root and cwd to the root of the namespace's mount
 * tree, with the mounts stacked on it followed: after the init's pivot_root (or the
 * MS_MOVE of --no-pivot) that is the container's rootfs, so no chroot is needed and
 * nothing of the host's tree stays reachable (runc relies on the same rule). Then the
 * init's final steps, in its order, the LSM exec label among them (written through the
 * runtime's verified procfs, kept open until then). */
#include "lib/execproc.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/sched.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/cgroup/cgroup.h"
#include "lib/final.h"
#include "lib/log.h"
#include "lib/lsm.h"
#include "oci/oci.h"
#include "lib/ns.h"
#include "lib/process.h"
#include "lib/procfs.h"
#include "lib/rtspawn.h"
#include "lib/seccomp.h"
#include "lib/statedir.h"
#include "lib/sync.h"
#include "lib/terminal.h"

/* The order the child joins them in; pid is joined by the parent. */
static const oci_ns_type join_order[] = {
        OCI_NS_USER, OCI_NS_MOUNT, OCI_NS_NETWORK, OCI_NS_IPC, OCI_NS_UTS, OCI_NS_CGROUP,
        OCI_NS_TIME,
};

static const char *const ns_file[OCI_NS_TYPE_MAX] = {
        [OCI_NS_PID] = "pid", [OCI_NS_NETWORK] = "net", [OCI_NS_MOUNT] = "mnt",
        [OCI_NS_IPC] = "ipc", [OCI_NS_UTS] = "uts", [OCI_NS_USER] = "user",
        [OCI_NS_CGROUP] = "cgroup", [OCI_NS_TIME] = "time",
};

typedef struct exec_child {
        const rt_ctx *ctx;
        const rt_exec_opts *o;
        const oci_spec *spec;
        const oci_state *state;
        int ns_fd[OCI_NS_TYPE_MAX];     /* -1: the runtime's own, not joined */
        int sync_fd;
        int console_fd;
        const int *stdio;               /* fds 0-2 to take (rt_stdio_enter_child) */
        int seccomp_sock;
        rt_seccomp *seccomp;            /* borrowed: prepared by the parent, or NULL */
        pid_t host_pid;
        bool in_userns;
        bool park;                      /* frozen cgroup: wait to be moved before seccomp */
        bool parked;
        int procfd;                     /* the runtime's verified procfs: the LSM label */
        int runtime_fds[2];             /* state root, locked state dir */
        rt_final fin;
} exec_child;

/* Open the init's namespace of type t; -1 without error when it is the runtime's own
 * (nothing to join) or the kernel has no such namespace type. */
static int
open_ns(int procfd, pid_t pid, oci_ns_type t, int min, int *ret, msp_err *err)
{
        char path[64];
        struct stat st, self;

        *ret = -1;
        snprintf(path, sizeof path, "%d/ns/%s", (int) pid, ns_file[t]);
        int fd = openat(procfd, path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
                if (errno == ENOENT && t == OCI_NS_TIME)
                        return 0;
                return msp_err_sys(err, errno, "open /proc/%s", path);
        }
        snprintf(path, sizeof path, "self/ns/%s", ns_file[t]);
        if (fstat(fd, &st) < 0 || fstatat(procfd, path, &self, 0) < 0) {
                int e = errno;
                close(fd);
                return msp_err_sys(err, e, "stat the %s namespace", ns_file[t]);
        }
        if (st.st_ino == self.st_ino && st.st_dev == self.st_dev) {
                close(fd);
                return 0;
        }
        *ret = rt_fd_above(fd, min);
        if (*ret < 0)
                return msp_err_sys(err, errno, "dup a namespace fd");
        return 0;
}

/* ---- the child ---- */

/* Join the container's namespace of type t (nothing when it is the runtime's own, or
 * already joined); its fd is closed. */
static int
join_ns(exec_child *ec, oci_ns_type t, msp_err *err)
{
        if (ec->ns_fd[t] < 0)
                return 0;
        if (setns(ec->ns_fd[t], t == OCI_NS_PID ? CLONE_NEWPID : 0) < 0)
                return msp_err_sys(err, errno, "join the container's %s namespace", ns_file[t]);
        close(ec->ns_fd[t]);
        ec->ns_fd[t] = -1;
        if (t == OCI_NS_USER) {
                /* The namespace's root where mapped; the user switch sets the final ids. */
                if (setresgid(0, 0, 0) < 0 && errno != EINVAL)
                        return msp_err_sys(err, errno, "setresgid(0) in the user namespace");
                if (setresuid(0, 0, 0) < 0 && errno != EINVAL)
                        return msp_err_sys(err, errno, "setresuid(0) in the user namespace");
        }
        return 0;
}

_Noreturn static void
child_fail(const exec_child *ec, const msp_err *err)
{
        (void) rt_sync_send(ec->sync_fd, RT_SYNC_ERROR, 0, err);
        _exit(1);
}

static int
child_enter(exec_child *ec, msp_err *err)
{
        rt_sync_msg msg;
        int r;

        r = rt_sync_expect(ec->sync_fd, RT_SYNC_GO, &msg, err);
        if (r < 0)
                return r;
        ec->host_pid = msg.value > 0 ? (pid_t) msg.value : getpid();
        for (size_t i = 0; i < ARRAY_SIZE(join_order); i++) {
                r = join_ns(ec, join_order[i], err);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int
child_terminal(exec_child *ec, msp_err *err)
{
        const oci_process *p = ec->o->proc;
        _cleanup_close_ int root = -1, master = -1, slave = -1;
        int r;

        if (ec->console_fd < 0)
                return 0;
        root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (root < 0)
                return msp_err_sys(err, errno, "open /");
        r = rt_pty_open_child(root, p->has_console_size ? p->console_height : 0,
                              p->has_console_size ? p->console_width : 0, &master, &slave, err);
        if (r < 0)
                return r;
        if (fchown(slave, p->user.uid, (gid_t) -1) < 0 && errno != EINVAL)
                return msp_err_sys(err, errno, "chown the pty to uid %u", (unsigned) p->user.uid);
        r = rt_console_send_master(ec->console_fd, master, err);
        if (r < 0)
                return r;
        close(ec->console_fd);
        ec->console_fd = -1;
        return rt_pty_make_stdio_child(slave, err);
}

/* --ignore-paused into a frozen cgroup: the parent moves the child into the cgroup only
 * now, after all setup that can fail (so the error still reaches the caller), and before
 * seccomp (which may forbid the handshake) and execve (so that no code of the container
 * runs outside its cgroup). The move freezes the child; it goes on once resumed. */
static int
child_park(exec_child *ec, msp_err *err)
{
        rt_sync_msg msg;

        if (!ec->park || ec->parked)
                return 0;
        ec->parked = true;
        /* The runtime exits once it has moved us: a lost runtime shows as EOF here. */
        (void) prctl(PR_SET_PDEATHSIG, 0);
        if (rt_sync_send(ec->sync_fd, RT_SYNC_READY, 0, NULL) < 0)
                return msp_err_set(err, EPIPE, "exec: the runtime went away");
        return rt_sync_expect(ec->sync_fd, RT_SYNC_GO, &msg, err);
}

static int
child_park_cb(void *data, msp_err *err)
{
        return child_park(data, err);
}

/* The final steps (final.h), the same as the init's; exec's own: the parent's verified
 * procfs for the label, the parking before seccomp, and the state "running". */
static int
child_prepare(exec_child *ec, msp_err *err)
{
        _cleanup_free_ char *json = NULL;
        int r;

        if (ec->seccomp_sock >= 0) {
                oci_state st = *ec->state;
                size_t len;
                st.pid = ec->host_pid;
                st.status = (char *) "running";
                r = oci_state_to_json(&st, 0, &json, &len, err);
                if (r < 0)
                        return r;
        }
        ec->fin = (rt_final) {
                .ctx = ec->ctx,
                .proc = ec->o->proc,
                .linux_ = ec->spec->linux_,
                .seccomp = ec->seccomp,
                .procfd = ec->procfd,
                .first_fd = 3 + ec->o->preserve_fds,
                .envp = ec->o->proc->env.v,
                .in_userns = ec->in_userns,
                /* As the init: --no-new-keyring at create holds for the container. */
                .new_keyring = !ec->state->no_new_keyring,
                .listener_sock = ec->seccomp_sock,
                .listener_state = json,
                .host_pid = ec->host_pid,
                .before_seccomp = child_park_cb,
                .data = ec,
        };
        ec->procfd = -1;
        ec->seccomp_sock = -1;
        r = rt_final_steps(&ec->fin, err);
        /* Not freed after a filter was loaded: free() could call a notified syscall. */
        if (ec->seccomp)
                (void) TAKE_PTR(json);
        return r;
}

_Noreturn static void
exec_child_main(exec_child *ec)
{
        msp_err err = { 0 };
        sigset_t all;
        char *empty_env[] = { NULL };

        (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
        (void) prctl(PR_SET_DUMPABLE, 0);
        /* Close-on-exec anyway, but none of them is to be open inside the container. */
        for (size_t i = 0; i < ARRAY_SIZE(ec->runtime_fds); i++)
                if (ec->runtime_fds[i] >= 0)
                        close(ec->runtime_fds[i]);
        sigfillset(&all);
        (void) sigprocmask(SIG_UNBLOCK, &all, NULL);

        if (rt_stdio_enter_child(ec->stdio, &err) < 0 || child_enter(ec, &err) < 0 ||
            child_terminal(ec, &err) < 0 ||
            child_prepare(ec, &err) < 0 || child_park(ec, &err) < 0)
                child_fail(ec, &err);
        (void) prctl(PR_SET_PDEATHSIG, 0);
        execve(ec->fin.exec_path, ec->o->proc->args.v, ec->fin.envp ? ec->fin.envp : empty_env);
        int e = errno;
        (void) msp_err_sys(&err, e, "exec '%s'", ec->fin.exec_path);
        (void) rt_sync_send(ec->sync_fd, RT_SYNC_ERROR, 0, &err);
        _exit(e == ENOENT ? 127 : 126);
}

/* ---- the parent ---- */

/* Rootful: setns(pid) in the runtime only changes where its children are born; clone3
 * puts the child straight into the container's pid namespace and the runtime goes back
 * to its own at once. */
static int
spawn_direct(const rt_ctx *ctx, exec_child *ec, int procfd, int min, int sync_parent,
             pid_t *ret_child, int *ret_pidfd, msp_err *err)
{
        _cleanup_close_ int own_pid = -1;

        if (ec->ns_fd[OCI_NS_PID] >= 0) {
                own_pid = rt_fd_above(openat(procfd, "self/ns/pid", O_RDONLY | O_CLOEXEC), min);
                if (own_pid < 0)
                        return msp_err_sys(err, errno, "open /proc/self/ns/pid");
                if (setns(ec->ns_fd[OCI_NS_PID], CLONE_NEWPID) < 0)
                        return msp_err_sys(err, errno, "join the container's pid namespace");
        }
        struct clone_args ca = {
                .flags = CLONE_PIDFD,
                .pidfd = (uint64_t) (uintptr_t) ret_pidfd,
                .exit_signal = SIGCHLD,
        };
        long child = syscall(SYS_clone3, &ca, sizeof ca);
        if (child == 0) {
                close(sync_parent);
                if (own_pid >= 0)
                        close(own_pid);
                exec_child_main(ec);
        }
        int clone_errno = errno;
        if (own_pid >= 0 && setns(own_pid, CLONE_NEWPID) < 0) {
                /* Cannot happen for our own active namespace; never fork into theirs. */
                rt_log_error(ctx, "exec: cannot return to the runtime's pid namespace: %m");
                _exit(1);
        }
        if (child < 0)
                return msp_err_sys(err, clone_errno, "clone3 the exec process");
        *ret_child = (pid_t) child;
        return 0;
}

/* Rootless: the middle process joins the container's user namespace where it has one
 * (which the runtime could never leave again), then its pid namespace, and clones the
 * exec process with CLONE_PARENT, so that the runtime is its parent (it waits for it);
 * the same two steps as runc's nsexec. The middle sends the process's pid and exits. */
_Noreturn static void
middle_main(exec_child *ec)
{
        const oci_process *p = ec->o->proc;
        msp_err err = { 0 };

        (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
        /* process.oomScoreAdj: the middle sets its own while still dumpable and outside
         * the container (the child inherits it); the /proc files of a non-dumpable child
         * are root's, out of an unprivileged runtime's reach. */
        if (p->has_oom_score_adj) {
                char val[32];
                snprintf(val, sizeof val, "%d", p->oom_score_adj);
                if (rt_procfs_write(ec->procfd, "self/oom_score_adj", val, &err) < 0) {
                        (void) msp_err_prefix(&err, "process.oomScoreAdj");
                        child_fail(ec, &err);
                }
        }
        (void) prctl(PR_SET_DUMPABLE, 0);
        if (join_ns(ec, OCI_NS_USER, &err) < 0 || join_ns(ec, OCI_NS_PID, &err) < 0)
                child_fail(ec, &err);
        struct clone_args ca = { .flags = CLONE_PARENT };
        long child = syscall(SYS_clone3, &ca, sizeof ca);
        if (child == 0)
                exec_child_main(ec);
        if (child < 0) {
                (void) msp_err_sys(&err, errno, "clone3 the exec process");
                child_fail(ec, &err);
        }
        (void) rt_sync_send(ec->sync_fd, RT_SYNC_READY, (int32_t) child, NULL);
        _exit(0);
}

static int
spawn_via_userns(exec_child *ec, int sync_parent, pid_t *ret_child, int *ret_pidfd,
                 msp_err *err)
{
        struct clone_args ca = { .exit_signal = SIGCHLD };
        rt_sync_msg msg;
        int status;

        long mid = syscall(SYS_clone3, &ca, sizeof ca);
        if (mid == 0) {
                close(sync_parent);
                middle_main(ec);
        }
        if (mid < 0)
                return msp_err_sys(err, errno, "clone3 the exec process");
        int r = rt_sync_recv(sync_parent, &msg, err);
        while (waitpid((pid_t) mid, &status, 0) < 0 && errno == EINTR)
                ;
        if (r < 0)
                return msp_err_prefix(err, "exec: joining the user and pid namespaces");
        if (msg.type == RT_SYNC_ERROR)
                return rt_sync_error_of(&msg, err);
        if (msg.type != RT_SYNC_READY || msg.value <= 0)
                return msp_err_set(err, EPROTO, "unexpected message %u from the exec process",
                                   msg.type);
        /* Our child (CLONE_PARENT): its pid cannot be reused before we reap it. */
        *ret_child = (pid_t) msg.value;
        *ret_pidfd = (int) syscall(SYS_pidfd_open, *ret_child, 0);
        if (*ret_pidfd < 0) {
                int e = errno;
                (void) kill(*ret_child, SIGKILL);
                while (waitpid(*ret_child, NULL, 0) < 0 && errno == EINTR)
                        ;
                return msp_err_sys(err, e, "pidfd_open the exec process");
        }
        return 0;
}

static int
check_status(const rt_container *c, bool ignore_paused, msp_err *err)
{
        const char *s = c->state->status;

        if (strcmp(s, "running") == 0 || strcmp(s, "created") == 0)
                return 0;
        if (strcmp(s, "paused") == 0) {
                if (ignore_paused)
                        return 0;
                return msp_err_set(err, EBUSY, "container '%s' is paused: resume it first, "
                                   "or pass --ignore-paused", c->id);
        }
        return msp_err_set(err, ESRCH, "cannot exec in container '%s': it is %s, not running",
                           c->id, s);
}

/* One exec, from the checks to the exec'd process. */
typedef struct exec_run {
        const rt_ctx *ctx;
        rt_container *c;
        const rt_exec_opts *o;
        int min;                        /* fds below it are the container's (preserve-fds) */
        exec_child ec;
        rt_spawn_fds fds;
        int procfd;                     /* verified procfs */
        char cgpath[PATH_MAX];          /* "": no cgroup to join */
        char frozen_watch[PATH_MAX];    /* the freezer cgroup the child joins ("": none) */
        rt_cgroup_sub sub;
        bool via_userns;
        pid_t child;
        int pidfd;
} exec_run;

/* The cgroup whose freezer stops the child: the container's, or the --cgroup sub-cgroup
 * of every hierarchy, or of the freezer's. */
static void
exec_watch_path(exec_run *er)
{
        const char *sub = er->sub.all;

        for (size_t i = 0; !sub && i < er->sub.n; i++)
                if (strcmp(er->sub.v[i].ctrl, "freezer") == 0)
                        sub = er->sub.v[i].path;
        if (!er->cgpath[0])
                return;
        int n = snprintf(er->frozen_watch, sizeof er->frozen_watch, "%s%s%s", er->cgpath,
                         sub && sub[0] != '/' ? "/" : "", sub ? sub : "");
        if (n < 0 || (size_t) n >= sizeof er->frozen_watch)
                memcpy(er->frozen_watch, er->cgpath, sizeof er->cgpath);
}

/* Refused before anything starts: no command, the container's state, a label for an
 * LSM the host does not run, a bad --cgroup. */
static int
exec_check(exec_run *er, msp_err *err)
{
        const rt_exec_opts *o = er->o;
        rt_container *c = er->c;
        int r;

        if (!o->proc || o->proc->args.n == 0 || !o->proc->args.v[0])
                return msp_err_set(err, EINVAL, "exec: no command given");
        r = check_status(c, o->ignore_paused, err);
        if (r < 0)
                return r;
        r = rt_lsm_check_process("exec", o->proc, err);
        if (r < 0)
                return r;
        if (!c->spec)
                return msp_err_set(err, EINVAL, "container '%s' has no saved config", c->id);
        if (o->n_sub_cgroups) {
                if (!c->state->cgroup_path)
                        return msp_err_set(err, EINVAL, "--cgroup: the container has no cgroup");
                r = rt_cgroup_sub_parse(o->sub_cgroups, o->n_sub_cgroups, &er->sub, err);
                if (r < 0)
                        return r;
        }
        if (c->state->cgroup_path)
                snprintf(er->cgpath, sizeof er->cgpath, "%s", c->state->cgroup_path);
        exec_watch_path(er);
        return 0;
}

/* The init's namespaces through a verified procfs; then the fds are surely the init's
 * if its pid still has the recorded start time. */
static int
exec_open_init_ns(exec_run *er, msp_err *err)
{
        const oci_state *st = er->c->state;
        int r;

        r = rt_procfs_open(err);
        if (r < 0)
                return r;
        er->procfd = rt_fd_above(r, er->min);
        if (er->procfd < 0)
                return msp_err_sys(err, errno, "dup the procfs fd");
        for (int t = 0; t < OCI_NS_TYPE_MAX; t++) {
                r = open_ns(er->procfd, st->pid, (oci_ns_type) t, er->min, &er->ec.ns_fd[t], err);
                if (r < 0)
                        return r;
        }
        if (!rt_pid_alive(st->pid, st->pid_start_time))
                return msp_err_set(err, ESRCH, "cannot exec in container '%s': its process "
                                   "exited", er->c->id);
        er->ec.in_userns = er->ec.ns_fd[OCI_NS_USER] >= 0;
        rt_ns_fds_debug(er->ctx, er->c->id, st->pid, er->ec.ns_fd);
        er->ec.park = er->o->ignore_paused && er->cgpath[0] &&
                      rt_cgroup_is_frozen(er->cgpath);
        /* Rootless, only a process inside the container's user namespace may join its
         * pid namespace; and where the container shares the runtime's user namespace
         * (rootless podman), the runtime's own pid namespace belongs to the host's user
         * namespace, so a runtime that joined the container's could not come back. */
        er->via_userns = er->ctx->rootless;
        return 0;
}

/* The child's fds, then the clone: the child has its copy of them and of ec. */
static int
exec_clone(exec_run *er, msp_err *err)
{
        exec_child *ec = &er->ec;
        int r;

        r = rt_spawn_fds_open(&er->fds, er->ctx, er->c->rootfd, er->o->proc,
                              er->c->spec->linux_, er->o->console_socket, er->o->console_fd,
                              er->o->stdio, er->min, err);
        if (r < 0)
                return r;
        ec->console_fd = er->fds.console;
        ec->stdio = er->fds.stdio;
        ec->seccomp_sock = er->fds.seccomp_sock;
        ec->seccomp = er->fds.seccomp;
        ec->sync_fd = er->fds.sync[1];
        ec->runtime_fds[0] = er->c->rootfd;
        ec->runtime_fds[1] = er->c->dirfd;
        ec->procfd = er->procfd;
        if (er->via_userns)
                r = spawn_via_userns(ec, er->fds.sync[0], &er->child, &er->pidfd, err);
        else
                r = spawn_direct(er->ctx, ec, er->procfd, er->min, er->fds.sync[0], &er->child,
                                 &er->pidfd, err);
        close(TAKE_FD(er->fds.sync[1]));
        return r;
}

static int
exec_join_cgroup(exec_run *er, msp_err *err)
{
        int r = rt_cgroup_enter_sub(er->cgpath, er->o->n_sub_cgroups ? &er->sub : NULL,
                                    er->child, err);

        return r < 0 ? msp_err_prefix(err, "exec: join the container's cgroup") : 0;
}

/* The cgroup (later when parked), oomScoreAdj (the middle process wrote its own when
 * rootless), GO; then EOF on the sync socket says execve succeeded (it is
 * close-on-exec), a message is the error. */
static int
exec_release(exec_run *er, msp_err *err)
{
        const int sync = er->fds.sync[0];
        rt_sync_msg msg;
        int r;

        if (er->cgpath[0] && !er->ec.park) {
                r = exec_join_cgroup(er, err);
                if (r < 0)
                        return r;
        }
        if (!er->via_userns) {
                r = rt_spawn_oom_score_adj(er->procfd, er->child, er->o->proc, err);
                if (r < 0)
                        return r;
        }
        if (rt_sync_send(sync, RT_SYNC_GO, (int32_t) er->child, NULL) < 0)
                return msp_err_set(err, EPIPE, "the exec process died during setup");
        /* Parked: the cgroup is frozen on purpose, and the child not yet in it. */
        r = rt_spawn_recv(sync, er->ec.park ? NULL : er->frozen_watch, "exec", &msg, err);
        if (r >= 0 && er->ec.park && msg.type == RT_SYNC_READY) {
                /* Set up and parked: into the frozen cgroup, where it stops until resumed
                 * and then execs; its exit status tells the rest. */
                r = exec_join_cgroup(er, err);
                if (r < 0)
                        return r;
                if (rt_sync_send(sync, RT_SYNC_GO, 0, NULL) < 0)
                        return msp_err_set(err, EPIPE, "the exec process died during setup");
                r = -EPIPE;
        }
        if (r == -EPIPE) {
                msp_err_clear(err);
                return 0;
        }
        if (r < 0)
                return r;
        if (msg.type == RT_SYNC_ERROR)
                return rt_sync_error_of(&msg, err);
        return msp_err_set(err, EPROTO, "unexpected message %u from the exec process", msg.type);
}

/* A child in a frozen v1 cgroup does not die of SIGKILL until thawed: the wait for it
 * is bounded; unreaped, it dies at the thaw before any code of the container runs, and
 * whoever inherits it reaps it. */
static void
exec_kill(exec_run *er)
{
        struct pollfd p = { .fd = er->pidfd, .events = POLLIN };

        if (er->child <= 0)
                return;
        (void) syscall(SYS_pidfd_send_signal, er->pidfd, SIGKILL, NULL, 0);
        while (poll(&p, 1, 1000) < 0 && errno == EINTR)
                ;
        while (waitpid(er->child, NULL, WNOHANG) < 0 && errno == EINTR)
                ;
        if (er->pidfd >= 0)
                close(er->pidfd);
        er->pidfd = -1;
}

int
rt_exec_spawn(const rt_ctx *ctx, rt_container *c, const rt_exec_opts *o, pid_t *ret_pid,
              int *ret_pidfd, msp_err *err)
{
        exec_run er = {
                .ctx = ctx, .c = c, .o = o,
                .min = 3 + (o->preserve_fds > 0 ? o->preserve_fds : 0),
                .ec = { .ctx = ctx, .o = o, .spec = c->spec, .state = c->state,
                        .sync_fd = -1, .console_fd = -1, .seccomp_sock = -1, .procfd = -1 },
                .fds = RT_SPAWN_FDS_INIT,
                .procfd = -1, .child = -1, .pidfd = -1,
        };
        int r;

        for (int t = 0; t < OCI_NS_TYPE_MAX; t++)
                er.ec.ns_fd[t] = -1;
        r = exec_check(&er, err);
        if (r >= 0)
                r = exec_open_init_ns(&er, err);
        if (r >= 0)
                r = exec_clone(&er, err);
        if (r >= 0)
                r = exec_release(&er, err);
        if (r < 0) {
                exec_kill(&er);
        } else {
                rt_debug(ctx, "exec in '%s': pid %d runs '%s' (cgroup '%s')", c->id,
                         (int) er.child, o->proc->args.n ? o->proc->args.v[0] : "",
                         er.cgpath[0] ? er.cgpath : "none");
                *ret_pid = er.child;
                *ret_pidfd = er.pidfd;
        }
        for (int t = 0; t < OCI_NS_TYPE_MAX; t++)
                if (er.ec.ns_fd[t] >= 0)
                        close(er.ec.ns_fd[t]);
        if (er.procfd >= 0)
                close(er.procfd);
        rt_spawn_fds_close(&er.fds);
        return r;
}
