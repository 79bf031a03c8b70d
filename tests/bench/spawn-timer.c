/* Spawn-and-wait of one program, three ways, side by side in one run (tests/bench/spawn.sh
 * builds and runs it; tests/bench/README.md says how to read it):
 *
 *   service     msp-sandbox-init --serve as pid 1 of a running container, asked through
 *               msp-mcp's own client (mcp-adapter/sandbox/spawn-client.c): connect, send,
 *               STARTED, EXITED
 *   bare        fork + execve + waitpid on the host: the floor
 *   msp exec    `msp --root R exec ID PROGRAM` into the same container, waited for
 *
 *   spawn-timer --runs N --msp MSP --root ROOT --bundle BUNDLE --host-true PATH
 *
 * The bundle's process is `/msp-init --serve 3`; this program makes the listening socket,
 * runs `msp run --preserve-fds 1` with it as fd 3, and times the three in turn, round
 * robin (so that a drift of the machine hits all three alike), after a warm-up; then it
 * shuts the service down, which ends the container. Inside, the program is the rootfs's
 * /bin/true; on the host, PATH (the same binary from the rootfs). Prints the median, the
 * 90th percentile and the ratio of each median to the bare one. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sandbox/spawn-client.h"

extern char **environ;
static const char *const inside_env[] = { "PATH=/bin:/usr/bin", NULL };
static int null_fd;

static long long
now_ns(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void
die(const char *what)
{
        fprintf(stderr, "spawn-timer: %s: %s\n", what, strerror(errno));
        exit(1);
}

/* One spawn-and-wait through the service: 0 when /bin/true exited 0. */
static int
through_service(const char *sock)
{
        msp_err err = { 0 };
        const int fds[3] = { null_fd, null_fd, null_fd };
        int conn = spawn_client_start(sock, (const char *const[]){ "/bin/true", NULL }, inside_env, "/",
                                      fds, &err);
        if (conn < 0) {
                fprintf(stderr, "spawn-timer: %s\n", err.msg);
                return -1;
        }
        int code = -1;
        for (;;) {
                struct spawn_event ev;
                int r = spawn_client_read(conn, &ev, &err);
                if (r < 0)
                        break;
                if (r == 0) {
                        struct pollfd p = { .fd = conn, .events = POLLIN };
                        (void) poll(&p, 1, 10000);
                        continue;
                }
                if (ev.kind == SPAWN_EXITED || ev.kind == SPAWN_SIGNALED) {
                        code = ev.kind == SPAWN_EXITED ? ev.value : 128 + ev.value;
                        break;
                }
        }
        close(conn);
        return code;
}

/* posix_spawn (vfork + exec in glibc) and wait, stdio on /dev/null: the exit code. */
static int
spawn_wait(const char *path, char *const *argv)
{
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        for (int i = 0; i < 3; i++)
                posix_spawn_file_actions_adddup2(&fa, null_fd, i);
        pid_t pid;
        int r = posix_spawn(&pid, path, &fa, NULL, argv, environ);
        posix_spawn_file_actions_destroy(&fa);
        if (r != 0)
                return -1;
        int st;
        while (waitpid(pid, &st, 0) < 0)
                if (errno != EINTR)
                        return -1;
        return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* fork + execve, as the "bare fork and exec" floor. */
static int
bare(const char *path)
{
        pid_t pid = fork();
        if (pid == 0) {
                dup2(null_fd, 0);
                dup2(null_fd, 1);
                execve(path, (char *const[]){ (char *) path, NULL }, environ);
                _exit(127);
        }
        int st;
        if (pid < 0 || waitpid(pid, &st, 0) < 0)
                return -1;
        return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int
cmp_ll(const void *a, const void *b)
{
        long long x = *(const long long *) a, y = *(const long long *) b;
        return (x > y) - (x < y);
}

static double
pct(long long *v, int n, int p)
{
        qsort(v, (size_t) n, sizeof *v, cmp_ll);
        int i = (n - 1) * p / 100;
        return (double) v[i] / 1000.0;
}

int
main(int argc, char **argv)
{
        int runs = 500, warmup = 50;
        const char *msp = NULL, *root = NULL, *bundle = NULL, *host_true = NULL;
        for (int i = 1; i + 1 < argc; i += 2) {
                if (strcmp(argv[i], "--runs") == 0)
                        runs = atoi(argv[i + 1]);
                else if (strcmp(argv[i], "--warmup") == 0)
                        warmup = atoi(argv[i + 1]);
                else if (strcmp(argv[i], "--msp") == 0)
                        msp = argv[i + 1];
                else if (strcmp(argv[i], "--root") == 0)
                        root = argv[i + 1];
                else if (strcmp(argv[i], "--bundle") == 0)
                        bundle = argv[i + 1];
                else if (strcmp(argv[i], "--host-true") == 0)
                        host_true = argv[i + 1];
        }
        if (!msp || !root || !bundle || !host_true || runs < 1) {
                fprintf(stderr, "usage: spawn-timer [--runs N] [--warmup N] --msp MSP --root ROOT "
                                "--bundle BUNDLE --host-true PATH\n");
                return 2;
        }
        null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (null_fd < 0)
                die("/dev/null");

        /* The service's socket, beside the bundle; the container gets the fd only. */
        char sock[108];
        snprintf(sock, sizeof sock, "%s/spawn.sock", root);
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        snprintf(sa.sun_path, sizeof sa.sun_path, "%s", sock);
        unlink(sock);
        int lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
        if (lfd < 0 || bind(lfd, (struct sockaddr *) &sa, sizeof sa) < 0 || listen(lfd, 64) < 0)
                die(sock);
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_adddup2(&fa, lfd, 3);
        pid_t container;
        char *run_argv[] = { (char *) msp, "--root", (char *) root, "run", "--preserve-fds", "1",
                             "-b", (char *) bundle, "spawn-bench", NULL };
        if (posix_spawn(&container, msp, &fa, NULL, run_argv, environ) != 0)
                die("msp run");
        posix_spawn_file_actions_destroy(&fa);
        close(lfd);

        /* Ready once a request goes through: the container and its init run. */
        int ready = 0;
        for (int i = 0; i < 500 && !ready; i++) {
                ready = through_service(sock) == 0;
                if (!ready)
                        usleep(10000);
        }
        if (!ready) {
                fprintf(stderr, "spawn-timer: the service in the container never answered\n");
                kill(container, SIGKILL);
                return 1;
        }
        char *exec_argv[] = { (char *) msp, "--root", (char *) root, "exec", "spawn-bench",
                              "/bin/true", NULL };
        long long *t[3];
        for (int k = 0; k < 3; k++)
                if (!(t[k] = calloc((size_t) runs, sizeof(long long))))
                        die("calloc");
        int failed = 0;
        for (int i = -warmup; i < runs; i++) {
                for (int k = 0; k < 3; k++) {
                        long long t0 = now_ns();
                        int r = k == 0 ? through_service(sock) :
                                k == 1 ? bare(host_true) : spawn_wait(msp, exec_argv);
                        long long dt = now_ns() - t0;
                        failed += r != 0;
                        if (i >= 0)
                                t[k][i] = dt;
                }
        }
        msp_err err = { 0 };
        if (spawn_client_shutdown(sock, &err) < 0)
                fprintf(stderr, "spawn-timer: %s\n", err.msg);
        int st;
        while (waitpid(container, &st, 0) < 0 && errno == EINTR)
                ;
        unlink(sock);

        static const char *const names[] = { "service (pid 1 --serve)", "bare fork+exec", "msp exec" };
        double med[3], p90[3];
        for (int k = 0; k < 3; k++) {
                med[k] = pct(t[k], runs, 50);
                p90[k] = pct(t[k], runs, 90);
        }
        printf("spawn and wait of /bin/true, %d runs each, round robin after %d warm-up rounds\n",
               runs, warmup);
        printf("%-26s %12s %12s %10s\n", "way", "median [us]", "p90 [us]", "/ bare");
        for (int k = 0; k < 3; k++)
                printf("%-26s %12.1f %12.1f %9.2fx\n", names[k], med[k], p90[k], med[k] / med[1]);
        printf("%-26s %12s %12s %9.2fx\n", "msp exec / service", "", "", med[2] / med[0]);
        if (failed)
                printf("%d runs did not exit 0\n", failed);
        return failed ? 1 : 0;
}
