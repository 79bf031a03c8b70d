/* OCI hooks: fork + execve each hook with the state JSON on its stdin, wait for it with a
 * pidfd and poll() (so the timeout needs no sleep loop), and report how it ended. The hook's stdout and stderr are the runtime's; no other fd reaches it. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/hooks.h"
#include "lib/log.h"
#include "oci/oci.h"
#include "lib/process.h"

typedef struct hook_io {
        const char *data;               /* borrowed: the state JSON */
        size_t len;
        size_t off;
        int *fd;                        /* the caller's write end of the stdin pipe; closed
                                         * and set to -1 here when done */
} hook_io;

static _noreturn_ void
hook_child(const oci_hook *h, int in_fd, int err_fd)
{
        char *default_argv[] = { h->path, NULL };
        char *empty_env[] = { NULL };
        char *const *argv = h->args.n ? h->args.v : default_argv;
        char *const *envp = h->env.n ? h->env.v : empty_env;
        sigset_t none;
        int e;

        /* Whatever the runtime blocks or ignores must not leak into the hook. */
        sigemptyset(&none);
        (void) sigprocmask(SIG_SETMASK, &none, NULL);
        (void) signal(SIGPIPE, SIG_DFL);
        if (in_fd == STDIN_FILENO)
                e = fcntl(in_fd, F_SETFD, 0) < 0 ? errno : 0;
        else
                e = dup2(in_fd, STDIN_FILENO) < 0 ? errno : 0;
        /* Only stdio reaches the hook (as with runc): the caller's other fds and ours
         * close at execve; err_fd is close-on-exec already and reports a failed exec. */
        if (e == 0) {
                int r = rt_fds_cloexec_from(STDERR_FILENO + 1, NULL);
                e = r < 0 ? -r : 0;
        }
        if (e == 0) {
                execve(h->path, argv, envp);
                e = errno;
        }
        /* The parent reads this instead of EOF, which close-on-exec gives it on success. */
        (void) !write(err_fd, &e, sizeof e);
        _exit(127);
}

/* write() to a pipe whose reader is gone raises SIGPIPE; block it for the call and eat
 * the signal if this write raised it, so a hook that ignores stdin is not an error. */
static ssize_t
write_nosigpipe(int fd, const void *buf, size_t n)
{
        sigset_t pipe_set, old, pending;
        bool was_pending;
        ssize_t w;
        int e;

        sigemptyset(&pipe_set);
        sigaddset(&pipe_set, SIGPIPE);
        (void) sigprocmask(SIG_BLOCK, &pipe_set, &old);
        (void) sigpending(&pending);
        was_pending = sigismember(&pending, SIGPIPE) == 1;
        w = write(fd, buf, n);
        e = errno;
        if (w < 0 && e == EPIPE && !was_pending) {
                const struct timespec zero = { 0 };
                (void) sigtimedwait(&pipe_set, NULL, &zero);
        }
        (void) sigprocmask(SIG_SETMASK, &old, NULL);
        errno = e;
        return w;
}

/* Feed more of the JSON; closes the pipe when done or when the hook stopped reading. */
static void
hook_io_step(hook_io *io)
{
        ssize_t w = write_nosigpipe(*io->fd, io->data + io->off, io->len - io->off);

        if (w > 0)
                io->off += (size_t) w;
        else if (w < 0 && (errno == EAGAIN || errno == EINTR))
                return;
        if (w < 0 || io->off >= io->len) {
                msp_closep(io->fd);
                *io->fd = -1;
        }
}

static long long
now_ms(void)
{
        struct timespec ts;

        (void) clock_gettime(CLOCK_MONOTONIC, &ts);
        return (long long) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* How we learn that the hook exited: a pidfd, or (FIXME: drop once kernel 5.3 is the
 * baseline; valgrind lacks pidfd_open too) a signalfd for SIGCHLD, blocked around the
 * run. Either way poll() does the waiting, never a sleep loop. */
typedef struct hook_waiter {
        int fd;                         /* owned: pidfd or signalfd */
        bool sigfd;
        bool restore_mask;
        sigset_t old_mask;
} hook_waiter;

static void
waiter_done(hook_waiter *w)
{
        msp_closep(&w->fd);
        w->fd = -1;
        if (w->restore_mask)
                (void) sigprocmask(SIG_SETMASK, &w->old_mask, NULL);
        w->restore_mask = false;
}

/* Before fork: SIGCHLD must already be blocked when the fallback is used, or the
 * child's exit could be signalled before the signalfd exists. */
static int
waiter_prepare(hook_waiter *w)
{
        int probe = (int) syscall(SYS_pidfd_open, getpid(), 0);
        sigset_t chld;

        if (probe >= 0) {
                (void) close(probe);
                return 0;
        }
        /* EPERM: a startContainer hook runs under the container's seccomp filter, which
         * may predate pidfd_open. */
        if (errno != ENOSYS && errno != EPERM)
                return -errno;
        sigemptyset(&chld);
        sigaddset(&chld, SIGCHLD);
        if (sigprocmask(SIG_BLOCK, &chld, &w->old_mask) < 0)
                return -errno;
        w->restore_mask = true;
        w->sigfd = true;
        w->fd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
        return w->fd < 0 ? -errno : 0;
}

static int
waiter_attach(hook_waiter *w, pid_t pid)
{
        if (w->sigfd)
                return 0;
        w->fd = (int) syscall(SYS_pidfd_open, pid, 0);
        return w->fd < 0 ? -errno : 0;
}

/* The waiter fired: reap the hook if it is the one that exited. 1 = reaped. */
static int
waiter_reap(hook_waiter *w, pid_t pid, int *status)
{
        struct signalfd_siginfo si;
        pid_t r;

        while (w->sigfd && read(w->fd, &si, sizeof si) == (ssize_t) sizeof si)
                ;
        do
                r = waitpid(pid, status, WNOHANG);
        while (r < 0 && errno == EINTR);
        if (r < 0)
                return -errno;
        return r == pid;
}

/* Returns 1 when the hook exited (reaped, *status set), 0 on timeout, -errno on error. */
static int
hook_wait(hook_waiter *w, pid_t pid, hook_io *io, int timeout_s, int *status)
{
        long long deadline = timeout_s > 0 ? now_ms() + (long long) timeout_s * 1000 : -1;

        for (;;) {
                struct pollfd pfd[2] = {
                        { .fd = w->fd, .events = POLLIN },
                        { .fd = *io->fd, .events = POLLOUT },
                };
                int left = -1;

                if (deadline >= 0) {
                        long long d = deadline - now_ms();
                        if (d <= 0)
                                return 0;
                        left = d > 1000000000 ? 1000000000 : (int) d;
                }
                int n = poll(pfd, 2, left);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                if (pfd[0].revents) {
                        int r = waiter_reap(w, pid, status);
                        if (r != 0)
                                return r;
                }
                if (pfd[1].revents)
                        hook_io_step(io);
        }
}

static pid_t
waitpid_eintr(pid_t pid, int *status)
{
        pid_t r;

        do
                r = waitpid(pid, status, 0);
        while (r < 0 && errno == EINTR);
        return r;
}

static int
hook_status(const oci_hook *h, const char *kind, int status, msp_err *err)
{
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
                return 0;
        if (WIFEXITED(status))
                return msp_err_set(err, EIO, "%s hook '%s' exited with status %d", kind, h->path,
                                   WEXITSTATUS(status));
        if (WIFSIGNALED(status))
                return msp_err_set(err, EIO, "%s hook '%s' was killed by signal %d", kind, h->path,
                                   WTERMSIG(status));
        return msp_err_set(err, EIO, "%s hook '%s' ended with wait status 0x%x", kind, h->path,
                           (unsigned) status);
}

/* After fork: learn whether execve worked, then feed stdin and wait. The child is not
 * reaped before the end, so kill(pid) cannot hit a recycled pid. */
static int
hook_supervise(const oci_hook *h, const char *kind, pid_t pid, int err_rd, hook_waiter *w,
               hook_io *io, msp_err *err)
{
        int status = 0, child_errno = 0, r;
        ssize_t n;

        do
                n = read(err_rd, &child_errno, sizeof child_errno);
        while (n < 0 && errno == EINTR);
        if (n == (ssize_t) sizeof child_errno) {
                (void) waitpid_eintr(pid, &status);
                return msp_err_sys(err, child_errno, "%s hook '%s' exec failed", kind, h->path);
        }
        r = waiter_attach(w, pid);
        if (r >= 0)
                r = hook_wait(w, pid, io, h->has_timeout ? h->timeout : 0, &status);
        if (r <= 0) {
                int e = -r;
                (void) kill(pid, SIGKILL);
                (void) waitpid_eintr(pid, &status);
                if (r == 0)
                        return msp_err_set(err, ETIMEDOUT, "%s hook '%s' timed out after %d s", kind,
                                           h->path, h->timeout);
                return msp_err_sys(err, e, "%s hook '%s': waiting for it", kind, h->path);
        }
        return hook_status(h, kind, status, err);
}

static int
hook_run(const oci_hook *h, const char *kind, const char *json, msp_err *err)
{
        _cleanup_close_ int in_rd = -1, in_wr = -1, err_rd = -1, err_wr = -1;
        _cleanup_(waiter_done) hook_waiter w = { .fd = -1 };
        int p[2], r;
        pid_t pid;

        if (pipe2(p, O_CLOEXEC) < 0)
                return msp_err_sys(err, errno, "%s hook '%s': pipe", kind, h->path);
        in_rd = p[0];
        in_wr = p[1];
        if (pipe2(p, O_CLOEXEC) < 0)
                return msp_err_sys(err, errno, "%s hook '%s': pipe", kind, h->path);
        err_rd = p[0];
        err_wr = p[1];
        /* Non-blocking, so that a hook that never reads a large JSON cannot stall us past
         * its timeout. */
        if (fcntl(in_wr, F_SETFL, O_NONBLOCK) < 0)
                return msp_err_sys(err, errno, "%s hook '%s': fcntl", kind, h->path);
        r = waiter_prepare(&w);
        if (r < 0)
                return msp_err_sys(err, -r, "%s hook '%s': pidfd/signalfd", kind, h->path);

        pid = fork();
        if (pid < 0)
                return msp_err_sys(err, errno, "%s hook '%s': fork", kind, h->path);
        if (pid == 0)
                hook_child(h, in_rd, err_wr);

        /* Our copies of the child's ends must go, or EOF never comes. */
        msp_closep(&in_rd);
        in_rd = -1;
        msp_closep(&err_wr);
        err_wr = -1;
        hook_io io = { .data = json ? json : "", .len = json ? strlen(json) : 0, .fd = &in_wr };
        if (io.len == 0) {
                msp_closep(&in_wr);
                in_wr = -1;
        }
        return hook_supervise(h, kind, pid, err_rd, &w, &io, err);
}

int
rt_hooks_run(const oci_hook_list *hooks, const char *kind, const char *state_json, msp_err *err)
{
        for (size_t i = 0; hooks && i < hooks->n; i++) {
                int r = hook_run(&hooks->v[i], kind, state_json, err);
                if (r < 0)
                        return r;
        }
        return 0;
}

void
rt_hooks_run_all(const rt_ctx *ctx, const oci_hook_list *hooks, const char *kind,
                 const char *state_json)
{
        for (size_t i = 0; hooks && i < hooks->n; i++) {
                msp_err err = { 0 };
                if (hook_run(&hooks->v[i], kind, state_json, &err) < 0)
                        rt_log_warning(ctx, "%s, ignoring", err.msg);
        }
}

void
rt_hooks_debug(const rt_ctx *ctx, const oci_hook_list *hooks, const char *kind)
{
        if (!ctx || !ctx->debug)
                return;
        for (size_t i = 0; i < hooks->n; i++) {
                char args[512];
                size_t o = 0;
                args[0] = '\0';
                for (size_t k = 1; k < hooks->v[i].args.n && o < sizeof args; k++) {
                        int w = snprintf(args + o, sizeof args - o, " %s", hooks->v[i].args.v[k]);
                        if (w < 0)
                                break;
                        o += (size_t) w;
                }
                rt_log_debug_(ctx, "%s hook[%zu]: %s%s (timeout %d s)", kind, i, hooks->v[i].path,
                              args, hooks->v[i].has_timeout ? hooks->v[i].timeout : 0);
        }
}

int
rt_hooks_run_state(const rt_ctx *ctx, const oci_hook_list *hooks, const char *kind,
                   const oci_state *st, msp_err *err)
{
        _cleanup_free_ char *json = NULL;
        size_t len;
        int r;

        if (hooks->n == 0)
                return 0;
        r = oci_state_to_json(st, 0, &json, &len, err);
        if (r < 0)
                return r;
        rt_hooks_debug(ctx, hooks, kind);
        return rt_hooks_run(hooks, kind, json, err);
}
