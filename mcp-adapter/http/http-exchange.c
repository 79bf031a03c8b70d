/* One exchange of the HTTP transport (see http-exchange.h): a request and its
 * connection. Until there is something to send, the connection is suspended; MHD does not
 * watch a suspended connection, so its socket is watched here for the client leaving, which
 * cancels a run still answered as JSON (a stream waits for the client to resume it). */
#include "http/http-exchange.h"

#include <inttypes.h>
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#include "http/http-daemon.h"
#include "mcp/mcp.h"
#include "observe/observe.h"
#include "oci/oci.h"

/* ---- suspending and waking ---- */

void
mcp_http_exchange_unlink(http_exchange *x)
{
        http_session *s = x->sess;
        if (!s)
                return;
        if (x->prev)
                x->prev->next = x->next;
        else if (s->pending == x)
                s->pending = x->next;
        if (x->next)
                x->next->prev = x->prev;
        x->next = x->prev = NULL;
        x->sess = NULL;
        s->last_used = mcp_now_usec();
}

void
mcp_http_exchange_unwatch(http_exchange *x)
{
        if (x->watch_fd >= 0)
                mcp_loop_del_io(x->http->loop, x->watch_fd);
        x->watch_fd = -1;
}

void
mcp_http_wake(http_exchange *x)
{
        if (!x->suspended)
                return;
        mcp_http_exchange_unwatch(x);
        x->suspended = false;
        MHD_resume_connection(x->conn);
        mcp_http_daemon_kick(x->dm);
}

/* The client closed the connection while its request waited: the run is cancelled. */
static int
on_client_gone(mcp_loop *loop _unused_, int fd _unused_, uint32_t events _unused_, void *data)
{
        http_exchange *x = data;
        x->client_gone = true;
        if (x->sess && !x->answered) {
                mcp_log(x->http->log, MCP_LOG_INFO, "HTTP client of session %.8s... went away: its call is cancelled",
                        x->sess->id);
                mcp_tools_cancel(x->sess->srv, &x->id);
        }
        mcp_http_exchange_unlink(x);
        x->answered = true;
        mcp_http_wake(x);
        return 0;
}

void
mcp_http_suspend(http_exchange *x)
{
        MHD_suspend_connection(x->conn);
        x->suspended = true;
        const union MHD_ConnectionInfo *ci =
                MHD_get_connection_info(x->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        if (ci && mcp_loop_add_io(x->http->loop, ci->connect_fd, EPOLLRDHUP, on_client_gone, x) == 0)
                x->watch_fd = ci->connect_fd;
}

/* ---- responses ---- */

enum MHD_Result
mcp_http_queue(http_exchange *x, unsigned status, struct MHD_Response *resp)
{
        /* A kept-alive connection waits --http-head-timeout for its next request: clients
         * that read this (Node's among them) stop reusing it before. */
        char keep[32];
        snprintf(keep, sizeof keep, "timeout=%" PRIu64, x->http->cfg->http_head_timeout_s);
        (void) MHD_add_response_header(resp, "Keep-Alive", keep);
        mcp_metrics_http(x->http->metrics, status);
        x->status = status;
        return MHD_queue_response(x->conn, status, resp);
}

enum MHD_Result
mcp_http_reply(http_exchange *x, unsigned status, const char *type, const char *body, size_t len,
               const char *allow)
{
        struct MHD_Response *resp = MHD_create_response_from_buffer(len, (void *) body,
                                                                    MHD_RESPMEM_MUST_COPY);
        if (!resp)
                return MHD_NO;
        if (type)
                (void) MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
        if (allow)
                (void) MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, allow);
        if (x->new_session)
                (void) MHD_add_response_header(resp, "Mcp-Session-Id", x->sid);
        x->bytes_out = len;
        enum MHD_Result r = mcp_http_queue(x, status, resp);
        MHD_destroy_response(resp);
        x->replied = true;
        return r;
}

enum MHD_Result
mcp_http_reply_error(http_exchange *x, unsigned status, const mcp_rpc_id *id, int code,
                     const char *msg)
{
        mcp_rpc_id none = { .kind = MCP_ID_NONE };
        _cleanup_free_ char *json = NULL;
        size_t len = 0;
        if (mcp_rpc_format_error(id ? id : &none, code, msg, &json, &len) < 0)
                return mcp_http_reply(x, status, "text/plain", msg, strlen(msg), NULL);
        return mcp_http_reply(x, status, "application/json", json, len, NULL);
}
