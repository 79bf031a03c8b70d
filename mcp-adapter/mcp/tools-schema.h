/* The input and output schemas of the tools: the properties and required of an object
 * schema, limits from the configuration. Owner: tools-schema.c. */
#pragma once

#include "mcp/server.h"

void mcp_schema_in_run_code(oci_jw *w, const mcp_config *cfg, const char *const *languages);
void mcp_schema_out_run_code(oci_jw *w);
void mcp_schema_in_session_create(oci_jw *w, const mcp_config *cfg, const char *const *languages);
void mcp_schema_out_session_create(oci_jw *w);
void mcp_schema_in_none(oci_jw *w, const mcp_config *cfg, const char *const *languages);
void mcp_schema_out_session_list(oci_jw *w);
void mcp_schema_in_session_id(oci_jw *w, const mcp_config *cfg, const char *const *languages);
void mcp_schema_out_session_close(oci_jw *w);
void mcp_schema_in_write_file(oci_jw *w, const mcp_config *cfg, const char *const *languages);
void mcp_schema_out_write_file(oci_jw *w);
void mcp_schema_in_read_file(oci_jw *w, const mcp_config *cfg, const char *const *languages);
void mcp_schema_out_read_file(oci_jw *w);
void mcp_schema_in_list_files(oci_jw *w, const mcp_config *cfg, const char *const *languages);
void mcp_schema_out_list_files(oci_jw *w);
void mcp_schema_out_session_state(oci_jw *w);
void mcp_schema_out_process_list(oci_jw *w);
void mcp_schema_in_process_output(oci_jw *w, const mcp_config *cfg, const char *const *languages);
void mcp_schema_out_process_output(oci_jw *w);
void mcp_schema_in_process_kill(oci_jw *w, const mcp_config *cfg, const char *const *languages);
void mcp_schema_out_process_kill(oci_jw *w);
void mcp_schema_in_port_expose(oci_jw *w, const mcp_config *cfg, const char *const *languages);
void mcp_schema_out_port_expose(oci_jw *w);
