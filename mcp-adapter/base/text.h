/* Text helpers of the protocol layer: UTF-8 repair, integers, base64, RFC 3339 times. Owner: text.c. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A NUL-terminated copy in which every invalid UTF-8 sequence and every NUL byte is
 * replaced by U+FFFD. NULL on allocation failure. */
char *mcp_utf8_sanitize(const char *buf, size_t len, size_t *ret_len);
bool mcp_utf8_valid(const char *buf, size_t len);
/* The length of buf's longest valid prefix (len when all of it is valid). */
size_t mcp_utf8_valid_len(const char *buf, size_t len);
/* The largest n <= len such that buf[len-n..len) starts on a character boundary. */
size_t mcp_utf8_tail_start(const char *buf, size_t len, size_t max);

/* buf as one inert line for a log or a terminal, into out (NUL-terminated; cut before an
 * escape that does not fit): every byte that could end the line, move the cursor or
 * restyle the text is written as an escape. C0 controls and DEL become \n, \r, \t, \e or
 * \xHH; bytes that are not valid UTF-8 (NUL included) \xHH; C1 controls, the line and
 * paragraph separators and the bidirectional overrides \uHHHH; a backslash \\, so that
 * an escape in the output was made here. Returns the length written. */
size_t mcp_text_escape(const char *buf, size_t len, char *out, size_t size);

/* What one response may hold at most, encoded: clients refuse larger messages (the
 * TypeScript SDK: 10 MiB) and drop the connection. Outputs, file contents and images are
 * cut or linked to fit. */
#define MCP_RESPONSE_BUDGET ((size_t) 8 * 1024 * 1024)

/* The longest prefix of buf (valid UTF-8 without NUL) that fits in budget bytes once
 * written `once` times as a JSON string and `twice` times inside a JSON document that is
 * itself written as a string (a tool's text block); cut on a character boundary.
 * *ret_cost (may be NULL) is what that prefix takes. */
size_t mcp_json_fit(const char *buf, size_t len, size_t budget, unsigned once, unsigned twice,
                    size_t *ret_cost);

/* A JSON integer's text: digits with an optional '-', no fraction or exponent. -EINVAL
 * for anything else, -ERANGE outside int64. */
int mcp_parse_int64(const char *s, int64_t *ret);

/* NUL-terminated base64 (RFC 4648, padded); NULL on allocation failure. */
char *mcp_base64_encode(const void *data, size_t len, size_t *ret_len);
/* -EINVAL for characters outside the alphabet or bad padding (whitespace is refused
 * too); *ret is malloc'd. */
int mcp_base64_decode(const char *s, size_t len, unsigned char **ret, size_t *ret_len);
/* Decoded size of a base64 text of len bytes (an upper bound). */
size_t mcp_base64_decoded_max(size_t len);

/* "2026-11-22T03:04:05Z" from a wall-clock time in microseconds. */
void mcp_rfc3339(uint64_t wall_usec, char buf[32]);
/* The same with milliseconds: "2026-11-22T03:04:05.999Z". */
void mcp_rfc3339_ms(uint64_t wall_usec, char buf[32]);
