/* The audit log (--audit-log PATH): one JSON object per line for every run, HTTP request,
 * egress decision, session and authentication failure, so that an operator can say who ran
 * what, when, with what outcome. Owner: audit.c (the file and the line format);
 * tools-audit.c writes the server's events.
 *
 * Every line starts with "time" (RFC 3339, UTC, milliseconds) and "event"; the other field
 * names are shared by every event that has them (docs/MCP.md lists them). Strings are
 * repaired to valid UTF-8 and cut at MCP_AUDIT_STR_MAX bytes; the JSON writer escapes
 * quotes, backslashes and control characters, so that no value can end a line or forge a
 * field.
 *
 * The file is opened O_WRONLY|O_APPEND|O_CREAT|O_CLOEXEC (mode 0640) and written from the
 * loop's thread with one write(2) per line (a page-cache copy of at most a few KiB; with
 * --audit-code up to the code's size). A failing write (ENOSPC, EDQUOT, EIO) never stops a
 * run: the line is dropped and counted, stderr says so once, and the first line written
 * afterwards is an "audit_dropped" event with the count. "-" is stderr. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "oci/oci.h"

#define MCP_AUDIT_STR_MAX 1024

typedef struct mcp_audit mcp_audit;

/* -errno with err naming the path when it cannot be opened for appending. */
int mcp_audit_open(const char *path, mcp_audit **ret, msp_err *err);
mcp_audit *mcp_audit_free(mcp_audit *a);
static inline void
mcp_audit_freep(mcp_audit **a)
{
        mcp_audit_free(*a);
}
/* SIGHUP: opens the path again (after a rotation renamed it); on an error the old file
 * stays in use and err says why. */
int mcp_audit_reopen(mcp_audit *a, msp_err *err);
/* Lines that could not be written since the start. */
uint64_t mcp_audit_dropped(const mcp_audit *a);

/* An event: a writer with "time" and "event" written, to be filled with the fields below
 * and handed to mcp_audit_end(). NULL when a is NULL (no audit log) or out of memory: the
 * field functions and mcp_audit_end() accept NULL. */
oci_jw *mcp_audit_begin(mcp_audit *a, const char *event);
/* Writes the line (takes w). */
void mcp_audit_end(mcp_audit *a, oci_jw *w);

/* Fields: s NULL writes null; s is repaired and cut (above). */
void mcp_audit_str(oci_jw *w, const char *key, const char *s);
/* The first len bytes of buf (repaired, not cut): --audit-code's code. */
void mcp_audit_bytes(oci_jw *w, const char *key, const char *buf, size_t len);
void mcp_audit_uint(oci_jw *w, const char *key, uint64_t v);
void mcp_audit_int(oci_jw *w, const char *key, int64_t v);
void mcp_audit_bool(oci_jw *w, const char *key, bool v);

/* tools-audit.c: a sandbox session that expired (session.h), for the transports. Its
 * session_close line with why, naming the transport and the tenant that owned it (NULL:
 * none known); no MCP session asked for it. */
void mcp_audit_session_expired(mcp_audit *a, bool http, const char *tenant,
                               const char *session_id, const char *why);

/* --check's line: whether path (NULL: none) can be appended to, without creating it. */
void mcp_audit_check(const char *path, FILE *out);

/* The lowercase hex SHA-256 of buf; -EIO when the hash is not available. */
int mcp_audit_sha256(const void *buf, size_t len, char hex[65]);
