/* The container init (the child of clone3). Order matters and is explained inline;
 * docs/ARCHITECTURE.md has the whole sequence. Errors go to the parent over the sync
 * socket; the child prints only after start, when no runtime is left to tell (see
 * start_failed), and always leaves with _exit(). */
#include "lib/init.h"

#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/devices.h"
#include "lib/final.h"
#include "lib/hooks.h"
#include "lib/log.h"
#include "oci/oci.h"
#include "lib/mountsrc.h"
#include "lib/netlink.h"
#include "lib/process.h"
#include "lib/procfs.h"
#include "lib/rootfs.h"
#include "lib/seccomp.h"
#include "lib/sync.h"
#include "lib/terminal.h"

typedef struct init_run {
        const rt_init_args *a;
        const oci_process *proc;
        int rootfd;
        bool in_userns;
        char **envp;
        pid_t host_pid;                 /* our pid as the runtime sees it (from GO) */
        bool mount_src_asked;           /* RT_SYNC_MOUNT_SOURCES sent */
        int *mount_src;                 /* per mount: a bind source the runtime opened */
        char *listener_json;            /* for the seccomp agent; never freed */
        rt_final fin;
} init_run;

_Noreturn static void
init_fail(const init_run *ir, const msp_err *err)
{
        (void) rt_sync_send(ir->a->sync_fd, RT_SYNC_ERROR, 0, err);
        _exit(1);
}

static int
sysctl_key_to_path(const char *key, char *buf, size_t bufsz)
{
        int n = snprintf(buf, bufsz, "sys/%s", key);

        if (n < 0 || (size_t) n >= bufsz || !*key)
                return -EINVAL;
        for (char *p = buf + 4; *p; p++) {
                if (*p == '.')
                        *p = '/';
                else if (*p == '/')
                        return -EINVAL;
        }
        if (strstr(buf, "//") || strstr(buf, "/../") || buf[n - 1] == '/')
                return -EINVAL;
        return 0;
}

/* Only a sysctl that belongs to a namespace the container has can be set: any other
 * one is the host's (vm.*, kernel.panic, net.* without a network namespace, ...). The
 * same rule as runc's and crun's. */
static int
sysctl_check(const char *key, const rt_ns_plan *plan, msp_err *err)
{
        static const char *const ipc[] = {
                "kernel.msgmax", "kernel.msgmnb", "kernel.msgmni", "kernel.msg_next_id",
                "kernel.sem", "kernel.sem_next_id", "kernel.shmall", "kernel.shmmax",
                "kernel.shmmni", "kernel.shm_next_id", "kernel.shm_rmid_forced",
        };
        int ns = -1;

        if (strncmp(key, "net.", 4) == 0)
                ns = OCI_NS_NETWORK;
        else if (strncmp(key, "fs.mqueue.", 10) == 0)
                ns = OCI_NS_IPC;
        else if (strcmp(key, "kernel.hostname") == 0 || strcmp(key, "kernel.domainname") == 0)
                ns = OCI_NS_UTS;
        for (size_t i = 0; ns < 0 && i < sizeof ipc / sizeof ipc[0]; i++)
                if (strcmp(key, ipc[i]) == 0)
                        ns = OCI_NS_IPC;
        if (ns < 0)
                return msp_err_set(err, EPERM, "linux.sysctl '%s': not namespaced, so it would "
                                   "change the host; refusing", key);
        if (!plan->has[ns])
                return msp_err_set(err, EPERM, "linux.sysctl '%s': needs the container's own %s "
                                   "namespace", key, oci_ns_type_name((oci_ns_type) ns));
        return 0;
}

/* sysctls go through a procfs instance of the container's own pid namespace, opened
 * here after all namespaces exist, so /proc/sys/net reflects the new netns. */
static int
apply_sysctl(const oci_linux *lx, const rt_ns_plan *plan, msp_err *err)
{
        _cleanup_close_ int procfd = -1;

        if (!lx || lx->sysctl.n == 0)
                return 0;
        for (size_t i = 0; i < lx->sysctl.n; i++) {
                int r = sysctl_check(lx->sysctl.v[i].key, plan, err);
                if (r < 0)
                        return r;
        }
        procfd = rt_procfs_open(err);
        if (procfd < 0)
                return procfd;
        for (size_t i = 0; i < lx->sysctl.n; i++) {
                char path[512];
                const oci_kv *kv = &lx->sysctl.v[i];
                if (sysctl_key_to_path(kv->key, path, sizeof path) < 0)
                        return msp_err_set(err, EINVAL, "linux.sysctl: invalid key '%.64s'", kv->key);
                int r = rt_procfs_write(procfd, path, kv->value, err);
                if (r < 0)
                        return msp_err_prefix(err, "linux.sysctl '%s'", kv->key);
        }
        return 0;
}

static int
set_names(const init_run *ir, msp_err *err)
{
        const oci_spec *spec = ir->a->spec;
        bool uts = ir->a->plan->has[OCI_NS_UTS];

        if (spec->hostname && *spec->hostname) {
                if (!uts)
                        return msp_err_set(err, EINVAL, "hostname: needs a private UTS namespace");
                if (sethostname(spec->hostname, strlen(spec->hostname)) < 0)
                        return msp_err_sys(err, errno, "sethostname '%s'", spec->hostname);
        }
        if (spec->domainname && *spec->domainname) {
                if (!uts)
                        return msp_err_set(err, EINVAL, "domainname: needs a private UTS namespace");
                if (setdomainname(spec->domainname, strlen(spec->domainname)) < 0)
                        return msp_err_sys(err, errno, "setdomainname '%s'", spec->domainname);
        }
        return 0;
}

static int
run_container_hooks(const init_run *ir, const oci_hook_list *hooks, const char *kind,
                    msp_err *err)
{
        oci_state st;

        if (!ir->a->spec->has_hooks)
                return 0;
        st = *ir->a->state;
        st.pid = getpid();      /* as seen from the container */
        st.status = (char *) "created";
        return rt_hooks_run_state(ir->a->ctx, hooks, kind, &st, err);
}

/* The v1 cgroups the parent made after clone3 (RT_SYNC_CGROUP with their `tasks`
 * files, or none when it moved us itself); the cgroup2 one we were born in. */
static int
join_cgroups(init_run *ir, msp_err *err)
{
        int fds[RT_SYNC_MAX_FDS];
        rt_sync_msg msg;
        rt_cgroup_join join;
        size_t n;
        int r;

        if (!ir->a->cgroup_wait)
                return 0;
        r = rt_sync_expect_fds(ir->a->sync_fd, RT_SYNC_CGROUP, &msg, fds, RT_SYNC_MAX_FDS, &n, err);
        if (r < 0)
                return r;
        rt_cgroup_join_adopt(&join, ir->a->state->cgroup_path, fds, n, msg.err.msg);
        return rt_cgroup_join_child(&join, err);
}

/* Made here, not by clone3: the network namespace alone is ~0.4 ms of kernel work,
 * which then overlaps the parent's work. In a user namespace (new or joined) they
 * belong to it. */
static int
unshare_new(const init_run *ir, msp_err *err)
{
        const int flags = ir->a->unshare_flags;
        char names[128] = "";

        if (!flags || unshare(flags) == 0)
                return 0;
        int e = errno;
        for (int t = 0; t < OCI_NS_TYPE_MAX; t++)
                if (rt_ns_clone_flag((oci_ns_type) t) & flags)
                        snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
                                 names[0] ? ", " : "", oci_ns_type_name((oci_ns_type) t));
        return msp_err_sys(err, e, "create the %s namespaces", names);
}

/* In a new user namespace with its own mount namespace the container's root may not
 * reach a bind source: the runtime opens them with its credentials (mountsrc.h). */
static int
ask_mount_sources(init_run *ir, msp_err *err)
{
        const oci_spec *spec = ir->a->spec;
        bool binds = false;

        for (size_t i = 0; i < spec->n_mounts && !binds; i++)
                binds = rt_mount_is_bind(&spec->mounts[i]);
        if (!binds || !ir->in_userns || !(ir->a->unshare_flags & CLONE_NEWNS) ||
            ir->a->ctx->rootless)
                return 0;
        ir->mount_src_asked = true;
        return rt_mountsrc_request(ir->a->sync_fd, err);
}

/* The namespaces (without a user namespace, before waiting for the parent's go-ahead,
 * which then has long arrived), the go-ahead (maps written), then the cgroups. */
static int
enter_namespaces(init_run *ir, msp_err *err)
{
        const rt_ns_plan *plan = ir->a->plan;
        const bool userns = (plan->new_flags & CLONE_NEWUSER) || plan->join[OCI_NS_USER];
        rt_sync_msg msg;
        int r;

        if (!userns) {
                r = unshare_new(ir, err);
                if (r < 0)
                        return r;
        }
        /* A user namespace joined by path: born in it (rt_ns_clone_in_userns). */
        if (plan->join[OCI_NS_USER]) {
                r = rt_userns_check_maps(ir->a->spec->linux_, err);
                if (r < 0)
                        return r;
        }
        r = rt_sync_expect(ir->a->sync_fd, RT_SYNC_GO, &msg, err);
        if (r < 0)
                return r;
        ir->host_pid = msg.value > 0 ? (pid_t) msg.value : getpid();
        (void) prctl(PR_SET_DUMPABLE, 0);
        /* What the parent prepared before clone3: on a unified host nothing is left to
         * join (we were born in the leaf); close the fds. */
        r = rt_cgroup_join_child(ir->a->cgroup_join, err);
        if (r < 0)
                return r;
        ir->in_userns = userns;
        if (ir->in_userns) {
                /* Become the namespace's root where it is mapped; the user switch later
                 * sets the final ids. */
                if (setresgid(0, 0, 0) < 0 && errno != EINVAL)
                        return msp_err_sys(err, errno, "setresgid(0) in the user namespace");
                if (setresuid(0, 0, 0) < 0 && errno != EINVAL)
                        return msp_err_sys(err, errno, "setresuid(0) in the user namespace");
        }
        if (userns) {
                r = unshare_new(ir, err);
                if (r >= 0)
                        r = ask_mount_sources(ir, err);
                if (r < 0)
                        return r;
        }
        if (plan->join[OCI_NS_MOUNT]) {
                r = rt_ns_join(OCI_NS_MOUNT, plan->join[OCI_NS_MOUNT], err);
                if (r < 0)
                        return r;
        }
        r = join_cgroups(ir, err);
        if (r >= 0 && ir->mount_src_asked)
                r = rt_mountsrc_recv(ir->a->sync_fd, ir->a->spec->n_mounts, &ir->mount_src, err);
        if (r < 0)
                return r;
        /* The cgroup namespace is rooted where the process is when it is created: after
         * it joined the container's cgroups. */
        if ((plan->new_flags & CLONE_NEWCGROUP) && unshare(CLONE_NEWCGROUP) < 0)
                return msp_err_sys(err, errno, "unshare cgroup namespace");
        return 0;
}

static int
setup_terminal(init_run *ir, msp_err *err)
{
        const oci_process *p = ir->proc;
        _cleanup_close_ int master = -1, slave = -1;
        int r;

        if (ir->a->console_fd < 0)
                return 0;
        r = rt_pty_open_child(ir->rootfd, p->has_console_size ? p->console_height : 0,
                              p->has_console_size ? p->console_width : 0, &master, &slave, err);
        if (r < 0)
                return r;
        /* The process' user must be able to reopen its terminal by name (ttyname(),
         * /dev/console), as runc and crun arrange: the slave becomes its own, the tty
         * group stays. An id not mapped in a user namespace (EINVAL) leaves it as is. */
        if (fchown(slave, p->user.uid, (gid_t) -1) < 0 && errno != EINVAL)
                return msp_err_sys(err, errno, "chown the pty to uid %u", (unsigned) p->user.uid);
        r = rt_devices_mount_console_child(ir->rootfd, slave, err);
        if (r < 0)
                return r;
        r = rt_console_send_master(ir->a->console_fd, master, err);
        if (r < 0)
                return r;
        close(ir->a->console_fd);
        r = rt_pty_make_stdio_child(slave, err);
        if (r < 0)
                return r;
        return 0;
}

/* Everything up to pivot_root: mounts, hooks, console, names, loopback, sysctl. */
static int
build_rootfs(init_run *ir, msp_err *err)
{
        const rt_init_args *a = ir->a;
        rt_sync_msg msg;
        int r;

        rt_rootfs_params rp = {
                .spec = a->spec,
                .rootfs = a->rootfs,
                .bundle = a->bundle,
                .in_userns = ir->in_userns,
                .has_cgroupns = a->plan->has[OCI_NS_CGROUP],
                .no_pivot = a->no_pivot,
                .src_fds = ir->mount_src,
                .ctx = a->ctx,
        };
        r = rt_rootfs_setup_child(&rp, &ir->rootfd, err);
        rt_mountsrc_free(ir->mount_src, a->spec->n_mounts);
        ir->mount_src = NULL;
        rp.src_fds = NULL;
        if (r < 0)
                return r;
        if (a->spec->has_hooks && (a->spec->hooks.prestart.n || a->spec->hooks.create_runtime.n)) {
                if (rt_sync_send(a->sync_fd, RT_SYNC_RUN_HOOKS, 0, NULL) < 0)
                        return msp_err_set(err, EPIPE, "the runtime exited during setup");
                r = rt_sync_expect(a->sync_fd, RT_SYNC_HOOKS_DONE, &msg, err);
                if (r < 0)
                        return r;
        }
        if (a->spec->has_hooks) {
                r = run_container_hooks(ir, &a->spec->hooks.create_container, "createContainer", err);
                if (r < 0)
                        return r;
        }
        r = setup_terminal(ir, err);
        if (r < 0)
                return r;
        r = set_names(ir, err);
        if (r < 0)
                return r;
        if (ir->a->plan->new_flags & CLONE_NEWNET) {
                r = rt_netlink_loopback_up(err);
                if (r < 0)
                        return r;
        }
        r = apply_sysctl(a->spec->linux_, a->plan, err);
        if (r < 0)
                return r;
        rt_debug(a->ctx, "init: %s '%s'", a->no_pivot ? "MS_MOVE + chroot (--no-pivot) into" :
                                                         "pivot_root into", a->rootfs);
        r = rt_rootfs_pivot_child(ir->rootfd, a->no_pivot, err);
        if (r < 0)
                return r;
        return rt_rootfs_finalize_child(&rp, err);
}

static int
build_env(init_run *ir, msp_err *err)
{
        const oci_strv *env = &ir->proc->env;
        int listen_fds = ir->a->listen_fds;
        size_t n = env->n;

        ir->envp = calloc(n + 3, sizeof *ir->envp);
        if (!ir->envp)
                return msp_err_set(err, ENOMEM, "out of memory");
        for (size_t i = 0; i < n; i++)
                ir->envp[i] = env->v[i];
        /* Socket activation: hand the fds through and name the container process. */
        if (listen_fds > 0) {
                if (asprintf(&ir->envp[n], "LISTEN_FDS=%d", listen_fds) < 0 ||
                    !(ir->envp[n + 1] = strdup("LISTEN_PID=1")))
                        return msp_err_set(err, ENOMEM, "out of memory");
        }
        return 0;
}

/* The state JSON the seccomp agent gets with the listener: built before the filter is
 * loaded, after it free() could call a notified brk or munmap (so it is not freed). */
static int
listener_state(init_run *ir, msp_err *err)
{
        oci_state st = *ir->a->state;
        size_t len;

        if (ir->a->seccomp_sock < 0)
                return 0;
        st.pid = ir->host_pid;
        st.status = (char *) "creating";
        return oci_state_to_json(&st, 0, &ir->listener_json, &len, err);
}

/* After pivot_root, still privileged: the final steps (final.h), all before READY, so
 * that `create` reports whatever fails on the config. */
static int
prepare_process(init_run *ir, msp_err *err)
{
        const rt_init_args *a = ir->a;
        int r;

        r = build_env(ir, err);
        if (r < 0)
                return r;
        r = listener_state(ir, err);
        if (r < 0)
                return r;
        ir->fin = (rt_final) {
                .ctx = a->ctx,
                .proc = ir->proc,
                .linux_ = a->spec->linux_,
                .seccomp = a->seccomp,
                .procfd = -1,
                .first_fd = 3 + a->listen_fds + a->preserve_fds,
                .envp = ir->envp,
                .in_userns = ir->in_userns,
                .new_keyring = !a->no_new_keyring,
                .listener_sock = a->seccomp_sock,
                .listener_state = ir->listener_json,
                .host_pid = ir->host_pid,
        };
        return rt_final_steps(&ir->fin, err);
}

static void
park_until_start(init_run *ir)
{
        char c;
        ssize_t n;

        do
                n = read(ir->a->fifo_fd, &c, 1);
        while (n < 0 && errno == EINTR);
        if (n != 1)
                _exit(1);
        /* The fifo stays open, close-on-exec: its last reader going away tells a waiting
         * `start` that the process has been exec'd (poststart hooks run after that). */
}

/* Between the start byte and execve the runtime has handed the process over: as runc,
 * say why it never ran on the stderr it was given (the container's), and leave a byte in
 * the exec fifo, so that a `start` waiting for the exec tells this failure from a process
 * that exec'd and ended at once. */
_Noreturn static void
start_failed(const init_run *ir, const msp_err *err, int status)
{
        char msg[sizeof err->msg];

        memcpy(msg, err->msg, sizeof msg);
        msg[sizeof msg - 1] = '\0';
        oci_text_clean(msg);            /* as rt_log_error would print it */
        dprintf(STDERR_FILENO, "msp: %s\n", msg);
        (void) !write(ir->a->fifo_fd, "E", 1);
        _exit(status);
}

/* After start, in the final security context (seccomp included): the startContainer
 * hooks, then execve. */
_Noreturn static void
exec_process(init_run *ir)
{
        msp_err err = { 0 };
        int e;

        if (run_container_hooks(ir, &ir->a->spec->hooks.start_container, "startContainer", &err) < 0)
                start_failed(ir, &err, 1);
        execve(ir->fin.exec_path, ir->proc->args.v, ir->fin.envp);
        e = errno;
        (void) msp_err_sys(&err, e, "exec '%s'", ir->fin.exec_path);
        start_failed(ir, &err, e == ENOENT ? 127 : 126);
}

_Noreturn void
rt_init_child(const rt_init_args *a)
{
        init_run ir = { .a = a, .proc = a->spec->process, .rootfd = -1 };
        msp_err err = { 0 };
        sigset_t all;

        /* The parent's lock must not outlive it in us (we park without exec), and if the
         * parent dies during setup we must not survive it. */
        close(a->lock_fd);
        close(a->state_root_fd);
        (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
        /* Rootless: the unprivileged parent writes our id maps through /proc/<pid>, which
         * a non-dumpable process has owned by root; we become non-dumpable at GO. */
        if (!a->ctx->rootless)
                (void) prctl(PR_SET_DUMPABLE, 0);
        sigfillset(&all);
        (void) sigprocmask(SIG_UNBLOCK, &all, NULL);

        if (rt_stdio_enter_child(a->stdio, &err) < 0 || enter_namespaces(&ir, &err) < 0 ||
            build_rootfs(&ir, &err) < 0 ||
            prepare_process(&ir, &err) < 0)
                init_fail(&ir, &err);
        close(ir.rootfd);

        /* From here the runtime exits and a supervisor (conmon, or `msp run`) owns us. */
        (void) prctl(PR_SET_PDEATHSIG, 0);
        /* `msp run`: no READY and no parking. The sync socket is close-on-exec, so the
         * parent's EOF is the signal (an error before would have come as a message);
         * a message and a close would each wake the parent on the other vCPU first. */
        if (a->start_at_ready)
                exec_process(&ir);
        if (rt_sync_send(a->sync_fd, RT_SYNC_READY, 0, NULL) < 0)
                _exit(1);
        close(a->sync_fd);
        park_until_start(&ir);
        exec_process(&ir);
}
