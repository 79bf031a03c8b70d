#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cmd/cmd.h"

static const struct {
        const char *name;
        int sig;
} signals[] = {
        { "HUP", SIGHUP },   { "INT", SIGINT },     { "QUIT", SIGQUIT }, { "ILL", SIGILL },
        { "TRAP", SIGTRAP }, { "ABRT", SIGABRT },   { "IOT", SIGIOT },   { "BUS", SIGBUS },
        { "FPE", SIGFPE },   { "KILL", SIGKILL },   { "USR1", SIGUSR1 }, { "SEGV", SIGSEGV },
        { "USR2", SIGUSR2 }, { "PIPE", SIGPIPE },   { "ALRM", SIGALRM }, { "TERM", SIGTERM },
        { "STKFLT", SIGSTKFLT }, { "CHLD", SIGCHLD }, { "CONT", SIGCONT }, { "STOP", SIGSTOP },
        { "TSTP", SIGTSTP }, { "TTIN", SIGTTIN },   { "TTOU", SIGTTOU }, { "URG", SIGURG },
        { "XCPU", SIGXCPU }, { "XFSZ", SIGXFSZ },   { "VTALRM", SIGVTALRM }, { "PROF", SIGPROF },
        { "WINCH", SIGWINCH }, { "IO", SIGIO },     { "POLL", SIGPOLL }, { "PWR", SIGPWR },
        { "SYS", SIGSYS },
};

/* "TERM", "SIGTERM", "sigterm", "15", "RTMIN+3"; "0" checks only that the process exists
 * (kill(2)), as runc allows. */
static int
parse_signal(const char *s)
{
        char *end;
        long v;

        if (!*s)
                return -EINVAL;
        v = strtol(s, &end, 10);
        if (!*end)
                return v >= 0 && v < NSIG ? (int) v : -EINVAL;
        if (strncasecmp(s, "SIG", 3) == 0)
                s += 3;
        for (size_t i = 0; i < ARRAY_SIZE(signals); i++)
                if (strcasecmp(s, signals[i].name) == 0)
                        return signals[i].sig;
        if (strncasecmp(s, "RTMIN", 5) == 0 || strncasecmp(s, "RTMAX", 5) == 0) {
                bool min = strncasecmp(s, "RTMIN", 5) == 0;
                long off = 0;
                if (s[5]) {
                        off = strtol(s + 5, &end, 10);
                        if (*end)
                                return -EINVAL;
                }
                v = min ? SIGRTMIN + off : SIGRTMAX + off;
                return v >= SIGRTMIN && v <= SIGRTMAX ? (int) v : -EINVAL;
        }
        return -EINVAL;
}

int
cmd_kill(rt_ctx *ctx, int argc, char **argv)
{
        static const struct option opts[] = {
                { "all", no_argument, NULL, 'a' },
                {},
        };
        _cleanup_container_ rt_container *c = NULL;
        msp_err err = { 0 };
        bool all = false;
        int opt, sig = SIGTERM;

        while ((opt = getopt_long(argc, argv, "a", opts, NULL)) != -1) {
                if (opt != 'a')
                        return cmd_usage_error(ctx, "kill", "invalid option");
                all = true;
        }
        if (optind >= argc)
                return cmd_usage_error(ctx, "kill", "a container ID is required");
        if (optind + 2 < argc)
                return cmd_usage_error(ctx, "kill", "unexpected argument '%s'", argv[optind + 2]);
        if (optind + 1 < argc) {
                sig = parse_signal(argv[optind + 1]);
                if (sig < 0)
                        return cmd_usage_error(ctx, "kill", "unknown signal '%s'", argv[optind + 1]);
        }
        if (rt_container_load(ctx, argv[optind], true, &c, &err) < 0 ||
            rt_container_kill(ctx, c, sig, all, &err) < 0)
                return cmd_fail(ctx, &err);
        return 0;
}
