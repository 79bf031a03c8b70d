/* One HTTPS GET (see https-get.h). The request is HTTP/1.0, so the answer is never chunked
 * and its body ends where the server closes; a close without TLS's close_notify counts
 * only when Content-Length says the body is whole. Redirects are not followed.
 *
 * A fetch's child writes one record to its pipe: the int result of mcp_https_get(), then
 * the body (0) or the error message (< 0); the pipe's end is the record's. */
#include "http/https-get.h"

#include <errno.h>
#include <fcntl.h>
#include <gnutls/gnutls.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/base.h"
#include "oci/oci.h"

#define HEAD_MAX (64 * 1024)

typedef struct target {
        char host[256];
        char port[8];
        const char *path;
        bool ip;                        /* an address literal: no SNI */
} target;

static int64_t
now_ms(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Waits for fd until deadline: 0, or -ETIMEDOUT. */
static int
wait_fd(int fd, short events, int64_t deadline)
{
        for (;;) {
                int64_t left = deadline - now_ms();
                if (left <= 0)
                        return -ETIMEDOUT;
                struct pollfd p = { .fd = fd, .events = events };
                int n = poll(&p, 1, (int) left);
                if (n > 0)
                        return 0;
                if (n < 0 && errno != EINTR)
                        return -errno;
        }
}

static int
parse_url(const char *url, target *t, msp_err *err)
{
        *t = (target) { .port = "443" };
        const char *h = strncmp(url, "https://", 8) == 0 ? url + 8 : NULL;
        size_t hl = h ? strcspn(h, "/?#") : 0;
        const char *end = h ? h + hl : NULL;
        if (!h || hl == 0)
                return msp_err_set(err, EINVAL, "%s: expected https://HOST[:PORT]/PATH", url);
        const char *colon = NULL;
        if (h[0] == '[') {
                const char *close = memchr(h, ']', hl);
                if (!close || (close + 1 != end && close[1] != ':'))
                        return msp_err_set(err, EINVAL, "%s: a bad [address]", url);
                colon = close + 1 != end ? close + 1 : NULL;
                snprintf(t->host, sizeof t->host, "%.*s", (int) (close - h - 1), h + 1);
                t->ip = true;
        } else {
                colon = memchr(h, ':', hl);
                snprintf(t->host, sizeof t->host, "%.*s", (int) ((colon ? colon : end) - h), h);
        }
        if (colon) {
                size_t pl = (size_t) (end - colon - 1);
                if (pl == 0 || pl > 5 || strspn(colon + 1, "0123456789") < pl)
                        return msp_err_set(err, EINVAL, "%s: a bad port", url);
                snprintf(t->port, sizeof t->port, "%.*s", (int) pl, colon + 1);
        }
        t->path = *end == '/' ? end : "/";
        if (*end == '?' || *end == '#' || strpbrk(t->path, " \r\n"))
                return msp_err_set(err, EINVAL, "%s: expected a path without query, fragment or spaces", url);
        struct addrinfo hints = { .ai_flags = AI_NUMERICHOST }, *ai = NULL;
        if (!t->ip && getaddrinfo(t->host, NULL, &hints, &ai) == 0) {
                t->ip = true;
                freeaddrinfo(ai);
        }
        return 0;
}

static int
connect_to(const target *t, int64_t deadline, const char *url, msp_err *err)
{
        struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *list = NULL;
        int g = getaddrinfo(t->host, t->port, &hints, &list);
        if (g != 0)
                return msp_err_set(err, EHOSTUNREACH, "%s: resolving %s: %s", url, t->host, gai_strerror(g));
        int r = -ECONNREFUSED;
        for (struct addrinfo *a = list; a; a = a->ai_next) {
                int fd = socket(a->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
                if (fd < 0) {
                        r = -errno;
                        continue;
                }
                if (connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
                        freeaddrinfo(list);
                        return fd;
                }
                r = errno == EINPROGRESS ? wait_fd(fd, POLLOUT, deadline) : -errno;
                int so = 0;
                socklen_t sl = sizeof so;
                if (r == 0 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &so, &sl) == 0 && so == 0) {
                        freeaddrinfo(list);
                        return fd;
                }
                r = r < 0 ? r : -(so ? so : ECONNREFUSED);
                close(fd);
        }
        freeaddrinfo(list);
        return msp_err_sys(err, -r, "%s: connecting to %s port %s", url, t->host, t->port);
}

/* Runs one GnuTLS step until it is not EAGAIN, waiting for the socket in between. */
#define TLS_STEP(call, s, fd, deadline)                                                        \
        ({                                                                                     \
                ssize_t _r;                                                                    \
                while ((_r = (call)) == GNUTLS_E_AGAIN || _r == GNUTLS_E_INTERRUPTED) {        \
                        if (wait_fd(fd, gnutls_record_get_direction(s) ? POLLOUT : POLLIN,    \
                                    deadline) < 0) {                                           \
                                _r = GNUTLS_E_TIMEDOUT;                                        \
                                break;                                                         \
                        }                                                                      \
                }                                                                              \
                _r;                                                                            \
        })

static int
handshake_error(gnutls_session_t s, int r, const char *url, msp_err *err)
{
        if (r != GNUTLS_E_CERTIFICATE_VERIFICATION_ERROR)
                return msp_err_set(err, EPROTO, "%s: TLS: %s", url, gnutls_strerror(r));
        gnutls_datum_t why = { 0 };
        unsigned status = gnutls_session_get_verify_cert_status(s);
        (void) gnutls_certificate_verification_status_print(status, GNUTLS_CRT_X509, &why, 0);
        size_t n = why.data ? strlen((const char *) why.data) : 0;
        while (n > 0 && why.data[n - 1] == ' ')
                n--;
        msp_err_set(err, EPROTO, "%s: the server's certificate is not trusted: %.*s", url, (int) n,
                    why.data ? (const char *) why.data : "");
        gnutls_free(why.data);
        return -EPROTO;
}

/* The answer's status must be 200; its body follows the blank line. */
static int
split_answer(char *buf, size_t len, bool whole, char **ret, size_t *ret_len, const char *url,
             msp_err *err)
{
        char *body = memmem(buf, len, "\r\n\r\n", 4);
        if (strncmp(buf, "HTTP/1.", 7) != 0 || len < 12 || !body)
                return msp_err_set(err, EPROTO, "%s: not an HTTP answer", url);
        if (strncmp(buf + 8, " 200", 4) != 0)
                return msp_err_set(err, EPROTO, "%s: HTTP status %.3s (expected 200)", url, buf + 9);
        *body = '\0';
        body += 4;
        size_t blen = len - (size_t) (body - buf);
        const char *cl = strcasestr(buf, "\r\nContent-Length:");
        if (cl && strtoull(cl + 17, NULL, 10) != blen)
                return msp_err_set(err, EPROTO, "%s: the body is cut short", url);
        if (!cl && !whole)
                return msp_err_set(err, EPROTO, "%s: the connection ended without TLS close_notify or Content-Length",
                                   url);
        if (strcasestr(buf, "\r\nTransfer-Encoding:"))
                return msp_err_set(err, EPROTO, "%s: a Transfer-Encoding to an HTTP/1.0 request", url);
        memmove(buf, body, blen);
        buf[blen] = '\0';
        *ret = buf;
        *ret_len = blen;
        return 0;
}

static int
exchange(gnutls_session_t s, int fd, const target *t, size_t max, int64_t deadline, char **ret,
         size_t *ret_len, const char *url, msp_err *err)
{
        _cleanup_free_ char *req = NULL;
        int n = asprintf(&req, "GET %s HTTP/1.0\r\nHost: %s%s%s%s%s\r\nAccept: application/json\r\nUser-Agent: msp-mcp\r\n\r\n",
                         t->path, strchr(t->host, ':') ? "[" : "", t->host, strchr(t->host, ':') ? "]" : "",
                         strcmp(t->port, "443") ? ":" : "", strcmp(t->port, "443") ? t->port : "");
        if (n < 0) {
                req = NULL;
                return msp_err_set(err, ENOMEM, "out of memory");
        }
        for (size_t off = 0; off < (size_t) n;) {
                ssize_t w = TLS_STEP(gnutls_record_send(s, req + off, (size_t) n - off), s, fd, deadline);
                if (w < 0)
                        return msp_err_set(err, EPROTO, "%s: sending: %s", url, gnutls_strerror((int) w));
                off += (size_t) w;
        }
        size_t cap = max + HEAD_MAX, len = 0;
        _cleanup_free_ char *buf = malloc(cap + 1);
        if (!buf)
                return msp_err_set(err, ENOMEM, "out of memory");
        bool whole = false;
        for (;;) {
                if (len == cap)
                        return msp_err_set(err, EFBIG, "%s: the answer is larger than %zu bytes", url, max);
                ssize_t rd = TLS_STEP(gnutls_record_recv(s, buf + len, cap - len), s, fd, deadline);
                if (rd == 0) {
                        whole = true;
                        break;
                }
                if (rd == GNUTLS_E_PREMATURE_TERMINATION)
                        break;
                if (rd < 0)
                        return msp_err_set(err, EPROTO, "%s: receiving: %s", url, gnutls_strerror((int) rd));
                len += (size_t) rd;
        }
        buf[len] = '\0';
        int r = split_answer(buf, len, whole, ret, ret_len, url, err);
        if (r == 0)
                buf = NULL;
        return r;
}

int
mcp_https_get(const char *url, const char *ca_file, size_t max, unsigned timeout_ms, char **ret,
              size_t *ret_len, msp_err *err)
{
        target t;
        int r = parse_url(url, &t, err);
        if (r < 0)
                return r;
        int64_t deadline = now_ms() + timeout_ms;
        gnutls_certificate_credentials_t cred = NULL;
        if (gnutls_certificate_allocate_credentials(&cred) < 0)
                return msp_err_set(err, ENOMEM, "out of memory");
        int n = ca_file ? gnutls_certificate_set_x509_trust_file(cred, ca_file, GNUTLS_X509_FMT_PEM)
                        : gnutls_certificate_set_x509_system_trust(cred);
        if (n <= 0) {
                gnutls_certificate_free_credentials(cred);
                return ca_file ? msp_err_set(err, EINVAL, "--oauth-jwks-ca %s: no PEM certificate in it", ca_file)
                               : msp_err_set(err, EINVAL, "%s: the system's trust store has no certificate (name --oauth-jwks-ca FILE)",
                                             url);
        }
        int fd = connect_to(&t, deadline, url, err);
        if (fd < 0) {
                gnutls_certificate_free_credentials(cred);
                return fd;
        }
        gnutls_session_t s = NULL;
        r = gnutls_init(&s, GNUTLS_CLIENT | GNUTLS_NONBLOCK) < 0 ||
                            gnutls_set_default_priority(s) < 0 ||
                            gnutls_credentials_set(s, GNUTLS_CRD_CERTIFICATE, cred) < 0 ||
                            (!t.ip && gnutls_server_name_set(s, GNUTLS_NAME_DNS, t.host, strlen(t.host)) < 0)
                    ? msp_err_set(err, ENOMEM, "%s: TLS setup failed", url)
                    : 0;
        if (r == 0) {
                gnutls_session_set_verify_cert(s, t.host, 0);
                gnutls_transport_set_int(s, fd);
                int h = (int) TLS_STEP(gnutls_handshake(s), s, fd, deadline);
                r = h < 0 ? handshake_error(s, h, url, err) : exchange(s, fd, &t, max, deadline, ret, ret_len, url, err);
        }
        if (s)
                gnutls_deinit(s);
        gnutls_certificate_free_credentials(cred);
        close(fd);
        return r;
}

/* ---- in a child, for the loop ---- */

#define FETCH_GRACE_MS 1000

struct mcp_https_fetch {
        mcp_loop *loop;
        pid_t pid;
        int fd;                         /* the pipe's read end */
        char *buf;
        size_t len, cap;
        mcp_timer *timer;
        mcp_https_done_fn done;
        void *data;
};

_noreturn_ static void
fetch_child(int fd, pid_t parent, const char *url, const char *ca_file, size_t max,
            unsigned timeout_ms)
{
        if (mcp_child_keep_only(fd, parent) < 0)
                _exit(1);
        char *body = NULL;
        size_t len = 0;
        msp_err err = { 0 };
        int r = mcp_https_get(url, ca_file, max, timeout_ms, &body, &len, &err);
        bool sent = mcp_write_all(3, &r, sizeof r) == 0 &&
                    (r == 0 ? mcp_write_all(3, body, len) : mcp_write_all(3, err.msg, strlen(err.msg))) == 0;
        _exit(sent ? 0 : 1);
}

/* The child is reaped; the record, or what went wrong, goes to done. */
static void
fetch_finish(mcp_https_fetch *f, const char *failure)
{
        mcp_loop_del_io(f->loop, f->fd);
        close(f->fd);
        mcp_timer_cancel(f->loop, f->timer);
        if (failure)
                (void) kill(f->pid, SIGKILL);
        int st = 0;
        while (waitpid(f->pid, &st, 0) < 0 && errno == EINTR)
                ;
        msp_err err = { 0 };
        int r = 0;
        char *body = NULL;
        size_t blen = 0;
        if (failure)
                msp_err_set(&err, ETIMEDOUT, "%s", failure);
        else if (f->len < sizeof r)
                msp_err_set(&err, EIO, "the fetching process failed (wait status %d)", st);
        else if (memcpy(&r, f->buf, sizeof r), r < 0)
                msp_err_set(&err, -r, "%.*s", (int) (f->len - sizeof r), f->buf + sizeof r);
        else {
                blen = f->len - sizeof r;
                memmove(f->buf, f->buf + sizeof r, blen);
                f->buf[blen] = '\0';
                body = TAKE_PTR(f->buf);
        }
        mcp_https_done_fn done = f->done;
        void *data = f->data;
        free(f->buf);
        free(f);
        done(body, blen, body ? NULL : &err, data);
}

static int
on_fetch_data(mcp_loop *loop, int fd, uint32_t events, void *data)
{
        mcp_https_fetch *f = data;
        (void) loop;
        (void) events;
        for (;;) {
                if (f->len == f->cap) {
                        fetch_finish(f, "the fetching process wrote more than the answer's limit");
                        return 0;
                }
                ssize_t n = read(fd, f->buf + f->len, f->cap - f->len);
                if (n > 0) {
                        f->len += (size_t) n;
                        continue;
                }
                if (n < 0 && (errno == EAGAIN || errno == EINTR))
                        return 0;
                fetch_finish(f, NULL);          /* the end of the record (or a read error) */
                return 0;
        }
}

static int
on_fetch_timeout(mcp_loop *loop, void *data)
{
        mcp_https_fetch *f = data;
        (void) loop;
        f->timer = NULL;
        fetch_finish(f, "no answer in time (the name's resolution or the server hangs)");
        return 0;
}

int
mcp_https_fetch_start(mcp_loop *loop, const char *url, const char *ca_file, size_t max,
                      unsigned timeout_ms, mcp_https_done_fn done, void *data,
                      mcp_https_fetch **ret, msp_err *err)
{
        mcp_https_fetch *f = calloc(1, sizeof *f);
        int p[2] = { -1, -1 };
        if (f) {
                f->cap = sizeof(int) + (max > sizeof err->msg ? max : sizeof err->msg);
                f->buf = malloc(f->cap + 1);
        }
        if (!f || !f->buf) {
                if (f)
                        free(f->buf);
                free(f);
                return msp_err_set(err, ENOMEM, "out of memory");
        }
        *f = (mcp_https_fetch) { .loop = loop, .fd = -1, .buf = f->buf, .cap = f->cap,
                                 .done = done, .data = data };
        pid_t parent = getpid();
        int r = pipe2(p, O_CLOEXEC | O_NONBLOCK) < 0 ? -errno : 0;
        if (r == 0 && (f->pid = fork()) < 0)
                r = -errno;
        if (r == 0 && f->pid == 0)
                fetch_child(p[1], parent, url, ca_file, max, timeout_ms);
        if (p[1] >= 0)
                close(p[1]);
        f->fd = p[0];
        if (r == 0)
                r = mcp_loop_add_io(loop, f->fd, EPOLLIN, on_fetch_data, f);
        if (r == 0)
                r = mcp_loop_add_timer(loop, (uint64_t) (timeout_ms + FETCH_GRACE_MS) * 1000, on_fetch_timeout, f,
                                       &f->timer);
        if (r < 0) {
                if (f->pid > 0) {
                        (void) kill(f->pid, SIGKILL);
                        (void) waitpid(f->pid, NULL, 0);
                }
                mcp_loop_del_io(loop, f->fd);
                if (f->fd >= 0)
                        close(f->fd);
                free(f->buf);
                free(f);
                return msp_err_sys(err, -r, "%s: starting the fetching process", url);
        }
        *ret = f;
        return 0;
}

void
mcp_https_fetch_cancel(mcp_https_fetch *f)
{
        if (!f)
                return;
        mcp_loop_del_io(f->loop, f->fd);
        close(f->fd);
        mcp_timer_cancel(f->loop, f->timer);
        (void) kill(f->pid, SIGKILL);
        while (waitpid(f->pid, NULL, 0) < 0 && errno == EINTR)
                ;
        free(f->buf);
        free(f);
}
