/* The session and file tools: session_create, session_list, session_close, write_file,
 * read_file, list_files. Owner: tools-session.c. */
#pragma once

#include "mcp/tools-args.h"

void mcp_tool_session_create(mcp_server *srv, const mcp_rpc_id *id, targs *a, const mcp_rpc_id *token);
void mcp_tool_session_list(mcp_server *srv, const mcp_rpc_id *id, targs *a, const mcp_rpc_id *token);
void mcp_tool_session_close(mcp_server *srv, const mcp_rpc_id *id, targs *a, const mcp_rpc_id *token);
void mcp_tool_write_file(mcp_server *srv, const mcp_rpc_id *id, targs *a, const mcp_rpc_id *token);
void mcp_tool_read_file(mcp_server *srv, const mcp_rpc_id *id, targs *a, const mcp_rpc_id *token);
void mcp_tool_list_files(mcp_server *srv, const mcp_rpc_id *id, targs *a, const mcp_rpc_id *token);
