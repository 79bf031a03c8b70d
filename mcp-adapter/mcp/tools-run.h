/* run_code: its arguments, the submit to the engine, the in-flight calls of a server
 * (srv->calls) with their progress notifications, and their cancel or abort. Owner:
 * tools-run.c (the result of a finished run: tools-run-result.h). */
#pragma once

#include <stddef.h>

#include "mcp/tools-args.h"

/* The run_code tool: token, when not NULL, asks for progress notifications. */
void mcp_tool_run_code(mcp_server *srv, const mcp_rpc_id *id, targs *a, const mcp_rpc_id *token);
/* Calls of srv whose run is in flight (queued or running). */
size_t mcp_tools_in_flight(const mcp_server *srv);
/* notifications/cancelled: kill the run, send nothing; unknown ids are ignored. */
void mcp_tools_cancel(mcp_server *srv, const mcp_rpc_id *id);
void mcp_tools_cancel_all(mcp_server *srv);
/* session_close of a busy session: the runs in it are killed and answered with isError. */
void mcp_tools_abort_session(mcp_server *srv, const char *session_id);
