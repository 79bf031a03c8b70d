/* The HTTP transport's controls from outside its requests, for main.c: drain on SIGTERM,
 * reload on SIGHUP, and the --check lines. Owner: http-control.c. */
#pragma once

#include <stdio.h>

#include "config.h"

typedef struct mcp_http mcp_http;

/* SIGTERM: stop accepting connections (and answer 503 to new requests on open ones), let
 * the requests in progress finish within --drain-timeout, then call drained. */
void mcp_http_drain(mcp_http *http, void (*drained)(void *data), void *data);
/* SIGHUP: --auth-tokens and --oauth-jwks are read again; on an error the old tokens or
 * keys stay (logged). An https:// JWKS is fetched while requests are served with the old
 * keys, which the new ones replace once fetched and valid. */
void mcp_http_reload(mcp_http *http);
/* --check: the HTTP transport's lines (a warning without authentication; the token file,
 * the OAuth mode). */
void mcp_http_check(const mcp_config *cfg, FILE *out);
