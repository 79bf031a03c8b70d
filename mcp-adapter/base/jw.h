/* JSON writer helpers over oci/json.h's oci_jw for text that may not be valid UTF-8 (run
 * output, names from a workspace): each writes a valid JSON string. They know nothing of
 * MCP. Owner: jw.c. */
#pragma once

#include <stddef.h>

#include "oci/oci.h"

/* Writes s, repaired to valid UTF-8 when it is not; NULL writes null. */
void mcp_jw_text(oci_jw *w, const char *s);
/* Raw bytes (output of a run) as a JSON string: invalid UTF-8 and NULs become U+FFFD. */
void mcp_jw_bytes(oci_jw *w, const char *buf, size_t len);
/* Begins an object, as the value of key when key is not NULL. */
void mcp_jw_obj(oci_jw *w, const char *key);
