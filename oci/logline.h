/* One JSON log line in the format podman parses: {"level":..,"msg":..,"time":..}.
 * Pure string escaping, no allocation: usable anywhere in the runtime. */
#pragma once

#include <stddef.h>

/* Write the line (with a trailing newline) into buf; returns its length, or -ENOSPC
 * (the message is then truncated but still valid JSON). */
int oci_log_line_json(const char *level, const char *msg, const char *time, char *buf,
                      size_t bufsz);
/* Escape s as a JSON string body (without quotes) into buf; returns the length written
 * or -ENOSPC when truncated. */
int oci_json_escape(const char *s, char *buf, size_t bufsz);
