/* One HTTPS GET for msp-mcp's own needs (the JWKS of --oauth-jwks URL), never for a
 * sandbox: blocking, bounded in time and size, the server's certificate verified against
 * the system's trust store (or a CA file) and the URL's host. Owner: https-get.c. */
#pragma once

#include <stddef.h>

#include "err.h"

/* The body of a 200 answer to GET url ("https://HOST[:PORT][/PATH]"): malloc'd,
 * NUL-terminated. ca_file: PEM trust anchors instead of the system's (NULL: the system's).
 * err names the URL and what failed (the connection, the certificate, the status). */
int mcp_https_get(const char *url, const char *ca_file, size_t max, unsigned timeout_ms,
                  char **ret, size_t *ret_len, msp_err *err);
