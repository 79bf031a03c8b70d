/* msp-seccomp-agent: the test side of SCMP_ACT_NOTIFY with linux.seccomp.listenerPath.
 *
 *   msp-seccomp-agent -o OUTFILE [-e ERRNO] SOCKET
 *
 * Listens on SOCKET (a path), then forks: the parent prints the agent's pid and exits,
 * so `pid=$(msp-seccomp-agent ...)` returns once the socket accepts connections. The
 * agent accepts one connection, receives the listener fd (SCM_RIGHTS) and the
 * ContainerProcessState JSON (until EOF), answers one notification with -ERRNO (0:
 * success, the default), and exits. It writes `key=value` facts to OUTFILE:
 *   metadata=...  pid=...  status=...  fds=...  state.id=...  state.pid=...  fd=ok  nr=...
 *   notif.pid=...  answered=ok
 * It never waits more than 20 s (alarm). Runs on the host; test code. */
#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define STATE_MAX (64 * 1024)

static int
fail(const char *what)
{
        printf("error=%s: %s\n", what, strerror(errno));
        return 1;
}

/* The value of the first member "key" of the JSON text (a string's body, or the raw
 * token for a number), printed as `name=value`. Good enough for the state msp sends. */
static void
print_member(const char *json, const char *key, const char *name)
{
        char pat[64];
        const char *p;

        snprintf(pat, sizeof pat, "\"%s\":", key);
        p = strstr(json, pat);
        if (!p) {
                printf("%s=<missing>\n", name);
                return;
        }
        p += strlen(pat);
        if (*p == '"') {
                const char *e = ++p;
                while (*e && *e != '"')
                        e += (*e == '\\' && e[1]) ? 2 : 1;
                printf("%s=%.*s\n", name, (int) (e - p), p);
        } else {
                size_t n = strcspn(p, ",}");
                printf("%s=%.*s\n", name, (int) n, p);
        }
}

/* Receive the fd with the first bytes, then read the rest of the text until EOF. */
static int
receive(int conn, char *text, size_t size, int *ret_fd)
{
        union {
                char buf[CMSG_SPACE(sizeof(int))];
                struct cmsghdr align;
        } u;
        struct iovec iov = { .iov_base = text, .iov_len = size - 1 };
        struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
                              .msg_controllen = sizeof u.buf };
        ssize_t n = recvmsg(conn, &msg, MSG_CMSG_CLOEXEC);
        struct cmsghdr *c;
        size_t len;

        if (n <= 0)
                return n < 0 ? fail("recvmsg") : (printf("error=EOF before the state\n"), 1);
        c = CMSG_FIRSTHDR(&msg);
        if (!c || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) {
                printf("error=no SCM_RIGHTS\n");
                return 1;
        }
        memcpy(ret_fd, CMSG_DATA(c), sizeof(int));
        for (len = (size_t) n; len < size - 1; len += (size_t) n) {
                n = read(conn, text + len, size - 1 - len);
                if (n < 0 && errno == EINTR) {
                        n = 0;
                        continue;
                }
                if (n < 0)
                        return fail("read");
                if (n == 0)
                        break;
        }
        text[len] = '\0';
        return 0;
}

static int
answer(int fd, int err)
{
        struct seccomp_notif req;
        struct seccomp_notif_resp resp;

        memset(&req, 0, sizeof req);
        if (ioctl(fd, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0)
                return fail("NOTIF_RECV");
        printf("nr=%d\nnotif.pid=%u\n", req.data.nr, req.pid);
        memset(&resp, 0, sizeof resp);
        resp.id = req.id;
        resp.error = -err;
        resp.val = 0;
        if (ioctl(fd, SECCOMP_IOCTL_NOTIF_SEND, &resp) < 0)
                return fail("NOTIF_SEND");
        printf("answered=ok\n");
        return 0;
}

static int
agent(int lsock, int err)
{
        static char text[STATE_MAX];
        int conn, fd = -1;

        conn = accept4(lsock, NULL, NULL, SOCK_CLOEXEC);
        if (conn < 0)
                return fail("accept");
        close(lsock);
        if (receive(conn, text, sizeof text, &fd) != 0)
                return 1;
        close(conn);
        print_member(text, "metadata", "metadata");
        print_member(text, "pid", "pid");
        print_member(text, "status", "status");
        print_member(text, "fds", "fds");
        /* the container's state (the last member, after the process' own pid) */
        const char *st = strstr(text, "\"state\":{");
        if (st) {
                print_member(st, "id", "state.id");
                print_member(st, "pid", "state.pid");
        }
        printf("fd=%s\n", fcntl(fd, F_GETFD) >= 0 ? "ok" : "bad");
        return answer(fd, err);
}

int
main(int argc, char **argv)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        const char *out = NULL;
        int err = 0, opt, lsock, ofd;
        pid_t pid;

        while ((opt = getopt(argc, argv, "o:e:")) != -1) {
                if (opt == 'o')
                        out = optarg;
                else if (opt == 'e')
                        err = atoi(optarg);
                else
                        return 2;
        }
        if (!out || optind != argc - 1 || strlen(argv[optind]) >= sizeof sa.sun_path) {
                fprintf(stderr, "usage: msp-seccomp-agent -o OUTFILE [-e ERRNO] SOCKET\n");
                return 2;
        }
        strcpy(sa.sun_path, argv[optind]);
        lsock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (lsock < 0 || bind(lsock, (struct sockaddr *) &sa, sizeof sa) < 0 ||
            listen(lsock, 4) < 0) {
                perror("msp-seccomp-agent: listen");
                return 1;
        }
        ofd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (ofd < 0) {
                perror("msp-seccomp-agent: open OUTFILE");
                return 1;
        }
        fflush(stdout);
        pid = fork();
        if (pid < 0) {
                perror("msp-seccomp-agent: fork");
                return 1;
        }
        if (pid > 0) {
                printf("%d\n", (int) pid);
                return 0;
        }
        /* The agent: stdio to OUTFILE, so that the caller's pipe closes with the parent. */
        dup2(ofd, STDOUT_FILENO);
        dup2(ofd, STDERR_FILENO);
        close(ofd);
        close(STDIN_FILENO);
        setvbuf(stdout, NULL, _IOLBF, 0);
        alarm(20);
        int r = agent(lsock, err);
        unlink(sa.sun_path);
        return r;
}
