/* msp-sandbox-init: pid 1 of every msp-mcp sandbox (bound read-only at /.msp/init).
 *
 *   /.msp/init [--proxy PORT SOCKET] -- PROGRAM [ARG...]
 *   /.msp/init [--proxy PORT SOCKET] --serve FD
 *
 * With --proxy it first listens on 127.0.0.1:PORT and hands the listening socket to
 * msp-mcp's egress proxy over the unix socket SOCKET (egress-listener.h).
 *
 * With --serve, instead of one program, it runs the programs msp-mcp asks for over the
 * listening unix seqpacket socket FD it inherited, until told to stop (spawn-serve.h; the
 * wire format is sandbox/spawn-proto.h). What follows describes the one-program mode; the
 * serve mode reaps the same way, forwards no signal, and exits 0 after killing
 * everything, with "exit 0\n" on fd 3.
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
 * Since a program may itself exit with 129..192, the real outcome also goes out on a side
 * channel: when fd 3 is a pipe (msp-mcp runs the runtime with `run --preserve-fds 1`), the
 * init writes "exit N\n" or "signal N\n" to it in one write right before exiting. fd 3 is
 * made close-on-exec (the program never has it), and the init non-dumpable, so that the
 * program (same uid, no capabilities) cannot open /proc/1/fd/3 or ptrace pid 1 to forge it.
 *
 * The program runs in its own process group; signals are forwarded to its pid only.
 * Static (any rootfs), no allocation, no capabilities; every signal stays blocked in
 * pid 1, which takes them synchronously with sigwaitinfo(): no handlers, nothing to make
 * async-signal-safe. Exit codes of its own: 127 (exec failed: not found), 126 (other exec
 * failure), 125 (usage or fork failure). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "egress/egress.h"
#include "helpers/spawn-serve.h"

/* The init's one way to tell: "msp-sandbox-init: A B: strerror(e)" on stderr (e 0: none),
 * with write(2) only: no stdio buffers to flush or to share with the forked child. Also
 * spawn-serve.c's (spawn-serve.h). */
void
init_say(const char *a, const char *b, int e)
{
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

/* The status channel on fd 3, or -1 (none, or it could not be made safe: then msp-mcp
 * falls back to decoding 128+N). */
static int
status_fd_take(void)
{
        struct stat st;
        if (fstat(3, &st) < 0 || !S_ISFIFO(st.st_mode))
                return -1;
        if (fcntl(3, F_SETFD, FD_CLOEXEC) < 0 || prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0) {
                (void) close(3);
                return -1;
        }
        return 3;
}

/* "exit N\n" / "signal N\n" in one write (< PIPE_BUF: atomic); no stdio. */
static void
status_report(int fd, int status)
{
        char buf[24];
        const char *kind = WIFSIGNALED(status) ? "signal " : "exit ";
        unsigned v = WIFSIGNALED(status) ? (unsigned) WTERMSIG(status) : (unsigned) WEXITSTATUS(status);
        size_t n = strlen(kind);
        memcpy(buf, kind, n);
        char digits[4];
        size_t d = 0;
        do {
                digits[d++] = (char) ('0' + v % 10);
                v /= 10;
        } while (v && d < sizeof digits);
        while (d)
                buf[n++] = digits[--d];
        buf[n++] = '\n';
        if (fd >= 0)
                (void) !write(fd, buf, n);
}

/* A decimal fd number above 2 (0..2 are the init's own stdio), or -1. */
static int
fd_number(const char *text)
{
        int fd = 0;
        for (const char *c = text; *c; c++) {
                if (*c < '0' || *c > '9' || fd > 100000)
                        return -1;
                fd = fd * 10 + (*c - '0');
        }
        return *text && fd > 2 ? fd : -1;
}

/* The proxy's listener, made here and handed over before the program runs. */
static int
hand_over_listener(const char *port_text, const char *socket_path)
{
        unsigned port = 0;
        for (const char *c = port_text; *c && port <= 65535; c++)
                port = *c >= '0' && *c <= '9' ? port * 10 + (unsigned) (*c - '0') : 65536;
        if (port == 0 || port > 65535) {
                init_say("--proxy ", port_text, EINVAL);
                return -1;
        }
        int lfd = egress_listener_bind(port);
        if (lfd < 0) {
                init_say("--proxy: listen on 127.0.0.1:", port_text, -lfd);
                return -1;
        }
        int r = egress_listener_send(lfd, socket_path);
        if (r < 0) {
                init_say("--proxy: hand the listener to ", socket_path, -r);
                return -1;
        }
        return 0;
}

int
main(int argc, char **argv)
{
        int arg = 1;
        const char *proxy_port = NULL, *proxy_socket = NULL;
        if (argc > 3 && strcmp(argv[1], "--proxy") == 0) {
                proxy_port = argv[2];
                proxy_socket = argv[3];
                arg = 4;
        }
        int serve_fd = -1;
        if (argc == arg + 2 && strcmp(argv[arg], "--serve") == 0) {
                serve_fd = fd_number(argv[arg + 1]);
                if (serve_fd < 0) {
                        init_say("--serve ", argv[arg + 1], EBADF);
                        return 125;
                }
        } else if (argc < arg + 2 || strcmp(argv[arg], "--") != 0) {
                init_say("usage", " /.msp/init [--proxy PORT SOCKET] (-- PROGRAM [ARG...] | --serve FD)", 0);
                return 125;
        }
        char **prog = argv + arg + 1;
        const int status_fd = status_fd_take();
        if (proxy_port && hand_over_listener(proxy_port, proxy_socket) < 0)
                return 125;
        sigset_t all, old;
        sigfillset(&all);
        /* Blocked signals are queued even to a namespace init without handlers (only
         * unblocked SIG_DFL ones are dropped), so none is lost before sigwaitinfo. */
        if (sigprocmask(SIG_SETMASK, &all, &old) < 0) {
                init_say("sigprocmask", "", errno);
                return 125;
        }
        if (serve_fd >= 0) {
                /* Its programs share its uid: non-dumpable, none of them can ptrace it or
                 * open its fds (every connection's, and the listener's) in /proc/1/fd. */
                if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0) {
                        init_say("prctl", " PR_SET_DUMPABLE", errno);
                        return 125;
                }
                int code = spawn_serve(serve_fd, &old);
                status_report(status_fd, code << 8);    /* a wait status of exit(code) */
                return code;
        }
        pid_t child = fork();
        if (child < 0) {
                init_say("fork", "", errno);
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
                execvp(prog[0], prog);
                int e = errno;
                init_say("exec ", prog[0], e);
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
                        if (p == child) {
                                status_report(status_fd, status);
                                _exit(status_code(status));
                        }
                }
        }
}
