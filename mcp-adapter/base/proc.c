/* Children through pidfds (proc.h). */
#include "base/proc.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <poll.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

struct mcp_proc {
        mcp_proc *next, **pprev;
        mcp_procset *set;
        pid_t pid;
        int pidfd;
        mcp_proc_exit_fn fn;
        void *data;
};

static void
proc_unlink_free(mcp_proc *p)
{
        if (p->set->loop)
                mcp_loop_del_io(p->set->loop, p->pidfd);
        close(p->pidfd);
        *p->pprev = p->next;
        if (p->next)
                p->next->pprev = p->pprev;
        free(p);
}

static int
proc_ready(mcp_loop *loop, int fd, uint32_t events, void *data)
{
        mcp_proc *p = data;
        siginfo_t si = { 0 };
        (void) loop;
        (void) events;
        if (waitid((idtype_t) P_PIDFD, (id_t) fd, &si, WEXITED | WNOHANG) < 0) {
                if (errno == EINTR)
                        return 0;
                /* ECHILD: reaped elsewhere; report a failure rather than hang. */
                si.si_code = CLD_EXITED;
                si.si_status = 255;
                si.si_pid = p->pid;
        }
        if (si.si_pid == 0)
                return 0;
        mcp_proc_exit_fn fn = p->fn;
        void *d = p->data;
        proc_unlink_free(p);
        if (fn)
                fn(NULL, si.si_code, si.si_status, d);
        return 0;
}

/* The child starts with default signal dispositions and an empty mask, whatever the
 * server blocks for its signalfd or ignores (SIGPIPE). */
static int
spawn_attrs(posix_spawnattr_t *a)
{
        sigset_t none, def;
        sigemptyset(&none);
        sigfillset(&def);
        sigdelset(&def, SIGKILL);
        sigdelset(&def, SIGSTOP);
        int r = posix_spawnattr_init(a);
        if (r == 0)
                r = posix_spawnattr_setsigmask(a, &none);
        if (r == 0)
                r = posix_spawnattr_setsigdefault(a, &def);
        if (r == 0)
                r = posix_spawnattr_setflags(a, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
        return r;
}

/* fd3 >= 0: also the child's fd 3 (every other fd of ours is O_CLOEXEC). */
static int
spawn_raw(const char *const argv[], int in, int out, int errfd, int fd3, pid_t *ret,
          msp_err *err)
{
        posix_spawn_file_actions_t fa;
        posix_spawnattr_t attr;
        int fds[3] = { in, out, errfd };
        int r = posix_spawn_file_actions_init(&fa);
        if (r != 0)
                return msp_err_sys(err, r, "spawn '%s'", argv[0]);
        for (int i = 0; i < 3 && r == 0; i++) {
                if (fds[i] >= 0)
                        r = posix_spawn_file_actions_adddup2(&fa, fds[i], i);
                else
                        r = posix_spawn_file_actions_addopen(&fa, i, "/dev/null",
                                                             i == 0 ? O_RDONLY : O_WRONLY, 0);
        }
        /* The one deliberate inheritance: dup2 clears O_CLOEXEC on the copy (glibc also
         * when fd3 is already 3). */
        if (r == 0 && fd3 >= 0)
                r = posix_spawn_file_actions_adddup2(&fa, fd3, 3);
        if (r == 0)
                r = spawn_attrs(&attr);
        if (r == 0) {
                extern char **environ;
                r = posix_spawn(ret, argv[0], &fa, &attr, (char *const *) argv, environ);
                posix_spawnattr_destroy(&attr);
        }
        posix_spawn_file_actions_destroy(&fa);
        if (r != 0)
                return msp_err_sys(err, r, "spawn '%s'", argv[0]);
        return 0;
}

int
mcp_proc_spawn_fd3(mcp_procset *set, const char *const argv[], int in, int out, int errfd,
                   int fd3, mcp_proc_exit_fn fn, void *data, mcp_proc **ret, msp_err *err)
{
        pid_t pid;
        int r = spawn_raw(argv, in, out, errfd, fd3, &pid, err);
        if (r < 0)
                return r;
        /* Our own unreaped child: its pid cannot be reused before we wait for it. */
        int pidfd = (int) syscall(SYS_pidfd_open, pid, 0);
        if (pidfd < 0) {
                r = -errno;
                (void) kill(pid, SIGKILL);
                (void) waitpid(pid, NULL, 0);
                return msp_err_sys(err, -r, "pidfd_open %d", (int) pid);
        }
        mcp_proc *p = calloc(1, sizeof *p);
        if (!p) {
                (void) kill(pid, SIGKILL);
                (void) waitpid(pid, NULL, 0);
                close(pidfd);
                return msp_err_set(err, ENOMEM, "out of memory");
        }
        *p = (mcp_proc){ .set = set, .pid = pid, .pidfd = pidfd, .fn = fn, .data = data };
        r = mcp_loop_add_io(set->loop, pidfd, EPOLLIN, proc_ready, p);
        if (r < 0) {
                (void) kill(pid, SIGKILL);
                (void) waitid((idtype_t) P_PIDFD, (id_t) pidfd, &(siginfo_t){ 0 }, WEXITED);
                close(pidfd);
                free(p);
                return msp_err_sys(err, -r, "watch pidfd");
        }
        p->next = set->head;
        if (p->next)
                p->next->pprev = &p->next;
        p->pprev = &set->head;
        set->head = p;
        if (ret)
                *ret = p;
        return 0;
}

int
mcp_proc_spawn(mcp_procset *set, const char *const argv[], int in, int out, int errfd,
               mcp_proc_exit_fn fn, void *data, mcp_proc **ret, msp_err *err)
{
        return mcp_proc_spawn_fd3(set, argv, in, out, errfd, -1, fn, data, ret, err);
}

void
mcp_proc_forget(mcp_proc *p)
{
        if (p)
                p->fn = NULL;
}

void
mcp_proc_signal(mcp_proc *p, int sig)
{
        if (p)
                (void) syscall(SYS_pidfd_send_signal, p->pidfd, sig, NULL, 0);
}

bool
mcp_proc_exited_within(mcp_proc *p, int ms)
{
        struct pollfd pfd = { .fd = p->pidfd, .events = POLLIN };
        int n;
        while ((n = poll(&pfd, 1, ms)) < 0 && errno == EINTR)
                ;
        return n > 0;
}

void
mcp_procset_wait_all(mcp_procset *set)
{
        while (set->head) {
                mcp_proc *p = set->head;
                siginfo_t si;
                while (waitid((idtype_t) P_PIDFD, (id_t) p->pidfd, &si, WEXITED) < 0 &&
                       errno == EINTR)
                        ;
                proc_unlink_free(p);
        }
}

int
mcp_spawn_wait(const char *const argv[], msp_err *err)
{
        pid_t pid;
        int r = spawn_raw(argv, -1, -1, -1, -1, &pid, err);
        if (r < 0)
                return r;
        int status;
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return msp_err_sys(err, errno, "wait for '%s'", argv[0]);
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
