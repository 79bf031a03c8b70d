/* One HTTPS GET (see https-get.h). The request is HTTP/1.0, so the answer is never chunked
 * and its body ends where the server closes; a close without TLS's close_notify counts
 * only when Content-Length says the body is whole. Redirects are not followed. */
#include "https-get.h"

#include <errno.h>
#include <gnutls/gnutls.h>
#include <netdb.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "macros.h"

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
