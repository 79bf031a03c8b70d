/* The loopback-to-unix-socket relay of msp-sandbox-init (see sandbox-relay.h). */
#include "sandbox-relay.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define RELAY_MAX 64
#define RELAY_BUF 16384

/* One direction of a pair: read when empty, write while not, pass the EOF on. */
typedef struct half {
        char buf[RELAY_BUF];
        size_t len, off;
        bool eof, shut;
} half;

typedef struct pair {
        int c, u;               /* client (TCP), upstream (unix); -1: slot free */
        half cu, uc;
} pair;

static pair pairs[RELAY_MAX];

int
relay_listen(unsigned port)
{
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t) port),
                                  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        int one = 1;
        if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
            bind(fd, (struct sockaddr *) &sa, sizeof sa) < 0 || listen(fd, RELAY_MAX) < 0) {
                int e = errno;
                if (fd >= 0)
                        close(fd);
                return -e;
        }
        return fd;
}

static void
pair_close(pair *p)
{
        close(p->c);
        close(p->u);
        p->c = p->u = -1;
}

/* -1: the pair is done (error or both directions passed their EOF). */
static int
pump(int src, int dst, half *h)
{
        if (h->len == 0 && !h->eof) {
                ssize_t n = read(src, h->buf, sizeof h->buf);
                if (n < 0 && errno != EAGAIN && errno != EINTR)
                        return -1;
                if (n == 0)
                        h->eof = true;
                if (n > 0) {
                        h->len = (size_t) n;
                        h->off = 0;
                }
        }
        if (h->len > h->off) {
                ssize_t n = send(dst, h->buf + h->off, h->len - h->off, MSG_NOSIGNAL);
                if (n < 0 && errno != EAGAIN && errno != EINTR)
                        return -1;
                if (n > 0 && (h->off += (size_t) n) == h->len)
                        h->len = h->off = 0;
        }
        if (h->eof && h->len == 0 && !h->shut) {
                (void) shutdown(dst, SHUT_WR);
                h->shut = true;
        }
        return 0;
}

static void
accept_one(int lfd, const char *target)
{
        int c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (c < 0)
                return;
        pair *p = NULL;
        for (size_t i = 0; i < RELAY_MAX && !p; i++)
                if (pairs[i].c < 0)
                        p = &pairs[i];
        int u = p ? socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0) : -1;
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        strncpy(sa.sun_path, target, sizeof sa.sun_path - 1);
        if (u < 0 || connect(u, (struct sockaddr *) &sa, sizeof sa) < 0) {
                if (u >= 0)
                        close(u);
                close(c);
                return;
        }
        memset(p, 0, sizeof *p);
        p->c = c;
        p->u = u;
}

static short
want(const half *in, const half *out)
{
        return (short) ((in->len == 0 && !in->eof ? POLLIN : 0) |
                        (out->len > out->off ? POLLOUT : 0));
}

_Noreturn void
relay_serve(int lfd, const char *target)
{
        struct pollfd fds[1 + 2 * RELAY_MAX];
        for (size_t i = 0; i < RELAY_MAX; i++)
                pairs[i].c = pairs[i].u = -1;
        for (;;) {
                size_t n = 0;
                fds[n++] = (struct pollfd) { .fd = lfd, .events = POLLIN };
                for (size_t i = 0; i < RELAY_MAX; i++) {
                        pair *p = &pairs[i];
                        /* A direction with nothing to do is left out (fd -1): a hung-up
                         * socket would otherwise wake the loop forever. */
                        short ce = want(&p->cu, &p->uc), ue = want(&p->uc, &p->cu);
                        fds[n++] = (struct pollfd) { .fd = p->c >= 0 && ce ? p->c : -1, .events = ce };
                        fds[n++] = (struct pollfd) { .fd = p->u >= 0 && ue ? p->u : -1, .events = ue };
                }
                if (poll(fds, n, -1) < 0)
                        continue;
                if (fds[0].revents)
                        accept_one(lfd, target);
                for (size_t i = 0; i < RELAY_MAX; i++) {
                        pair *p = &pairs[i];
                        if (p->c < 0 || !(fds[1 + 2 * i].revents | fds[2 + 2 * i].revents))
                                continue;
                        if (pump(p->c, p->u, &p->cu) < 0 || pump(p->u, p->c, &p->uc) < 0 ||
                            (p->cu.shut && p->uc.shut))
                                pair_close(p);
                }
        }
}
