/* The listening sockets of --listen and --probe-listen. Owner: http-listen.c. */
#pragma once

#include <stdbool.h>

#include "oci/oci.h"

/* A listening socket for "HOST:PORT", "PORT" (loopback) or "unix:PATH"; *ret_local:
 * loopback or a unix socket; *ret_url: what to tell the user (malloc'd). */
int mcp_http_listen(const char *spec, int *ret_fd, bool *ret_local, char **ret_url,
                    msp_err *err);
