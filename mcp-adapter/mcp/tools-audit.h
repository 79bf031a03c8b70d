/* The tools' audit events (observe/audit.h): runs, sessions and the egress proxy's
 * decisions, each naming who asked (transport, tenant, MCP session). Owner: tools-audit.c. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "mcp/server.h"

/* What a run's audit lines carry from its start to its end. */
typedef struct mcp_run_audit {
        char run_id[32];                /* "" until known */
        char code_sha256[65];
        uint64_t code_bytes;
        const char *language;           /* the engine's name */
        const char *session_id;         /* the call's copy; NULL: a fresh workspace */
        uint64_t start_usec;            /* monotonic */
        bool started;                   /* run_start written */
} mcp_run_audit;

/* An audit event naming the caller: transport, tenant, mcp_session (NULL: no audit log). */
oci_jw *mcp_audit_begin_srv(mcp_server *srv, const char *event);
/* Before the submit: the code's hash and size, the start time. */
void mcp_audit_run_prepare(mcp_run_audit *ra, const mcp_run_request *req, const char *session_id);
/* Once per run, when its id is known. */
void mcp_audit_run_start(mcp_server *srv, mcp_run_audit *ra, const mcp_run_request *req,
                         const char *run_id);
/* res NULL: cancelled or refused before the sandbox ran; reason: why, or NULL. */
void mcp_audit_run_end(mcp_server *srv, mcp_run_audit *ra, mcp_outcome o, const mcp_run_result *res,
                       const char *reason);
void mcp_audit_egress(mcp_server *srv, const char *run_id, mcp_proxy_event ev, const char *host,
                      uint16_t port, const char *reason, uint64_t up, uint64_t down);
/* A call the tenant's quota refused (reason: the tool error's text). */
void mcp_audit_refused(mcp_server *srv, const char *tool, const char *reason);
/* port_expose of a new port (never its URL: over stdio the URL is the secret). */
void mcp_audit_port(mcp_server *srv, const char *session_id, uint16_t port);
/* process_kill of a session's background process (sig 0: it had exited, it is forgotten). */
void mcp_audit_process_kill(mcp_server *srv, const char *session_id, const char *process_id, int sig);
/* session_create (info), or session_close, session_pause, session_resume (session_id). */
void mcp_audit_session(mcp_server *srv, const char *event, const mcp_session_info *info,
                       const char *session_id, const char *reason);
