/* An exposed port's requests on the HTTP transport's listener (http-ports.h). */
#include "http/http-ports.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "http/http-daemon.h"
#include "http/http-exchange.h"
#include "mcp/mcp.h"
#include "observe/observe.h"
#include "ports/ports.h"

#define PREFIX "/sessions/"

struct http_port_req {
        mcp_http *http;
        http_daemon *dm;
        http_exchange *x;               /* NULL once its exchange ended (an upgrade's) */
        http_port_req *next, *prev;     /* in http->port_reqs */
        char sid[MCP_GW_SESSION_MAX];
        uint16_t port;
        size_t strip;                   /* the target's "/sessions/<id>/ports/<port>" */
        char head[MCP_GW_HEAD_MAX];
        size_t head_len;
        mcp_gw_conn *gw;
        struct MHD_UpgradeResponseHandle *urh;  /* an upgrade's, until its gateway is done */
        int fd;                         /* an ordinary request's end of the pair, -1: none */
        size_t body_off;
        char *resp;                     /* the port's response as it came */
        size_t resp_len, resp_cap;
        bool complete;                  /* the port's response has ended */
        bool upgrading;                 /* answered 101: on_upgrade has it next */
        char *url;                      /* the request's path (the query is MHD's) */
        bool too_large;
};

bool
mcp_http_port_path(const char *url)
{
        return strncmp(url, PREFIX, strlen(PREFIX)) == 0;
}

/* "/sessions/<id>/ports/<port>" then '/' or the end: the id, port and that length. */
static bool
parse_path(const char *url, char *sid, size_t sid_size, uint16_t *port, size_t *strip)
{
        const char *p = url + strlen(PREFIX);
        size_t n = strspn(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-");
        if (n == 0 || n >= sid_size || strncmp(p + n, "/ports/", 7) != 0)
                return false;
        memcpy(sid, p, n);
        sid[n] = '\0';
        const char *d = p + n + 7;
        size_t k = strspn(d, "0123456789");
        if (k == 0 || k > 5 || (d[k] != '\0' && d[k] != '/') || d[0] == '0')
                return false;
        unsigned long v = strtoul(d, NULL, 10);
        if (v == 0 || v > 65535)
                return false;
        *port = (uint16_t) v;
        *strip = (size_t) (d + k - url);
        return true;
}

static void
req_unlink(http_port_req *r)
{
        mcp_http *h = r->http;
        if (r->prev)
                r->prev->next = r->next;
        else if (h->port_reqs == r)
                h->port_reqs = r->next;
        if (r->next)
                r->next->prev = r->prev;
        r->next = r->prev = NULL;
}

static void
req_free(http_port_req *r)
{
        if (!r)
                return;
        req_unlink(r);
        if (r->x)
                r->x->port = NULL;
        mcp_gw_conn_free(r->gw);
        if (r->fd >= 0) {
                mcp_loop_del_io(r->http->loop, r->fd);
                close(r->fd);
        }
        if (r->urh) {
                (void) MHD_upgrade_action(r->urh, MHD_UPGRADE_ACTION_CLOSE);
                mcp_http_daemon_kick(r->dm);
        }
        free(r->resp);
        free(r->url);
        free(r);
}

/* ---- the head sent to the port ---- */

typedef struct head_buf {
        char *buf;
        size_t len, size;
        bool over;
        bool upgrade;
} head_buf;

_printf_(2, 3) static void
put(head_buf *b, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        int n = b->over ? -1 : vsnprintf(b->buf + b->len, b->size - b->len, fmt, ap);
        va_end(ap);
        if (n < 0 || (size_t) n >= b->size - b->len)
                b->over = true;
        else
                b->len += (size_t) n;
}

/* The query as it came (MHD split it; its '+' became ' '). */
static enum MHD_Result
put_arg(void *cls, enum MHD_ValueKind kind _unused_, const char *key, const char *value)
{
        head_buf *b = cls;
        put(b, "%c", b->len && strchr(b->buf, '?') ? '&' : '?');
        for (const char *s = key; *s; s++)
                put(b, "%c", *s == ' ' ? '+' : *s);
        if (value) {
                put(b, "=");
                for (const char *s = value; *s; s++)
                        put(b, "%c", *s == ' ' ? '+' : *s);
        }
        return MHD_YES;
}

static const char *const hop_by_hop[] = { "Connection", "Keep-Alive", "Proxy-Connection",
                                          "Transfer-Encoding", "Content-Length", "TE", "Upgrade",
                                          "Expect", "Trailer", NULL };

static bool
in_list(const char *name, const char *const *list)
{
        for (size_t i = 0; list[i]; i++)
                if (strcasecmp(name, list[i]) == 0)
                        return true;
        return false;
}

/* msp-mcp's own credentials stay here; an ordinary request's framing is the proxy's. */
static enum MHD_Result
put_header(void *cls, enum MHD_ValueKind kind _unused_, const char *key, const char *value)
{
        head_buf *b = cls;
        if (strcasecmp(key, "Authorization") == 0 || (!b->upgrade && in_list(key, hop_by_hop)))
                return MHD_YES;
        if (strpbrk(key, "\r\n") || (value && strpbrk(value, "\r\n")))
                return MHD_YES;
        put(b, "%s: %s\r\n", key, value ? value : "");
        return MHD_YES;
}

static int
build_head(http_port_req *r, struct MHD_Connection *conn, const char *url, const char *method,
           bool upgrade, size_t body_len)
{
        head_buf b = { .buf = r->head, .size = sizeof r->head, .upgrade = upgrade };
        put(&b, "%s %s", method, url);
        /* put_arg looks for '?' in the line so far: only the target's can be there */
        (void) MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, put_arg, &b);
        put(&b, " %s\r\n", upgrade ? "HTTP/1.1" : "HTTP/1.0");
        (void) MHD_get_connection_values(conn, MHD_HEADER_KIND, put_header, &b);
        if (!upgrade && body_len)
                put(&b, "Content-Length: %zu\r\n", body_len);
        put(&b, "\r\n");
        if (b.over)
                return -E2BIG;
        r->head_len = b.len;
        return 0;
}

/* ---- the gateway's ops ---- */

static int
gw_check(void *data, const mcp_gw_request *req _unused_, mcp_gw_route *route)
{
        http_port_req *r = data;
        snprintf(route->session_id, sizeof route->session_id, "%s", r->sid);
        route->port = r->port;
        route->strip = r->strip;
        return 0;
}

static int
gw_connect(void *data, const char *session_id, uint16_t port, int *ret_fd, msp_err *err)
{
        http_port_req *r = data;
        return mcp_engine_port_connect(r->http->engine, session_id, port, ret_fd, err);
}

static void
gw_done(void *data, int status _unused_, int result _unused_, uint64_t up _unused_,
        uint64_t down _unused_)
{
        http_port_req *r = data;
        r->gw = NULL;
        if (r->urh)
                req_free(r);    /* an upgrade: its connection closes now */
        /* an ordinary request: the pair's end reads the end of the response next */
}

static const mcp_gw_ops gw_ops = { .check = gw_check, .connect = gw_connect, .done = gw_done };

/* ---- an upgrade ---- */

static void
on_upgrade(void *cls, struct MHD_Connection *conn _unused_, void *req_cls _unused_,
           const char *extra_in _unused_, size_t extra_in_size, MHD_socket sock,
           struct MHD_UpgradeResponseHandle *urh)
{
        http_port_req *r = cls;
        r->urh = urh;
        if (r->x)
                r->x->port = NULL;
        r->x = NULL;
        /* The gateway closes its own fd; MHD's is closed through the handle when it is done. */
        int fd = extra_in_size ? -1 : fcntl(sock, F_DUPFD_CLOEXEC, 3);
        if (fd < 0 || fcntl(fd, F_SETFL, O_NONBLOCK) < 0 ||
            mcp_gw_conn_start(r->http->loop, fd, r->head, r->head_len, MCP_GW_ANSWERED, 0, &gw_ops, r,
                              &r->gw) < 0) {
                if (fd >= 0 && !r->gw)
                        mcp_log(r->http->log, MCP_LOG_INFO, "port %s/%u: upgrade not relayed",
                                r->sid, (unsigned) r->port);
                r->gw = NULL;
                req_free(r);
        }
}

static enum MHD_Result
start_upgrade(http_exchange *x, http_port_req *r, const char *upgrade)
{
        struct MHD_Response *resp = MHD_create_response_for_upgrade(on_upgrade, r);
        if (!resp)
                return MHD_NO;
        (void) MHD_add_response_header(resp, MHD_HTTP_HEADER_UPGRADE, upgrade);
        (void) MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "Upgrade");
        enum MHD_Result ret = mcp_http_queue(x, 101, resp);
        MHD_destroy_response(resp);
        x->replied = true;
        return ret;
}

/* ---- an ordinary request ---- */

static int
pair_ready(mcp_loop *loop _unused_, int fd, uint32_t events _unused_, void *data)
{
        http_port_req *r = data;
        http_exchange *x = r->x;
        if (x && r->body_off < x->len) {
                ssize_t n = send(fd, x->body + r->body_off, x->len - r->body_off, MSG_NOSIGNAL);
                if (n > 0)
                        r->body_off += (size_t) n;
                /* all of it, or the gateway has closed its end (its refusal is read next) */
                if (r->body_off >= x->len || (n < 0 && errno != EAGAIN && errno != EINTR)) {
                        r->body_off = x->len;
                        (void) mcp_loop_mod_io(r->http->loop, fd, EPOLLIN);
                }
        }
        for (int i = 0; i < 16; i++) {
                if (r->resp_cap - r->resp_len < 65536) {
                        size_t cap = r->resp_cap ? r->resp_cap * 2 : 65536;
                        char *p = cap > HTTP_PORT_RESPONSE_MAX + 65536 ? NULL : realloc(r->resp, cap);
                        if (!p) {
                                r->too_large = true;
                                break;
                        }
                        r->resp = p;
                        r->resp_cap = cap;
                }
                ssize_t n = read(fd, r->resp + r->resp_len, r->resp_cap - r->resp_len);
                if (n < 0 && (errno == EAGAIN || errno == EINTR))
                        return 0;
                if (n <= 0)
                        break;
                r->resp_len += (size_t) n;
                if (r->resp_len > HTTP_PORT_RESPONSE_MAX) {
                        r->too_large = true;
                        break;
                }
        }
        if (!r->too_large && r->resp_len <= HTTP_PORT_RESPONSE_MAX) {
                /* 16 reads and more to come: the next round */
                char c;
                ssize_t n = recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
                if (n > 0 || (n < 0 && errno == EAGAIN))
                        return 0;
        }
        r->complete = true;
        mcp_loop_del_io(r->http->loop, fd);
        close(fd);
        r->fd = -1;
        mcp_gw_conn_free(TAKE_PTR(r->gw));
        if (x)
                mcp_http_wake(x);
        else
                req_free(r);
        return 0;
}

static enum MHD_Result
reply_text(http_exchange *x, unsigned status, const char *text)
{
        return mcp_http_reply(x, status, "text/plain", text, strlen(text), NULL);
}

/* The port's response (as it came) through MHD: its status, its headers but the framing
 * ones, its body. */
static enum MHD_Result
reply_response(http_exchange *x, http_port_req *r)
{
        if (r->too_large)
                return reply_text(x, 502, "the port's response is too large\n");
        char *buf = r->resp;
        size_t len = r->resp_len;
        size_t end = len >= 4 ? 0 : len;
        for (size_t i = 0; i + 3 < len; i++)
                if (memcmp(buf + i, "\r\n\r\n", 4) == 0) {
                        end = i + 4;
                        break;
                }
        unsigned status = 0;
        if (end == 0 || len < 12 || strncmp(buf, "HTTP/1.", 7) != 0 ||
            sscanf(buf + 8, " %3u", &status) != 1 || status < 100 || status > 599)
                return reply_text(x, 502, "the port's response is not HTTP/1.x\n");
        buf[end - 2] = '\0';
        bool chunked = false;
        struct MHD_Response *resp = MHD_create_response_from_buffer(len - end, buf + end,
                                                                    MHD_RESPMEM_MUST_COPY);
        if (!resp)
                return MHD_NO;
        char *line = strstr(buf, "\r\n");
        while (line && line[2]) {
                line += 2;
                char *next = strstr(line, "\r\n");
                if (next)
                        *next = '\0';
                char *colon = strchr(line, ':');
                if (colon) {
                        *colon = '\0';
                        char *v = colon + 1;
                        while (*v == ' ' || *v == '\t')
                                v++;
                        if (strcasecmp(line, "Transfer-Encoding") == 0)
                                chunked = true;
                        else if (!in_list(line, hop_by_hop) && strcasecmp(line, "Date") != 0)
                                (void) MHD_add_response_header(resp, line, v);  /* MHD adds its Date */
                }
                if (!next)
                        break;
                line = next;
        }
        if (chunked) {
                MHD_destroy_response(resp);
                return reply_text(x, 502, "the port answered with a Transfer-Encoding\n");
        }
        enum MHD_Result ret = mcp_http_queue(x, status, resp);
        MHD_destroy_response(resp);
        return ret;
}

enum MHD_Result
mcp_http_port_body_done(http_exchange *x)
{
        http_port_req *r = x->port;
        mcp_http *h = x->http;
        if (!r)
                return reply_text(x, 500, "internal error\n");
        if (r->complete || x->client_gone) {
                enum MHD_Result ret = x->client_gone ? reply_text(x, 500, "client gone\n")
                                                     : reply_response(x, r);
                x->replied = true;
                req_free(r);
                return ret;
        }
        if (!x->too_large && build_head(r, x->conn, r->url, x->method, false, x->len) < 0) {
                x->replied = true;
                req_free(r);
                return reply_text(x, 431, "request head too large\n");
        }
        if (x->too_large) {
                char msg[96];
                snprintf(msg, sizeof msg, "request body too large (more than %llu bytes)\n",
                         (unsigned long long) h->cfg->max_message_bytes);
                return reply_text(x, 413, msg);
        }
        int sp[2];
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sp) < 0)
                return reply_text(x, 503, "out of file descriptors\n");
        r->fd = sp[0];
        if (mcp_loop_add_io(h->loop, r->fd, EPOLLIN | (x->len ? EPOLLOUT : 0), pair_ready, r) < 0) {
                close(sp[1]);
                return reply_text(x, 503, "out of memory\n");
        }
        if (mcp_gw_conn_start(h->loop, sp[1], r->head, r->head_len, 0, 0, &gw_ops, r, &r->gw) < 0) {
                r->gw = NULL;
                return reply_text(x, 503, "out of memory\n");
        }
        mcp_http_suspend(x);
        return MHD_YES;
}

enum MHD_Result
mcp_http_port_start(http_exchange *x, const char *url, const char *method, const char *version)
{
        mcp_http *h = x->http;
        char sid[MCP_GW_SESSION_MAX];
        uint16_t port;
        size_t strip;
        /* Another tenant's session, a port not exposed: nothing there. */
        if (!parse_path(url, sid, sizeof sid, &port, &strip) ||
            !mcp_owners_is(h->owners, sid, x->tenant) || !mcp_ports_exposed(h->ports, sid, port))
                return reply_text(x, 404, "not found\n");
        const char *upgrade = MHD_lookup_connection_value(x->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_UPGRADE);
        if (upgrade && strcmp(version, MHD_HTTP_VERSION_1_1) != 0)
                upgrade = NULL;         /* MHD upgrades HTTP/1.1 only */
        const char *cl = MHD_lookup_connection_value(x->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
        if (upgrade && cl && strcmp(cl, "0") != 0)
                return reply_text(x, 400, "an upgrade request with a body\n");
        http_port_req *r = calloc(1, sizeof *r);
        if (!r)
                return MHD_NO;
        *r = (http_port_req) { .http = h, .dm = x->dm, .x = x, .port = port, .strip = strip, .fd = -1 };
        snprintf(r->sid, sizeof r->sid, "%s", sid);
        if (!(r->url = strdup(url))) {
                free(r);
                return MHD_NO;
        }
        r->next = h->port_reqs;
        if (r->next)
                r->next->prev = r;
        h->port_reqs = r;
        x->port = r;
        if (upgrade) {
                if (build_head(r, x->conn, url, method, true, 0) < 0) {
                        req_free(r);
                        return reply_text(x, 431, "request head too large\n");
                }
                r->upgrading = true;
                enum MHD_Result ret = start_upgrade(x, r, upgrade);
                if (ret != MHD_YES)
                        r->upgrading = false;   /* refused: the exchange's end frees it */
                return ret;
        }
        return MHD_YES;         /* the body, then mcp_http_port_body_done */
}

void
mcp_http_port_exchange_done(http_exchange *x)
{
        http_port_req *r = x->port;
        x->port = NULL;
        if (!r)
                return;
        /* An upgrade's request lives on in its gateway (its handle closes the connection). */
        if (r->upgrading)
                r->x = NULL;
        else
                req_free(r);
}

void
mcp_http_ports_stop(mcp_http *h)
{
        while (h->port_reqs)
                req_free(h->port_reqs);
}
