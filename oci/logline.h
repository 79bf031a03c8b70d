/* One JSON log line in the format podman parses: {"level":..,"msg":..,"time":..}, and
 * the text rule for anything msp prints. Pure string work, no allocation: usable
 * anywhere in the runtime, the init after its seccomp filter included. */
#pragma once

#include <stddef.h>

/* Write the line (with a trailing newline) into buf; returns its length, or -ENOSPC
 * (the message is then truncated but still valid JSON). */
int oci_log_line_json(const char *level, const char *msg, const char *time, char *buf,
                      size_t bufsz);
/* Escape s as a JSON string body (without quotes) into buf; returns the length written
 * or -ENOSPC when truncated. */
int oci_json_escape(const char *s, char *buf, size_t bufsz);
/* Make s (NUL-terminated) safe to print, in place, as ps(1) does with a command line:
 * every C0 control (newline and tab too), DEL, C1 control, Unicode bidi or line
 * separator control and byte of invalid UTF-8 becomes one '?'. What is left is printable
 * ASCII or valid UTF-8, so it can neither drive a terminal nor forge a line, and embeds
 * in JSON. Returns the new length. */
size_t oci_text_clean(char *s);
/* Length of the well-formed UTF-8 sequence at s (2 to 4 bytes), or 0 (RFC 3629: no
 * overlong forms, no surrogates, nothing above U+10FFFF). s is NUL-terminated. */
size_t oci_utf8_seq_len(const unsigned char *s);
