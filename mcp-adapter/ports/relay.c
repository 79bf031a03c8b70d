/* The byte pump (see relay.h). Each socket is registered with the loop only while there is
 * something to wait for on it (room to read into, bytes to write to it): a socket that hung
 * up is never polled for nothing, which level-triggered epoll would report again and
 * again. */
#include "ports/relay.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "oci/oci.h"

/* One way: bytes read from fd[from], to be written to fd[1 - from]. */
struct way {
        char buf[MCP_RELAY_BUF];
        size_t off, len;        /* held bytes: buf[off..off+len) */
        bool eof;               /* fd[from] said end of file */
        bool shut;              /* ... and the other side was told (SHUT_WR) */
        uint64_t moved;
};

struct mcp_relay {
        mcp_loop *loop;
        int fd[2];
        uint32_t polled[2];     /* the events fd[i] is registered for; 0: not registered */
        struct way way[2];      /* way[i]: from fd[i] */
        uint64_t idle_usec, last_usec;
        mcp_timer *timer;
        mcp_relay_done_fn done;
        void *data;
};

static void
close_all(mcp_relay *r)
{
        for (int i = 0; i < 2; i++) {
                if (r->polled[i])
                        mcp_loop_del_io(r->loop, r->fd[i]);
                r->polled[i] = 0;
                if (r->fd[i] >= 0)
                        (void) close(r->fd[i]);
                r->fd[i] = -1;
        }
        if (r->timer)
                mcp_timer_cancel(r->loop, r->timer);
        r->timer = NULL;
}

void
mcp_relay_free(mcp_relay *r)
{
        if (!r)
                return;
        close_all(r);
        free(r);
}

/* The end: everything closed, done told, r freed. */
static void
finish(mcp_relay *r, int result)
{
        close_all(r);
        if (r->done)
                r->done(r->data, result, r->way[0].moved, r->way[1].moved);
        free(r);
}

static int on_io(mcp_loop *loop, int fd, uint32_t events, void *data);

/* Registers each socket for what it may do now. 0 or -errno. */
static int
update(mcp_relay *r)
{
        for (int i = 0; i < 2; i++) {
                const struct way *in = &r->way[i], *out = &r->way[1 - i];
                uint32_t want = 0;
                if (!in->eof && in->off + in->len < sizeof in->buf)
                        want |= EPOLLIN;
                if (out->len > 0)
                        want |= EPOLLOUT;
                if (want == r->polled[i])
                        continue;
                int k;
                if (!want)
                        mcp_loop_del_io(r->loop, r->fd[i]), k = 0;
                else if (!r->polled[i])
                        k = mcp_loop_add_io(r->loop, r->fd[i], want, on_io, r);
                else
                        k = mcp_loop_mod_io(r->loop, r->fd[i], want);
                if (k < 0)
                        return k;
                r->polled[i] = want;
        }
        return 0;
}

/* Writes what way w holds to its destination. 0 or -errno (the destination failed). */
static int
flush(mcp_relay *r, int w)
{
        struct way *way = &r->way[w];
        while (way->len > 0) {
                ssize_t n = send(r->fd[1 - w], way->buf + way->off, way->len, MSG_NOSIGNAL | MSG_DONTWAIT);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
                        return 0;
                if (n < 0)
                        return -errno;
                way->off += (size_t) n;
                way->len -= (size_t) n;
                way->moved += (uint64_t) n;
                r->last_usec = mcp_now_usec();
        }
        way->off = 0;
        return 0;
}

/* Reads once from fd[w] into way w. 0 or -errno. */
static int
fill(mcp_relay *r, int w)
{
        struct way *way = &r->way[w];
        if (way->eof)
                return 0;
        if (way->off > 0 && way->len > 0)
                memmove(way->buf, way->buf + way->off, way->len);
        way->off = 0;
        size_t room = sizeof way->buf - way->len;
        if (room == 0)
                return 0;
        ssize_t n = recv(r->fd[w], way->buf + way->len, room, MSG_DONTWAIT);
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
                return 0;
        if (n < 0)
                return -errno;
        if (n == 0)
                way->eof = true;
        way->len += (size_t) n;
        r->last_usec = mcp_now_usec();
        return 0;
}

/* Moves what can move now, half-closes ended ways. 1 when both ways are over, 0 when it
 * goes on, -errno. */
static int
pump(mcp_relay *r)
{
        for (int w = 0; w < 2; w++) {
                int k = flush(r, w);
                if (k < 0)
                        return k;
                struct way *way = &r->way[w];
                if (way->eof && way->len == 0 && !way->shut) {
                        /* ENOTCONN: the other side is gone already; its own way says so. */
                        (void) shutdown(r->fd[1 - w], SHUT_WR);
                        way->shut = true;
                }
        }
        if (r->way[0].shut && r->way[1].shut)
                return 1;
        return update(r);
}

static int
on_io(mcp_loop *loop, int fd, uint32_t events, void *data)
{
        (void) loop;
        mcp_relay *r = data;
        int side = fd == r->fd[0] ? 0 : 1;
        int k = 0;
        if (events & (EPOLLIN | EPOLLHUP | EPOLLERR))
                k = fill(r, side);
        if (k == 0 && (events & EPOLLERR) && !(r->polled[side] & EPOLLIN)) {
                /* An error with nothing to read for: the socket's own error ends it. */
                int so = 0;
                socklen_t len = sizeof so;
                if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &so, &len) == 0 && so)
                        k = -so;
        }
        if (k == 0)
                k = pump(r);
        if (k != 0)
                finish(r, k > 0 ? 0 : k);
        return 0;
}

static int
on_idle(mcp_loop *loop, void *data)
{
        mcp_relay *r = data;
        r->timer = NULL;        /* freed by the loop when this returns */
        uint64_t now = mcp_now_usec(), quiet = now - r->last_usec;
        if (quiet >= r->idle_usec) {
                finish(r, -ETIMEDOUT);
                return 0;
        }
        if (mcp_loop_add_timer(loop, r->idle_usec - quiet, on_idle, r, &r->timer) < 0)
                finish(r, -ENOMEM);
        return 0;
}

int
mcp_relay_new(mcp_loop *loop, int a, int b, const void *pending, size_t pending_len,
              uint64_t idle_usec, mcp_relay_done_fn done, void *data, mcp_relay **ret)
{
        mcp_relay *r = calloc(1, sizeof *r);
        if (!r) {
                (void) close(a);
                (void) close(b);
                return -ENOMEM;
        }
        *r = (mcp_relay){ .loop = loop, .fd = { a, b }, .idle_usec = idle_usec ? idle_usec : 1,
                          .last_usec = mcp_now_usec(), .done = done, .data = data };
        if (pending_len > sizeof r->way[0].buf) {
                mcp_relay_free(r);
                return -E2BIG;
        }
        if (pending_len)
                memcpy(r->way[0].buf, pending, pending_len);
        r->way[0].len = pending_len;
        int k = mcp_loop_add_timer(loop, r->idle_usec, on_idle, r, &r->timer);
        if (k == 0) {
                k = pump(r);    /* no way has ended yet: 0 or -errno */
        }
        if (k < 0) {
                mcp_relay_free(r);
                return k;
        }
        *ret = r;
        return 0;
}
