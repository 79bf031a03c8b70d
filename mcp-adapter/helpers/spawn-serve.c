/* The spawn service of msp-sandbox-init (see spawn-serve.h, sandbox/spawn-proto.h).
 *
 * One poll loop over a signalfd (SIGCHLD: reap; the stop signals), the listener and up to
 * SLOTS connections. A connection's request arrives whole in one seqpacket datagram, so
 * handling it never blocks and no connection keeps a buffer: the one static buffer is
 * decoded, forked from and done with before the next recvmsg. Each slot is a connection
 * and, once started, its program's pid; a program that exits is answered on its slot;
 * every other child (orphans reparented to pid 1, programs whose client left) is reaped
 * and forgotten. Nothing is forwarded to the programs: msp-mcp signals them through their
 * connection. A CONNECT is answered in the step that reads it (a non-blocking connect,
 * the socket sent and closed) and its connection closed: it holds a slot no longer than
 * a request does. Every fd here is close-on-exec; a program gets exactly its three fds. */
#include "helpers/spawn-serve.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <linux/close_range.h>
#include <netinet/in.h>
#include <unistd.h>

#include "sandbox/sandbox.h"

/* Concurrent connections; more wait in the listener's backlog. */
#define SLOTS 64

struct slot {
        int fd;         /* -1: free */
        pid_t pid;      /* 0: no program yet */
};

static struct slot slots[SLOTS];
/* One byte more than a message may have, so that an oversized one shows as such (with
 * MSG_TRUNC) rather than as a cut one that might decode. */
static char request_buf[SPAWN_MSG_MAX + 1];
static struct spawn_request request;
static struct pollfd pfds[SLOTS + 2];
static int pfd_slot[SLOTS + 2];

/* SIGKILL to a program and its process group. The pid first: a program killed before its
 * setsid() has no group yet, and it can fork nothing more once SIGKILL is pending. */
static void
kill_program(pid_t pid)
{
        (void) kill(pid, SIGKILL);
        (void) kill(-pid, SIGKILL);
}

/* Closes a connection; a program still running with it is killed with its group. */
static void
drop(struct slot *s)
{
        if (s->pid > 0)
                kill_program(s->pid);
        (void) close(s->fd);
        s->fd = -1;
        s->pid = 0;
}

static void
answer(struct slot *s, enum spawn_kind kind, int32_t value)
{
        struct spawn_msg m = spawn_msg_make(kind, value);
        /* A client that cannot take 12 bytes is gone or stuck: either way it is done. */
        if (spawn_send(s->fd, &m, sizeof m, NULL, 0) < 0)
                drop(s);
}

/* The forked child: becomes the program. Never returns. */
static _Noreturn void
become_program(const int fds[3], const sigset_t *child_mask)
{
        extern char **environ;
        (void) sigprocmask(SIG_SETMASK, child_mask, NULL);
        /* Its own session and process group: the group is what a kill of the connection
         * ends, and no terminal or group of pid 1's is shared. */
        (void) setsid();
        /* Above 2 first, so that a received fd that is itself 0, 1 or 2 survives the
         * dup2 of another; dup2 clears close-on-exec on the copies at 0, 1, 2 only. */
        int high[3];
        for (int i = 0; i < 3; i++)
                if ((high[i] = fcntl(fds[i], F_DUPFD_CLOEXEC, 3)) < 0)
                        _exit(126);
        for (int i = 0; i < 3; i++)
                if (dup2(high[i], i) < 0)
                        _exit(126);
        if (chdir(request.cwd) < 0) {
                init_say("chdir ", request.cwd, errno);
                _exit(126);
        }
        /* execvp looks argv[0] up in the PATH of the environment it runs in: the
         * request's, not pid 1's. */
        environ = request.envp;
        execvp(request.argv[0], request.argv);
        int e = errno;
        init_say("exec ", request.argv[0], e);
        _exit(e == ENOENT ? 127 : 126);
}

static void
start(struct slot *s, const int fds[3], const sigset_t *child_mask)
{
        pid_t pid = fork();
        if (pid == 0)
                become_program(fds, child_mask);
        if (pid < 0) {
                init_say("fork", "", errno);
                drop(s);
                return;
        }
        s->pid = pid;
        answer(s, SPAWN_STARTED, pid);
}

/* A TCP socket to 127.0.0.1:port in this (the sandbox's) network namespace, sent to the
 * client while the handshake may still run; then the connection is done. Nothing here
 * waits: the socket is non-blocking and the answer is one small datagram. */
static void
connect_port(struct slot *s, int port)
{
        int e = 0;
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0) {
                e = errno;
        } else {
                struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t) port),
                                          .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
                /* EINTR too leaves the connect going on asynchronously. */
                if (connect(fd, (struct sockaddr *) &sa, sizeof sa) < 0 && errno != EINPROGRESS &&
                    errno != EINTR)
                        e = errno;
        }
        if (e) {
                answer(s, SPAWN_CONNECT_FAILED, e);
        } else {
                struct spawn_msg m = spawn_msg_make(SPAWN_CONNECTED, port);
                (void) spawn_send(s->fd, &m, sizeof m, &fd, 1);
        }
        if (fd >= 0)
                (void) close(fd);
        if (s->fd >= 0)
                drop(s);
}

/* Reads what came on a connection. Returns 1 when it asked the service to stop. */
static int
serve_connection(struct slot *s, const sigset_t *child_mask)
{
        struct iovec iov = { .iov_base = request_buf, .iov_len = sizeof request_buf };
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(8 * sizeof(int))];
        } ctl;
        struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
                              .msg_controllen = sizeof ctl.buf };
        ssize_t n = recvmsg(s->fd, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
                return 0;
        /* Every fd that came is ours to close; a request keeps exactly three. */
        int fds[3], nfds = 0, extra = 0;
        for (struct cmsghdr *c = n >= 0 ? CMSG_FIRSTHDR(&msg) : NULL; c; c = CMSG_NXTHDR(&msg, c)) {
                if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
                        continue;
                for (size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
                        int fd;
                        memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
                        if (nfds < 3)
                                fds[nfds++] = fd;
                        else {
                                (void) close(fd);
                                extra++;
                        }
                }
        }
        int whole = n > 0 && !(msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) && extra == 0;
        struct spawn_msg m;
        int stop = 0;
        if (!whole) {
                drop(s);        /* end of file, an error, or a cut or oversized message */
        } else if (s->pid == 0 && nfds == 3 &&
                   spawn_request_decode(request_buf, (size_t) n, &request) == 0) {
                start(s, fds, child_mask);
        } else if (nfds == 0 && spawn_msg_decode(request_buf, (size_t) n, &m) == 0 &&
                   s->pid == 0 && m.kind == SPAWN_SHUTDOWN) {
                stop = 1;
        } else if (nfds == 0 && spawn_msg_decode(request_buf, (size_t) n, &m) == 0 &&
                   s->pid > 0 && m.kind == SPAWN_SIGNAL && m.value > 0 && m.value < NSIG) {
                if (kill(-s->pid, m.value) < 0 && errno == ESRCH)
                        (void) kill(s->pid, m.value);   /* before its setsid() */
        } else if (nfds == 0 && spawn_msg_decode(request_buf, (size_t) n, &m) == 0 &&
                   s->pid == 0 && spawn_connect_port(&m) > 0) {
                connect_port(s, spawn_connect_port(&m));
        } else {
                drop(s);
        }
        for (int i = 0; i < nfds; i++)
                (void) close(fds[i]);
        return stop;
}

static void
reap(void)
{
        for (;;) {
                int status;
                pid_t p = waitpid(-1, &status, WNOHANG);
                if (p < 0 && errno == EINTR)
                        continue;
                if (p <= 0)
                        return;
                for (int i = 0; i < SLOTS; i++) {
                        struct slot *s = &slots[i];
                        if (s->fd < 0 || s->pid != p)
                                continue;
                        s->pid = 0;     /* reaped: nothing of it left to kill */
                        if (WIFSIGNALED(status))
                                answer(s, SPAWN_SIGNALED, WTERMSIG(status));
                        else
                                answer(s, SPAWN_EXITED, WEXITSTATUS(status));
                        if (s->fd >= 0)
                                drop(s);
                }
        }
}

/* Returns 1 when a stop signal came. */
static int
take_signals(int sfd)
{
        struct signalfd_siginfo si;
        int stop = 0;
        while (read(sfd, &si, sizeof si) == (ssize_t) sizeof si) {
                if (si.ssi_signo == SIGCHLD)
                        reap();
                else if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT ||
                         si.ssi_signo == SIGHUP || si.ssi_signo == SIGQUIT)
                        stop = 1;
        }
        return stop;
}

static void
accept_one(int listen_fd)
{
        int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0)
                return;
        for (int i = 0; i < SLOTS; i++)
                if (slots[i].fd < 0) {
                        slots[i] = (struct slot){ .fd = fd, .pid = 0 };
                        return;
                }
        (void) close(fd);       /* not polled when full; kept for safety */
}

/* Everything this service started dies with it. As pid 1 that is the whole pid namespace
 * (kill(-1) spares only the caller). As an ordinary process (the tests) kill(-1) would
 * reach every process of the uid, so only the groups of the programs still running are
 * killed: what an exited program left in the background is out of reach there. */
static void
kill_everything(void)
{
        if (getpid() == 1)
                (void) kill(-1, SIGKILL);
        for (int i = 0; i < SLOTS; i++)
                if (slots[i].fd >= 0)
                        drop(&slots[i]);
}

/* Every fd the init inherited beyond its stdio (the status pipe, the listener, whatever
 * else the runtime passed) made close-on-exec: a program gets its three fds and nothing
 * of pid 1's. */
static void
cloexec_inherited(void)
{
        if (close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) == 0)
                return;
        /* A kernel before 5.11 (or a seccomp profile without close_range): one by one,
         * as far as fds are commonly numbered. */
        for (int fd = 3; fd < 4096; fd++)
                (void) fcntl(fd, F_SETFD, FD_CLOEXEC);
}

int
spawn_serve(int listen_fd, const sigset_t *child_mask)
{
        cloexec_inherited();
        sigset_t all;
        sigfillset(&all);
        int sfd = signalfd(-1, &all, SFD_CLOEXEC | SFD_NONBLOCK);
        int type = 0;
        socklen_t tlen = sizeof type;
        if (sfd < 0 || getsockopt(listen_fd, SOL_SOCKET, SO_TYPE, &type, &tlen) < 0 ||
            type != SOCK_SEQPACKET || fcntl(listen_fd, F_SETFD, FD_CLOEXEC) < 0) {
                init_say("--serve", ": not a listening unix seqpacket socket", sfd < 0 ? errno : 0);
                return 125;
        }
        /* Not pid 1 (run as an ordinary process): orphans of the programs come to us
         * rather than to whoever started us, and are reaped the same. */
        if (getpid() != 1)
                (void) prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
        for (int i = 0; i < SLOTS; i++)
                slots[i] = (struct slot){ .fd = -1, .pid = 0 };
        int stop = 0;
        while (!stop) {
                nfds_t n = 0, used = 0;
                for (int i = 0; i < SLOTS; i++) {
                        if (slots[i].fd < 0)
                                continue;
                        pfds[n] = (struct pollfd){ .fd = slots[i].fd, .events = POLLIN };
                        pfd_slot[n++] = i;
                        used++;
                }
                const nfds_t first_own = n;
                pfds[n++] = (struct pollfd){ .fd = sfd, .events = POLLIN };
                /* A full table leaves the next connections waiting in the backlog. */
                pfds[n++] = (struct pollfd){ .fd = used < SLOTS ? listen_fd : -1, .events = POLLIN };
                if (poll(pfds, n, -1) < 0)
                        continue;       /* EINTR */
                /* The connections first: handling one closes at most that one, so every
                 * other pfds entry still names its slot's fd. */
                for (nfds_t k = 0; k < first_own && !stop; k++)
                        if (pfds[k].revents)
                                stop = serve_connection(&slots[pfd_slot[k]], child_mask);
                if (pfds[first_own].revents)
                        stop |= take_signals(sfd);
                short lrev = pfds[first_own + 1].revents;
                if (lrev & (POLLERR | POLLHUP | POLLNVAL))
                        stop = 1;       /* the listener is gone: no one can ask again */
                else if (lrev & POLLIN)
                        accept_one(listen_fd);
        }
        kill_everything();
        return 0;
}
