/* tools/list and tools/call: the tool table (each tool's name, schemas, annotations,
 * allowed arguments and implementation) and the dispatch of a call to its tool. Owner:
 * tools.c. */
#pragma once

#include "mcp/server.h"

void mcp_tools_write_list(oci_jw *w, const mcp_config *cfg, const char *const *languages,
                          mcp_version v);
void mcp_tools_call(mcp_server *srv, const mcp_rpc_id *id, const oci_json *params);
