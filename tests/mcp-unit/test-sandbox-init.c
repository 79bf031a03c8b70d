/* mcp-adapter/helpers/sandbox-init.c on its own ($MSP_SANDBOX_INIT), as an ordinary child of this
 * test (not pid 1: that is test-engine.c's part): exit codes passed through, a signal
 * death as 128+N, its own codes (usage 125, not found 127), and signals forwarded to the
 * program, and the status record on fd 3 (out of the program's reach). Each child is
 * bounded by alarm(); the programs are /bin/sh one-liners. With --proxy, the init hands
 * a listener on 127.0.0.1:PORT over the unix socket before the program runs (a connection
 * to the port is accepted on the fd that arrives; the init keeps no copy), and a bad port
 * or a socket nobody listens on is refused before the program runs. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <grp.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "tests/lib/tap.h"
#include "egress/egress-listener.h"

static const char *init_path;

/* Run the init with args (NULL-terminated, after argv[0]); its stdout to out_fd (or
 * inherited when < 0). Returns the pid. */
static pid_t
spawn_init(const char *const *args, int out_fd)
{
        const char *argv[16] = { init_path };
        size_t n = 1;
        while (args[n - 1] && n < 15) {
                argv[n] = args[n - 1];
                n++;
        }
        argv[n] = NULL;
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        if (out_fd >= 0)
                posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
        pid_t pid = -1;
        extern char **environ;
        if (posix_spawn(&pid, init_path, &fa, NULL, (char *const *) argv, environ) != 0)
                pid = -1;
        posix_spawn_file_actions_destroy(&fa);
        return pid;
}

/* The init's wait status, or -1. */
static int
wait_status(pid_t pid)
{
        int st;
        alarm(20);
        while (waitpid(pid, &st, 0) < 0)
                if (errno != EINTR)
                        return -1;
        alarm(0);
        return st;
}

static int
run_init(const char *const *args)
{
        pid_t pid = spawn_init(args, -1);
        return pid < 0 ? -1 : wait_status(pid);
}

TEST(exit_codes_pass_through)
{
        int st = run_init((const char *const[]){ "--", "/bin/sh", "-c", "exit 0", NULL });
        ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
        st = run_init((const char *const[]){ "--", "/bin/sh", "-c", "exit 1", NULL });
        ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 1);
        st = run_init((const char *const[]){ "--", "/bin/sh", "-c", "exit 3", NULL });
        ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 3);
}

TEST(signal_death_is_128_plus_n)
{
        int st = run_init((const char *const[]){ "--", "/bin/sh", "-c", "kill -TERM $$", NULL });
        ASSERT_TRUE(WIFEXITED(st));
        ASSERT_EQ_INT(WEXITSTATUS(st), 128 + SIGTERM);
        st = run_init((const char *const[]){ "--", "/bin/sh", "-c", "kill -SEGV $$", NULL });
        ASSERT_TRUE(WIFEXITED(st));
        ASSERT_EQ_INT(WEXITSTATUS(st), 128 + SIGSEGV);
}

TEST(own_failures)
{
        int st = run_init((const char *const[]){ "/bin/true", NULL });
        ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 125);
        st = run_init((const char *const[]){ "--", NULL });
        ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 125);
        st = run_init((const char *const[]){ "--", "/nonexistent/program", NULL });
        ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 127);
        /* PATH lookup as a shell would. */
        st = run_init((const char *const[]){ "--", "sh", "-c", "exit 6", NULL });
        ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 6);
}

/* Read until n bytes or EOF, NUL-terminated. */
static void
read_n(int fd, char *buf, size_t size, size_t n)
{
        size_t len = 0;
        while (len < n && len < size - 1) {
                ssize_t k = read(fd, buf + len, size - 1 - len);
                if (k <= 0)
                        break;
                len += (size_t) k;
        }
        buf[len] = '\0';
}

TEST(signals_forwarded)
{
        /* The program says "ready" once its trap is set; a SIGHUP for the init then reaches
         * it, and a SIGTERM after that ends it (128+15). */
        int p[2];
        ASSERT_OK(pipe2(p, O_CLOEXEC));
        pid_t pid = spawn_init((const char *const[]){
                                       "--", "/bin/sh", "-c",
                                       "trap 'echo hup' HUP; echo ready; "
                                       "while :; do read x </dev/null || :; done", NULL },
                               p[1]);
        close(p[1]);
        if (pid < 0) {
                close(p[0]);
                TAP_FAIL_("spawn %s", init_path);
        }
        char ready[64], hup[64];
        alarm(20);
        read_n(p[0], ready, sizeof ready, 6);
        kill(pid, SIGHUP);
        read_n(p[0], hup, sizeof hup, 4);
        alarm(0);
        kill(pid, SIGTERM);
        int st = wait_status(pid);
        close(p[0]);
        ASSERT_STREQ(ready, "ready\n");
        ASSERT_STREQ(hup, "hup\n");
        ASSERT_TRUE(WIFEXITED(st));
        ASSERT_EQ_INT(WEXITSTATUS(st), 128 + SIGTERM);
}

/* Run the init with a status pipe on fd 3, as uid/gid 65534 when root (the pipe is theirs
 * too) so
 * that the program's /proc/$PPID/fd/3 is guarded by the init's dumpable flag alone.
 * Returns the wait status; *chan gets what the pipe holds. */
static int
run_with_channel(const char *script, char *chan, size_t size)
{
        int p[2];
        chan[0] = '\0';
        if (pipe2(p, O_CLOEXEC) < 0)
                return -1;
        const bool root = geteuid() == 0;
        if (root && fchown(p[1], 65534, 65534) < 0) {
                close(p[0]);
                close(p[1]);
                return -1;
        }
        pid_t pid = fork();
        if (pid == 0) {
                /* dup2 clears O_CLOEXEC: fd 3 is meant for the init. */
                if (dup2(p[1], 3) < 0 ||
                    (root && (setgroups(0, NULL) < 0 || setgid(65534) < 0 || setuid(65534) < 0)))
                        _exit(99);
                execl(init_path, init_path, "--", "/bin/sh", "-c", script, (char *) NULL);
                _exit(98);
        }
        close(p[1]);
        int st = pid < 0 ? -1 : wait_status(pid);
        /* The init and the program are gone: no writer is left, EOF follows the record. */
        alarm(20);
        read_n(p[0], chan, size, size);
        alarm(0);
        close(p[0]);
        return st;
}

TEST(status_channel)
{
        char chan[64];
        int st = run_with_channel("exit 130", chan, sizeof chan);
        ASSERT_TRUE(WIFEXITED(st));
        ASSERT_EQ_INT(WEXITSTATUS(st), 130);
        ASSERT_STREQ(chan, "exit 130\n");
        st = run_with_channel("kill -INT $$", chan, sizeof chan);
        ASSERT_TRUE(WIFEXITED(st));
        ASSERT_EQ_INT(WEXITSTATUS(st), 128 + SIGINT);
        ASSERT_STREQ(chan, "signal 2\n");
        st = run_with_channel("kill -KILL $$", chan, sizeof chan);
        ASSERT_STREQ(chan, "signal 9\n");
        st = run_with_channel("exit 0", chan, sizeof chan);
        ASSERT_STREQ(chan, "exit 0\n");
        st = run_with_channel("exec /nonexistent/program", chan, sizeof chan);
        ASSERT_TRUE(WIFEXITED(st));
        ASSERT_EQ_INT(WEXITSTATUS(st), 127);
        ASSERT_STREQ(chan, "exit 127\n");
}

TEST(status_channel_is_out_of_reach)
{
        /* Neither the inherited fd (close-on-exec) nor the init's /proc entry (non-dumpable)
         * lets the program write a forged record before its own exit. */
        char chan[64];
        int st = run_with_channel("(echo 'signal 2' >&3) 2>/dev/null && exit 3; "
                                  "(echo 'signal 2' >/proc/$PPID/fd/3) 2>/dev/null && exit 4; "
                                  "exit 130", chan, sizeof chan);
        ASSERT_TRUE(WIFEXITED(st));
        ASSERT_EQ_INT(WEXITSTATUS(st), 130);
        ASSERT_STREQ(chan, "exit 130\n");
}

TEST(proxy_listener)
{
        char sock[108];
        snprintf(sock, sizeof sock, "/tmp/msp-listener-test.%d", (int) getpid());
        unlink(sock);
        int ufd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_un su = { .sun_family = AF_UNIX };
        strcpy(su.sun_path, sock);
        ASSERT_OK(bind(ufd, (struct sockaddr *) &su, sizeof su));
        ASSERT_OK(listen(ufd, 4));
        /* A free port: bound once by us, released, then the init's. */
        int probe = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t len = sizeof sa;
        ASSERT_OK(bind(probe, (struct sockaddr *) &sa, sizeof sa));
        ASSERT_OK(getsockname(probe, (struct sockaddr *) &sa, &len));
        close(probe);
        char port[16];
        snprintf(port, sizeof port, "%u", ntohs(sa.sin_port));
        int p[2];
        ASSERT_OK(pipe2(p, O_CLOEXEC));
        /* The program reports whether it holds a listening socket of the init's (it must
         * not: the init closed its copy, and fds it made are close-on-exec). */
        pid_t pid = spawn_init((const char *const[]){ "--proxy", port, sock, "--", "/bin/sh", "-c",
                                                      "ls -l /proc/$$/fd | grep -c socket; exec sleep 60", NULL },
                               p[1]);
        close(p[1]);
        char count[16], got[16] = "";
        alarm(20);
        read_n(p[0], count, sizeof count, 2);
        int a = accept4(ufd, NULL, NULL, SOCK_CLOEXEC);
        int lfd = -1;
        int r = -EAGAIN;
        while (r == -EAGAIN)
                r = egress_listener_recv(a, &lfd);
        int c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        int rc = connect(c, (struct sockaddr *) &sa, sizeof sa);
        ssize_t w = write(c, "ping", 4);
        int s = lfd >= 0 ? accept4(lfd, NULL, NULL, SOCK_CLOEXEC) : -1;
        read_n(s, got, sizeof got, 4);
        alarm(0);
        close(c);
        close(s);
        close(a);
        kill(pid, SIGTERM);
        int st = wait_status(pid);
        close(p[0]);
        ASSERT_STREQ(count, "0\n");
        ASSERT_EQ_INT(r, 0);
        ASSERT_EQ_INT(rc, 0);
        ASSERT_TRUE(w == 4);
        ASSERT_STREQ(got, "ping");
        ASSERT_EQ_INT(WEXITSTATUS(st), 128 + SIGTERM);
        close(lfd);
        st = run_init((const char *const[]){ "--proxy", "70000", sock, "--", "/bin/true", NULL });
        ASSERT_EQ_INT(WEXITSTATUS(st), 125);
        close(ufd);
        unlink(sock);
        /* Nobody listens on the socket: the program never runs. */
        st = run_init((const char *const[]){ "--proxy", port, sock, "--", "/bin/true", NULL });
        ASSERT_EQ_INT(WEXITSTATUS(st), 125);
}

int
main(void)
{
        init_path = getenv("MSP_SANDBOX_INIT");
        if (!init_path || access(init_path, X_OK) < 0) {
                tap_skip("sandbox-init", "set MSP_SANDBOX_INIT (meson test does)");
                return tap_done();
        }
        RUN(exit_codes_pass_through);
        RUN(signal_death_is_128_plus_n);
        RUN(own_failures);
        RUN(signals_forwarded);
        RUN(status_channel);
        RUN(status_channel_is_out_of_reach);
        RUN(proxy_listener);
        return tap_done();
}
