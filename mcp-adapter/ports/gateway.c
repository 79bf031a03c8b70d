/* The port gateway's connection (see gateway.h): the head, the check, the connect, then
 * the relay. One timer serves the first two steps' deadlines; it also runs the head
 * handed over in pre on the loop's next turn, so that done is never called from within
 * mcp_gw_conn_start. */
#include "ports/gateway.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ports/gateway-head.h"
#include "ports/relay.h"

/* GW_SENDING and GW_RESPONSE only with MCP_GW_ANSWERED: the head written to the port by
 * the gateway itself, the port's response head read and dropped. */
enum gw_state { GW_HEAD, GW_CONNECTING, GW_SENDING, GW_RESPONSE };

struct mcp_gw_conn {
        mcp_loop *loop;
        enum gw_state state;
        unsigned flags;
        bool swapped;                   /* the relay's a is the port (MCP_GW_ANSWERED) */
        size_t sent;                    /* of out, in GW_SENDING */
        int client, upstream;           /* -1: none (or the relay's now) */
        bool client_polled, upstream_polled;
        mcp_timer *timer;
        uint64_t deadline, idle_usec;
        const mcp_gw_ops *ops;
        void *data;
        mcp_relay *relay;
        mcp_gw_route route;
        size_t len;                     /* bytes in head */
        char head[MCP_GW_HEAD_MAX];
        char scratch[MCP_GW_HEAD_MAX + 1];
        mcp_gw_request req;
        size_t out_len;                 /* the head to send on, and the bytes after it */
        char out[MCP_RELAY_BUF];
};

static void
close_all(mcp_gw_conn *c)
{
        if (c->client_polled)
                mcp_loop_del_io(c->loop, c->client);
        if (c->upstream_polled)
                mcp_loop_del_io(c->loop, c->upstream);
        c->client_polled = c->upstream_polled = false;
        if (c->client >= 0)
                (void) close(c->client);
        if (c->upstream >= 0)
                (void) close(c->upstream);
        c->client = c->upstream = -1;
        if (c->timer)
                mcp_timer_cancel(c->loop, c->timer);
        c->timer = NULL;
}

void
mcp_gw_conn_free(mcp_gw_conn *c)
{
        if (!c)
                return;
        close_all(c);
        mcp_relay_free(c->relay);
        free(c);
}

static void
end(mcp_gw_conn *c, int status, int result, uint64_t up, uint64_t down)
{
        close_all(c);
        if (c->ops->done)
                c->ops->done(c->data, status, result, up, down);
        free(c);
}

static const char *
reason(int status)
{
        switch (status) {
        case 400: return "Bad Request";
        case 401: return "Unauthorized";
        case 403: return "Forbidden";
        case 404: return "Not Found";
        case 408: return "Request Timeout";
        case 431: return "Request Header Fields Too Large";
        case 502: return "Bad Gateway";
        case 503: return "Service Unavailable";
        default: return "Error";
        }
}

/* A minimal response, sent in one go (it is far smaller than any socket buffer), then the
 * end. */
static void
refuse(mcp_gw_conn *c, int status, const char *text)
{
        if (status < 400 || status > 599)
                status = 500;
        if (c->flags & MCP_GW_ANSWERED) {
                end(c, status, 0, 0, 0);        /* the client had its answer already */
                return;
        }
        char buf[512];
        int n = snprintf(buf, sizeof buf, "HTTP/1.1 %d %s\r\nContent-Type: text/plain; "
                         "charset=utf-8\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n%s\n",
                         status, reason(status), strlen(text) + 1, text);
        ssize_t sent = -1;
        if (n > 0 && (size_t) n < sizeof buf)
                sent = send(c->client, buf, (size_t) n, MSG_NOSIGNAL | MSG_DONTWAIT);
        (void) shutdown(c->client, SHUT_WR);
        end(c, status, 0, 0, sent > 0 ? (uint64_t) sent : 0);
}

static int on_timer(mcp_loop *loop, void *data);

/* The one timer, due at usec from now. */
static int
arm(mcp_gw_conn *c, uint64_t usec)
{
        if (c->timer)
                mcp_timer_cancel(c->loop, c->timer);
        c->timer = NULL;
        return mcp_loop_add_timer(c->loop, usec, on_timer, c, &c->timer);
}

static void
relay_done(void *data, int result, uint64_t up, uint64_t down)
{
        mcp_gw_conn *c = data;
        c->relay = NULL;
        if (c->swapped)
                end(c, 0, result, down, up);
        else
                end(c, 0, result, up, down);
}

/* The relay from the client's side (the head and the bytes after it in out), or, with
 * MCP_GW_ANSWERED, from the port's (what followed its response head, in out). */
static void
start_relay(mcp_gw_conn *c)
{
        if (c->upstream_polled)
                mcp_loop_del_io(c->loop, c->upstream);
        c->upstream_polled = false;
        if (c->timer)
                mcp_timer_cancel(c->loop, c->timer);
        c->timer = NULL;
        int a = c->swapped ? c->upstream : c->client, b = c->swapped ? c->client : c->upstream;
        c->client = c->upstream = -1;           /* the relay's, on every path */
        int k = mcp_relay_new(c->loop, a, b, c->out, c->out_len, c->idle_usec, relay_done, c,
                              &c->relay);
        if (k < 0)
                end(c, -1, k, 0, 0);
}

/* MCP_GW_ANSWERED: the head written to the port, then its response head read (into head,
 * free by now) and dropped. */
static void
answered_step(mcp_gw_conn *c)
{
        if (c->state == GW_SENDING) {
                ssize_t n = send(c->upstream, c->out + c->sent, c->out_len - c->sent,
                                 MSG_NOSIGNAL | MSG_DONTWAIT);
                if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
                        return;
                if (n < 0) {
                        refuse(c, 502, "");
                        return;
                }
                c->sent += (size_t) n;
                if (c->sent < c->out_len)
                        return;
                c->state = GW_RESPONSE;
                c->len = 0;
                if (mcp_loop_mod_io(c->loop, c->upstream, EPOLLIN) < 0)
                        refuse(c, 503, "");
                return;
        }
        ssize_t n = recv(c->upstream, c->head + c->len, sizeof c->head - c->len, MSG_DONTWAIT);
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
                return;
        if (n <= 0) {
                refuse(c, 502, "");
                return;
        }
        c->len += (size_t) n;
        size_t at = gw_head_end(c->head, c->len);
        if (!at) {
                if (c->len == sizeof c->head)
                        refuse(c, 502, "");
                return;
        }
        /* "HTTP/1.x 101 ...": the port took the upgrade the client was told of. */
        if (at < 13 || memcmp(c->head, "HTTP/1.", 7) != 0 || memcmp(c->head + 8, " 101", 4) != 0 ||
            (c->head[12] != ' ' && c->head[12] != '\r')) {
                refuse(c, 502, "");
                return;
        }
        c->out_len = c->len - at;
        memcpy(c->out, c->head + at, c->out_len);
        c->swapped = true;
        start_relay(c);
}

static int
on_upstream(mcp_loop *loop, int fd, uint32_t events, void *data)
{
        (void) loop;
        (void) events;
        mcp_gw_conn *c = data;
        if (c->state != GW_CONNECTING) {
                answered_step(c);
                return 0;
        }
        int so = 0;
        socklen_t len = sizeof so;
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &so, &len) < 0)
                so = errno;
        if (so) {
                char text[96];
                snprintf(text, sizeof text, "port %u: %s", c->route.port,
                         so == ECONNREFUSED ? "nothing listens on it" : "cannot be reached");
                refuse(c, 502, text);
                return 0;
        }
        if (c->flags & MCP_GW_ANSWERED) {
                c->state = GW_SENDING;
                c->sent = 0;
                answered_step(c);
        } else {
                start_relay(c);
        }
        return 0;
}

/* A complete head in head[0..end): checked, rewritten, and its port connected to. */
static void
take_head(mcp_gw_conn *c, size_t end_at)
{
        if (gw_head_parse(c->head, end_at, c->scratch, &c->req) < 0) {
                refuse(c, 400, "not an HTTP/1.x request");
                return;
        }
        memset(&c->route, 0, sizeof c->route);
        int status = c->ops->check(c->data, &c->req, &c->route);
        if (status != 0) {
                refuse(c, status, status == 404 ? "not found" : status == 401 ?
                       "authentication required" : status == 403 ? "forbidden" : "refused");
                return;
        }
        c->route.session_id[sizeof c->route.session_id - 1] = '\0';
        size_t rest = c->len - end_at;
        ssize_t n = gw_head_rewrite(&c->req, c->route.strip, c->out, sizeof c->out - rest);
        if (n < 0) {
                refuse(c, n == -ENOENT ? 404 : 431, n == -ENOENT ? "not found" : "head too large");
                return;
        }
        memcpy(c->out + n, c->head + end_at, rest);
        c->out_len = (size_t) n + rest;
        if (c->client_polled)
                mcp_loop_del_io(c->loop, c->client);
        c->client_polled = false;
        msp_err err = { 0 };
        int fd = -1;
        int k = c->ops->connect(c->data, c->route.session_id, c->route.port, &fd, &err);
        if (k < 0) {
                char text[96];
                snprintf(text, sizeof text, "port %u: %s", c->route.port,
                         k == -ECONNREFUSED ? "nothing listens on it" : "cannot be reached");
                refuse(c, 502, text);
                return;
        }
        c->upstream = fd;
        c->state = GW_CONNECTING;
        c->deadline = mcp_now_usec() + MCP_GW_CONNECT_USEC;
        k = mcp_loop_add_io(c->loop, fd, EPOLLOUT, on_upstream, c);
        if (k == 0)
                k = arm(c, MCP_GW_CONNECT_USEC);
        if (k < 0) {
                refuse(c, 503, "out of resources");
                return;
        }
        c->upstream_polled = true;
}

/* After more of the head came: goes on when it is whole. */
static void
head_progress(mcp_gw_conn *c)
{
        size_t at = gw_head_end(c->head, c->len);
        if (at)
                take_head(c, at);
        else if (c->len == sizeof c->head)
                refuse(c, 431, "head too large");
}

static int
on_client(mcp_loop *loop, int fd, uint32_t events, void *data)
{
        (void) loop;
        (void) events;
        mcp_gw_conn *c = data;
        ssize_t n = recv(fd, c->head + c->len, sizeof c->head - c->len, MSG_DONTWAIT);
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
                return 0;
        if (n <= 0) {
                end(c, -1, n < 0 ? -errno : 0, 0, 0);   /* left before its head was whole */
                return 0;
        }
        c->len += (size_t) n;
        head_progress(c);
        return 0;
}

static int
on_timer(mcp_loop *loop, void *data)
{
        (void) loop;
        mcp_gw_conn *c = data;
        c->timer = NULL;        /* freed by the loop when this returns */
        uint64_t now = mcp_now_usec();
        if (now >= c->deadline) {
                if (c->state == GW_HEAD)
                        refuse(c, 408, "no request in time");
                else if (c->state != GW_CONNECTING)
                        refuse(c, 502, "the port did not answer in time");
                else
                        refuse(c, 502, "the port did not answer in time");
                return 0;
        }
        if (c->state == GW_HEAD && (gw_head_end(c->head, c->len) || c->len == sizeof c->head)) {
                head_progress(c);       /* the head handed over in pre */
                return 0;
        }
        if (arm(c, c->deadline - now) < 0)
                end(c, -1, -ENOMEM, 0, 0);
        return 0;
}

int
mcp_gw_conn_start(mcp_loop *loop, int client, const void *pre, size_t pre_len, unsigned flags,
                  uint64_t idle_usec, const mcp_gw_ops *ops, void *data, mcp_gw_conn **ret)
{
        if (pre_len > MCP_GW_HEAD_MAX || !ops || !ops->check || !ops->connect ||
            (flags & ~MCP_GW_ANSWERED) ||
            ((flags & MCP_GW_ANSWERED) && gw_head_end(pre, pre_len) != pre_len)) {
                (void) close(client);
                return -EINVAL;
        }
        mcp_gw_conn *c = malloc(sizeof *c);
        if (!c) {
                (void) close(client);
                return -ENOMEM;
        }
        c->loop = loop;
        c->state = GW_HEAD;
        c->flags = flags;
        c->swapped = false;
        c->sent = 0;
        c->client = client;
        c->upstream = -1;
        c->client_polled = c->upstream_polled = false;
        c->timer = NULL;
        c->deadline = mcp_now_usec() + MCP_GW_HEAD_USEC;
        c->idle_usec = idle_usec ? idle_usec : MCP_GW_IDLE_USEC;
        c->ops = ops;
        c->data = data;
        c->relay = NULL;
        c->len = pre_len;
        if (pre_len)
                memcpy(c->head, pre, pre_len);
        c->out_len = 0;
        /* With MCP_GW_ANSWERED the client's bytes are the upgraded protocol's: the
         * relay reads them, not this. */
        int k = 0;
        if (!(flags & MCP_GW_ANSWERED)) {
                k = mcp_loop_add_io(loop, client, EPOLLIN, on_client, c);
                c->client_polled = k == 0;
        }
        if (k == 0)
                k = arm(c, pre_len ? 0 : MCP_GW_HEAD_USEC);
        if (k < 0) {
                mcp_gw_conn_free(c);
                return k;
        }
        *ret = c;
        return 0;
}
