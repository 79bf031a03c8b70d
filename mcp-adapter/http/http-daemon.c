/* The HTTP transport's libmicrohttpd daemons driven from the loop (see http.h), and the
 * head deadline of their connections.
 *
 * Each daemon polls externally: its epoll fd is watched by the loop, MHD_run() is called on
 * readiness and on MHD_get_timeout()'s timer. MHD's own timeout (--http-timeout) counts
 * idle time only, so a client sending a header byte now and then never reaches it. Hence
 * the deadline: a connection's request line and headers must be in within
 * --http-head-timeout of its accept, or of its previous request's end (a kept-alive
 * connection waiting for its next request waits that long at most). A request answered
 * before it is authenticated (a 401, a probe, a 404) stays under the deadline until it
 * ends, its body included; an authenticated one leaves it (its runs, streams and body are
 * bounded by the tenant's quotas and --http-timeout). A connection past its deadline is
 * shut down, and MHD, reading its end, closes it and frees its slot. */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include "http/http-daemon.h"
#include "observe/observe.h"
#include "oci/oci.h"

/* ---- driving MHD from the loop ---- */

static int on_timer(mcp_loop *loop, void *data);

static void
rearm(http_daemon *dm)
{
        mcp_loop *loop = dm->http->loop;
        if (dm->timer) {
                mcp_timer_cancel(loop, dm->timer);
                dm->timer = NULL;
        }
        MHD_UNSIGNED_LONG_LONG ms = 0;
        if (!dm->kicked && MHD_get_timeout(dm->d, &ms) != MHD_YES)
                return;
        (void) mcp_loop_add_timer(loop, ms * 1000, on_timer, dm, &dm->timer);
}

static void
run(http_daemon *dm)
{
        dm->kicked = false;
        (void) MHD_run(dm->d);
        rearm(dm);
}

static int
on_timer(mcp_loop *loop _unused_, void *data)
{
        http_daemon *dm = data;
        dm->timer = NULL;
        run(dm);
        return 0;
}

static int
on_ready(mcp_loop *loop _unused_, int fd _unused_, uint32_t events _unused_, void *data)
{
        run(data);
        return 0;
}

/* After a resume: MHD handles resumed connections in its next run. After a close too: a
 * daemon that was at its connection limit watches its listening socket again only from
 * its next run, which nothing else would bring about. */
void
mcp_http_daemon_kick(http_daemon *dm)
{
        if (dm->kicked || !dm->d)
                return;
        dm->kicked = true;
        rearm(dm);
}

int
mcp_http_daemon_watch(http_daemon *dm, const char *what, msp_err *err)
{
        const union MHD_DaemonInfo *di = MHD_get_daemon_info(dm->d, MHD_DAEMON_INFO_EPOLL_FD);
        int r = di ? mcp_loop_add_io(dm->http->loop, di->epoll_fd, EPOLLIN, on_ready, dm) : -EIO;
        if (r < 0)
                return msp_err_sys(err, -r, "%s: watching libmicrohttpd", what);
        dm->epoll_fd = di->epoll_fd;
        rearm(dm);
        return 0;
}

/* Every connection closes (MHD notifies each); suspended ones must have been resumed. */
void
mcp_http_daemon_stop(http_daemon *dm)
{
        mcp_loop *loop = dm->http->loop;
        struct MHD_Daemon *d = TAKE_PTR(dm->d);
        if (dm->epoll_fd >= 0)
                mcp_loop_del_io(loop, dm->epoll_fd);
        dm->epoll_fd = -1;
        if (d)
                MHD_stop_daemon(d);
        mcp_timer_cancel(loop, dm->timer);
        dm->timer = NULL;
}

/* ---- the head deadline ---- */

struct http_conn {
        mcp_http *http;
        http_daemon *dm;
        struct MHD_Connection *conn;
        uint64_t deadline;              /* 0: none now */
        http_conn *next, *prev;         /* in http->heads while it has one */
};

static int on_head_timer(mcp_loop *loop, void *data);

static void
unlink_conn(http_conn *c)
{
        mcp_http *h = c->http;
        if (!c->deadline)
                return;
        if (c->prev)
                c->prev->next = c->next;
        else
                h->heads = c->next;
        if (c->next)
                c->next->prev = c->prev;
        else
                h->heads_tail = c->prev;
        c->next = c->prev = NULL;
        c->deadline = 0;
}

static void
arm_timer(mcp_http *h)
{
        if (h->head_timer || !h->heads)
                return;
        uint64_t now = mcp_now_usec(), at = h->heads->deadline;
        (void) mcp_loop_add_timer(h->loop, at > now ? at - now : 0, on_head_timer, h, &h->head_timer);
}

/* Every deadline is now + the same timeout: appending keeps the list in order. */
static void
arm(http_conn *c)
{
        mcp_http *h = c->http;
        unlink_conn(c);
        c->deadline = mcp_now_usec() + h->cfg->http_head_timeout_s * 1000000;
        c->prev = h->heads_tail;
        if (c->prev)
                c->prev->next = c;
        else
                h->heads = c;
        h->heads_tail = c;
        arm_timer(h);
}

/* MHD owns the socket: shut down, it reads the end and closes it itself. */
static void
shut(struct MHD_Connection *conn)
{
        const union MHD_ConnectionInfo *ci =
                MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        if (ci)
                (void) shutdown(ci->connect_fd, SHUT_RDWR);
}

static void
expire(http_conn *c)
{
        mcp_http *h = c->http;
        unlink_conn(c);
        char peer[INET6_ADDRSTRLEN + 8];
        mcp_http_peer(c->conn, peer, sizeof peer);
        mcp_log(h->log, MCP_LOG_INFO, "HTTP connection from %s closed: no authenticated request within --http-head-timeout (%" PRIu64 " s)",
                peer[0] ? peer : "?", h->cfg->http_head_timeout_s);
        shut(c->conn);
}

static int
on_head_timer(mcp_loop *loop _unused_, void *data)
{
        mcp_http *h = data;
        h->head_timer = NULL;
        uint64_t now = mcp_now_usec();
        while (h->heads && h->heads->deadline <= now)
                expire(h->heads);
        arm_timer(h);
        return 0;
}

void
mcp_http_conn_notify(void *cls, struct MHD_Connection *conn, void **socket_context,
                     enum MHD_ConnectionNotificationCode toe)
{
        mcp_http *h = cls;
        http_conn *c = *socket_context;
        if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
                if (c) {
                        unlink_conn(c);
                        mcp_http_daemon_kick(c->dm);
                }
                free(c);
                *socket_context = NULL;
                return;
        }
        c = calloc(1, sizeof *c);
        if (!c) {
                shut(conn);     /* not tracked, not served */
                return;
        }
        const union MHD_ConnectionInfo *di = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_DAEMON);
        *c = (http_conn) { .http = h, .conn = conn,
                           .dm = di && di->daemon == h->probe.d ? &h->probe : &h->main };
        *socket_context = c;
        arm(c);
}

static http_conn *
conn_of(struct MHD_Connection *conn)
{
        const union MHD_ConnectionInfo *ci =
                MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
        return ci ? ci->socket_context : NULL;
}

void
mcp_http_conn_trusted(http_exchange *x)
{
        http_conn *c = conn_of(x->conn);
        if (c)
                unlink_conn(c);
}

void
mcp_http_conn_next(struct MHD_Connection *conn)
{
        http_conn *c = conn_of(conn);
        if (c)
                arm(c);
}

void
mcp_http_peer(struct MHD_Connection *conn, char *buf, size_t size)
{
        const union MHD_ConnectionInfo *ci =
                MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
        const struct sockaddr *sa = ci ? ci->client_addr : NULL;
        buf[0] = '\0';
        if (sa && sa->sa_family == AF_INET)
                inet_ntop(AF_INET, &((const struct sockaddr_in *) sa)->sin_addr, buf, (socklen_t) size);
        else if (sa && sa->sa_family == AF_INET6)
                inet_ntop(AF_INET6, &((const struct sockaddr_in6 *) sa)->sin6_addr, buf, (socklen_t) size);
        else if (sa && sa->sa_family == AF_UNIX)
                snprintf(buf, size, "unix");
}
