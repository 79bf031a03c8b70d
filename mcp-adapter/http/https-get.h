/* One HTTPS GET for msp-mcp's own needs (the JWKS of --oauth-jwks URL), never for a
 * sandbox: bounded in time and size, the server's certificate verified against the
 * system's trust store (or a CA file) and the URL's host. Blocking (at start), or in a
 * child process the event loop watches (while serving). Owner: https-get.c. */
#pragma once

#include <stddef.h>

#include "oci/oci.h"
#include "base/base.h"

/* The body of a 200 answer to GET url ("https://HOST[:PORT][/PATH]"): malloc'd,
 * NUL-terminated. ca_file: PEM trust anchors instead of the system's (NULL: the system's).
 * err names the URL and what failed (the connection, the certificate, the status). */
int mcp_https_get(const char *url, const char *ca_file, size_t max, unsigned timeout_ms,
                  char **ret, size_t *ret_len, msp_err *err);

typedef struct mcp_https_fetch mcp_https_fetch;
/* The body (malloc'd, NUL-terminated, done's to free) or NULL and err saying why. */
typedef void (*mcp_https_done_fn)(char *body, size_t len, const msp_err *err, void *data);
/* mcp_https_get() in a forked child (no fd of ours but a pipe) whose answer the loop
 * reads, so that the loop serves while the name resolves and the server answers; the
 * child is killed when it outlives timeout_ms by a second. done is called once, from the
 * loop, unless the fetch is cancelled. -errno when the child cannot start. */
int mcp_https_fetch_start(mcp_loop *loop, const char *url, const char *ca_file, size_t max,
                          unsigned timeout_ms, mcp_https_done_fn done, void *data,
                          mcp_https_fetch **ret, msp_err *err);
/* The child is killed and reaped; done is not called. NULL: nothing. */
void mcp_https_fetch_cancel(mcp_https_fetch *f);
