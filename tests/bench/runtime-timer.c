/* A runc-compatible binary that runs the real runtime and logs how long each call took:
 * tests/bench/engines.sh registers it with the engines in place of msp or runc, so that
 * the runtime's share of `docker run --rm` / `ctr run --rm` is measured where the engine
 * calls it. Built by the benchmark with the real runtime, the log file and a name fixed
 * at compile time (-DREAL=... -DLOG=... -DNAME=...): no environment, no argument of its
 * own, so the engine's command line passes through unchanged.
 *
 * One line per call: "NAME COMMAND MICROSECONDS EXIT". The clock starts before the fork
 * of the real runtime (its fork and exec count as the runtime's) and stops when it is
 * reaped; the wrapper's own start is outside it, and the same for every runtime. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long now_us(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

/* The runtime command: the first argument that is not an option or an option's value. */
static const char *command_of(int argc, char **argv)
{
        static const char *const cmds[] = { "create", "start", "state", "kill", "delete", "exec",
                                            "pause", "resume", "update", "ps", "events", "run" };

        for (int i = 1; i < argc; i++)
                for (size_t c = 0; c < sizeof(cmds) / sizeof(cmds[0]); c++)
                        if (strcmp(argv[i], cmds[c]) == 0)
                                return cmds[c];
        return "other";
}

int main(int argc, char **argv)
{
        long long t0 = now_us();
        int status = 0, code;
        pid_t pid = fork();

        if (pid < 0)
                return 125;
        if (pid == 0) {
                argv[0] = (char *)REAL;
                execv(REAL, argv);
                _exit(127);
        }
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return 125;
        code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);

        int fd = open(LOG, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
        if (fd >= 0) {
                dprintf(fd, "%s %s %lld %d\n", NAME, command_of(argc, argv), now_us() - t0, code);
                close(fd);
        }
        return code;
}
