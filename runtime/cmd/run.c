/* run = create + start + wait + delete. The init is our child, so we reap it; signals
 * we receive are forwarded to it. With process.terminal and no --console-socket, msp
 * takes the pty master itself and copies between it and its own stdio, as runc does;
 * without a terminal, those of its fds 0-2 that are terminals reach the process through
 * the stdio relay (relay.h). */
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "lib/log.h"
#include "lib/relay.h"
#include "lib/ttyproxy.h"

static const int forwarded[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGWINCH };

enum { POLL_PID, POLL_SIG, POLL_MASTER, POLL_STDIN, POLL_RELAY,
       POLL_COUNT = POLL_RELAY + RT_RELAY_LINKS };

static void
handle_signal(int sigfd, int pidfd, rt_ttyproxy *tty)
{
        struct signalfd_siginfo si;

        if (read(sigfd, &si, sizeof si) != (ssize_t) sizeof si)
                return;
        if (tty && si.ssi_signo == SIGWINCH)
                rt_ttyproxy_resize(tty);
        else
                (void) syscall(SYS_pidfd_send_signal, pidfd, (int) si.ssi_signo, NULL, 0);
}

void
cmd_forwarded_signals(sigset_t *set)
{
        for (size_t i = 0; i < ARRAY_SIZE(forwarded); i++)
                sigaddset(set, forwarded[i]);
}

/* Once the process has exited, the relay copies on until every writer of its output
 * pipes is gone (what the process wrote last, and what its descendants still write, as
 * runc does); a forwarded signal ends that wait. */
int
cmd_wait_forwarding(const rt_ctx *ctx, pid_t pid, int pidfd, int sigfd, rt_ttyproxy *tty,
                    rt_stdio_relay *relay)
{
        struct pollfd p[POLL_COUNT] = {
                [POLL_PID] = { .fd = pidfd, .events = POLLIN },
                [POLL_SIG] = { .fd = sigfd, .events = POLLIN },
                [POLL_MASTER] = { .fd = tty ? tty->master : -1, .events = POLLIN },
                [POLL_STDIN] = { .fd = tty ? STDIN_FILENO : -1, .events = POLLIN },
        };
        bool exited = false;
        int status;

        while (!exited || (relay && rt_stdio_relay_busy(relay))) {
                if (relay)
                        rt_stdio_relay_pollfds(relay, p + POLL_RELAY);
                if (poll(p, POLL_COUNT, -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        rt_log_error(ctx, "poll: %m");
                        return 1;
                }
                if (p[POLL_SIG].revents & POLLIN) {
                        if (exited)
                                break;
                        handle_signal(sigfd, pidfd, tty);
                }
                if (p[POLL_MASTER].revents && rt_ttyproxy_pump_out(tty) < 0)
                        p[POLL_MASTER].fd = -1;
                if (p[POLL_STDIN].revents && rt_ttyproxy_pump_in(tty) < 0)
                        p[POLL_STDIN].fd = -1;
                if (relay)
                        rt_stdio_relay_handle(relay, p + POLL_RELAY);
                if (p[POLL_PID].revents & POLLIN) {
                        exited = true;
                        p[POLL_PID].fd = p[POLL_MASTER].fd = p[POLL_STDIN].fd = -1;
                        if (tty)
                                (void) rt_ttyproxy_pump_out(tty);       /* what it wrote last */
                        if (relay)
                                rt_stdio_relay_input_done(relay);
                }
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

/* A socketpair stands in for --console-socket; the master arrives before create
 * returns (the init sends it before it reports ready). */
static int
take_terminal(const rt_ctx *ctx, int sock, rt_ttyproxy *tty)
{
        msp_err err = { 0 };
        int master = -1;

        if (rt_console_recv_master(sock, &master, &err) < 0 ||
            rt_ttyproxy_begin(tty, master, &err) < 0) {
                rt_ttyproxy_done(tty);
                return cmd_fail(ctx, &err);
        }
        return 0;
}

int
cmd_run(rt_ctx *ctx, int argc, char **argv)
{
        rt_create_opts o = { 0 };
        _cleanup_container_ rt_container *c = NULL;
        _cleanup_close_ int sigfd = -1, tty_sock = -1, tty_peer = -1;
        rt_ttyproxy tty = { .master = -1 };
        rt_stdio_relay relay_fds;
        _cleanup_(rt_stdio_relay_donep) rt_stdio_relay *relay = NULL;
        bool use_tty = false;
        msp_err err = { 0 };
        bool detach = false, keep = false;
        sigset_t set;
        int status;

        if (cmd_parse_create_opts(ctx, "run", argc, argv, &o, &detach, &keep) < 0)
                return 1;
        o.start_at_ready = true;
        if (!detach && !o.console_socket) {
                int sv[2];
                if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
                        rt_log_error(ctx, "socketpair: %m");
                        return 1;
                }
                tty_sock = sv[0];
                tty_peer = sv[1];
                o.has_console_fd = true;
                o.console_fd = tty_peer;
                if (rt_stdio_relay_open(&relay_fds, &err) < 0)
                        return cmd_fail(ctx, &err);
                relay = &relay_fds;
                o.stdio = relay->child;
        }
        /* Block before create so no signal is lost; the init unblocks its own mask. */
        sigemptyset(&set);
        for (size_t i = 0; i < ARRAY_SIZE(forwarded); i++)
                sigaddset(&set, forwarded[i]);
        if (!detach) {
                sigprocmask(SIG_BLOCK, &set, NULL);
                sigfd = signalfd(-1, &set, SFD_CLOEXEC);
                if (sigfd < 0) {
                        rt_log_error(ctx, "signalfd: %m");
                        return 1;
                }
        }
        if (rt_container_create(ctx, &o, &c, &err) < 0)
                return cmd_fail(ctx, &err);
        if (tty_sock >= 0 && c->spec && c->spec->process && c->spec->process->terminal) {
                rt_stdio_relay_done(TAKE_PTR(relay));   /* the pty is the process's stdio */
                close(TAKE_FD(tty_peer));
                if (take_terminal(ctx, tty_sock, &tty) != 0) {
                        (void) rt_container_delete(ctx, c, true, &err);
                        return 1;
                }
                use_tty = true;
        }
        if (relay)
                rt_stdio_relay_started(relay);
        if (rt_container_start(ctx, c, &err) < 0) {
                msp_err derr = { 0 };
                (void) rt_container_delete(ctx, c, true, &derr);
                rt_ttyproxy_done(&tty);
                return cmd_fail(ctx, &err);
        }
        if (detach)
                return 0;
        /* Release the lock while the container runs so that state/kill work. The parsed
         * config is kept for delete (poststop hooks): it is what create wrote to the
         * state directory, so it need not be read and parsed again. */
        pid_t pid = c->state->pid;
        int pidfd = TAKE_FD(c->pidfd);
        _cleanup_spec_ oci_spec *spec = TAKE_PTR(c->spec);
        char id[1100];
        snprintf(id, sizeof id, "%s", c->id);
        c = rt_container_free(c);

        status = cmd_wait_forwarding(ctx, pid, pidfd, sigfd, use_tty ? &tty : NULL, relay);
        close(pidfd);
        rt_ttyproxy_done(&tty);
        rt_stdio_relay_done(TAKE_PTR(relay));
        if (!keep) {
                int r = rt_container_load(ctx, id, true, &c, &err);
                if (r >= 0) {
                        if (!c->spec)
                                c->spec = TAKE_PTR(spec);
                        r = rt_container_delete(ctx, c, true, &err);
                }
                if (r < 0)
                        rt_log_warning(ctx, "%s", err.msg);
        }
        return status;
}
