/* Driving the HTTP transport's libmicrohttpd daemons from the loop, and the head deadline
 * of their connections. Owner: http-daemon.c. */
#pragma once

#include <microhttpd.h>
#include <stddef.h>

#include "http/http-types.h"
#include "oci/oci.h"

/* dm's epoll fd is watched by the loop; dm->d runs on its readiness and timeouts. */
int mcp_http_daemon_watch(http_daemon *dm, const char *what, msp_err *err);
void mcp_http_daemon_stop(http_daemon *dm);
/* MHD runs dm soon (a connection was resumed). */
void mcp_http_daemon_kick(http_daemon *dm);
/* MHD_OPTION_NOTIFY_CONNECTION: a connection's head deadline starts at its accept. */
void mcp_http_conn_notify(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe);
/* x's request is authenticated: no deadline for the rest of it. */
void mcp_http_conn_trusted(http_exchange *x);
/* conn's request ended, the connection stays: the next head's deadline starts. */
void mcp_http_conn_next(struct MHD_Connection *conn);
/* The remote address of conn ("unix" for a unix socket, "" when unknown). */
void mcp_http_peer(struct MHD_Connection *conn, char *buf, size_t size);
