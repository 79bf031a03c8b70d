/* The result of a finished run_code call: people's text, the structured content, the
 * files of /workspace/out as images or resource links, all within the response budget.
 * Owner: tools-run-result.c. */
#pragma once

#include "mcp/server.h"

/* The response to id for res; session_id: the call's session, or NULL. */
void mcp_tool_run_result(mcp_server *srv, const mcp_rpc_id *id, const char *session_id,
                         const mcp_run_result *res);

/* "SIGKILL" for 9 (SIG and the number when it has no name), in buf. */
const char *mcp_signal_name(int sig, char buf[32]);
