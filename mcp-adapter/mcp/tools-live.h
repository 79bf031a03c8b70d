/* The tools of a session's running sandbox: session_pause, session_resume, and its
 * background processes: process_list, process_output, process_kill. Owner: tools-live.c. */
#pragma once

#include "mcp/tools-args.h"

/* What process_output returns at most per call, and by default. */
#define PROCESS_OUTPUT_MAX MIB
#define PROCESS_OUTPUT_DEFAULT (64 * 1024)
#define PROCESS_ID_MAX 16

void mcp_tool_session_pause(mcp_server *srv, const mcp_rpc_id *id, targs *a, const mcp_rpc_id *token);
void mcp_tool_session_resume(mcp_server *srv, const mcp_rpc_id *id, targs *a, const mcp_rpc_id *token);
void mcp_tool_process_list(mcp_server *srv, const mcp_rpc_id *id, targs *a, const mcp_rpc_id *token);
void mcp_tool_process_output(mcp_server *srv, const mcp_rpc_id *id, targs *a, const mcp_rpc_id *token);
void mcp_tool_process_kill(mcp_server *srv, const mcp_rpc_id *id, targs *a, const mcp_rpc_id *token);
