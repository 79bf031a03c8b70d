/* msp-sandbox-init --serve ($MSP_SANDBOX_INIT) as an ordinary child of this test, driven
 * through msp-mcp's client (sandbox/spawn-client.h): a program's output through the fds
 * passed, its exit code, a signal death, exec failure, env and cwd, many requests in a row,
 * two at once, a signal through the connection, a client that leaves early (its program's
 * whole group dies, a double-forked child that ignores SIGTERM too), malformed requests
 * (each closes only its connection; the service keeps serving), and the two ways to stop
 * it (a SHUTDOWN message, the listener shut down): everything it started dies with it.
 * CONNECT: a TCP socket to a port a program of the service listens on, bytes both ways;
 * a port nothing listens on; a port out of range (only that connection closes).
 * Every wait is bounded (poll timeouts, alarm). */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/lib/tap.h"
#include "sandbox/sandbox.h"

static const char *init_path;
static char sock_path[108];
static pid_t service = -1;
static const char *const env[] = { "PATH=/usr/bin:/bin", "FOO=bar", NULL };

/* A listening seqpacket socket at path, handed to a new init as fd 3 (the listener stays
 * ours in *lfd_out, when given). The init's pid. */
static pid_t
start_service(const char *path, int *lfd_out)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
        unlink(path);
        int lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
        if (lfd < 0 || bind(lfd, (struct sockaddr *) &sa, sizeof sa) < 0 || listen(lfd, 16) < 0)
                return -1;
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_adddup2(&fa, lfd, 3);
        /* One more inherited fd, not close-on-exec: no program may get it. */
        posix_spawn_file_actions_addopen(&fa, 7, "/dev/null", O_RDONLY, 0);
        const char *argv[] = { init_path, "--serve", "3", NULL };
        pid_t pid = -1;
        extern char **environ;
        if (posix_spawn(&pid, init_path, &fa, NULL, (char *const *) argv, environ) != 0)
                pid = -1;
        posix_spawn_file_actions_destroy(&fa);
        if (lfd_out)
                *lfd_out = lfd;
        else
                close(lfd);
        return pid;
}

/* The next event within 10 s: 1, or <= 0 (timeout, closed, error). */
static int
next_event(int conn, struct spawn_event *ev)
{
        msp_err err = { 0 };
        for (int waited = 0; waited < 10000; waited += 100) {
                int r = spawn_client_read(conn, ev, &err);
                if (r != 0)
                        return r;
                struct pollfd p = { .fd = conn, .events = POLLIN };
                (void) poll(&p, 1, 100);
        }
        return 0;
}

/* Reads fd until EOF (or size-1 bytes), NUL-terminated, bounded by alarm. */
static void
read_all(int fd, char *buf, size_t size)
{
        size_t len = 0;
        alarm(20);
        while (len < size - 1) {
                ssize_t k = read(fd, buf + len, size - 1 - len);
                if (k <= 0)
                        break;
                len += (size_t) k;
        }
        alarm(0);
        buf[len] = '\0';
}

struct outcome {
        int pid, kind, value;
        char out[256];
};

/* Runs argv through the service, stdin /dev/null, stdout and stderr into one pipe. */
static int
run(const char *const *argv, const char *cwd, struct outcome *o)
{
        int p[2];
        if (pipe2(p, O_CLOEXEC) < 0)
                return -errno;
        int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
        const int fds[3] = { null, p[1], p[1] };
        msp_err err = { 0 };
        int conn = spawn_client_start(sock_path, argv, env, cwd, fds, &err);
        close(null);
        close(p[1]);
        if (conn < 0) {
                tap_diag("spawn_client_start: %s", err.msg);
                close(p[0]);
                return conn;
        }
        struct spawn_event ev;
        *o = (struct outcome){ .pid = -1, .kind = -1 };
        if (next_event(conn, &ev) == 1 && ev.kind == SPAWN_STARTED)
                o->pid = ev.value;
        read_all(p[0], o->out, sizeof o->out);
        close(p[0]);
        if (next_event(conn, &ev) == 1) {
                o->kind = (int) ev.kind;
                o->value = ev.value;
        }
        close(conn);
        return 0;
}

static int
alive(pid_t pid)
{
        return waitpid(pid, NULL, WNOHANG) == 0;
}

TEST(echo_hi_through_pipes)
{
        struct outcome o;
        ASSERT_OK(run((const char *const[]){ "/bin/sh", "-c", "echo hi", NULL }, "/", &o));
        ASSERT_TRUE(o.pid > 0);
        ASSERT_STREQ(o.out, "hi\n");
        ASSERT_EQ_INT(o.kind, SPAWN_EXITED);
        ASSERT_EQ_INT(o.value, 0);
}

TEST(exit_code_and_signal_death)
{
        struct outcome o;
        ASSERT_OK(run((const char *const[]){ "/bin/sh", "-c", "exit 3", NULL }, "/", &o));
        ASSERT_EQ_INT(o.kind, SPAWN_EXITED);
        ASSERT_EQ_INT(o.value, 3);
        ASSERT_OK(run((const char *const[]){ "/bin/sh", "-c", "kill -TERM $$", NULL }, "/", &o));
        ASSERT_EQ_INT(o.kind, SPAWN_SIGNALED);
        ASSERT_EQ_INT(o.value, SIGTERM);
}

TEST(env_cwd_path_and_exec_failure)
{
        struct outcome o;
        /* "sh" is found in the request's PATH; cwd and env are the request's. */
        ASSERT_OK(run((const char *const[]){ "sh", "-c", "echo $FOO; pwd", NULL }, "/tmp", &o));
        ASSERT_STREQ(o.out, "bar\n/tmp\n");
        ASSERT_EQ_INT(o.value, 0);
        ASSERT_OK(run((const char *const[]){ "/nonexistent/program", NULL }, "/", &o));
        ASSERT_EQ_INT(o.kind, SPAWN_EXITED);
        ASSERT_EQ_INT(o.value, 127);
        ASSERT_TRUE(strstr(o.out, "exec /nonexistent/program") != NULL);
        ASSERT_OK(run((const char *const[]){ "/bin/true", NULL }, "/nonexistent-dir", &o));
        ASSERT_EQ_INT(o.value, 126);
        /* Only fds 0, 1, 2: nothing of the init's (its listener is fd 3 there, and it
         * inherited fd 7 open across exec). */
        ASSERT_OK(run((const char *const[]){ "/bin/sh", "-c", "ls /proc/self/fd", NULL }, "/", &o));
        ASSERT_STREQ(o.out, "0\n1\n2\n3\n");    /* 3: ls's own directory fd */
}

TEST(many_in_a_row)
{
        for (int i = 0; i < 200; i++) {
                struct outcome o;
                ASSERT_OK(run((const char *const[]){ "/bin/true", NULL }, "/", &o));
                ASSERT_EQ_INT(o.kind, SPAWN_EXITED);
                ASSERT_EQ_INT(o.value, 0);
        }
        ASSERT_TRUE(alive(service));
}

TEST(two_at_once)
{
        /* A waits for a line on its stdin while B runs to its end: the service is not
         * busy with A meanwhile. */
        int in[2], out_a[2], out_b[2];
        ASSERT_OK(pipe2(in, O_CLOEXEC));
        ASSERT_OK(pipe2(out_a, O_CLOEXEC));
        ASSERT_OK(pipe2(out_b, O_CLOEXEC));
        msp_err err = { 0 };
        int a = spawn_client_start(sock_path, (const char *const[]){ "/bin/sh", "-c", "read x; echo got$x", NULL },
                                   env, "/", (const int[]){ in[0], out_a[1], out_a[1] }, &err);
        ASSERT_OK_ERR(a, err);
        int b = spawn_client_start(sock_path, (const char *const[]){ "/bin/sh", "-c", "echo b", NULL },
                                   env, "/", (const int[]){ in[0], out_b[1], out_b[1] }, &err);
        ASSERT_OK_ERR(b, err);
        close(in[0]);
        close(out_a[1]);
        close(out_b[1]);
        struct spawn_event ev;
        ASSERT_EQ_INT(next_event(b, &ev), 1);
        ASSERT_EQ_INT(ev.kind, SPAWN_STARTED);
        char buf[64];
        read_all(out_b[0], buf, sizeof buf);
        ASSERT_STREQ(buf, "b\n");
        ASSERT_EQ_INT(next_event(b, &ev), 1);
        ASSERT_EQ_INT(ev.kind, SPAWN_EXITED);
        ASSERT_EQ_INT(next_event(a, &ev), 1);
        ASSERT_EQ_INT(ev.kind, SPAWN_STARTED);
        ASSERT_EQ_INT(write(in[1], "1\n", 2), 2);
        close(in[1]);
        read_all(out_a[0], buf, sizeof buf);
        ASSERT_STREQ(buf, "got1\n");
        ASSERT_EQ_INT(next_event(a, &ev), 1);
        ASSERT_EQ_INT(ev.kind, SPAWN_EXITED);
        ASSERT_EQ_INT(ev.value, 0);
        close(a);
        close(b);
        close(out_a[0]);
        close(out_b[0]);
}

TEST(signal_through_the_connection)
{
        int null = open("/dev/null", O_RDWR | O_CLOEXEC);
        msp_err err = { 0 };
        int c = spawn_client_start(sock_path, (const char *const[]){ "/bin/sleep", "100", NULL }, env,
                                   "/", (const int[]){ null, null, null }, &err);
        close(null);
        ASSERT_OK_ERR(c, err);
        struct spawn_event ev;
        ASSERT_EQ_INT(next_event(c, &ev), 1);
        ASSERT_EQ_INT(ev.kind, SPAWN_STARTED);
        ASSERT_OK_ERR(spawn_client_signal(c, SIGTERM, &err), err);
        ASSERT_EQ_INT(next_event(c, &ev), 1);
        ASSERT_EQ_INT(ev.kind, SPAWN_SIGNALED);
        ASSERT_EQ_INT(ev.value, SIGTERM);
        close(c);
}

/* True when pid is gone within 5 s (the init reaps it: this test is not its parent). */
static int
gone(pid_t pid)
{
        for (int i = 0; i < 500; i++) {
                if (kill(pid, 0) < 0 && errno == ESRCH)
                        return 1;
                usleep(10000);
        }
        return 0;
}

/* Reads lines from fd until n of them came; their numbers into pids. */
static int
read_pids(int fd, pid_t *pids, int n)
{
        char buf[128];
        size_t len = 0;
        int got = 0;
        alarm(20);
        while (got < n && len < sizeof buf - 1) {
                ssize_t k = read(fd, buf + len, sizeof buf - 1 - len);
                if (k <= 0)
                        break;
                for (ssize_t i = 0; i < k; i++)
                        got += buf[len + (size_t) i] == '\n';
                len += (size_t) k;
        }
        alarm(0);
        buf[len] = '\0';
        char *s = buf;
        for (int i = 0; i < n; i++)
                pids[i] = (pid_t) strtol(s, &s, 10);
        return got;
}

TEST(client_leaving_kills_the_group)
{
        /* The program ignores SIGTERM and double-forks: the subshell starts a sleep that
         * ignores it too and exits, so the sleep is an orphan, still in the group. */
        int p[2];
        ASSERT_OK(pipe2(p, O_CLOEXEC));
        int null = open("/dev/null", O_RDWR | O_CLOEXEC);
        msp_err err = { 0 };
        const char *script = "trap '' TERM; ( trap '' TERM; sleep 1000 </dev/null >/dev/null 2>&1 & "
                             "echo $! ); echo $$; exec sleep 1000 >/dev/null";
        int c = spawn_client_start(sock_path, (const char *const[]){ "/bin/sh", "-c", script, NULL },
                                   env, "/", (const int[]){ null, p[1], null }, &err);
        close(null);
        close(p[1]);
        ASSERT_OK_ERR(c, err);
        struct spawn_event ev;
        ASSERT_EQ_INT(next_event(c, &ev), 1);
        ASSERT_EQ_INT(ev.kind, SPAWN_STARTED);
        pid_t pids[2];
        ASSERT_EQ_INT(read_pids(p[0], pids, 2), 2);
        close(p[0]);
        ASSERT_EQ_INT(pids[1], ev.value);       /* $$ is the pid the service answered */
        ASSERT_EQ_INT(getpgid(pids[0]), ev.value);
        ASSERT_OK(kill(pids[0], 0));
        ASSERT_OK(kill(pids[1], 0));
        close(c);
        ASSERT_TRUE(gone(pids[0]));
        ASSERT_TRUE(gone(pids[1]));
        ASSERT_TRUE(kill(-ev.value, 0) < 0 && errno == ESRCH);
        ASSERT_TRUE(alive(service));
}

/* A raw connection to the service. */
static int
raw_connect(void)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        snprintf(sa.sun_path, sizeof sa.sun_path, "%s", sock_path);
        int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
        if (fd >= 0 && connect(fd, (struct sockaddr *) &sa, sizeof sa) < 0) {
                close(fd);
                return -1;
        }
        return fd;
}

/* Sends buf with nfds copies of /dev/null and expects the service to close the
 * connection with no answer. */
static int
refused(const void *buf, size_t len, size_t nfds)
{
        int fd = raw_connect();
        if (fd < 0)
                return 0;
        int null = open("/dev/null", O_RDWR | O_CLOEXEC);
        int fds[3] = { null, null, null };
        int ok = 0;
        if (nfds <= 3) {
                ok = spawn_send(fd, buf, len, fds, nfds) == 0;
        } else {
                /* More than spawn_send takes: a hand-made cmsg with nfds fds. */
                int many[8] = { null, null, null, null, null, null, null, null };
                struct iovec iov = { .iov_base = (void *) buf, .iov_len = len };
                char ctl[CMSG_SPACE(sizeof many)] = { 0 };
                struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl,
                                    .msg_controllen = CMSG_SPACE(nfds * sizeof(int)) };
                struct cmsghdr *c = CMSG_FIRSTHDR(&m);
                c->cmsg_level = SOL_SOCKET;
                c->cmsg_type = SCM_RIGHTS;
                c->cmsg_len = CMSG_LEN(nfds * sizeof(int));
                memcpy(CMSG_DATA(c), many, nfds * sizeof(int));
                ok = sendmsg(fd, &m, MSG_NOSIGNAL) == (ssize_t) len;
        }
        close(null);
        struct pollfd p = { .fd = fd, .events = POLLIN };
        char byte[16];
        ok = ok && poll(&p, 1, 5000) == 1 && recv(fd, byte, sizeof byte, MSG_DONTWAIT) == 0;
        close(fd);
        return ok;
}

static char big[SPAWN_MSG_MAX + 4096];

TEST(malformed_requests_close_only_their_connection)
{
        const char *const argv[] = { "/bin/true", NULL };
        ssize_t n = spawn_request_encode(big, sizeof big, argv, env, "/");
        ASSERT_TRUE(n > 0);
        struct spawn_request_head h;
        memcpy(&h, big, sizeof h);
        ASSERT_TRUE(refused(big, (size_t) n, 0));               /* no fds */
        ASSERT_TRUE(refused(big, (size_t) n, 2));               /* two */
        ASSERT_TRUE(refused(big, (size_t) n, 5));               /* five */
        ASSERT_TRUE(refused(big, 6, 3));                        /* truncated header */
        ASSERT_TRUE(refused(big, (size_t) n - 1, 3));           /* truncated strings */
        struct spawn_request_head bad = h;
        bad.strings_len += 1;                                   /* a length that lies */
        memcpy(big, &bad, sizeof bad);
        ASSERT_TRUE(refused(big, (size_t) n, 3));
        bad = h;
        bad.argc = 5;                                           /* more strings than sent */
        memcpy(big, &bad, sizeof bad);
        ASSERT_TRUE(refused(big, (size_t) n, 3));
        bad = h;
        bad.argc = 0;                                           /* no program */
        bad.envc = (uint16_t) (h.envc + 1);
        memcpy(big, &bad, sizeof bad);
        ASSERT_TRUE(refused(big, (size_t) n, 3));
        bad = h;
        bad.argc = SPAWN_ARGC_MAX + 1;
        memcpy(big, &bad, sizeof bad);
        ASSERT_TRUE(refused(big, (size_t) n, 3));
        bad = h;
        bad.magic ^= 1;
        memcpy(big, &bad, sizeof bad);
        ASSERT_TRUE(refused(big, (size_t) n, 3));
        memcpy(big, &h, sizeof h);
        big[n - 1] = 'x';                                       /* last string unterminated */
        ASSERT_TRUE(refused(big, (size_t) n, 3));
        big[n - 1] = '\0';
        /* Oversized: argv[0] filled to beyond the bound, length fields consistent. */
        memset(big + sizeof h, 'a', sizeof big - sizeof h);
        big[sizeof h] = '/';
        big[sizeof big - 2] = '\0';
        big[sizeof big - 1] = '\0';
        bad = h;
        bad.argc = 1;
        bad.envc = 0;
        bad.strings_len = (uint32_t) (sizeof big - sizeof h);
        memcpy(big, &bad, sizeof bad);
        ASSERT_TRUE(refused(big, sizeof big, 3));
        /* A signal before any program, and an answer's kind from the client. */
        struct spawn_msg m = spawn_msg_make(SPAWN_SIGNAL, SIGTERM);
        ASSERT_TRUE(refused(&m, sizeof m, 0));
        m = spawn_msg_make(SPAWN_EXITED, 0);
        ASSERT_TRUE(refused(&m, sizeof m, 0));
        /* A connection that says nothing and leaves. */
        int fd = raw_connect();
        ASSERT_TRUE(fd >= 0);
        close(fd);
        /* And the service still serves. */
        ASSERT_TRUE(alive(service));
        struct outcome o;
        ASSERT_OK(run((const char *const[]){ "/bin/sh", "-c", "echo hi", NULL }, "/", &o));
        ASSERT_STREQ(o.out, "hi\n");
        ASSERT_EQ_INT(o.value, 0);
}

/* A TCP port of 127.0.0.1 that nothing listens on (bound a moment, never listened). */
static int
unused_port(void)
{
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t len = sizeof sa;
        int port = -1;
        if (fd >= 0 && bind(fd, (struct sockaddr *) &sa, sizeof sa) == 0 &&
            getsockname(fd, (struct sockaddr *) &sa, &len) == 0)
                port = ntohs(sa.sin_port);
        close(fd);
        return port;
}

TEST(connect_to_a_listener_of_a_program)
{
        /* The program listens on an ephemeral port, says which, and answers one line in
         * upper case. */
        const char *server = "import socket,sys\n"
                             "s=socket.socket(); s.bind(('127.0.0.1',0)); s.listen(1)\n"
                             "print(s.getsockname()[1], flush=True)\n"
                             "c,_=s.accept(); d=c.recv(100); c.sendall(d.upper()); c.close()\n";
        int p[2];
        ASSERT_OK(pipe2(p, O_CLOEXEC));
        int null = open("/dev/null", O_RDWR | O_CLOEXEC);
        msp_err err = { 0 };
        int prog = spawn_client_start(sock_path, (const char *const[]){ "python3", "-c", server, NULL },
                                      env, "/", (const int[]){ null, p[1], null }, &err);
        close(null);
        close(p[1]);
        ASSERT_OK_ERR(prog, err);
        pid_t port;
        ASSERT_EQ_INT(read_pids(p[0], &port, 1), 1);
        close(p[0]);
        ASSERT_TRUE(port > 0 && port < 65536);
        int sock = -1;
        ASSERT_OK_ERR(spawn_client_connect_port(sock_path, (uint16_t) port, &sock, &err), err);
        ASSERT_TRUE(fcntl(sock, F_GETFD) & FD_CLOEXEC);
        ASSERT_TRUE(fcntl(sock, F_GETFL) & O_NONBLOCK);
        struct pollfd pf = { .fd = sock, .events = POLLOUT };
        ASSERT_EQ_INT(poll(&pf, 1, 5000), 1);
        int so = -1;
        socklen_t solen = sizeof so;
        ASSERT_OK(getsockopt(sock, SOL_SOCKET, SO_ERROR, &so, &solen));
        ASSERT_EQ_INT(so, 0);
        ASSERT_EQ_INT(write(sock, "ping", 4), 4);
        pf = (struct pollfd){ .fd = sock, .events = POLLIN };
        ASSERT_EQ_INT(poll(&pf, 1, 5000), 1);
        char buf[16] = { 0 };
        ASSERT_EQ_INT(read(sock, buf, sizeof buf - 1), 4);
        ASSERT_STREQ(buf, "PING");
        close(sock);
        struct spawn_event ev;
        ASSERT_EQ_INT(next_event(prog, &ev), 1);
        ASSERT_EQ_INT(ev.kind, SPAWN_STARTED);
        ASSERT_EQ_INT(next_event(prog, &ev), 1);
        ASSERT_EQ_INT(ev.kind, SPAWN_EXITED);
        ASSERT_EQ_INT(ev.value, 0);
        close(prog);
}

TEST(connect_refused_and_bad_ports)
{
        int port = unused_port();
        ASSERT_TRUE(port > 0);
        msp_err err = { 0 };
        int sock = -1;
        ASSERT_EQ_INT(spawn_client_connect_port(sock_path, (uint16_t) port, &sock, &err),
                      -ECONNREFUSED);
        ASSERT_EQ_INT(sock, -1);
        ASSERT_EQ_INT(spawn_client_connect_port(sock_path, 0, &sock, &err), -EINVAL);
        /* Out of range on the wire: that connection is closed unanswered. */
        struct spawn_msg m = spawn_msg_make(SPAWN_CONNECT, 0);
        ASSERT_TRUE(refused(&m, sizeof m, 0));
        m = spawn_msg_make(SPAWN_CONNECT, 65536);
        ASSERT_TRUE(refused(&m, sizeof m, 0));
        m = spawn_msg_make(SPAWN_CONNECT, -80);
        ASSERT_TRUE(refused(&m, sizeof m, 0));
        m = spawn_msg_make(SPAWN_CONNECT, port);
        ASSERT_TRUE(refused(&m, sizeof m, 1));          /* a CONNECT carries no fd */
        m = spawn_msg_make(SPAWN_CONNECTED, port);
        ASSERT_TRUE(refused(&m, sizeof m, 0));          /* an answer's kind from the client */
        ASSERT_TRUE(alive(service));
        struct outcome o;
        ASSERT_OK(run((const char *const[]){ "/bin/sh", "-c", "echo hi", NULL }, "/", &o));
        ASSERT_STREQ(o.out, "hi\n");
}

TEST(client_encoder_bounds)
{
        msp_err err = { 0 };
        const char *many[SPAWN_ARGC_MAX + 2];
        for (int i = 0; i < SPAWN_ARGC_MAX + 1; i++)
                many[i] = "x";
        many[SPAWN_ARGC_MAX + 1] = NULL;
        const int fds[3] = { 0, 1, 2 };
        ASSERT_EQ_INT(spawn_client_start(sock_path, many, env, "/", fds, &err), -E2BIG);
        ASSERT_EQ_INT(spawn_client_start(sock_path, (const char *const[]){ "/bin/true", NULL }, env,
                                         "relative", fds, &err), -EINVAL);
}

/* Starts a sleep on a second service and leaves its connection open; its pid. */
static pid_t
start_sleeper(int *conn)
{
        int null = open("/dev/null", O_RDWR | O_CLOEXEC);
        msp_err err = { 0 };
        *conn = spawn_client_start(sock_path, (const char *const[]){ "/bin/sleep", "1000", NULL }, env,
                                   "/", (const int[]){ null, null, null }, &err);
        close(null);
        struct spawn_event ev;
        if (*conn < 0 || next_event(*conn, &ev) != 1 || ev.kind != SPAWN_STARTED)
                return -1;
        return ev.value;
}

static int
exit_status_of(pid_t pid)
{
        int st = -1;
        alarm(20);
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
                ;
        alarm(0);
        return st;
}

TEST(shutdown_kills_everything)
{
        int conn;
        pid_t sleeper = start_sleeper(&conn);
        ASSERT_TRUE(sleeper > 0);
        msp_err err = { 0 };
        ASSERT_OK_ERR(spawn_client_shutdown(sock_path, &err), err);
        int st = exit_status_of(service);
        service = -1;
        ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
        ASSERT_TRUE(gone(sleeper));
        struct spawn_event ev;
        ASSERT_TRUE(next_event(conn, &ev) < 0);         /* closed without a status */
        close(conn);
}

TEST(listener_shut_down_stops_it)
{
        int lfd;
        pid_t pid = start_service(sock_path, &lfd);
        ASSERT_TRUE(pid > 0);
        int conn;
        pid_t sleeper = start_sleeper(&conn);
        ASSERT_TRUE(sleeper > 0);
        /* msp-mcp keeps its copy of the listener: shutting it down hangs it up for the
         * init's copy too. */
        ASSERT_OK(shutdown(lfd, SHUT_RDWR));
        close(lfd);
        int st = exit_status_of(pid);
        ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
        ASSERT_TRUE(gone(sleeper));
        close(conn);
}

TEST(bad_serve_fd)
{
        pid_t pid;
        extern char **environ;
        const char *argv[] = { init_path, "--serve", "0", NULL };
        ASSERT_EQ_INT(posix_spawn(&pid, init_path, NULL, NULL, (char *const *) argv, environ), 0);
        int st = exit_status_of(pid);
        ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 125);
        /* fd 3 open but not a seqpacket listener. */
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_addopen(&fa, 3, "/dev/null", O_RDONLY, 0);
        const char *argv3[] = { init_path, "--serve", "3", NULL };
        ASSERT_EQ_INT(posix_spawn(&pid, init_path, &fa, NULL, (char *const *) argv3, environ), 0);
        posix_spawn_file_actions_destroy(&fa);
        st = exit_status_of(pid);
        ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 125);
}

int
main(void)
{
        init_path = getenv("MSP_SANDBOX_INIT");
        if (!init_path) {
                tap_skip("spawn-serve", "set MSP_SANDBOX_INIT (meson test does)");
                return tap_done();
        }
        char dir[] = "/tmp/msp-spawn-test.XXXXXX";
        if (!mkdtemp(dir)) {
                tap_check(false, "mkdtemp: %s", strerror(errno));
                return tap_done();
        }
        snprintf(sock_path, sizeof sock_path, "%s/spawn.sock", dir);
        service = start_service(sock_path, NULL);
        if (service < 0) {
                tap_check(false, "start %s --serve", init_path);
                return tap_done();
        }
        RUN(echo_hi_through_pipes);
        RUN(exit_code_and_signal_death);
        RUN(env_cwd_path_and_exec_failure);
        RUN(many_in_a_row);
        RUN(two_at_once);
        RUN(signal_through_the_connection);
        RUN(client_leaving_kills_the_group);
        RUN(malformed_requests_close_only_their_connection);
        RUN(connect_to_a_listener_of_a_program);
        RUN(connect_refused_and_bad_ports);
        RUN(client_encoder_bounds);
        RUN(shutdown_kills_everything);
        RUN(listener_shut_down_stops_it);
        RUN(bad_serve_fd);
        if (service > 0) {
                kill(service, SIGTERM);
                exit_status_of(service);
        }
        unlink(sock_path);
        rmdir(dir);
        return tap_done();
}
