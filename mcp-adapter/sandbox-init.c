/* msp-sandbox-init: pid 1 of every msp-mcp sandbox (bound read-only at /.msp/init).
 *
 *   /.msp/init -- PROGRAM [ARG...]
 *
 * Why: the kernel drops signals sent to a pid namespace's init when it has no handler, so
 * a program that is pid 1 cannot `kill $$` or raise(SIGTERM) itself; and orphans are
 * reparented to pid 1, which a program never reaps (zombies pile up to the pids limit).
 * This init forks the program, forwards every catchable signal it receives to it, reaps
 * every child, and exits when the program does: with its exit code, or 128+N when it died
 * by signal N (pid 1 cannot die by a signal sent from inside its namespace; msp-mcp and
 * the runtimes read 128+N as "killed by N"). Its exit makes the kernel SIGKILL whatever
 * else is left in the namespace.
 *
 * The program runs in its own process group; signals are forwarded to its pid only.
 * Static (any rootfs), no allocation, no capabilities; every signal stays blocked in
 * pid 1, which takes them synchronously with sigwaitinfo(): no handlers, nothing to make
 * async-signal-safe. Exit codes of its own: 127 (exec failed: not found), 126 (other exec
 * failure), 125 (usage or fork failure). */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void
say(const char *a, const char *b, int e)
{
        /* write(2) only: no stdio buffers to flush or to share with the forked child. */
        const char *parts[] = { "msp-sandbox-init: ", a, b, ": ", e ? strerror(e) : "", "\n" };
        for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
                (void) !write(STDERR_FILENO, parts[i], strlen(parts[i]));
}

static int
status_code(int status)
{
        if (WIFSIGNALED(status))
                return 128 + WTERMSIG(status);
        return WEXITSTATUS(status);
}

int
main(int argc, char **argv)
{
        if (argc < 3 || strcmp(argv[1], "--") != 0) {
                say("usage", " /.msp/init -- PROGRAM [ARG...]", 0);
                return 125;
        }
        sigset_t all, old;
        sigfillset(&all);
        /* Blocked signals are queued even to a namespace init without handlers (only
         * unblocked SIG_DFL ones are dropped), so none is lost before sigwaitinfo. */
        if (sigprocmask(SIG_SETMASK, &all, &old) < 0) {
                say("sigprocmask", "", errno);
                return 125;
        }
        pid_t child = fork();
        if (child < 0) {
                say("fork", "", errno);
                return 125;
        }
        if (child == 0) {
                /* The program gets the mask the runtime gave us, and default dispositions
                 * (we changed none). */
                (void) sigprocmask(SIG_SETMASK, &old, NULL);
                /* Its own process group: a `kill 0` (`trap 'kill 0' EXIT`) by the program
                 * then stays within its group instead of also hitting pid 1, which would
                 * forward it a second time. */
                (void) setpgid(0, 0);
                execvp(argv[2], argv + 2);
                int e = errno;
                say("exec ", argv[2], e);
                _exit(e == ENOENT ? 127 : 126);
        }
        for (;;) {
                siginfo_t si;
                int sig = sigwaitinfo(&all, &si);
                if (sig < 0)
                        continue;       /* EINTR (a stop/continue) */
                if (sig != SIGCHLD) {
                        /* To the program only, as if it were pid 1 itself; it decides
                         * what its own children get. */
                        (void) kill(child, sig);
                        continue;
                }
                /* SIGCHLDs coalesce: reap everything that is dead. */
                for (;;) {
                        int status;
                        pid_t p = waitpid(-1, &status, WNOHANG);
                        if (p < 0 && errno == EINTR)
                                continue;
                        if (p <= 0)
                                break;
                        if (p == child)
                                _exit(status_code(status));
                }
        }
}
