/* run = create + start + wait + delete. The init is our child, so we reap it; signals
 * we receive are forwarded to it. */
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd.h"
#include "log.h"

static const int forwarded[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGWINCH };

static int
wait_forwarding(const rt_ctx *ctx, pid_t pid, int pidfd, int sigfd)
{
        struct pollfd p[2] = { { .fd = pidfd, .events = POLLIN }, { .fd = sigfd, .events = POLLIN } };
        int status;

        for (;;) {
                if (poll(p, 2, -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        rt_log_error(ctx, "poll: %m");
                        return 1;
                }
                if (p[1].revents & POLLIN) {
                        struct signalfd_siginfo si;
                        if (read(sigfd, &si, sizeof si) == (ssize_t) sizeof si)
                                (void) syscall(SYS_pidfd_send_signal, pidfd, (int) si.ssi_signo, NULL, 0);
                }
                if (p[0].revents & POLLIN)
                        break;
        }
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return 1;
        if (WIFEXITED(status))
                return WEXITSTATUS(status);
        if (WIFSIGNALED(status))
                return 128 + WTERMSIG(status);
        return 1;
}

int
cmd_run(rt_ctx *ctx, int argc, char **argv)
{
        rt_create_opts o = { 0 };
        _cleanup_container_ rt_container *c = NULL;
        _cleanup_close_ int sigfd = -1;
        msp_err err = { 0 };
        bool detach = false, keep = false;
        sigset_t set, old;
        int status;

        if (cmd_parse_create_opts(ctx, "run", argc, argv, &o, &detach, &keep) < 0)
                return 1;
        /* Block before create so no signal is lost; the init unblocks its own mask. */
        sigemptyset(&set);
        for (size_t i = 0; i < ARRAY_SIZE(forwarded); i++)
                sigaddset(&set, forwarded[i]);
        if (!detach) {
                sigprocmask(SIG_BLOCK, &set, &old);
                sigfd = signalfd(-1, &set, SFD_CLOEXEC);
                if (sigfd < 0) {
                        rt_log_error(ctx, "signalfd: %m");
                        return 1;
                }
        }
        if (rt_container_create(ctx, &o, &c, &err) < 0)
                return cmd_fail(ctx, &err);
        if (rt_container_start(ctx, c, &err) < 0) {
                msp_err derr = { 0 };
                (void) rt_container_delete(ctx, c, true, &derr);
                return cmd_fail(ctx, &err);
        }
        if (detach)
                return 0;
        /* Release the lock while the container runs so that state/kill work. */
        pid_t pid = c->state->pid;
        int pidfd = TAKE_FD(c->pidfd);
        char id[1100];
        snprintf(id, sizeof id, "%s", c->id);
        c = rt_container_free(c);

        status = wait_forwarding(ctx, pid, pidfd, sigfd);
        close(pidfd);
        if (!keep) {
                if (rt_container_load(ctx, id, true, &c, &err) < 0 ||
                    rt_container_delete(ctx, c, true, &err) < 0)
                        rt_log_warning(ctx, "%s", err.msg);
        }
        return status;
}
