/* The bottom of the JSON layer: building the path of a value ("process.args[2]",
 * "annotations[\"odd key\"]") and quoting a value for a message. Pure string work on
 * caller buffers; knows nothing of documents, so the pre-parse scan (json-scan.c), the
 * document model (json.c) and the typed reader (json-path.c, json-read.c) all build on
 * it. */
#pragma once

#include <stddef.h>

#define OCI_JR_PATH_MAX 256             /* bytes of a path, "..." when longer */
#define OCI_JR_VALUE_MAX 64             /* bytes of an offending value quoted in messages */

/* Appends one path segment (".key", "[\"odd key\"]" or "[3]") to buf (size bytes, *len
 * used); a path that does not fit ends in "..." and takes no more segments. */
void oci_json_path_append_key(char *buf, size_t size, size_t *len, const char *key);
void oci_json_path_append_index(char *buf, size_t size, size_t *len, size_t i);
/* Quotes s for a message: JSON-style escapes, invalid UTF-8 bytes as \xNN, at most
 * OCI_JR_VALUE_MAX input bytes (then "..."); the output is always valid UTF-8. */
void oci_json_quote(const char *s, char *buf, size_t size);
