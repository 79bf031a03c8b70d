/* OAuth 2.1 resource-server mode of the HTTP transport, as the MCP authorization spec
 * asks: access tokens are JWTs the authorization server (--oauth-issuer) signed with one
 * of the keys of a JWKS (--oauth-jwks: a file, or an https:// URL fetched through
 * https-get.h), for this server (--resource, their audience).
 * The tenant is a claim of the token (--oauth-tenant-claim, default sub). The RFC 9728
 * protected-resource metadata tells clients where to get a token. Tokens and keys are
 * never logged; a verified token is not cached (each request verifies its signature).
 * Owner: oauth.c. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "http/auth.h"
#include "config.h"
#include "oci/oci.h"
#include "base/base.h"

typedef struct mcp_oauth mcp_oauth;

/* *ret stays NULL without --oauth-issuer, --oauth-jwks and --resource. Checks the three
 * together and reads (or fetches) the JWKS; err names the flag (or the key) and what is
 * wrong. */
int mcp_oauth_load(const mcp_config *cfg, mcp_oauth **ret, msp_err *err);
mcp_oauth *mcp_oauth_free(mcp_oauth *oauth);

/* SIGHUP: the JWKS read again into a new mcp_oauth handed to done (the caller's to keep or
 * free), or NULL and err saying why. A file is read at once (done runs before this returns,
 * *ret NULL); an https:// URL is fetched in a child process the loop watches
 * (https-get.h), so that requests are served meanwhile: *ret until done runs. */
typedef struct mcp_oauth_reload mcp_oauth_reload;
typedef void (*mcp_oauth_reloaded_fn)(mcp_oauth *oauth, const msp_err *err, void *data);
void mcp_oauth_reload_start(mcp_loop *loop, const mcp_config *cfg, mcp_oauth_reloaded_fn done,
                            void *data, mcp_oauth_reload **ret);
/* done is not called; the fetch's child is killed. NULL: nothing. */
void mcp_oauth_reload_cancel(mcp_oauth_reload *reload);
/* The keys of the JWKS that can verify tokens. */
size_t mcp_oauth_key_count(const mcp_oauth *oauth);

/* 0 and the tenant of a valid token (len bytes, NUL-terminated); -EACCES and err saying
 * why it is not (never the token). */
int mcp_oauth_verify(const mcp_oauth *oauth, const char *token, size_t len,
                     char tenant[MCP_TENANT_MAX + 1], msp_err *err);

/* RFC 9728: where the metadata is (WWW-Authenticate's resource_metadata), whether a
 * request path is one it is served at, and the document (JSON). */
const char *mcp_oauth_metadata_url(const mcp_oauth *oauth);
bool mcp_oauth_metadata_path(const mcp_oauth *oauth, const char *path);
const char *mcp_oauth_metadata(const mcp_oauth *oauth, size_t *ret_len);

static inline void
mcp_oauth_freep(mcp_oauth **o)
{
        mcp_oauth_free(*o);
}
#define _cleanup_oauth_ __attribute__((cleanup(mcp_oauth_freep)))
