/* ports/: the relay, the port gateway and the loopback listener of an exposed port, on a
 * real loop, with no container: the listener's connect function connects to an upstream
 * test server this test forks (it stands for a server in a sandbox), and each client is a
 * forked child that talks HTTP to the listener and writes what it saw into a pipe while the
 * test runs the loop. Covered: a GET with the token (the path arrives stripped, the query
 * kept, `Connection: close` forced), requests without it or with a wrong one (404, nothing
 * connected), a head that is not HTTP (400), a refused port (502), a WebSocket-style
 * upgrade then raw bytes both ways with a half-close, 1 MiB up and 1 MiB down, clients that
 * hang up mid-way, a head handed over by another server (pre), an upgrade that server has
 * answered itself (the port's 101 dropped, or its refusal a close), the relay's idle timeout;
 * after each, every connection is closed and no fd is left (/proc/self/fd). Every wait is
 * bounded (a deadline on the loop, alarm in the children). */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <dirent.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/lib/tap.h"
#include "ports/ports.h"

#define MIB (1024 * 1024)

static mcp_loop *loop;
static mcp_port_listener *listener;
static uint16_t upstream_port;
static pid_t upstream_pid = -1;
static int connects;                    /* calls of test_connect */
static char connect_session[128];
static unsigned connect_port_seen;
static int refuse_connects;             /* test_connect answers -ECONNREFUSED */

static int
count_fds(void)
{
        DIR *d = opendir("/proc/self/fd");
        int n = 0;
        if (!d)
                return -1;
        while (readdir(d))
                n++;
        closedir(d);
        return n;
}

/* ---- the upstream server (a forked child; each connection in a child of its own) ---- */

static size_t
read_head(int fd, char *buf, size_t cap)
{
        size_t len = 0;
        while (len < cap - 1) {
                ssize_t n = read(fd, buf + len, cap - 1 - len);
                if (n <= 0)
                        break;
                len += (size_t) n;
                buf[len] = '\0';
                if (strstr(buf, "\r\n\r\n"))
                        break;
        }
        buf[len] = '\0';
        return len;
}

static int
write_all(int fd, const void *buf, size_t n)
{
        const char *p = buf;
        while (n > 0) {
                ssize_t k = write(fd, p, n);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        return -1;
                p += k;
                n -= (size_t) k;
        }
        return 0;
}

static void
respond(int fd, const char *body, size_t len)
{
        char head[256];
        int n = snprintf(head, sizeof head, "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\n"
                         "Connection: close\r\n\r\n", len);
        (void) write_all(fd, head, (size_t) n);
        (void) write_all(fd, body, len);
}

static _Noreturn void
serve_one(int fd)
{
        static char buf[64 * 1024];
        static char chunk[64 * 1024];
        alarm(30);
        size_t len = read_head(fd, buf, sizeof buf);
        char *end = strstr(buf, "\r\n\r\n");
        if (!end)
                _exit(1);
        size_t head_len = (size_t) (end + 4 - buf);
        char path[512] = "";
        (void) sscanf(buf, "%*s %511s", path);
        /* An upgrade is taken (101, then an echo), but on /plain. */
        if (strcasestr(buf, "\r\nUpgrade:") && strcmp(path, "/plain") != 0) {
                const char *ok = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: test\r\n"
                                 "Connection: Upgrade\r\n\r\n";
                (void) write_all(fd, ok, strlen(ok));
                /* Echo until the client's end of file, then close: a half-close. */
                if (len > head_len)
                        (void) write_all(fd, buf + head_len, len - head_len);
                for (;;) {
                        ssize_t n = read(fd, chunk, sizeof chunk);
                        if (n <= 0 || write_all(fd, chunk, (size_t) n) < 0)
                                break;
                }
                _exit(0);
        }
        if (strncmp(path, "/upload", 7) == 0) {
                const char *cl = strcasestr(buf, "\r\nContent-Length:");
                size_t want = cl ? strtoul(cl + 17, NULL, 10) : 0, got = len - head_len;
                uint32_t sum = 0;
                for (size_t i = head_len; i < len; i++)
                        sum += (unsigned char) buf[i];
                while (got < want) {
                        ssize_t n = read(fd, chunk, sizeof chunk);
                        if (n <= 0)
                                _exit(2);       /* the client left mid-way */
                        for (ssize_t i = 0; i < n; i++)
                                sum += (unsigned char) chunk[i];
                        got += (size_t) n;
                }
                char out[64];
                int n = snprintf(out, sizeof out, "count=%zu sum=%u", got, sum);
                respond(fd, out, (size_t) n);
                _exit(0);
        }
        if (strncmp(path, "/download?n=", 12) == 0) {
                size_t n = strtoul(path + 12, NULL, 10);
                char head[128];
                int hn = snprintf(head, sizeof head, "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\n\r\n", n);
                (void) write_all(fd, head, (size_t) hn);
                for (size_t at = 0; at < n;) {
                        size_t k = n - at < sizeof chunk ? n - at : sizeof chunk;
                        for (size_t i = 0; i < k; i++)
                                chunk[i] = (char) ((at + i) * 7);
                        if (write_all(fd, chunk, k) < 0)
                                _exit(2);
                        at += k;
                }
                _exit(0);
        }
        if (strcmp(path, "/hang") == 0) {
                while (read(fd, chunk, sizeof chunk) > 0)
                        ;
                _exit(0);
        }
        respond(fd, buf, head_len);     /* anything else: the head as it arrived */
        _exit(0);
}

static pid_t
start_upstream(void)
{
        int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t len = sizeof sa;
        if (lfd < 0 || bind(lfd, (struct sockaddr *) &sa, sizeof sa) < 0 || listen(lfd, 64) < 0 ||
            getsockname(lfd, (struct sockaddr *) &sa, &len) < 0)
                return -1;
        upstream_port = ntohs(sa.sin_port);
        pid_t pid = fork();
        if (pid == 0) {
                signal(SIGCHLD, SIG_IGN);       /* the connections' children reap themselves */
                for (;;) {
                        int c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
                        if (c < 0)
                                continue;
                        if (fork() == 0) {
                                close(lfd);
                                serve_one(c);
                        }
                        close(c);
                }
        }
        close(lfd);
        return pid;
}

/* The listener's connect: to the upstream server, non-blocking as the sandbox's is. */
static int
test_connect(void *data, const char *session_id, uint16_t port, int *ret_fd, msp_err *err)
{
        (void) data;
        connects++;
        snprintf(connect_session, sizeof connect_session, "%s", session_id);
        connect_port_seen = port;
        if (refuse_connects)
                return msp_err_set(err, ECONNREFUSED, "refused");
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(upstream_port),
                                  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        if (fd < 0)
                return -errno;
        if (connect(fd, (struct sockaddr *) &sa, sizeof sa) < 0 && errno != EINPROGRESS) {
                int e = errno;
                close(fd);
                return -e;
        }
        *ret_fd = fd;
        return 0;
}

/* ---- clients: forked children that report through a pipe ---- */

static int report_fd = -1;

static void
say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void
say(const char *fmt, ...)
{
        char buf[4096];
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(buf, sizeof buf, fmt, ap);
        va_end(ap);
        if (n > 0)
                (void) write_all(report_fd, buf, (size_t) n < sizeof buf ? (size_t) n : sizeof buf - 1);
}

static int
dial(void)
{
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in sa = { .sin_family = AF_INET,
                                  .sin_port = htons(mcp_port_listener_port(listener)),
                                  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        if (fd < 0 || connect(fd, (struct sockaddr *) &sa, sizeof sa) < 0)
                _exit(3);
        return fd;
}

/* Sends out[0..out_len) while reading into in (up to cap) until the peer's end of file;
 * shuts down writing after sending when shut. The bytes read. */
static size_t
exchange(int fd, const char *out, size_t out_len, char *in, size_t cap, int shut)
{
        size_t sent = 0, got = 0;
        int shut_done = 0;
        for (;;) {
                if (sent == out_len && shut && !shut_done) {
                        (void) shutdown(fd, SHUT_WR);
                        shut_done = 1;
                }
                struct pollfd p = { .fd = fd, .events = POLLIN | (sent < out_len ? POLLOUT : 0) };
                if (poll(&p, 1, 20000) <= 0)
                        _exit(4);
                if ((p.revents & POLLOUT) && sent < out_len) {
                        ssize_t k = send(fd, out + sent, out_len - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
                        if (k > 0)
                                sent += (size_t) k;
                }
                if (p.revents & (POLLIN | POLLHUP | POLLERR)) {
                        ssize_t k = recv(fd, in + got, cap - got, MSG_DONTWAIT);
                        if (k == 0 || (k < 0 && errno != EAGAIN))
                                break;
                        if (k > 0)
                                got += (size_t) k;
                        if (got == cap)
                                break;
                }
        }
        return got;
}

static char token_path[128];            /* "/<token>" */

static void
client_get(const char *path, const char *extra)
{
        int fd = dial();
        char req[1024], resp[8192];
        int n = snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n"
                         "Keep-Alive: timeout=5\r\n%s\r\n", path, extra);
        size_t got = exchange(fd, req, (size_t) n, resp, sizeof resp - 1, 0);
        resp[got] = '\0';
        say("%s", resp);
}

/* Runs fn in a child and the loop until the child is done and every connection of the
 * listener closed (20 s at most). What the child said, NUL-terminated, in out. */
static char out[64 * 1024];
static size_t out_len;
static int out_eof;

static int
on_report(mcp_loop *l, int fd, uint32_t events, void *data)
{
        (void) l;
        (void) events;
        (void) data;
        ssize_t n = read(fd, out + out_len, sizeof out - 1 - out_len);
        if (n > 0)
                out_len += (size_t) n;
        else if (n == 0 || errno != EAGAIN)
                out_eof = 1;
        if (out_eof)
                mcp_loop_del_io(l, fd);
        return 0;
}

static uint64_t deadline;
static int close_after_fork = -1;
static unsigned (*pending_fn)(void);

static unsigned
listener_pending(void)
{
        return mcp_port_listener_connections(listener);
}

static int
on_tick(mcp_loop *l, void *data)
{
        (void) data;
        if (out_eof && pending_fn() == 0)
                mcp_loop_exit(l, 0);
        else if (mcp_now_usec() > deadline)
                mcp_loop_exit(l, -ETIMEDOUT);
        else
                (void) mcp_loop_add_timer(l, 5000, on_tick, NULL, NULL);
        return 0;
}

static int
run_client_with(void (*fn)(const void *), const void *arg, unsigned (*pending)(void))
{
        int p[2];
        if (pipe2(p, O_CLOEXEC | O_NONBLOCK) < 0)
                return -errno;
        pid_t pid = fork();
        if (pid == 0) {
                close(p[0]);
                int fl = fcntl(p[1], F_GETFL);
                (void) fcntl(p[1], F_SETFL, fl & ~O_NONBLOCK);
                report_fd = p[1];
                alarm(30);
                fn(arg);
                _exit(0);
        }
        close(p[1]);
        if (close_after_fork >= 0)
                close(close_after_fork);        /* the child's alone now */
        close_after_fork = -1;
        out_len = 0;
        out_eof = 0;
        pending_fn = pending;
        deadline = mcp_now_usec() + 20000000;
        (void) mcp_loop_add_io(loop, p[0], EPOLLIN, on_report, NULL);
        (void) mcp_loop_add_timer(loop, 5000, on_tick, NULL, NULL);
        int r = mcp_loop_run(loop);
        mcp_loop_del_io(loop, p[0]);
        close(p[0]);
        out[out_len] = '\0';
        int st = 0;
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
                ;
        if (r == 0 && !(WIFEXITED(st) && WEXITSTATUS(st) == 0))
                r = -ECHILD;
        if (r < 0)
                tap_diag("client: loop %d, status %d, said: %.300s", r, st, out);
        return r;
}

static int
run_client(void (*fn)(const void *), const void *arg)
{
        return run_client_with(fn, arg, listener_pending);
}

static int fds_at_start;

static void
get_path(const void *arg)
{
        client_get(arg, "");
}

TEST(get_with_the_token_arrives_stripped)
{
        char path[256];
        snprintf(path, sizeof path, "%s/echo/a?b=1", token_path);
        connects = 0;
        ASSERT_OK(run_client(get_path, path));
        ASSERT_TRUE(strncmp(out, "HTTP/1.1 200 OK\r\n", 17) == 0);
        ASSERT_TRUE(strstr(out, "\r\n\r\nGET /echo/a?b=1 HTTP/1.1\r\n") != NULL);
        ASSERT_TRUE(strstr(out, "\r\nHost: x\r\n") != NULL);
        ASSERT_TRUE(strstr(out, "\r\nConnection: close\r\n\r\n") != NULL);
        ASSERT_TRUE(strcasestr(out, "keep-alive") == NULL);
        ASSERT_EQ_INT(connects, 1);
        ASSERT_STREQ(connect_session, "s-test");
        ASSERT_EQ_INT((int) connect_port_seen, 8080);
        /* The token alone, and with a query only: the path becomes "/". */
        ASSERT_OK(run_client(get_path, token_path));
        ASSERT_TRUE(strstr(out, "\r\n\r\nGET / HTTP/1.1\r\n") != NULL);
        snprintf(path, sizeof path, "%s?q=1", token_path);
        ASSERT_OK(run_client(get_path, path));
        ASSERT_TRUE(strstr(out, "\r\n\r\nGET /?q=1 HTTP/1.1\r\n") != NULL);
        ASSERT_EQ_INT(count_fds(), fds_at_start);
}

TEST(without_the_token_refused)
{
        connects = 0;
        ASSERT_OK(run_client(get_path, "/echo"));
        ASSERT_TRUE(strncmp(out, "HTTP/1.1 404 Not Found\r\n", 24) == 0);
        ASSERT_TRUE(strstr(out, "Content-Type: text/plain") != NULL);
        char wrong[256];
        snprintf(wrong, sizeof wrong, "%s/x", token_path);
        wrong[5] = wrong[5] == 'a' ? 'b' : 'a';         /* one hex digit off */
        ASSERT_OK(run_client(get_path, wrong));
        ASSERT_TRUE(strncmp(out, "HTTP/1.1 404 ", 13) == 0);
        snprintf(wrong, sizeof wrong, "%sx/", token_path);      /* a longer first segment */
        ASSERT_OK(run_client(get_path, wrong));
        ASSERT_TRUE(strncmp(out, "HTTP/1.1 404 ", 13) == 0);
        ASSERT_OK(run_client(get_path, "/"));
        ASSERT_TRUE(strncmp(out, "HTTP/1.1 404 ", 13) == 0);
        ASSERT_EQ_INT(connects, 0);
        ASSERT_EQ_INT(count_fds(), fds_at_start);
}

static void
send_raw(const void *arg)
{
        int fd = dial();
        char resp[4096];
        size_t got = exchange(fd, arg, strlen(arg), resp, sizeof resp - 1, 0);
        resp[got] = '\0';
        say("%s", resp);
}

TEST(not_http_and_refused_port)
{
        ASSERT_OK(run_client(send_raw, "HELLO THERE\r\n\r\n"));
        ASSERT_TRUE(strncmp(out, "HTTP/1.1 400 ", 13) == 0);
        ASSERT_OK(run_client(send_raw, "GET /x HTTP/1.1\r\n folded: no\r\n\r\n"));
        ASSERT_TRUE(strncmp(out, "HTTP/1.1 400 ", 13) == 0);
        refuse_connects = 1;
        ASSERT_OK(run_client(get_path, token_path));
        refuse_connects = 0;
        ASSERT_TRUE(strncmp(out, "HTTP/1.1 502 Bad Gateway\r\n", 26) == 0);
        ASSERT_TRUE(strstr(out, "port 8080: nothing listens on it") != NULL);
        ASSERT_EQ_INT(count_fds(), fds_at_start);
}

static void
websocket(const void *arg)
{
        (void) arg;
        int fd = dial();
        char req[512];
        int n = snprintf(req, sizeof req, "GET %s/ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n"
                         "Connection: Upgrade\r\n\r\n", token_path);
        if (write_all(fd, req, (size_t) n) < 0)
                _exit(5);
        char head[1024];
        size_t len = read_head(fd, head, sizeof head);
        say("head=%.12s|", head);
        /* Raw bytes both ways: 300 KiB echoed, then our half-close ends it. */
        static char data[300 * 1024], back[300 * 1024 + 1];
        for (size_t i = 0; i < sizeof data; i++)
                data[i] = (char) (i * 13 + 1);
        size_t pre = len - (size_t) (strstr(head, "\r\n\r\n") + 4 - head);
        memcpy(back, strstr(head, "\r\n\r\n") + 4, pre);
        size_t got = pre + exchange(fd, data, sizeof data, back + pre, sizeof back - pre, 1);
        say("echoed=%zu same=%d", got, got == sizeof data && memcmp(data, back, got) == 0);
}

TEST(websocket_upgrade_then_raw_both_ways)
{
        ASSERT_OK(run_client(websocket, NULL));
        ASSERT_STREQ(out, "head=HTTP/1.1 101|echoed=307200 same=1");
        ASSERT_EQ_INT(count_fds(), fds_at_start);
}

static void
upload(const void *arg)
{
        size_t total = *(const size_t *) arg, send_n = total;
        int hang = total == 0;
        if (hang) {
                total = MIB;
                send_n = 100 * 1024;    /* then it leaves */
        }
        static char body[MIB + 1024];
        int n = snprintf(body, sizeof body, "POST %s/upload HTTP/1.1\r\nHost: x\r\n"
                         "Content-Length: %zu\r\n\r\n", token_path, total);
        uint32_t sum = 0;
        for (size_t i = 0; i < send_n; i++) {
                body[(size_t) n + i] = (char) (i * 3);
                sum += (unsigned char) body[(size_t) n + i];
        }
        int fd = dial();
        if (hang) {
                if (write_all(fd, body, (size_t) n + send_n) < 0)
                        _exit(6);
                close(fd);
                say("left");
                return;
        }
        char resp[1024];
        size_t got = exchange(fd, body, (size_t) n + send_n, resp, sizeof resp - 1, 0);
        resp[got] = '\0';
        const char *b = strstr(resp, "\r\n\r\n");
        say("%s want=%u", b ? b + 4 : resp, sum);
}

static void
download(const void *arg)
{
        (void) arg;
        int fd = dial();
        char req[256];
        int n = snprintf(req, sizeof req, "GET %s/download?n=%d HTTP/1.1\r\nHost: x\r\n\r\n",
                         token_path, MIB);
        static char resp[MIB + 4096];
        size_t got = exchange(fd, req, (size_t) n, resp, sizeof resp, 0);
        char *b = memmem(resp, got, "\r\n\r\n", 4);
        size_t body = b ? got - (size_t) (b + 4 - resp) : 0;
        int same = b != NULL;
        for (size_t i = 0; same && i < body; i++)
                same = b[4 + i] == (char) (i * 7);
        say("body=%zu same=%d", body, same);
}

TEST(one_mib_up_and_down)
{
        size_t total = MIB;
        ASSERT_OK(run_client(upload, &total));
        uint32_t sum = 0;
        for (size_t i = 0; i < MIB; i++)
                sum += (unsigned char) (char) (i * 3);
        char want[128];
        snprintf(want, sizeof want, "count=%d sum=%u want=%u", MIB, sum, sum);
        ASSERT_STREQ(out, want);
        ASSERT_OK(run_client(download, NULL));
        ASSERT_STREQ(out, "body=1048576 same=1");
        uint64_t up, down;
        mcp_port_listener_bytes(listener, &up, &down);
        ASSERT_TRUE(up > MIB && down > MIB);
        ASSERT_EQ_INT(count_fds(), fds_at_start);
}

static void
hang_get(const void *arg)
{
        (void) arg;
        int fd = dial();
        char req[256];
        int n = snprintf(req, sizeof req, "GET %s/hang HTTP/1.1\r\nHost: x\r\n\r\n", token_path);
        (void) write_all(fd, req, (size_t) n);
        usleep(100000);
        close(fd);
        say("left");
}

static void
half_head(const void *arg)
{
        (void) arg;
        int fd = dial();
        (void) write_all(fd, "GET /abc", 8);
        close(fd);
        say("left");
}

TEST(client_hangs_up_midway_everything_closed)
{
        size_t zero = 0;
        ASSERT_OK(run_client(upload, &zero));
        ASSERT_STREQ(out, "left");
        ASSERT_OK(run_client(hang_get, NULL));
        ASSERT_OK(run_client(half_head, NULL));
        ASSERT_EQ_INT(mcp_port_listener_connections(listener), 0);
        ASSERT_EQ_INT(count_fds(), fds_at_start);
}

/* ---- the gateway alone: a socket handed over with the head read already ---- */

static mcp_gw_conn *handed;
static int handed_status = -100;

static int
pre_check(void *data, const mcp_gw_request *req, mcp_gw_route *route)
{
        (void) data;
        if (strncmp(req->target, "/sessions/s-1/ports/8080/", 25) != 0)
                return 403;
        snprintf(route->session_id, sizeof route->session_id, "s-1");
        route->port = 8080;
        route->strip = 24;
        return 0;
}

static void
pre_done(void *data, int status, int result, uint64_t up, uint64_t down)
{
        (void) data;
        (void) result;
        (void) up;
        (void) down;
        handed = NULL;
        handed_status = status;
}

static const mcp_gw_ops pre_ops = { .check = pre_check, .connect = test_connect, .done = pre_done };

static unsigned
handed_pending(void)
{
        return handed != NULL;
}

static int handed_client = -1, handed_server = -1;

static void
read_handed(const void *arg)
{
        (void) arg;
        close(handed_server);   /* the gateway's end, inherited by this child */
        char resp[4096];
        size_t got = exchange(handed_client, "", 0, resp, sizeof resp - 1, 0);
        resp[got] = '\0';
        say("%s", resp);
}

TEST(head_handed_over_by_another_server)
{
        int sp[2];
        ASSERT_OK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sp));
        const char *head = "GET /sessions/s-1/ports/8080/app?x=2 HTTP/1.1\r\nHost: y\r\n\r\n";
        ASSERT_OK(mcp_gw_conn_start(loop, sp[0], head, strlen(head), 0, 0, &pre_ops, NULL, &handed));
        handed_client = close_after_fork = sp[1];
        handed_server = sp[0];
        ASSERT_OK(run_client_with(read_handed, NULL, handed_pending));
        ASSERT_EQ_INT(handed_status, 0);
        ASSERT_TRUE(strstr(out, "\r\n\r\nGET /app?x=2 HTTP/1.1\r\nHost: y\r\nConnection: close\r\n") != NULL);
        /* Another route's head: the caller's own status. */
        ASSERT_OK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sp));
        head = "GET /sessions/s-2/ports/8080/ HTTP/1.1\r\n\r\n";
        ASSERT_OK(mcp_gw_conn_start(loop, sp[0], head, strlen(head), 0, 0, &pre_ops, NULL, &handed));
        handed_client = close_after_fork = sp[1];
        handed_server = sp[0];
        ASSERT_OK(run_client_with(read_handed, NULL, handed_pending));
        ASSERT_EQ_INT(handed_status, 403);
        ASSERT_TRUE(strncmp(out, "HTTP/1.1 403 Forbidden\r\n", 24) == 0);
        ASSERT_EQ_INT(count_fds(), fds_at_start);
}

static void
answered_client(const void *arg)
{
        (void) arg;
        close(handed_server);
        /* The upgraded protocol's bytes at once: no 101 comes from the gateway. */
        char back[64];
        size_t got = exchange(handed_client, "frame-1", 7, back, sizeof back - 1, 1);
        back[got] = '\0';
        say("%s", back);
}

TEST(upgrade_answered_by_another_server)
{
        int sp[2];
        ASSERT_OK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sp));
        const char *head = "GET /sessions/s-1/ports/8080/ws HTTP/1.1\r\nUpgrade: websocket\r\n"
                           "Connection: Upgrade\r\n\r\n";
        /* Not a whole head: refused at once. */
        int dup_fd = fcntl(sp[0], F_DUPFD_CLOEXEC, 3);
        ASSERT_EQ_INT(mcp_gw_conn_start(loop, dup_fd, head, 10, MCP_GW_ANSWERED, 0, &pre_ops,
                                        NULL, &handed), -EINVAL);
        ASSERT_OK(mcp_gw_conn_start(loop, sp[0], head, strlen(head), MCP_GW_ANSWERED, 0, &pre_ops,
                                    NULL, &handed));
        handed_client = close_after_fork = sp[1];
        handed_server = sp[0];
        handed_status = -100;
        ASSERT_OK(run_client_with(answered_client, NULL, handed_pending));
        ASSERT_EQ_INT(handed_status, 0);
        ASSERT_STREQ(out, "frame-1");
        /* A port that does not take the upgrade: the connection is closed, nothing said. */
        ASSERT_OK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sp));
        head = "GET /sessions/s-1/ports/8080/plain HTTP/1.1\r\nUpgrade: websocket\r\n\r\n";
        ASSERT_OK(mcp_gw_conn_start(loop, sp[0], head, strlen(head), MCP_GW_ANSWERED, 0, &pre_ops,
                                    NULL, &handed));
        handed_client = close_after_fork = sp[1];
        handed_server = sp[0];
        ASSERT_OK(run_client_with(answered_client, NULL, handed_pending));
        ASSERT_EQ_INT(handed_status, 502);
        ASSERT_STREQ(out, "");
        ASSERT_EQ_INT(count_fds(), fds_at_start);
}

/* ---- the relay alone ---- */

static int relay_result = 1;
static uint64_t relay_moved[2];

static void
relay_done(void *data, int result, uint64_t a_to_b, uint64_t b_to_a)
{
        (void) data;
        relay_result = result;
        relay_moved[0] = a_to_b;
        relay_moved[1] = b_to_a;
        mcp_loop_exit(loop, 0);
}

static int
relay_deadline(mcp_loop *l, void *data)
{
        (void) data;
        mcp_loop_exit(l, -ETIMEDOUT);
        return 0;
}

TEST(relay_idle_timeout_and_half_close)
{
        int x[2], y[2];
        ASSERT_OK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, x));
        ASSERT_OK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, y));
        mcp_relay *r;
        /* x[0] <-> y[0] relayed; the test holds x[1] and y[1]. Nothing moves: idle. */
        ASSERT_OK(mcp_relay_new(loop, x[0], y[0], "pre", 3, 100000, relay_done, NULL, &r));
        mcp_timer *t;
        ASSERT_OK(mcp_loop_add_timer(loop, 5000000, relay_deadline, NULL, &t));
        ASSERT_OK(mcp_loop_run(loop));
        mcp_timer_cancel(loop, t);
        ASSERT_EQ_INT(relay_result, -ETIMEDOUT);
        ASSERT_EQ_U64(relay_moved[0], 3);
        char buf[16] = { 0 };
        ASSERT_EQ_INT(read(y[1], buf, sizeof buf), 3);
        ASSERT_STREQ(buf, "pre");
        ASSERT_EQ_INT(read(y[1], buf, sizeof buf), 0);     /* closed by the relay */
        close(x[1]);
        close(y[1]);
        /* Both sides end: one's end of file reaches the other, then the other's. */
        ASSERT_OK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, x));
        ASSERT_OK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, y));
        ASSERT_OK(mcp_relay_new(loop, x[0], y[0], NULL, 0, 5000000, relay_done, NULL, &r));
        ASSERT_EQ_INT(write(x[1], "abc", 3), 3);
        ASSERT_OK(shutdown(x[1], SHUT_WR));
        ASSERT_EQ_INT(write(y[1], "de", 2), 2);
        ASSERT_OK(shutdown(y[1], SHUT_WR));
        relay_result = 1;
        ASSERT_OK(mcp_loop_add_timer(loop, 5000000, relay_deadline, NULL, &t));
        ASSERT_OK(mcp_loop_run(loop));
        mcp_timer_cancel(loop, t);
        ASSERT_EQ_INT(relay_result, 0);
        ASSERT_EQ_U64(relay_moved[0], 3);
        ASSERT_EQ_U64(relay_moved[1], 2);
        ASSERT_EQ_INT(read(y[1], buf, sizeof buf), 3);
        ASSERT_EQ_INT(read(x[1], buf, sizeof buf), 2);
        close(x[1]);
        close(y[1]);
        ASSERT_EQ_INT(count_fds(), fds_at_start);
}

int
main(void)
{
        signal(SIGPIPE, SIG_IGN);
        upstream_pid = start_upstream();
        msp_err err = { 0 };
        if (upstream_pid < 0 || mcp_loop_new(&loop) < 0 ||
            mcp_port_listener_new(loop, test_connect, NULL, "s-test", 8080, &listener, &err) < 0) {
                tap_check(false, "set up: %s", err.msg);
                return tap_done();
        }
        const char *url = mcp_port_listener_url(listener);
        char want[64];
        snprintf(want, sizeof want, "http://127.0.0.1:%u/", mcp_port_listener_port(listener));
        tap_check(strncmp(url, want, strlen(want)) == 0 &&
                  strlen(url) == strlen(want) + MCP_PORT_TOKEN_HEX + 1 && url[strlen(url) - 1] == '/',
                  "url %s", url);
        snprintf(token_path, sizeof token_path, "/%.*s", (int) MCP_PORT_TOKEN_HEX, url + strlen(want));
        fds_at_start = count_fds();
        RUN(get_with_the_token_arrives_stripped);
        RUN(without_the_token_refused);
        RUN(not_http_and_refused_port);
        RUN(websocket_upgrade_then_raw_both_ways);
        RUN(one_mib_up_and_down);
        RUN(client_hangs_up_midway_everything_closed);
        RUN(head_handed_over_by_another_server);
        RUN(upgrade_answered_by_another_server);
        RUN(relay_idle_timeout_and_half_close);
        mcp_port_listener_free(listener);
        mcp_loop_free(loop);
        kill(upstream_pid, SIGKILL);
        waitpid(upstream_pid, NULL, 0);
        return tap_done();
}
