/* The `network` argument of run_code and session_create (and its schema), the egress
 * proxy's decisions in the log, and the denied hosts and upstream errors of a run's
 * result. Owner: tools-network.c. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "mcp/tools-args.h"

/* `network`: absent, false or "none"; true or "full" (--allow-network); {"allow": [...]}
 * within --network-allow (patterns added to *allow, the caller's to free). */
int mcp_arg_network(targs *a, const mcp_config *cfg, mcp_net_mode *mode, mcp_egress_policy *allow);
void mcp_schema_network(oci_jw *w, const mcp_config *cfg);
void mcp_network_log(mcp_logger *log, const char *run_id, mcp_proxy_event ev, const char *host,
                     uint16_t port, const char *reason, uint64_t bytes);
/* denied_hosts and upstream_errors of a result's structuredContent. */
void mcp_write_egress(oci_jw *w, const mcp_run_result *res);
/* "; the egress proxy refused a:443 (...); upstream connections failed: b:443 (why)" for
 * the text of a result; "" without. */
size_t mcp_egress_text(const mcp_run_result *res, char *buf, size_t size);
