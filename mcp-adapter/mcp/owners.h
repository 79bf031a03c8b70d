/* Which tenant owns which sandbox session and run log, when several callers share one
 * server (the HTTP transport, http.c). A server without an owner table (stdio) owns
 * everything it sees. An id nobody recorded belongs to nobody: every tenant gets "not
 * found" for it. A tenant's name is checked here too: the HTTP transport's token files
 * and OAuth claims name tenants by it. Owner: owners.c. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "session/session.h"

#define MCP_TENANT_MAX 64

/* A tenant's name: 1 to MCP_TENANT_MAX of A-Z a-z 0-9 . _ - (it appears in logs and
 * metrics labels). */
bool mcp_tenant_valid(const char *tenant);

typedef struct mcp_owners mcp_owners;

int mcp_owners_new(mcp_owners **ret);
mcp_owners *mcp_owners_free(mcp_owners *o);
/* Records id ("s-..." or "r-...") as tenant's. */
int mcp_owners_add(mcp_owners *o, const char *id, const char *tenant);
bool mcp_owners_is(const mcp_owners *o, const char *id, const char *tenant);
/* The tenant recorded for id, or NULL. */
const char *mcp_owners_tenant(const mcp_owners *o, const char *id);
void mcp_owners_forget(mcp_owners *o, const char *id);
/* How many ids starting with prefix tenant owns. */
size_t mcp_owners_count(const mcp_owners *o, const char *tenant, const char *prefix);
/* Forgets the sessions that st no longer has (closed or expired). */
void mcp_owners_prune_sessions(mcp_owners *o, mcp_session_store *st);
