/* The resources methods: the run logs and session files a caller may read
 * (resources/list, resources/templates/list, resources/read), the kept copies of a fresh
 * run's files, and notifications/resources/list_changed. Owner: resources.c. */
#pragma once

#include <stddef.h>

#include "mcp/server.h"

void mcp_resources_list(mcp_server *srv, const mcp_rpc_id *id);
void mcp_resources_templates(mcp_server *srv, const mcp_rpc_id *id);
void mcp_resources_read(mcp_server *srv, const mcp_rpc_id *id, const oci_json *params);
void mcp_resources_note_run(mcp_server *srv, const char *run_id);
/* Keeps a copy of a file of a fresh run for resources/read, on disk within the kept files'
 * budgets (keptfiles.h: the oldest go, each drop logged). */
void mcp_resources_keep_file(mcp_server *srv, const char *uri, const char *mime,
                             const void *data, size_t len);
void mcp_resources_free(mcp_server *srv);
/* notifications/resources/list_changed, once per loop round however many changes: srv's
 * own list changed (a run log); a sandbox session was created, closed or expired or its
 * files changed (every caller that sees it is told); a notice still due may go now (the
 * client initialized, an HTTP GET stream opened). */
void mcp_resources_changed(mcp_server *srv);
void mcp_resources_session_changed(mcp_server *srv);
void mcp_resources_changed_retry(mcp_server *srv);
