/* mcp-adapter/egress/proxy.c driven by a real loop: the test hands the proxy a TCP listener over
 * its unix socket as the sandbox's init does (egress-listener.h), a client child talks to
 * that listener, an upstream child serves TCP on 127.0.0.1 (reachable only through a pin: pinned
 * addresses are exempt from the loopback rule). Checks a plain request forwarded in origin
 * form, a CONNECT tunnel carrying bytes both ways, a host off the list refused with the
 * reason (and listed as denied), `localhost` refused as loopback after resolution through
 * /etc/hosts, allowed hosts it cannot reach (refused, not resolved, closed without an
 * answer) listed with the reason, the connection and byte limits, the idle timeout, --resolve's syntax, and that only a listening TCP socket is taken as the
 * listener. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/lib/tap.h"
#include "tests/lib/loop-deadline.h"
#include "egress/egress-listener.h"
#include "base/loop.h"
#include "oci/macros.h"
#include "egress/proxy.h"

static char sock_path[108];

/* Upstream: answers every connection with its first line echoed, then `extra` bytes of
 * 'x', then closes; a tunnel ("PING") gets "PONG" back; a request for /silent is read and
 * closed without an answer. */
_noreturn_ static void
upstream_serve(int lfd, size_t extra)
{
        for (;;) {
                int fd = accept(lfd, NULL, NULL);
                if (fd < 0)
                        _exit(0);
                char buf[4096];
                ssize_t n = read(fd, buf, sizeof buf - 1);
                if (n <= 0) {
                        close(fd);
                        continue;
                }
                buf[n] = '\0';
                if (strstr(buf, " /silent ")) {
                        close(fd);
                        continue;
                }
                if (strncmp(buf, "PING", 4) == 0) {
                        (void) !write(fd, "PONG", 4);
                } else {
                        char *eol = strstr(buf, "\r\n");
                        if (eol)
                                *eol = '\0';
                        char head[4200];
                        int h = snprintf(head, sizeof head, "HTTP/1.0 200 OK\r\n\r\n[%s]", buf);
                        (void) !write(fd, head, (size_t) h);
                        for (size_t left = extra; left > 0;) {
                                char x[4096];
                                memset(x, 'x', sizeof x);
                                ssize_t w = write(fd, x, left < sizeof x ? left : sizeof x);
                                if (w <= 0)
                                        break;
                                left -= (size_t) w;
                        }
                }
                close(fd);
        }
}

typedef struct world {
        mcp_loop *loop;
        mcp_proxy *proxy;
        mcp_resolver *resolver;
        mcp_egress_policy policy;
        mcp_proxy_pin pin;
        pid_t upstream;
        uint16_t port;                  /* the upstream's */
        struct sockaddr_in listener;    /* the handed-over listener's address */
        char out[1 << 20];
        size_t out_len;
        int denied_events, allowed_events, failed_events;
} world;

static void
on_event(mcp_proxy_event ev, const char *host, uint16_t port, const char *reason,
         uint64_t up, uint64_t down, void *data)
{
        world *w = data;
        tap_diag("event %d %s:%u %s %llu up %llu down", (int) ev, host, port, reason ? reason : "-",
                 (unsigned long long) up, (unsigned long long) down);
        if (ev == MCP_PROXY_DENIED)
                w->denied_events++;
        if (ev == MCP_PROXY_ALLOWED)
                w->allowed_events++;
        if (ev == MCP_PROXY_FAILED)
                w->failed_events++;
}

static int
world_up(world *w, unsigned max_conns, uint64_t max_bytes, uint64_t idle_ms, size_t extra)
{
        memset(w, 0, sizeof *w);
        msp_err err = { 0 };
        snprintf(sock_path, sizeof sock_path, "/tmp/msp-proxy-test.%d", (int) getpid());
        unlink(sock_path);
        int lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        strcpy(sa.sun_path, sock_path);
        if (bind(lfd, (struct sockaddr *) &sa, sizeof sa) < 0 || listen(lfd, 16) < 0)
                return -errno;
        int tfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in in = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t len = sizeof in;
        if (bind(tfd, (struct sockaddr *) &in, sizeof in) < 0 || listen(tfd, 16) < 0 ||
            getsockname(tfd, (struct sockaddr *) &in, &len) < 0)
                return -errno;
        w->port = ntohs(in.sin_port);
        w->upstream = fork();
        if (w->upstream == 0)
                upstream_serve(tfd, extra);
        close(tfd);
        char pat[64];
        snprintf(pat, sizeof pat, "pinned.test:%u", w->port);
        const char *pats[] = { pat, "localhost:80", NULL };
        for (size_t i = 0; pats[i]; i++)
                if (mcp_egress_policy_add(&w->policy, pats[i], &err) < 0)
                        return -EINVAL;
        if (mcp_proxy_pin_parse("pinned.test=127.0.0.1", &w->pin, &err) < 0 ||
            mcp_loop_new(&w->loop) < 0)
                return -EINVAL;
        if (mcp_resolver_new(w->loop, &w->resolver, &err) < 0)
                return -ENOMEM;
        mcp_proxy_conf conf = { .policy = &w->policy, .pins = &w->pin, .n_pins = 1,
                                .resolver = w->resolver,
                                .max_conns = max_conns, .max_bytes = max_bytes,
                                .idle_ms = idle_ms };
        int r = mcp_proxy_new(w->loop, lfd, &conf, on_event, w, &w->proxy, &err);
        int pfd = r < 0 ? r : egress_listener_bind(0);
        len = sizeof w->listener;
        if (pfd < 0 || getsockname(pfd, (struct sockaddr *) &w->listener, &len) < 0)
                return pfd < 0 ? pfd : -errno;
        return egress_listener_send(pfd, sock_path);
}

static void
world_down(world *w)
{
        mcp_proxy_free(w->proxy);
        mcp_resolver_free(w->resolver);
        mcp_loop_free(w->loop);
        mcp_egress_policy_done(&w->policy);
        kill(w->upstream, SIGKILL);
        waitpid(w->upstream, NULL, 0);
        unlink(sock_path);
}

static int
on_output(mcp_loop *l, int fd, uint32_t events, void *data)
{
        (void) events;
        world *w = data;
        ssize_t n = read(fd, w->out + w->out_len, sizeof w->out - 1 - w->out_len);
        if (n > 0) {
                w->out_len += (size_t) n;
                return 0;
        }
        mcp_loop_del_io(l, fd);
        mcp_loop_exit(l, 0);
        return 0;
}

/* A client child sends `req` (then, when `tunnel`, waits for the 200 and sends PING) and
 * copies everything it receives to the loop; returns with w->out holding it. */
static int
exchange(world *w, const char *req, bool tunnel, bool stall)
{
        int p[2];
        if (pipe2(p, O_CLOEXEC) < 0)
                return -errno;
        pid_t pid = fork();
        if (pid == 0) {
                int fd = socket(AF_INET, SOCK_STREAM, 0);
                if (connect(fd, (struct sockaddr *) &w->listener, sizeof w->listener) < 0)
                        _exit(1);
                if (stall) {
                        (void) !write(fd, req, 5);      /* an unfinished head */
                } else {
                        (void) !write(fd, req, strlen(req));
                }
                char buf[65536];
                ssize_t n;
                bool pinged = false;
                while ((n = read(fd, buf, sizeof buf)) > 0) {
                        (void) !write(p[1], buf, (size_t) n);
                        if (tunnel && !pinged && memmem(buf, (size_t) n, "\r\n\r\n", 4)) {
                                (void) !write(fd, "PING", 4);
                                pinged = true;
                        }
                }
                _exit(0);
        }
        close(p[1]);
        w->out_len = 0;
        mcp_loop_add_io(w->loop, p[0], EPOLLIN, on_output, w);
        int r = test_loop_run_within(w->loop, 10 * 1000000);
        close(p[0]);
        waitpid(pid, NULL, 0);
        w->out[w->out_len] = '\0';
        return r;
}

TEST(plain_and_tunnel)
{
        world w;
        ASSERT_OK(world_up(&w, 10, 1 << 20, 5000, 0));
        char req[256];
        snprintf(req, sizeof req, "GET http://pinned.test:%u/simple/?q=1 HTTP/1.1\r\n"
                 "Proxy-Connection: keep-alive\r\n\r\n", w.port);
        ASSERT_OK(exchange(&w, req, false, false));
        ASSERT_NOT_NULL(strstr(w.out, "[GET /simple/?q=1 HTTP/1.1]"));
        snprintf(req, sizeof req, "CONNECT pinned.test:%u HTTP/1.1\r\n\r\n", w.port);
        ASSERT_OK(exchange(&w, req, true, false));
        ASSERT_TRUE(strncmp(w.out, "HTTP/1.1 200 Connection established\r\n\r\nPONG", 44) == 0);
        /* The name the policy allowed is the pin's in any case and with a trailing dot: the
         * pin, never a lookup of the same name. */
        snprintf(req, sizeof req, "GET http://PINNED.test.:%u/ HTTP/1.1\r\n\r\n", w.port);
        ASSERT_OK(exchange(&w, req, false, false));
        ASSERT_NOT_NULL(strstr(w.out, "[GET / HTTP/1.1]"));
        ASSERT_EQ_INT(w.allowed_events, 3);
        ASSERT_TRUE(mcp_proxy_bytes(w.proxy) > 0);
        world_down(&w);
}

TEST(refusals)
{
        world w;
        ASSERT_OK(world_up(&w, 10, 1 << 20, 5000, 0));
        ASSERT_OK(exchange(&w, "CONNECT evil.test:443 HTTP/1.1\r\n\r\n", false, false));
        ASSERT_TRUE(strncmp(w.out, "HTTP/1.1 403 ", 13) == 0);
        ASSERT_NOT_NULL(strstr(w.out, "evil.test:443 is not in this sandbox's network allowlist"));
        /* Allowed by name; /etc/hosts maps it to loopback. */
        ASSERT_OK(exchange(&w, "GET http://localhost/ HTTP/1.1\r\n\r\n", false, false));
        ASSERT_NOT_NULL(strstr(w.out, "403 Forbidden"));
        ASSERT_NOT_NULL(strstr(w.out, "localhost resolves to a loopback address"));
        char req[128];
        snprintf(req, sizeof req, "GET http://127.0.0.1:%u/ HTTP/1.1\r\n\r\n", w.port);
        ASSERT_OK(exchange(&w, req, false, false));
        ASSERT_NOT_NULL(strstr(w.out, "127.0.0.1:"));
        ASSERT_NOT_NULL(strstr(w.out, "403 Forbidden"));
        ASSERT_OK(exchange(&w, "GET /x HTTP/1.1\r\n\r\n", false, false));
        ASSERT_NOT_NULL(strstr(w.out, "400 Bad Request"));
        const char *const *denied;
        size_t n = mcp_proxy_denied(w.proxy, &denied);
        ASSERT_EQ_INT(n, 3);
        ASSERT_STREQ(denied[0], "evil.test:443");
        ASSERT_STREQ(denied[1], "localhost:80");
        ASSERT_EQ_INT(w.allowed_events, 0);
        world_down(&w);
}

/* Allowed hosts it cannot reach: each in the failed list with the proxy's reason, the
 * client told in a 502. */
TEST(unreachable)
{
        world w;
        msp_err err = { 0 };
        ASSERT_OK(world_up(&w, 10, 1 << 20, 5000, 0));
        /* Bound, not listening: a connect there is refused. */
        int closed = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in in = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t len = sizeof in;
        ASSERT_OK(bind(closed, (struct sockaddr *) &in, sizeof in));
        ASSERT_OK(getsockname(closed, (struct sockaddr *) &in, &len));
        char pat[64], req[160], want[160];
        snprintf(pat, sizeof pat, "pinned.test:%u", ntohs(in.sin_port));
        ASSERT_OK_ERR(mcp_egress_policy_add(&w.policy, pat, &err), err);
        ASSERT_OK_ERR(mcp_egress_policy_add(&w.policy, "nowhere.invalid:80", &err), err);

        snprintf(req, sizeof req, "GET http://%s/ HTTP/1.1\r\n\r\n", pat);
        ASSERT_OK(exchange(&w, req, false, false));
        ASSERT_TRUE(strncmp(w.out, "HTTP/1.1 502 ", 13) == 0);
        snprintf(want, sizeof want, "%s: connection refused", pat);
        ASSERT_NOT_NULL(strstr(w.out, want));
        ASSERT_OK(exchange(&w, "GET http://nowhere.invalid/ HTTP/1.1\r\n\r\n", false, false));
        /* (": no answer from the DNS server)" on a host whose DNS server does not answer) */
        ASSERT_NOT_NULL(strstr(w.out, "nowhere.invalid:80: no address (name not resolved"));
        snprintf(req, sizeof req, "GET http://pinned.test:%u/silent HTTP/1.1\r\n\r\n", w.port);
        ASSERT_OK(exchange(&w, req, false, false));
        ASSERT_EQ_INT(w.out_len, 0);

        const char *const *failed;
        size_t n = mcp_proxy_failed(w.proxy, &failed);
        ASSERT_EQ_INT(n, 3);
        ASSERT_STREQ(failed[0], want);
        ASSERT_TRUE(strncmp(failed[1], "nowhere.invalid:80: no address (name not resolved", 49) == 0);
        snprintf(want, sizeof want, "pinned.test:%u: closed by the upstream before any answer", w.port);
        ASSERT_STREQ(failed[2], want);
        ASSERT_EQ_INT(w.failed_events, 2);      /* the silent one was let through: closed */
        const char *const *denied;
        ASSERT_EQ_INT(mcp_proxy_denied(w.proxy, &denied), 0);
        close(closed);
        world_down(&w);
}

TEST(connection_limit)
{
        world w;
        ASSERT_OK(world_up(&w, 2, 1 << 20, 5000, 0));
        char req[128];
        snprintf(req, sizeof req, "GET http://pinned.test:%u/ HTTP/1.1\r\n\r\n", w.port);
        for (int i = 0; i < 2; i++) {
                ASSERT_OK(exchange(&w, req, false, false));
                ASSERT_NOT_NULL(strstr(w.out, "200 OK"));
        }
        ASSERT_OK(exchange(&w, req, false, false));
        ASSERT_NOT_NULL(strstr(w.out, "connection limit (2)"));
        world_down(&w);
}

TEST(byte_limit)
{
        world w;
        ASSERT_OK(world_up(&w, 10, 100000, 5000, 500000));
        char req[128];
        snprintf(req, sizeof req, "GET http://pinned.test:%u/big HTTP/1.1\r\n\r\n", w.port);
        ASSERT_OK(exchange(&w, req, false, false));
        ASSERT_TRUE(w.out_len < 100000 + 65536 * 2);
        ASSERT_TRUE(w.out_len > 1000);
        ASSERT_OK(exchange(&w, req, false, false));
        ASSERT_NOT_NULL(strstr(w.out, "byte limit (100000)"));
        world_down(&w);
}

TEST(idle_timeout)
{
        world w;
        ASSERT_OK(world_up(&w, 10, 1 << 20, 200, 0));
        uint64_t t0 = mcp_now_usec();
        ASSERT_OK(exchange(&w, "GET http://pinned.test/ HTTP/1.1\r\n\r\n", false, true));
        uint64_t took = mcp_now_usec() - t0;
        ASSERT_EQ_INT(w.out_len, 0);
        ASSERT_TRUE(took >= 200000 && took < 5000000);
        world_down(&w);
}

TEST(pins)
{
        static const char *const bad[] = { "x.test", "=1.2.3.4", "x.test=", "x.test=host",
                                           "*.x.test=1.2.3.4", "x.test:80=1.2.3.4",
                                           "1.2.3.4=1.2.3.4" };
        mcp_proxy_pin pin;
        for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
                msp_err err = { 0 };
                tap_check(mcp_proxy_pin_parse(bad[i], &pin, &err) == -EINVAL &&
                          strstr(err.msg, "--resolve"), "--resolve '%s' refused", bad[i]);
        }
        msp_err err = { 0 };
        ASSERT_OK_ERR(mcp_proxy_pin_parse("Files.Test=[2001:db8::1]", &pin, &err), err);
        ASSERT_STREQ(pin.host, "files.test");
        ASSERT_EQ_INT(pin.addr.ss_family, AF_INET6);
}

/* What arrives on the unix socket is taken only when it is one listening TCP socket. */
TEST(listener_checked)
{
        int sp[2], p[2], fd = -1;
        ASSERT_OK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp));
        ASSERT_EQ_INT(egress_listener_recv(sp[1], &fd), -EAGAIN);
        ASSERT_OK(pipe2(p, O_CLOEXEC));
        int bound = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);     /* not listening */
        struct sockaddr_in in = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        ASSERT_OK(bind(bound, (struct sockaddr *) &in, sizeof in));
        const int wrong[] = { p[0], bound, sp[0] };
        for (size_t i = 0; i < ARRAY_SIZE(wrong); i++) {
                int pair[2];
                ASSERT_OK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair));
                char b = 'L';
                struct iovec iov = { .iov_base = &b, .iov_len = 1 };
                union {
                        struct cmsghdr h;
                        char buf[CMSG_SPACE(sizeof(int))];
                } ctl = { 0 };
                struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
                                      .msg_controllen = sizeof ctl.buf };
                struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
                *c = (struct cmsghdr) { .cmsg_len = CMSG_LEN(sizeof(int)), .cmsg_level = SOL_SOCKET,
                                        .cmsg_type = SCM_RIGHTS };
                memcpy(CMSG_DATA(c), &wrong[i], sizeof(int));
                ASSERT_EQ_INT(sendmsg(pair[0], &msg, 0), 1);
                tap_check(egress_listener_recv(pair[1], &fd) == -EPROTO, "fd %zu refused", i);
                close(pair[0]);
                close(pair[1]);
        }
        /* Nothing but a byte, then EOF. */
        ASSERT_EQ_INT(write(sp[0], "L", 1), 1);
        ASSERT_EQ_INT(egress_listener_recv(sp[1], &fd), -EPROTO);
        close(sp[0]);
        ASSERT_EQ_INT(egress_listener_recv(sp[1], &fd), -EPROTO);
        close(sp[1]);
        close(p[0]);
        close(p[1]);
        close(bound);
}

int
main(void)
{
        signal(SIGPIPE, SIG_IGN);
        RUN(plain_and_tunnel);
        RUN(refusals);
        RUN(unreachable);
        RUN(connection_limit);
        RUN(byte_limit);
        RUN(idle_timeout);
        RUN(pins);
        RUN(listener_checked);
        return tap_done();
}
