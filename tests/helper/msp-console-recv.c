/* msp-console-recv: the test side of --console-socket (what conmon does).
 *
 *   msp-console-recv [-d PIDFILE] [-i INPUT] [-t SECONDS] SOCKET_PATH
 *
 * Binds a SOCK_STREAM unix socket at SOCKET_PATH, accepts one connection, receives the
 * pty master with SCM_RIGHTS, writes INPUT (if any) to the master, then copies what the
 * master gives to stdout until the terminal hangs up (EIO: every slave is closed) or the
 * deadline passes. Carriage returns are passed through as they come.
 *
 * Facts about the received fd go to stderr, one `key=value` a line:
 *   payload=<bytes that came with the fd>  pty=<N of /dev/pts/N>  winsize=<rows> <cols>
 *
 * -d: once the socket listens, fork; the parent writes the child's pid to PIDFILE and
 *     exits 0, so that a test can start the runtime right after and wait for the pid.
 * -t: the whole run (accept and copy) ends after SECONDS (default 10), status 124.
 * Exit status: 0 on hang-up, 124 on timeout, 1 on an error. The socket path is unlinked
 * after accept (as conmon does). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

static long long deadline_ms;

static long long
now_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (long long) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int
left_ms(void)
{
        long long d = deadline_ms - now_ms();
        return d < 0 ? 0 : (int) d;
}

static int
die(const char *what)
{
        fprintf(stderr, "msp-console-recv: %s: %s\n", what, strerror(errno));
        return 1;
}

/* Wait for fd to become readable before the deadline: 1 ready, 0 timeout, -1 error. */
static int
wait_in(int fd)
{
        struct pollfd p = { .fd = fd, .events = POLLIN };

        for (;;) {
                int n = poll(&p, 1, left_ms());
                if (n < 0 && errno == EINTR)
                        continue;
                return n < 0 ? -1 : n > 0;
        }
}

static int
recv_master(int conn, int *ret_fd)
{
        char payload[256];
        union {
                char buf[CMSG_SPACE(sizeof(int))];
                struct cmsghdr align;
        } u;
        struct iovec iov = { .iov_base = payload, .iov_len = sizeof payload - 1 };
        struct msghdr msg = {
                .msg_iov = &iov,
                .msg_iovlen = 1,
                .msg_control = u.buf,
                .msg_controllen = sizeof u.buf,
        };
        ssize_t n;

        memset(&u, 0, sizeof u);
        do
                n = recvmsg(conn, &msg, MSG_CMSG_CLOEXEC);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return die("recvmsg");
        payload[n] = '\0';
        struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
        if (!cm || cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS ||
            cm->cmsg_len != CMSG_LEN(sizeof(int))) {
                fprintf(stderr, "msp-console-recv: no fd in the message (%zd bytes)\n", n);
                return 1;
        }
        memcpy(ret_fd, CMSG_DATA(cm), sizeof(int));
        fprintf(stderr, "payload=%s\n", payload);
        return 0;
}

static void
describe(int master)
{
        unsigned ptn;
        struct winsize ws;

        if (ioctl(master, TIOCGPTN, &ptn) == 0)
                fprintf(stderr, "pty=%u\n", ptn);
        if (ioctl(master, TIOCGWINSZ, &ws) == 0)
                fprintf(stderr, "winsize=%u %u\n", ws.ws_row, ws.ws_col);
}

static int
write_all(int fd, const char *p, size_t n)
{
        while (n > 0) {
                ssize_t w = write(fd, p, n);
                if (w < 0 && errno == EINTR)
                        continue;
                if (w < 0)
                        return -1;
                p += w;
                n -= (size_t) w;
        }
        return 0;
}

/* Copy master -> stdout until hang-up (EIO) or the deadline. */
static int
copy_out(int master)
{
        char buf[4096];

        for (;;) {
                int r = wait_in(master);
                if (r < 0)
                        return die("poll");
                if (r == 0) {
                        fprintf(stderr, "msp-console-recv: timed out\n");
                        return 124;
                }
                ssize_t n = read(master, buf, sizeof buf);
                if (n < 0 && (errno == EINTR || errno == EAGAIN))
                        continue;
                if (n < 0 && errno == EIO)
                        return 0;
                if (n < 0)
                        return die("read the pty master");
                if (n == 0)
                        return 0;
                if (write_all(STDOUT_FILENO, buf, (size_t) n) < 0)
                        return die("write stdout");
        }
}

static int
usage(void)
{
        fprintf(stderr, "usage: msp-console-recv [-d PIDFILE] [-i INPUT] [-t SECONDS] SOCKET_PATH\n");
        return 2;
}

int
main(int argc, char **argv)
{
        const char *pidfile = NULL, *input = NULL;
        double timeout = 10;
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int opt, lfd, conn, master = -1;

        while ((opt = getopt(argc, argv, "d:i:t:")) != -1) {
                switch (opt) {
                case 'd': pidfile = optarg; break;
                case 'i': input = optarg; break;
                case 't': timeout = atof(optarg); break;
                default: return usage();
                }
        }
        if (optind != argc - 1 || timeout <= 0)
                return usage();
        const char *path = argv[optind];
        if (strlen(path) >= sizeof sa.sun_path) {
                fprintf(stderr, "msp-console-recv: socket path too long\n");
                return 2;
        }
        strcpy(sa.sun_path, path);
        deadline_ms = now_ms() + (long long) (timeout * 1000);
        signal(SIGPIPE, SIG_IGN);

        lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (lfd < 0)
                return die("socket");
        (void) unlink(path);
        if (bind(lfd, (struct sockaddr *) &sa, sizeof sa) < 0)
                return die("bind");
        if (listen(lfd, 1) < 0)
                return die("listen");

        if (pidfile) {
                fflush(NULL);
                pid_t pid = fork();
                if (pid < 0)
                        return die("fork");
                if (pid > 0) {
                        FILE *f = fopen(pidfile, "we");
                        if (!f || fprintf(f, "%d\n", (int) pid) < 0 || fclose(f) != 0) {
                                kill(pid, SIGKILL);
                                return die("write the pid file");
                        }
                        _exit(0);
                }
        }

        int r = wait_in(lfd);
        if (r <= 0) {
                fprintf(stderr, "msp-console-recv: %s\n", r == 0 ? "no connection (timed out)" : "poll failed");
                unlink(path);
                return r == 0 ? 124 : 1;
        }
        conn = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
        if (conn < 0)
                return die("accept");
        (void) unlink(path);
        close(lfd);
        r = wait_in(conn);
        if (r <= 0) {
                fprintf(stderr, "msp-console-recv: %s\n", r == 0 ? "no fd received (timed out)" : "poll failed");
                return r == 0 ? 124 : 1;
        }
        if (recv_master(conn, &master) != 0)
                return 1;
        close(conn);
        describe(master);
        if (input && write_all(master, input, strlen(input)) < 0)
                return die("write to the pty master");
        r = copy_out(master);
        close(master);
        return r;
}
