/* What the commands share: an error or a usage error printed once, --help, a document
 * printed to stdout, the container-ID operand, the values several commands parse (fd
 * counts, --format), the verbs that only load a container and act on it (start, pause,
 * resume), and waiting for a child while forwarding signals to it (run, exec). */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "lib/rt.h"

/* ---- messages and output ---- */

int
cmd_usage_error(const rt_ctx *ctx, const char *cmd, const char *fmt, ...)
{
        char msg[1024];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        rt_log_error(ctx, "%s: %s", cmd, msg);
        const rt_command *c = cmd_find(cmd);
        if (c)
                cmd_usage(c, true);
        return 1;
}

int
cmd_fail(const rt_ctx *ctx, const msp_err *err)
{
        rt_log_error(ctx, "%s", err->msg[0] ? err->msg : "unknown error");
        return 1;
}

bool
cmd_wants_help(const char *name, int argc, char **argv)
{
        for (int i = 1; i < argc; i++) {
                if (strcmp(argv[i], "--") == 0)
                        break;
                if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
                        cmd_usage(cmd_find(name), false);
                        return true;
                }
        }
        return false;
}

int
cmd_flush_stdout(const rt_ctx *ctx)
{
        if (fflush(stdout) != 0) {
                rt_log_error(ctx, "write to stdout failed");
                return 1;
        }
        return 0;
}

int
cmd_print(const rt_ctx *ctx, const char *json, size_t len)
{
        if (fwrite(json, 1, len, stdout) != len || fputc('\n', stdout) == EOF) {
                rt_log_error(ctx, "write to stdout failed");
                return 1;
        }
        return cmd_flush_stdout(ctx);
}

/* ---- operands and values ---- */

int
cmd_one_id(const rt_ctx *ctx, const char *cmd, int argc, char **argv, int first,
           const char **ret_id)
{
        if (first >= argc)
                return cmd_usage_error(ctx, cmd, "a container ID is required"), -1;
        if (first + 1 < argc)
                return cmd_usage_error(ctx, cmd, "unexpected argument '%s'", argv[first + 1]), -1;
        *ret_id = argv[first];
        return 0;
}

int
cmd_parse_fd_count(const char *s, int *ret)
{
        char *end;
        long v = strtol(s, &end, 10);

        if (!*s || *end || v < 0 || v > 65536)
                return -EINVAL;
        *ret = (int) v;
        return 0;
}

int
cmd_parse_format(const char *s, bool *ret_json)
{
        if (strcmp(s, "json") != 0 && strcmp(s, "table") != 0)
                return -EINVAL;
        *ret_json = strcmp(s, "json") == 0;
        return 0;
}

/* ---- one container, one action ---- */

int
cmd_on_container(rt_ctx *ctx, const char *cmd, int argc, char **argv,
                 int (*action)(const rt_ctx *ctx, rt_container *c, msp_err *err))
{
        _cleanup_container_ rt_container *c = NULL;
        msp_err err = { 0 };
        const char *id;

        if (cmd_one_id(ctx, cmd, argc, argv, 1, &id) < 0)
                return 1;
        if (rt_container_load(ctx, id, true, &c, &err) < 0 || action(ctx, c, &err) < 0)
                return cmd_fail(ctx, &err);
        return 0;
}

/* ---- waiting for a child, forwarding signals ---- */

static const int forwarded[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGWINCH };

enum { POLL_PID, POLL_SIG, POLL_MASTER, POLL_STDIN, POLL_RELAY,
       POLL_COUNT = POLL_RELAY + RT_RELAY_LINKS };

int
cmd_block_forwarded_signals(const rt_ctx *ctx)
{
        sigset_t set;

        sigemptyset(&set);
        for (size_t i = 0; i < ARRAY_SIZE(forwarded); i++)
                sigaddset(&set, forwarded[i]);
        sigprocmask(SIG_BLOCK, &set, NULL);
        int fd = signalfd(-1, &set, SFD_CLOEXEC);
        if (fd < 0) {
                int e = errno;
                rt_log_error(ctx, "signalfd: %m");
                return -e;
        }
        return fd;
}

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
