/* The token file of --auth-tokens (see auth.h). */
#include "http/auth.h"

#include <errno.h>
#include <gnutls/crypto.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oci/oci.h"

#define DIGEST_LEN 32                   /* SHA-256 */
#define TOKEN_MIN 16                    /* shorter ones are guessable: refused */
#define TOKEN_MAX 4096

typedef struct entry {
        unsigned char digest[DIGEST_LEN];
        char tenant[MCP_TENANT_MAX + 1];
        mcp_quota quota;
} entry;

struct mcp_auth {
        entry *e;
        size_t n;
};

/* The per-tenant quotas a line may carry, in mcp_quota's order. */
static const char *const quota_keys[] = { "concurrent_runs", "sessions", "runs_per_minute",
                                          "mcp_sessions" };

static int
digest(const char *token, size_t len, unsigned char out[DIGEST_LEN])
{
        return gnutls_hash_fast(GNUTLS_DIG_SHA256, token, len, out) == 0 ? 0 : -EIO;
}

static bool
visible(const char *s, size_t len)
{
        for (size_t i = 0; i < len; i++)
                if (s[i] <= 0x20 || s[i] >= 0x7f)
                        return false;
        return true;
}

static int
check_quota(const char *kv, mcp_quota *q, msp_err *err, const char *path, unsigned ln)
{
        const char *eq = strchr(kv, '=');
        size_t klen = eq ? (size_t) (eq - kv) : 0;
        unsigned *fields[] = { &q->concurrent_runs, &q->sessions, &q->runs_per_minute,
                               &q->mcp_sessions };
        unsigned *field = NULL;
        for (size_t i = 0; eq && i < ARRAY_SIZE(quota_keys); i++)
                if (strlen(quota_keys[i]) == klen && strncmp(quota_keys[i], kv, klen) == 0)
                        field = fields[i];
        if (!field)
                return msp_err_set(err, EINVAL, "%s:%u: \"%.64s\": expected concurrent_runs=N, sessions=N, runs_per_minute=N or mcp_sessions=N",
                                   path, ln, kv);
        const char *v = eq + 1;
        if (!*v || strspn(v, "0123456789") != strlen(v) || strlen(v) > 9 || atoi(v) == 0)
                return msp_err_set(err, EINVAL, "%s:%u: %.*s: expected a number above 0, not \"%.32s\"",
                                   path, ln, (int) klen, kv, v);
        *field = (unsigned) atoi(v);
        return 0;
}

/* A tenant's quotas are one set: each may be stated on any of its lines, once or with the
 * same value. */
static int
merge(const mcp_quota *a, const mcp_quota *b)
{
        unsigned x[] = { a->concurrent_runs, a->sessions, a->runs_per_minute, a->mcp_sessions };
        unsigned y[] = { b->concurrent_runs, b->sessions, b->runs_per_minute, b->mcp_sessions };
        for (size_t i = 0; i < ARRAY_SIZE(x); i++)
                if (x[i] && y[i] && x[i] != y[i])
                        return -EINVAL;
        return 0;
}

/* One line: its token's digest and tenant into *e; 1 when the line holds one, 0 for a
 * blank or comment line. */
static int
parse_line(char *line, entry *e, msp_err *err, const char *path, unsigned ln)
{
        /* A '#' at the start of a field starts a comment (tokens may contain '#'). */
        char *fields[3] = { NULL }, *save = NULL;
        *e = (entry) { 0 };
        size_t n = 0;
        for (char *f = strtok_r(line, " \t\r\n", &save); f; f = strtok_r(NULL, " \t\r\n", &save)) {
                if (f[0] == '#')
                        break;
                if (n < 2) {
                        fields[n++] = f;
                        continue;
                }
                int r = check_quota(f, &e->quota, err, path, ln);
                if (r < 0)
                        return r;
        }
        if (n == 0)
                return 0;
        if (n < 2)
                return msp_err_set(err, EINVAL, "%s:%u: expected TOKEN TENANT [key=value ...]", path, ln);
        size_t tlen = strlen(fields[0]);
        if (tlen < TOKEN_MIN || tlen > TOKEN_MAX || !visible(fields[0], tlen))
                return msp_err_set(err, EINVAL, "%s:%u: the token must be %d to %d visible ASCII characters",
                                   path, ln, TOKEN_MIN, TOKEN_MAX);
        const char *t = fields[1];
        if (!mcp_tenant_valid(t))
                return msp_err_set(err, EINVAL, "%s:%u: tenant \"%.80s\": expected 1 to %d of A-Z a-z 0-9 . _ -",
                                   path, ln, t, MCP_TENANT_MAX);
        if (digest(fields[0], tlen, e->digest) < 0)
                return msp_err_set(err, EIO, "%s:%u: hashing the token failed", path, ln);
        snprintf(e->tenant, sizeof e->tenant, "%s", t);
        return 1;
}

int
mcp_auth_load(const char *path, mcp_auth **ret, msp_err *err)
{
        _cleanup_fclose_ FILE *f = fopen(path, "re");
        if (!f)
                return msp_err_sys(err, errno, "--auth-tokens %s", path);
        _cleanup_auth_ mcp_auth *a = calloc(1, sizeof *a);
        if (!a)
                return msp_err_set(err, ENOMEM, "out of memory");
        _cleanup_free_ char *line = NULL;
        size_t cap = 0;
        unsigned ln = 0;
        int r = 0;
        while (getline(&line, &cap, f) >= 0) {
                ln++;
                entry e;
                r = parse_line(line, &e, err, path, ln);
                /* The token is gone from this buffer once its line is handled. */
                explicit_bzero(line, cap);
                if (r < 0)
                        return r;
                if (r == 0)
                        continue;
                for (size_t i = 0; i < a->n; i++) {
                        if (memcmp(a->e[i].digest, e.digest, DIGEST_LEN) == 0)
                                return msp_err_set(err, EINVAL, "%s:%u: the same token as an earlier line",
                                                   path, ln);
                        if (strcmp(a->e[i].tenant, e.tenant) == 0 && merge(&a->e[i].quota, &e.quota) < 0)
                                return msp_err_set(err, EINVAL, "%s:%u: tenant %s has another value for a quota on an earlier line",
                                                   path, ln, e.tenant);
                }
                entry *p = realloc(a->e, (a->n + 1) * sizeof *p);
                if (!p)
                        return msp_err_set(err, ENOMEM, "out of memory");
                a->e = p;
                a->e[a->n++] = e;
        }
        if (ferror(f))
                return msp_err_sys(err, EIO, "--auth-tokens %s: reading", path);
        if (a->n == 0)
                return msp_err_set(err, EINVAL, "--auth-tokens %s: no token in the file", path);
        *ret = TAKE_PTR(a);
        return 0;
}

mcp_auth *
mcp_auth_free(mcp_auth *a)
{
        if (!a)
                return NULL;
        if (a->e)
                explicit_bzero(a->e, a->n * sizeof *a->e);
        free(a->e);
        free(a);
        return NULL;
}

size_t
mcp_auth_count(const mcp_auth *a)
{
        return a ? a->n : 0;
}

mcp_quota
mcp_auth_quota(const mcp_auth *a, const char *tenant)
{
        mcp_quota q = { 0 };
        for (size_t i = 0; a && i < a->n; i++) {
                const mcp_quota *e = &a->e[i].quota;
                if (strcmp(a->e[i].tenant, tenant) != 0)
                        continue;
                q.concurrent_runs = e->concurrent_runs ? e->concurrent_runs : q.concurrent_runs;
                q.sessions = e->sessions ? e->sessions : q.sessions;
                q.runs_per_minute = e->runs_per_minute ? e->runs_per_minute : q.runs_per_minute;
                q.mcp_sessions = e->mcp_sessions ? e->mcp_sessions : q.mcp_sessions;
        }
        return q;
}

const char *
mcp_auth_tenant(const mcp_auth *a, const char *token, size_t len)
{
        unsigned char d[DIGEST_LEN];
        if (!a || len > TOKEN_MAX || digest(token, len, d) < 0)
                return NULL;
        /* Every entry is compared in full, whatever matched: the time says nothing about
         * which digest, or how much of it, was close. */
        const char *tenant = NULL;
        for (size_t i = 0; i < a->n; i++) {
                unsigned char diff = 0;
                for (size_t j = 0; j < DIGEST_LEN; j++)
                        diff |= (unsigned char) (a->e[i].digest[j] ^ d[j]);
                volatile unsigned char v = diff;
                if (v == 0)
                        tenant = a->e[i].tenant;
        }
        explicit_bzero(d, sizeof d);
        return tenant;
}
