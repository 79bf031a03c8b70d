/* The final steps of a container process (final.h). Each step is named; the order is
 * the point of this file and is explained where it is not obvious. */
#include "lib/final.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lib/landlock.h"
#include "lib/log.h"
#include "lib/lsm.h"
#include "oci/oci.h"
#include "lib/ns.h"
#include "lib/pathres.h"
#include "lib/process.h"
#include "lib/procfs.h"

#define KEYCTL_JOIN_SESSION_KEYRING 1

typedef struct final_run {
        rt_final *f;
        rt_landlock *landlock;          /* not freed: the process execs or exits */
        int cwdfd;
        bool cwd_entered;
        bool seccomp_loaded;
} final_run;

/* The LSM label of the execve: before seccomp, the capability drop and no_new_privs
 * (AppArmor refuses most transitions under no_new_privs), and before the session keyring
 * (with SELinux its label comes from attr/keycreate), as runc orders it. Written through
 * a verified procfs, never the container's /proc (CVE-2019-16884). */
static int
set_exec_label(rt_final *f, msp_err *err)
{
        const oci_process *p = f->proc;
        _cleanup_close_ int own = -1;
        int procfd = f->procfd;
        int r = 0;

        if ((p->apparmor_profile && *p->apparmor_profile) ||
            (p->selinux_label && *p->selinux_label)) {
                if (procfd < 0)
                        procfd = own = rt_procfs_open(err);
                if (procfd < 0)
                        return procfd;
                r = rt_lsm_set_exec_label(procfd, p, err);
        }
        if (f->procfd >= 0)
                close(f->procfd);
        f->procfd = -1;
        return r;
}

/* Not the caller's keyring: a process of the container must not reach the host's keys. */
static int
join_session_keyring(const rt_final *f, msp_err *err)
{
        if (!f->new_keyring)
                return 0;
        if (syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, NULL) < 0 && errno != ENOSYS)
                return msp_err_sys(err, errno, "create a session keyring");
        return 0;
}

static int
prepare_landlock(final_run *fr, msp_err *err)
{
        char dropped[512] = "";
        int r;

        if (!fr->f->proc->landlock)
                return 0;
        r = rt_landlock_prepare(fr->f->proc->landlock, &fr->landlock, dropped, sizeof dropped,
                                err);
        if (r < 0)
                return r;
        /* Best effort: say what this kernel cannot enforce (or which paths were missing). */
        if (dropped[0])
                rt_debug(fr->f->ctx, "landlock: best effort, not enforced: %s", dropped);
        return 0;
}

/* cwd resolves inside the container: RESOLVE_IN_ROOT clamps "..", RESOLVE_NO_MAGICLINKS
 * refuses /proc/self/fd/N (CVE-2024-21626). Opened now, entered later by fd: openat2 may
 * be what the filter forbids. */
static int
open_cwd(final_run *fr, msp_err *err)
{
        const oci_process *p = fr->f->proc;
        _cleanup_close_ int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);

        if (root < 0)
                return msp_err_sys(err, errno, "open /");
        if (!p->cwd || p->cwd[0] != '/')
                return msp_err_set(err, EINVAL, "process.cwd: must be an absolute path, got '%s'",
                                   p->cwd ? p->cwd : "");
        fr->cwdfd = rt_open_in_root(root, p->cwd, O_PATH | O_DIRECTORY, err);
        if (fr->cwdfd < 0)
                return msp_err_prefix(err, "process.cwd '%s'", p->cwd);
        return 0;
}

/* Still privileged, so that a directory only root may search works for any user
 * (`docker run -u 1000 -w /root`); one the runtime's root may not enter (a root-squashed
 * mount) is retried as the process' user. */
static int
enter_cwd(final_run *fr, bool last_try, msp_err *err)
{
        const char *cwd = fr->f->proc->cwd;
        char buf[PATH_MAX];

        if (fr->cwd_entered)
                return 0;
        if (fchdir(fr->cwdfd) < 0) {
                if (!last_try && (errno == EACCES || errno == EPERM))
                        return 0;
                return msp_err_sys(err, errno, "process.cwd: chdir '%s'", cwd);
        }
        fr->cwd_entered = true;
        close(fr->cwdfd);
        fr->cwdfd = -1;
        /* A cwd outside the root reads back as "(unreachable)/...", which glibc reports as
         * ENOENT. Any other failure is the filter refusing getcwd (the retry as the
         * process' user runs under it): the fd was resolved in the root all the same. */
        if (getcwd(buf, sizeof buf) ? buf[0] != '/' : errno == ENOENT)
                return msp_err_set(err, EPERM, "process.cwd '%s' is outside the container", cwd);
        return 0;
}

/* With NOTIFY rules, the listener and the state go to the agent on the socket connected
 * before clone; only sendmsg and close run (NOTIFY on those is refused at create). */
static int
load_seccomp(final_run *fr, msp_err *err)
{
        rt_final *f = fr->f;
        int listener = -1, r;

        if (f->before_seccomp) {
                r = f->before_seccomp(f->data, err);
                if (r < 0)
                        return r;
        }
        r = rt_seccomp_load(f->seccomp, &listener, err);
        if (r < 0)
                return r;
        fr->seccomp_loaded = true;
        if (listener < 0)
                return 0;
        if (f->listener_sock < 0 || !f->listener_state)
                r = msp_err_set(err, EINVAL, "seccomp: no connection to listenerPath");
        else
                r = rt_seccomp_send_listener_on(f->listener_sock, f->linux_->seccomp, listener,
                                                f->host_pid, f->listener_state, err);
        close(listener);
        if (f->listener_sock >= 0)
                close(f->listener_sock);
        f->listener_sock = -1;
        return r;
}

/* Everything the runtime needs of the kernel beyond the final identity switch: limits,
 * label, keyring, the Landlock ruleset, cwd resolved and entered as root, and the fd
 * sweep. */
static int
steps_privileged(final_run *fr, msp_err *err)
{
        rt_final *f = fr->f;
        int r;

        r = rt_process_apply_limits(f->proc, f->linux_, err);
        if (r < 0)
                return r;
        r = set_exec_label(f, err);
        if (r < 0)
                return r;
        r = join_session_keyring(f, err);
        if (r < 0)
                return r;
        r = prepare_landlock(fr, err);
        if (r < 0)
                return r;
        r = rt_env_default_home(f->envp, f->proc->user.uid, &f->envp, err);
        if (r < 0)
                return r;
        r = open_cwd(fr, err);
        if (r < 0)
                return r;
        r = enter_cwd(fr, false, err);
        if (r < 0)
                return r;
        return rt_fds_cloexec_from(f->first_fd, err);
}

/* runc's finalizeNamespace order: cwd as root (entered in steps_privileged, before any
 * filter), the user, cwd again if root could not enter it, the capabilities. */
static int
steps_identity(final_run *fr, msp_err *err)
{
        rt_final *f = fr->f;
        const oci_process *p = f->proc;
        int r;

        r = rt_user_switch(&p->user, rt_userns_setgroups_allowed(f->ctx, f->linux_, f->in_userns),
                           err);
        if (r < 0)
                return r;
        r = enter_cwd(fr, true, err);
        if (r < 0)
                return r;
        if (p->has_capabilities && rt_caps_ambient_dropped(&p->capabilities))
                rt_debug(f->ctx, "process.capabilities.ambient: 0x%llx left out: not also "
                         "permitted and inheritable",
                         (unsigned long long) rt_caps_ambient_dropped(&p->capabilities));
        return rt_caps_apply(&p->capabilities, p->has_capabilities, err);
}

int
rt_final_steps(rt_final *f, msp_err *err)
{
        final_run fr = { .f = f, .cwdfd = -1 };
        const bool nnp = f->proc->no_new_privileges;
        int r;

        r = steps_privileged(&fr, err);
        /* Without no_new_privs, loading a filter needs CAP_SYS_ADMIN: before the drop. */
        if (r >= 0 && f->seccomp && !nnp)
                r = load_seccomp(&fr, err);
        if (r >= 0)
                r = steps_identity(&fr, err);
        if (r >= 0)
                r = rt_exec_lookup(f->proc->args.v[0], f->envp, f->exec_path,
                                   sizeof f->exec_path, err);
        if (r >= 0 && nnp && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                r = msp_err_sys(err, errno, "prctl(PR_SET_NO_NEW_PRIVS)");
        if (r >= 0 && fr.landlock)
                r = rt_landlock_apply(fr.landlock, err);
        if (r >= 0 && f->seccomp && !fr.seccomp_loaded)
                r = load_seccomp(&fr, err);
        if (fr.cwdfd >= 0)
                close(fr.cwdfd);
        return r;
}
