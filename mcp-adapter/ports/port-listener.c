/* The loopback listener of an exposed port (see port-listener.h). Each accepted connection
 * is one gateway connection (gateway.h) with this listener's check: the token. */
#include "ports/port-listener.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ports/gateway.h"

struct conn_slot {
        mcp_port_listener *owner;
        mcp_gw_conn *conn;              /* NULL: free */
};

struct mcp_port_listener {
        mcp_loop *loop;
        int fd;
        bool polled;
        uint16_t port, listen_port;
        char session_id[MCP_GW_SESSION_MAX];
        char token[MCP_PORT_TOKEN_HEX + 1];
        char url[64 + MCP_PORT_TOKEN_HEX];
        mcp_port_connect_fn connect_fn;
        void *connect_data;
        unsigned active;
        uint64_t up, down;
        struct conn_slot slots[MCP_PORT_LISTENER_CONNS];
};

/* "/<token>" then '/', '?' or the end. The token's bytes are compared in constant time;
 * the length of the target is no secret. */
static int
check(void *data, const mcp_gw_request *req, mcp_gw_route *route)
{
        struct conn_slot *s = data;
        const mcp_port_listener *l = s->owner;
        const char *t = req->target;
        size_t n = strlen(t);
        if (n < 1 + MCP_PORT_TOKEN_HEX)
                return 404;
        unsigned char diff = 0;
        for (size_t i = 0; i < MCP_PORT_TOKEN_HEX; i++)
                diff |= (unsigned char) (t[1 + i] ^ l->token[i]);
        char after = t[1 + MCP_PORT_TOKEN_HEX];
        if (diff != 0 || (after != '\0' && after != '/' && after != '?'))
                return 404;
        snprintf(route->session_id, sizeof route->session_id, "%s", l->session_id);
        route->port = l->port;
        route->strip = 1 + MCP_PORT_TOKEN_HEX;
        return 0;
}

static int
gw_connect(void *data, const char *session_id, uint16_t port, int *ret_fd, msp_err *err)
{
        struct conn_slot *s = data;
        return s->owner->connect_fn(s->owner->connect_data, session_id, port, ret_fd, err);
}

static int on_accept(mcp_loop *loop, int fd, uint32_t events, void *data);

/* Polls the listener while a slot is free; a full table leaves new ones in the backlog. */
static void
update(mcp_port_listener *l)
{
        bool want = l->active < MCP_PORT_LISTENER_CONNS;
        if (want == l->polled)
                return;
        if (want)
                l->polled = mcp_loop_add_io(l->loop, l->fd, EPOLLIN, on_accept, l) == 0;
        else {
                mcp_loop_del_io(l->loop, l->fd);
                l->polled = false;
        }
}

static void
gw_done(void *data, int status, int result, uint64_t up, uint64_t down)
{
        (void) status;
        (void) result;
        struct conn_slot *s = data;
        mcp_port_listener *l = s->owner;
        s->conn = NULL;
        l->active--;
        l->up += up;
        l->down += down;
        update(l);
}

static const mcp_gw_ops listener_ops = { .check = check, .connect = gw_connect, .done = gw_done };

static int
on_accept(mcp_loop *loop, int fd, uint32_t events, void *data)
{
        (void) events;
        mcp_port_listener *l = data;
        for (unsigned i = 0; i < MCP_PORT_LISTENER_CONNS && l->active < MCP_PORT_LISTENER_CONNS; i++) {
                if (l->slots[i].conn)
                        continue;
                int c = accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
                if (c < 0)
                        break;          /* EAGAIN: none left; else tried again next time */
                struct conn_slot *s = &l->slots[i];
                s->owner = l;
                if (mcp_gw_conn_start(loop, c, NULL, 0, 0, 0, &listener_ops, s, &s->conn) == 0)
                        l->active++;
                else
                        s->conn = NULL;
        }
        update(l);
        return 0;
}

int
mcp_port_listener_new(mcp_loop *loop, mcp_port_connect_fn connect_fn, void *data,
                      const char *session_id, uint16_t port, mcp_port_listener **ret,
                      msp_err *err)
{
        if (!connect_fn || port == 0 || !session_id || !*session_id ||
            strlen(session_id) >= MCP_GW_SESSION_MAX)
                return msp_err_set(err, EINVAL, "port listener: no session, port or connect");
        mcp_port_listener *l = calloc(1, sizeof *l);
        if (!l)
                return msp_err_sys(err, ENOMEM, "port listener");
        l->loop = loop;
        l->port = port;
        l->connect_fn = connect_fn;
        l->connect_data = data;
        snprintf(l->session_id, sizeof l->session_id, "%s", session_id);
        unsigned char raw[MCP_PORT_TOKEN_HEX / 2];
        if (getrandom(raw, sizeof raw, 0) != (ssize_t) sizeof raw) {
                free(l);
                return msp_err_sys(err, errno ? errno : EIO, "port listener: getrandom");
        }
        for (size_t i = 0; i < sizeof raw; i++)
                snprintf(l->token + 2 * i, 3, "%02x", raw[i]);
        l->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t len = sizeof sa;
        if (l->fd < 0 || bind(l->fd, (struct sockaddr *) &sa, sizeof sa) < 0 ||
            listen(l->fd, 64) < 0 || getsockname(l->fd, (struct sockaddr *) &sa, &len) < 0) {
                int e = errno;
                mcp_port_listener_free(l);
                return msp_err_sys(err, e, "port listener on 127.0.0.1");
        }
        l->listen_port = ntohs(sa.sin_port);
        snprintf(l->url, sizeof l->url, "http://127.0.0.1:%u/%s/", l->listen_port, l->token);
        update(l);
        if (!l->polled) {
                mcp_port_listener_free(l);
                return msp_err_sys(err, ENOMEM, "port listener: poll");
        }
        *ret = l;
        return 0;
}

const char *
mcp_port_listener_url(const mcp_port_listener *l)
{
        return l->url;
}

uint16_t
mcp_port_listener_port(const mcp_port_listener *l)
{
        return l->listen_port;
}

unsigned
mcp_port_listener_connections(const mcp_port_listener *l)
{
        return l->active;
}

void
mcp_port_listener_bytes(const mcp_port_listener *l, uint64_t *up, uint64_t *down)
{
        *up = l->up;
        *down = l->down;
}

mcp_port_listener *
mcp_port_listener_free(mcp_port_listener *l)
{
        if (!l)
                return NULL;
        for (unsigned i = 0; i < MCP_PORT_LISTENER_CONNS; i++)
                mcp_gw_conn_free(l->slots[i].conn);
        if (l->polled)
                mcp_loop_del_io(l->loop, l->fd);
        if (l->fd >= 0)
                (void) close(l->fd);
        explicit_bzero(l->token, sizeof l->token);
        explicit_bzero(l->url, sizeof l->url);
        free(l);
        return NULL;
}
