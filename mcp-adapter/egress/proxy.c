/* The egress proxy of one run (see proxy.h). Each client connection goes through:
 * head (read and parse the request) -> check (policy, limits) -> resolve (pin, literal,
 * or the resolver helper) -> connect (each acceptable address in turn) -> relay (both
 * directions until both are shut, an error, a limit, or the idle timeout). */
#include "egress/proxy.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/wait.h>
#include <unistd.h>

#include "egress/egress-listener.h"
#include "base/base.h"
#include "oci/oci.h"
#include "egress/proxy-http.h"

#define BUF_SIZE 65536
#define MAX_ADDRS MCP_RESOLVER_MAX_ADDRS
#define MAX_CLIENTS 256         /* connections open at once, whatever their state */

typedef enum { ST_HEAD, ST_RESOLVING, ST_CONNECTING, ST_RELAY } conn_state;

/* One direction: bytes read from one fd, not yet all written to the other. */
typedef struct pipe_buf {
        char *data;
        size_t len, off, cap;
        bool eof, shut;
        uint64_t total;                 /* bytes for the far side (c2u: the forwarded head too) */
} pipe_buf;

typedef struct conn {
        mcp_proxy *p;
        struct conn *prev, *next;
        conn_state state;
        int cfd, ufd;                   /* client, upstream */
        uint64_t lookup;                /* the resolver's ticket while ST_RESOLVING */
        uint32_t cev, uev;              /* registered interest; 0: not registered */
        mcp_proxy_request req;
        bool pinned;
        struct sockaddr_storage addrs[MAX_ADDRS];
        size_t n_addrs, next_addr;
        int conn_errno;                 /* of the last address that did not connect */
        const char *lookup_error;       /* the resolver's, when it found no address */
        bool upstream_first;            /* the upstream ended its side before the client */
        const char *refusal;            /* of the last address refused after resolution */
        char refused_addr[INET6_ADDRSTRLEN];
        pipe_buf c2u, u2c;
        uint64_t last_active;
        mcp_timer *timer;
        unsigned fds;                   /* taken from the run's share: the client's, the upstream's */
} conn;

struct mcp_proxy {
        mcp_loop *loop;
        int hfd, hconn;                 /* the handover socket, its one connection */
        int lfd;                        /* the sandbox's listener, once handed over */
        mcp_proxy_conf conf;
        mcp_proxy_event_fn fn;
        void *data;
        conn *conns;
        size_t n_clients;
        mcp_fds_share fds;
        bool refusing;                  /* a client was closed for want of fds, none since taken */
        unsigned n_upstream;
        uint64_t bytes;
        char *denied[MCP_PROXY_DENIED_MAX + 1];
        size_t n_denied;
        char *failed[MCP_PROXY_DENIED_MAX + 1];        /* "host:port: reason" */
        size_t n_failed;
};

int
mcp_proxy_pin_parse(const char *spec, mcp_proxy_pin *ret, msp_err *err)
{
        const char *eq = strchr(spec, '=');
        mcp_egress_policy one = { 0 };
        mcp_proxy_pin pin = { 0 };
        char addr[INET6_ADDRSTRLEN + 2];
        msp_err ignored = { 0 };
        bool ok = eq && eq != spec && (size_t) (eq - spec) <= MCP_EGRESS_HOST_MAX &&
                  strlen(eq + 1) < sizeof addr;
        if (ok) {
                memcpy(pin.host, spec, (size_t) (eq - spec));
                ok = mcp_egress_policy_add(&one, pin.host, &ignored) == 0 && !one.rules[0].wildcard &&
                     !one.rules[0].literal && one.rules[0].port == 0;
                if (ok)
                        strcpy(pin.host, one.rules[0].host);
                mcp_egress_policy_done(&one);
        }
        if (ok) {
                const char *a = eq + 1;
                size_t n = strlen(a);
                if (n >= 2 && a[0] == '[' && a[n - 1] == ']') {
                        a++;
                        n -= 2;
                }
                memcpy(addr, a, n);
                addr[n] = '\0';
                struct sockaddr_in *v4 = (struct sockaddr_in *) &pin.addr;
                struct sockaddr_in6 *v6 = (struct sockaddr_in6 *) &pin.addr;
                if (inet_pton(AF_INET, addr, &v4->sin_addr) == 1) {
                        v4->sin_family = AF_INET;
                        pin.len = sizeof *v4;
                } else if (inet_pton(AF_INET6, addr, &v6->sin6_addr) == 1) {
                        v6->sin6_family = AF_INET6;
                        pin.len = sizeof *v6;
                } else {
                        ok = false;
                }
        }
        if (!ok)
                return msp_err_set(err, EINVAL, "--resolve '%.300s': not HOST=ADDR (a host name "
                                                "and an IPv4 or IPv6 address)", spec);
        *ret = pin;
        return 0;
}

/* ---- bookkeeping ---- */

static void
emit(conn *c, mcp_proxy_event ev, const char *reason)
{
        if (c->p->fn)
                c->p->fn(ev, c->req.host, c->req.port, reason, c->c2u.total, c->u2c.total,
                          c->p->data);
}

/* Adds "host:port" (with ": reason" when given) to a bounded list of distinct entries. */
static void
note(char **list, size_t *n, const char *host, uint16_t port, const char *reason)
{
        char hp[MCP_EGRESS_HOST_MAX + 600];
        snprintf(hp, sizeof hp, "%s:%u%s%s", host, port, reason ? ": " : "", reason ? reason : "");
        for (size_t i = 0; i < *n; i++)
                if (strcmp(list[i], hp) == 0)
                        return;
        if (*n < MCP_PROXY_DENIED_MAX && (list[*n] = strdup(hp)))
                (*n)++;
}

/* The proxy passes on each piece as it gets it: the sender already chose the segments, and
 * Nagle would hold a response's body behind its head until the peer's ACK. */
static void
nodelay(int fd)
{
        int one = 1;
        (void) setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

static int on_client(mcp_loop *l, int fd, uint32_t events, void *data);
static int on_upstream(mcp_loop *l, int fd, uint32_t events, void *data);

/* Registers fd for `want`, or unregisters it when nothing is wanted: a hung-up socket
 * would otherwise report EPOLLHUP on every round. */
static void
interest(conn *c, int fd, uint32_t *cur, uint32_t want, mcp_io_fn fn)
{
        if (fd < 0 || *cur == want)
                return;
        if (want == 0)
                mcp_loop_del_io(c->p->loop, fd);
        else if (*cur == 0 && mcp_loop_add_io(c->p->loop, fd, want, fn, c) < 0)
                return;
        else if (*cur != 0)
                (void) mcp_loop_mod_io(c->p->loop, fd, want);
        *cur = want;
}

static void
conn_free(conn *c)
{
        mcp_proxy *p = c->p;
        interest(c, c->cfd, &c->cev, 0, NULL);
        interest(c, c->ufd, &c->uev, 0, NULL);
        if (c->state == ST_RESOLVING)
                mcp_resolver_cancel(p->conf.resolver, c->lookup);
        if (c->cfd >= 0)
                close(c->cfd);
        if (c->ufd >= 0)
                close(c->ufd);
        mcp_timer_cancel(p->loop, c->timer);
        free(c->req.forward);
        free(c->c2u.data);
        free(c->u2c.data);
        while (c->fds-- > 0)
                mcp_fds_give(&p->fds);
        if (c->prev)
                c->prev->next = c->next;
        else
                p->conns = c->next;
        if (c->next)
                c->next->prev = c->prev;
        p->n_clients--;
        free(c);
}

/* An allowed connection ends. */
static void
conn_close(conn *c, const char *reason)
{
        if (c->state == ST_RELAY)
                emit(c, MCP_PROXY_CLOSED, reason);
        conn_free(c);
}

/* The request is refused: the error response, best effort (it fits any socket buffer). */
static void
refuse(conn *c, int status, const char *why, bool policy)
{
        size_t n = 0;
        _cleanup_free_ char *resp = mcp_proxy_error_response(status, why, &n);
        if (resp)
                (void) !send(c->cfd, resp, n, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (policy && c->req.host[0]) {
                note(c->p->denied, &c->p->n_denied, c->req.host, c->req.port, NULL);
                emit(c, MCP_PROXY_DENIED, why);
        }
        conn_free(c);
}

/* The allowed request found no way to its host: the client hears "host:port: why", the
 * run's result and the decision log say why too. */
static void
fail(conn *c, int status, const char *why)
{
        char resp[MCP_EGRESS_HOST_MAX + 600];
        note(c->p->failed, &c->p->n_failed, c->req.host, c->req.port, why);
        emit(c, MCP_PROXY_FAILED, why);
        snprintf(resp, sizeof resp, "%s:%u: %s", c->req.host, c->req.port, why);
        refuse(c, status, resp, false);
}

/* ---- relay ---- */

/* One direction: read when the buffer is empty, write while it is not, shut the writer's
 * side once the reader's EOF has been passed on. 1: progress, 0: none, <0: -errno. */
static int
pump(conn *c, int src, int dst, pipe_buf *b)
{
        int progress = 0;
        if (b->len == 0 && !b->eof) {
                ssize_t n = read(src, b->data, b->cap);
                if (n < 0 && errno != EAGAIN && errno != EINTR)
                        return -errno;
                if (n == 0)
                        b->eof = true;
                if (n > 0) {
                        b->len = (size_t) n;
                        b->off = 0;
                        b->total += (uint64_t) n;
                        c->p->bytes += (uint64_t) n;
                }
                progress = n >= 0;
        }
        if (b->len > b->off) {
                ssize_t n = send(dst, b->data + b->off, b->len - b->off, MSG_NOSIGNAL);
                if (n < 0 && errno != EAGAIN && errno != EINTR)
                        return -errno;
                if (n > 0) {
                        b->off += (size_t) n;
                        progress = 1;
                        if (b->off == b->len)
                                b->len = b->off = 0;
                }
        }
        if (b->eof && b->len == 0 && !b->shut) {
                (void) shutdown(dst, SHUT_WR);
                b->shut = true;
                progress = 1;
        }
        return progress;
}

/* An upstream that was sent bytes and ended (or failed) before sending one back: a wrong
 * port, a server that refuses the client. The connection's end says so, and the run's
 * result lists it. `err`: the relay's error, or NULL. */
static const char *
unanswered(conn *c, const char *err, char *buf, size_t size)
{
        if (c->u2c.total || !c->c2u.total || !(err || c->upstream_first))
                return err;
        snprintf(buf, size, "%s before any answer", err ? err : "closed by the upstream");
        note(c->p->failed, &c->p->n_failed, c->req.host, c->req.port, buf);
        return buf;
}

static void
relay(conn *c)
{
        char why[160];
        for (;;) {
                int a = pump(c, c->cfd, c->ufd, &c->c2u);
                int b = a < 0 ? 0 : pump(c, c->ufd, c->cfd, &c->u2c);
                if (c->u2c.eof && !c->c2u.eof)
                        c->upstream_first = true;
                if (a < 0 || b < 0) {
                        conn_close(c, unanswered(c, strerror(-(a < 0 ? a : b)), why, sizeof why));
                        return;
                }
                if (c->p->bytes > c->p->conf.max_bytes) {
                        conn_close(c, "the run's byte limit was reached");
                        return;
                }
                if (c->c2u.shut && c->u2c.shut) {
                        conn_close(c, unanswered(c, NULL, why, sizeof why));
                        return;
                }
                if (a == 0 && b == 0)
                        break;
                c->last_active = mcp_now_usec();
        }
        uint32_t cw = (c->c2u.len == 0 && !c->c2u.eof ? EPOLLIN : 0) |
                      (c->u2c.len > c->u2c.off ? EPOLLOUT : 0);
        uint32_t uw = (c->u2c.len == 0 && !c->u2c.eof ? EPOLLIN : 0) |
                      (c->c2u.len > c->c2u.off ? EPOLLOUT : 0);
        interest(c, c->cfd, &c->cev, cw, on_client);
        interest(c, c->ufd, &c->uev, uw, on_upstream);
}

/* Connected: what the client sent after its head goes up first (after the forwarded head
 * of a plain request); a tunnel's client hears 200 first. */
static int
start_relay(conn *c)
{
        size_t head = c->req.head_len, rest = c->c2u.len - head;
        size_t need = c->req.forward_len + rest;
        if (need > c->c2u.cap) {
                char *d = realloc(c->c2u.data, need);
                if (!d)
                        return -ENOMEM;
                c->c2u.data = d;
                c->c2u.cap = need;
        }
        memmove(c->c2u.data + c->req.forward_len, c->c2u.data + head, rest);
        if (c->req.forward_len)
                memcpy(c->c2u.data, c->req.forward, c->req.forward_len);
        c->c2u.len = need;
        c->c2u.off = 0;
        c->c2u.total = need;            /* what goes upstream first: the head and body so far */
        if (!(c->u2c.data = malloc(BUF_SIZE)))
                return -ENOMEM;
        c->u2c.cap = BUF_SIZE;
        if (c->req.connect) {
                static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
                memcpy(c->u2c.data, ok, sizeof ok - 1);
                c->u2c.len = sizeof ok - 1;
        }
        c->state = ST_RELAY;
        return 0;
}

/* ---- connect ---- */

static void
addr_text(const struct sockaddr_storage *ss, char *out, size_t n)
{
        const void *a = ss->ss_family == AF_INET
                                ? (const void *) &((const struct sockaddr_in *) ss)->sin_addr
                                : (const void *) &((const struct sockaddr_in6 *) ss)->sin6_addr;
        if (!inet_ntop(ss->ss_family, a, out, (socklen_t) n))
                snprintf(out, n, "?");
}

static void try_connect(conn *c);

/* Why the last address did not connect, in the words a user searches for. */
static const char *
connect_error(int e, char *buf, size_t size)
{
        switch (e) {
        case ECONNREFUSED:
                return "connection refused";
        case ETIMEDOUT:
                return "connect timed out";
        case ENETUNREACH:
                return "network unreachable (no route out)";
        case EHOSTUNREACH:
                return "host unreachable";
        default:
                snprintf(buf, size, "could not connect: %s", strerror(e ? e : EIO));
                return buf;
        }
}

static void
connected(conn *c)
{
        char addr[INET6_ADDRSTRLEN];
        addr_text(&c->addrs[c->next_addr - 1], addr, sizeof addr);
        int r = start_relay(c);
        if (r < 0) {
                refuse(c, 502, "out of memory", false);
                return;
        }
        emit(c, MCP_PROXY_ALLOWED, addr);
        relay(c);
}

static void
try_connect(conn *c)
{
        char why[512];
        while (c->next_addr < c->n_addrs) {
                struct sockaddr_storage *ss = &c->addrs[c->next_addr++];
                socklen_t len = ss->ss_family == AF_INET ? sizeof(struct sockaddr_in)
                                                         : sizeof(struct sockaddr_in6);
                if (c->ufd >= 0) {
                        interest(c, c->ufd, &c->uev, 0, NULL);
                        close(c->ufd);
                        c->ufd = -1;
                } else if (c->fds < 2) {
                        if (!mcp_fds_take(&c->p->fds, why, sizeof why)) {
                                emit(c, MCP_PROXY_DENIED, why);
                                refuse(c, 503, why, false);
                                return;
                        }
                        c->fds++;
                }
                c->ufd = socket(ss->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
                if (c->ufd < 0) {
                        c->conn_errno = errno;
                        continue;
                }
                nodelay(c->ufd);
                if (connect(c->ufd, (struct sockaddr *) ss, len) == 0) {
                        connected(c);
                        return;
                }
                if (errno == EINPROGRESS) {
                        c->state = ST_CONNECTING;
                        interest(c, c->ufd, &c->uev, EPOLLOUT, on_upstream);
                        return;
                }
                c->conn_errno = errno;
        }
        fail(c, 502, connect_error(c->conn_errno, why, sizeof why));
}

/* The resolved (or pinned) addresses are in c->addrs: keep the acceptable ones. */
static void
resolved_now(conn *c)
{
        size_t kept = 0;
        for (size_t i = 0; i < c->n_addrs; i++) {
                struct sockaddr_storage *ss = &c->addrs[i];
                const char *why = c->pinned ? NULL : mcp_egress_addr_refusal((struct sockaddr *) ss);
                if (why) {
                        c->refusal = why;
                        addr_text(ss, c->refused_addr, sizeof c->refused_addr);
                        continue;
                }
                if (ss->ss_family == AF_INET)
                        ((struct sockaddr_in *) ss)->sin_port = htons(c->req.port);
                else
                        ((struct sockaddr_in6 *) ss)->sin6_port = htons(c->req.port);
                c->addrs[kept++] = *ss;
        }
        c->n_addrs = kept;
        if (kept == 0) {
                char why[512];
                if (!c->refusal) {
                        snprintf(why, sizeof why, "no address (%s)",
                                 c->lookup_error ? c->lookup_error : "name not resolved");
                        fail(c, 502, why);
                        return;
                }
                char what[256];
                snprintf(what, sizeof what, "resolves to a %s address (%s): refused",
                         c->refusal, c->refused_addr);
                snprintf(why, sizeof why, "%s %s", c->req.host, what);
                note(c->p->failed, &c->p->n_failed, c->req.host, c->req.port, what);
                refuse(c, 403, why, true);
                return;
        }
        try_connect(c);
}

/* ---- resolve ---- */

static void
on_resolved(const struct sockaddr_storage *addrs, size_t n, const char *why, void *data)
{
        conn *c = data;
        c->lookup_error = why;
        c->n_addrs = n;
        memcpy(c->addrs, addrs, n * sizeof addrs[0]);
        resolved_now(c);
}

static void
resolve(conn *c)
{
        mcp_proxy *p = c->p;
        /* The pins are normalized names: the request's in any case, one trailing dot
         * dropped, as the policy matched it (else a lookup would answer for a pinned name). */
        size_t hl = strlen(c->req.host);
        if (hl > 0 && c->req.host[hl - 1] == '.')
                hl--;
        for (size_t i = 0; i < p->conf.n_pins; i++)
                if (strlen(p->conf.pins[i].host) == hl &&
                    strncasecmp(p->conf.pins[i].host, c->req.host, hl) == 0) {
                        memcpy(&c->addrs[0], &p->conf.pins[i].addr, sizeof c->addrs[0]);
                        c->n_addrs = 1;
                        c->pinned = true;
                        resolved_now(c);
                        return;
                }
        /* A literal (the policy allowed it as one): no lookup. */
        struct sockaddr_in *v4 = (struct sockaddr_in *) &c->addrs[0];
        struct sockaddr_in6 *v6 = (struct sockaddr_in6 *) &c->addrs[0];
        memset(&c->addrs[0], 0, sizeof c->addrs[0]);
        if (inet_pton(AF_INET, c->req.host, &v4->sin_addr) == 1 ||
            inet_pton(AF_INET6, c->req.host, &v6->sin6_addr) == 1) {
                c->addrs[0].ss_family = strchr(c->req.host, ':') ? AF_INET6 : AF_INET;
                c->n_addrs = 1;
                resolved_now(c);
                return;
        }
        if (!p->conf.resolver ||
            mcp_resolver_ask(p->conf.resolver, c->req.host, on_resolved, c, &c->lookup) < 0) {
                fail(c, 502, "the resolver could not start");
                return;
        }
        c->state = ST_RESOLVING;
}

/* ---- head and check ---- */

static void
check(conn *c)
{
        mcp_proxy *p = c->p;
        char why[512];
        if (!mcp_egress_allows(p->conf.policy, c->req.host, c->req.port)) {
                snprintf(why, sizeof why, "%s:%u is not in this sandbox's network allowlist",
                         c->req.host, c->req.port);
                refuse(c, 403, why, true);
        } else if (p->n_upstream >= p->conf.max_conns) {
                snprintf(why, sizeof why, "%s:%u refused: the run's connection limit (%u) "
                         "was reached", c->req.host, c->req.port, p->conf.max_conns);
                refuse(c, 403, why, true);
        } else if (p->bytes >= p->conf.max_bytes) {
                snprintf(why, sizeof why, "%s:%u refused: the run's byte limit (%llu) was "
                         "reached", c->req.host, c->req.port,
                         (unsigned long long) p->conf.max_bytes);
                refuse(c, 403, why, true);
        } else {
                /* Counted when let through: requests resolving at once cannot pass the limit. */
                p->n_upstream++;
                resolve(c);
        }
}

static void
read_head(conn *c)
{
        for (;;) {
                ssize_t n = read(c->cfd, c->c2u.data + c->c2u.len, c->c2u.cap - c->c2u.len);
                if (n < 0 && (errno == EAGAIN || errno == EINTR))
                        break;
                if (n <= 0) {
                        conn_free(c);
                        return;
                }
                c->c2u.len += (size_t) n;
                c->last_active = mcp_now_usec();
                if (c->c2u.len == c->c2u.cap)
                        break;
        }
        const char *why = NULL;
        int s = mcp_proxy_parse_head(c->c2u.data, c->c2u.len, &c->req, &why);
        if (s == -EAGAIN)
                return;
        if (s != 0) {
                refuse(c, s, why, false);
                return;
        }
        interest(c, c->cfd, &c->cev, 0, NULL);
        check(c);
}

/* ---- callbacks ---- */

static int
on_client(mcp_loop *l, int fd, uint32_t events, void *data)
{
        (void) l;
        (void) fd;
        (void) events;
        conn *c = data;
        if (c->state == ST_HEAD)
                read_head(c);
        else if (c->state == ST_RELAY)
                relay(c);
        return 0;
}

static int
on_upstream(mcp_loop *l, int fd, uint32_t events, void *data)
{
        (void) l;
        (void) events;
        conn *c = data;
        if (c->state == ST_CONNECTING) {
                int e = 0;
                socklen_t len = sizeof e;
                if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &len) < 0)
                        e = errno;
                if (e == EINPROGRESS)
                        return 0;
                interest(c, c->ufd, &c->uev, 0, NULL);
                if (e != 0) {
                        c->conn_errno = e;
                        try_connect(c);
                }
                else
                        connected(c);
                return 0;
        }
        relay(c);
        return 0;
}

static int
on_idle(mcp_loop *l, void *data)
{
        conn *c = data;
        uint64_t idle = c->p->conf.idle_ms * 1000, quiet = mcp_now_usec() - c->last_active;
        c->timer = NULL;
        if (quiet < idle) {
                (void) mcp_loop_add_timer(l, idle - quiet, on_idle, c, &c->timer);
                return 0;
        }
        if (c->state == ST_RELAY)
                conn_close(c, "idle timeout");
        else if (c->state == ST_HEAD)
                conn_free(c);
        else
                fail(c, 504, c->state == ST_RESOLVING ? "name resolution timed out"
                                                      : "connect timed out");
        return 0;
}

/* A new client: within MAX_CLIENTS, its fd from the run's share. Refused, it is closed at once (accepting it
 * first: left in the backlog, it would wake the loop again and again); the first refusal
 * of a row is the decision logged. */
static bool
admit_client(mcp_proxy *p)
{
        char why[160];
        if (p->n_clients >= MAX_CLIENTS)
                snprintf(why, sizeof why, "the proxy's %u connections at once are open", MAX_CLIENTS);
        else if (mcp_fds_take(&p->fds, why, sizeof why)) {
                p->refusing = false;
                return true;
        }
        if (!p->refusing && p->fn)
                p->fn(MCP_PROXY_DENIED, "", 0, why, 0, 0, p->data);
        p->refusing = true;
        return false;
}

static int
on_accept(mcp_loop *l, int fd, uint32_t events, void *data)
{
        (void) events;
        mcp_proxy *p = data;
        for (;;) {
                int cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
                if (cfd < 0)
                        return 0;
                if (!admit_client(p)) {
                        close(cfd);
                        continue;
                }
                nodelay(cfd);
                conn *c = calloc(1, sizeof(*c));
                char *buf = c ? malloc(BUF_SIZE) : NULL;
                if (!buf || mcp_loop_add_io(l, cfd, EPOLLIN, on_client, c) < 0) {
                        free(buf);
                        free(c);
                        close(cfd);
                        mcp_fds_give(&p->fds);
                        continue;
                }
                *c = (conn) { .p = p, .cfd = cfd, .ufd = -1, .cev = EPOLLIN,
                              .c2u = { .data = buf, .cap = BUF_SIZE },
                              .last_active = mcp_now_usec(), .next = p->conns, .fds = 1 };
                if (p->conns)
                        p->conns->prev = c;
                p->conns = c;
                p->n_clients++;
                (void) mcp_loop_add_timer(l, p->conf.idle_ms * 1000, on_idle, c, &c->timer);
        }
}

/* ---- the handover: the sandbox's listener arrives on the unix socket ---- */

static void
handover_close(mcp_proxy *p)
{
        if (p->hconn >= 0) {
                mcp_loop_del_io(p->loop, p->hconn);
                close(p->hconn);
                p->hconn = -1;
        }
        if (p->hfd >= 0) {
                mcp_loop_del_io(p->loop, p->hfd);
                close(p->hfd);
                p->hfd = -1;
        }
}

/* A listener that is not what the init makes is refused: the sandbox then has no proxy. */
static int
on_handover(mcp_loop *l, int fd, uint32_t events, void *data)
{
        (void) events;
        mcp_proxy *p = data;
        int lfd = -1;
        int r = egress_listener_recv(fd, &lfd);
        if (r == -EAGAIN)
                return 0;
        handover_close(p);
        if (r < 0 || fcntl(lfd, F_SETFL, O_NONBLOCK) < 0 ||
            mcp_loop_add_io(l, lfd, EPOLLIN, on_accept, p) < 0) {
                if (lfd >= 0)
                        close(lfd);
                return 0;
        }
        p->lfd = lfd;
        return 0;
}

/* The first connection is the init's (it connects before the program exists); the socket
 * takes no other. */
static int
on_handover_conn(mcp_loop *l, int fd, uint32_t events, void *data)
{
        (void) events;
        mcp_proxy *p = data;
        int hc = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (hc < 0)
                return 0;
        mcp_loop_del_io(l, p->hfd);
        close(p->hfd);
        p->hfd = -1;
        if (mcp_loop_add_io(l, hc, EPOLLIN, on_handover, p) < 0) {
                close(hc);
                return 0;
        }
        p->hconn = hc;
        return 0;
}

int
mcp_proxy_new(mcp_loop *loop, int handover_fd, const mcp_proxy_conf *conf, mcp_proxy_event_fn fn,
              void *data, mcp_proxy **ret, msp_err *err)
{
        mcp_proxy *p = calloc(1, sizeof(*p));
        if (!p) {
                close(handover_fd);
                return msp_err_set(err, ENOMEM, "egress proxy: out of memory");
        }
        *p = (mcp_proxy) { .loop = loop, .hfd = handover_fd, .hconn = -1, .lfd = -1,
                           .conf = *conf, .fn = fn, .data = data };
        if (mcp_fds_share_open(conf->fds, conf->tenant, &p->fds) < 0) {
                close(handover_fd);
                free(p);
                return msp_err_set(err, ENOMEM, "egress proxy: out of memory");
        }
        if (fcntl(handover_fd, F_SETFL, O_NONBLOCK) < 0 ||
            mcp_loop_add_io(loop, handover_fd, EPOLLIN, on_handover_conn, p) < 0) {
                int r = msp_err_sys(err, errno ? errno : EINVAL, "egress proxy: listen");
                close(handover_fd);
                mcp_fds_share_close(&p->fds);
                free(p);
                return r;
        }
        *ret = p;
        return 0;
}

void
mcp_proxy_shutdown(mcp_proxy *p)
{
        if (!p)
                return;
        handover_close(p);
        while (p->conns)
                conn_close(p->conns, "the run ended");
        if (p->lfd >= 0) {
                mcp_loop_del_io(p->loop, p->lfd);
                close(p->lfd);
                p->lfd = -1;
        }
}

mcp_proxy *
mcp_proxy_free(mcp_proxy *p)
{
        if (!p)
                return NULL;
        mcp_proxy_shutdown(p);
        mcp_fds_share_close(&p->fds);
        for (size_t i = 0; i < p->n_denied; i++)
                free(p->denied[i]);
        for (size_t i = 0; i < p->n_failed; i++)
                free(p->failed[i]);
        free(p);
        return NULL;
}

size_t
mcp_proxy_denied(const mcp_proxy *p, const char *const **ret)
{
        *ret = (const char *const *) p->denied;
        return p->n_denied;
}

size_t
mcp_proxy_failed(const mcp_proxy *p, const char *const **ret)
{
        *ret = (const char *const *) p->failed;
        return p->n_failed;
}

uint64_t
mcp_proxy_bytes(const mcp_proxy *p)
{
        return p->bytes;
}
