/* The owner table (see owners.h): a flat array, searched linearly. It holds the live
 * sandbox sessions (at most --max-sessions) and the run ids in the recent-run rings of
 * the live HTTP sessions, which forget theirs as they go; and the rule for a tenant's name. */
#include "mcp/owners.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool
mcp_tenant_valid(const char *t)
{
        size_t n = strlen(t);
        return n > 0 && n <= MCP_TENANT_MAX &&
               strspn(t, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == n;
}

typedef struct owner {
        char id[64];
        char tenant[MCP_TENANT_MAX + 1];
} owner;

struct mcp_owners {
        owner *v;
        size_t n, cap;
};

int
mcp_owners_new(mcp_owners **ret)
{
        *ret = calloc(1, sizeof **ret);
        return *ret ? 0 : -ENOMEM;
}

mcp_owners *
mcp_owners_free(mcp_owners *o)
{
        if (o)
                free(o->v);
        free(o);
        return NULL;
}

static owner *
find(const mcp_owners *o, const char *id)
{
        for (size_t i = 0; i < o->n; i++)
                if (strcmp(o->v[i].id, id) == 0)
                        return &o->v[i];
        return NULL;
}

int
mcp_owners_add(mcp_owners *o, const char *id, const char *tenant)
{
        if (strlen(id) >= sizeof o->v->id || strlen(tenant) > MCP_TENANT_MAX)
                return -EINVAL;
        owner *e = find(o, id);
        if (!e) {
                if (o->n == o->cap) {
                        size_t cap = o->cap ? 2 * o->cap : 64;
                        owner *p = realloc(o->v, cap * sizeof *p);
                        if (!p)
                                return -ENOMEM;
                        o->v = p;
                        o->cap = cap;
                }
                e = &o->v[o->n++];
        }
        snprintf(e->id, sizeof e->id, "%s", id);
        snprintf(e->tenant, sizeof e->tenant, "%s", tenant);
        return 0;
}

const char *
mcp_owners_tenant(const mcp_owners *o, const char *id)
{
        const owner *e = find(o, id);
        return e ? e->tenant : NULL;
}

bool
mcp_owners_is(const mcp_owners *o, const char *id, const char *tenant)
{
        const owner *e = find(o, id);
        return e && strcmp(e->tenant, tenant) == 0;
}

void
mcp_owners_forget(mcp_owners *o, const char *id)
{
        owner *e = find(o, id);
        if (e)
                *e = o->v[--o->n];
}

size_t
mcp_owners_count(const mcp_owners *o, const char *tenant, const char *prefix)
{
        size_t n = 0, l = strlen(prefix);
        for (size_t i = 0; i < o->n; i++)
                n += strncmp(o->v[i].id, prefix, l) == 0 && strcmp(o->v[i].tenant, tenant) == 0;
        return n;
}

void
mcp_owners_prune_sessions(mcp_owners *o, mcp_session_store *st)
{
        for (size_t i = 0; i < o->n;) {
                mcp_session_info info;
                msp_err err = { 0 };
                if (strncmp(o->v[i].id, "s-", 2) == 0 &&
                    mcp_session_get(st, o->v[i].id, &info, &err) == -ENOENT)
                        o->v[i] = o->v[--o->n];
                else
                        i++;
        }
}
