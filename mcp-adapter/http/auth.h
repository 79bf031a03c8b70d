/* Bearer tokens of the HTTP transport (--auth-tokens FILE): one "TOKEN TENANT [key=value
 * ...]" line per token, '#' starts a comment. Tokens are kept only as SHA-256 digests and
 * a presented token is compared with every one in constant time. Owner: auth.c. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "oci/oci.h"
#include "mcp/mcp.h"

typedef struct mcp_auth mcp_auth;

/* A tenant's quotas from its lines' key=value pairs; 0: no quota of that kind. */
typedef struct mcp_quota {
        unsigned concurrent_runs;       /* runs in flight (running or queued) */
        unsigned sessions;              /* live sandbox sessions */
        unsigned runs_per_minute;       /* runs started in a 60 s window */
        unsigned mcp_sessions;          /* HTTP (MCP) sessions at once */
} mcp_quota;

/* Reads and checks the whole file; err names the file, the line and what is wrong (never
 * the token). */
int mcp_auth_load(const char *path, mcp_auth **ret, msp_err *err);
mcp_auth *mcp_auth_free(mcp_auth *auth);
size_t mcp_auth_count(const mcp_auth *auth);
/* The quotas of tenant (all 0 when it has none). */
mcp_quota mcp_auth_quota(const mcp_auth *auth, const char *tenant);
/* The tenant of token (len bytes), or NULL when no line has it. */
const char *mcp_auth_tenant(const mcp_auth *auth, const char *token, size_t len);

static inline void
mcp_auth_freep(mcp_auth **a)
{
        mcp_auth_free(*a);
}
#define _cleanup_auth_ __attribute__((cleanup(mcp_auth_freep)))
