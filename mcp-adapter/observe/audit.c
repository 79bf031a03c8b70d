/* The audit log's file and line format (see audit.h). */
#include "observe/audit.h"

#include <errno.h>
#include <fcntl.h>
#include <gnutls/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "observe/log.h"
#include "base/base.h"
#include "oci/oci.h"

struct mcp_audit {
        char *path;                     /* NULL: stderr */
        int fd;
        uint64_t dropped;               /* since the start */
        uint64_t dropped_unreported;    /* since the last line written */
        bool torn;                      /* a short write left a partial line */
};

static int
open_path(const char *path)
{
        int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, 0640);
        return fd < 0 ? -errno : fd;
}

int
mcp_audit_open(const char *path, mcp_audit **ret, msp_err *err)
{
        _cleanup_free_ mcp_audit *a = calloc(1, sizeof *a);
        if (!a)
                return msp_err_set(err, ENOMEM, "out of memory");
        a->fd = STDERR_FILENO;
        if (strcmp(path, "-") != 0) {
                if (!(a->path = strdup(path)))
                        return msp_err_set(err, ENOMEM, "out of memory");
                int fd = open_path(path);
                if (fd < 0) {
                        free(a->path);
                        return msp_err_set(err, -fd, "--audit-log %s: %s", path, strerror(-fd));
                }
                a->fd = fd;
        }
        *ret = TAKE_PTR(a);
        return 0;
}

mcp_audit *
mcp_audit_free(mcp_audit *a)
{
        if (!a)
                return NULL;
        if (a->path)
                close(a->fd);
        free(a->path);
        free(a);
        return NULL;
}

int
mcp_audit_reopen(mcp_audit *a, msp_err *err)
{
        if (!a || !a->path)
                return 0;
        int fd = open_path(a->path);
        if (fd < 0)
                return msp_err_set(err, -fd, "--audit-log %s: reopening: %s (still writing to the old file)",
                                   a->path, strerror(-fd));
        close(a->fd);
        a->fd = fd;
        /* A partial line stays in the old file; the new one starts clean. */
        a->torn = false;
        return 0;
}

void
mcp_audit_check(const char *path, FILE *out)
{
        if (!path) {
                fprintf(out, "%-8s %-14s no --audit-log\n", "off", "audit-log");
                return;
        }
        if (strcmp(path, "-") == 0) {
                fprintf(out, "%-8s %-14s stderr\n", "ok", "audit-log");
                return;
        }
        /* The file, or (not there yet) the directory it would be created in. */
        _cleanup_free_ char *dir = strdup(path);
        char *slash = dir ? strrchr(dir, '/') : NULL;
        if (slash)
                *(slash == dir ? slash + 1 : slash) = '\0';
        bool exists = access(path, F_OK) == 0;
        int r = exists ? access(path, W_OK) : access(slash ? dir : ".", W_OK | X_OK);
        fprintf(out, "%-8s %-14s %s: %s%s\n", r == 0 ? "ok" : "warning", "audit-log", path,
                r == 0 ? (exists ? "appendable" : "will be created") : "cannot be opened: ",
                r == 0 ? "" : strerror(errno));
}

uint64_t
mcp_audit_dropped(const mcp_audit *a)
{
        return a ? a->dropped : 0;
}

int
mcp_audit_sha256(const void *buf, size_t len, char hex[65])
{
        unsigned char d[32];
        if (gnutls_hash_fast(GNUTLS_DIG_SHA256, buf, len, d) != 0) {
                hex[0] = '\0';
                return -EIO;
        }
        for (size_t i = 0; i < sizeof d; i++)
                snprintf(hex + 2 * i, 3, "%02x", d[i]);
        return 0;
}

oci_jw *
mcp_audit_begin(mcp_audit *a, const char *event)
{
        if (!a)
                return NULL;
        oci_jw *w = oci_jw_new(false);
        if (!w)
                return NULL;
        char t[32];
        mcp_rfc3339_ms(mcp_wallclock_usec(), t);
        oci_jw_begin_object(w);
        oci_jw_kv_string(w, "time", t);
        oci_jw_kv_string(w, "event", event);
        return w;
}

/* One write per line: a short one (a full disk) leaves a partial line, which the next
 * line's leading newline ends, so that a reader loses that line only. */
static bool
emit(mcp_audit *a, oci_jw *w)
{
        _cleanup_free_ char *json = NULL;
        size_t len = 0;
        if (oci_jw_finish(w, &json, &len, NULL) < 0)
                return false;
        size_t lead = a->torn ? 1 : 0;
        _cleanup_free_ char *line = malloc(lead + len + 1);
        if (!line)
                return false;
        if (lead)
                line[0] = '\n';
        memcpy(line + lead, json, len);
        line[lead + len] = '\n';
        ssize_t n = write(a->fd, line, lead + len + 1);
        if (n == (ssize_t) (lead + len + 1)) {
                a->torn = false;
                return true;
        }
        if (a->dropped_unreported == 0)
                mcp_log_stderr("warning: --audit-log %s: %s: lines are dropped until writes succeed",
                        a->path ? a->path : "-", n < 0 ? strerror(errno) : "short write");
        a->torn = a->torn || n > 0;
        return false;
}

static void
write_event(mcp_audit *a, oci_jw *w)
{
        oci_jw_end_object(w);
        if (a->dropped_unreported) {
                _cleanup_jw_ oci_jw *d = mcp_audit_begin(a, "audit_dropped");
                mcp_audit_uint(d, "lines", a->dropped_unreported);
                if (d)
                        oci_jw_end_object(d);
                if (d && emit(a, d))
                        a->dropped_unreported = 0;
        }
        if (a->dropped_unreported || !emit(a, w)) {
                a->dropped++;
                a->dropped_unreported++;
        }
}

void
mcp_audit_end(mcp_audit *a, oci_jw *w)
{
        if (a && w)
                write_event(a, w);
        oci_jw_free(w);
}

/* A prefix of at most max bytes that ends on a character boundary. */
static size_t
cut(const char *s, size_t len, size_t max)
{
        if (len <= max)
                return len;
        size_t n = max;
        while (n > 0 && ((unsigned char) s[n] & 0xc0) == 0x80)
                n--;
        return n;
}

void
mcp_audit_bytes(oci_jw *w, const char *key, const char *buf, size_t len)
{
        if (!w)
                return;
        oci_jw_key(w, key);
        if (!buf) {
                oci_jw_null(w);
                return;
        }
        _cleanup_free_ char *fixed = mcp_utf8_sanitize(buf, len, NULL);
        oci_jw_string(w, fixed ? fixed : "");
}

void
mcp_audit_str(oci_jw *w, const char *key, const char *s)
{
        if (!w)
                return;
        if (!s) {
                oci_jw_key(w, key);
                oci_jw_null(w);
                return;
        }
        size_t len = strlen(s), n = cut(s, len, MCP_AUDIT_STR_MAX);
        if (n == len) {
                mcp_audit_bytes(w, key, s, len);
                return;
        }
        /* A cut value ends with "...", so that it is not taken for the whole. */
        _cleanup_free_ char *fixed = mcp_utf8_sanitize(s, n, NULL);
        _cleanup_free_ char *marked = NULL;
        oci_jw_key(w, key);
        oci_jw_string(w, fixed && asprintf(&marked, "%s...", fixed) >= 0 ? marked : "");
}

void
mcp_audit_uint(oci_jw *w, const char *key, uint64_t v)
{
        if (w)
                oci_jw_kv_uint64(w, key, v);
}

void
mcp_audit_int(oci_jw *w, const char *key, int64_t v)
{
        if (w)
                oci_jw_kv_int64(w, key, v);
}

void
mcp_audit_bool(oci_jw *w, const char *key, bool v)
{
        if (w)
                oci_jw_kv_bool(w, key, v);
}
