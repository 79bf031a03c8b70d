/* Logging: to stderr (always, at the configured level) and to the client as
 * notifications/message once it asked with logging/setLevel; the logger also carries the
 * audit log (audit.h), which every holder of a logger writes events to. Owner: log.c. */
#pragma once

#include <stdarg.h>

#include "oci/oci.h"

typedef enum mcp_level {
        MCP_LOG_DEBUG,
        MCP_LOG_INFO,
        MCP_LOG_NOTICE,
        MCP_LOG_WARNING,
        MCP_LOG_ERROR,
        MCP_LOG_CRITICAL,
        MCP_LOG_ALERT,
        MCP_LOG_EMERGENCY,
} mcp_level;

/* The client sink: gets messages at or above the client's level. */
typedef void (*mcp_log_sink)(mcp_level level, const char *msg, void *data);

typedef struct mcp_logger {
        mcp_level stderr_level;
        mcp_level client_level;
        mcp_log_sink sink;              /* NULL until the client set a level */
        void *sink_data;
        struct mcp_audit *audit;        /* --audit-log (audit.h); NULL: none */
} mcp_logger;

/* -1 for an unknown name. */
int mcp_level_from_name(const char *name);
const char *mcp_level_name(mcp_level level);

/* On stderr the formatted message is one line whatever the arguments hold: it is written
 * through mcp_text_escape() (text.h), so that no value (a header, a token's field, the
 * runtime's error text) can forge a line or send a terminal an escape sequence. The client
 * sink gets it unescaped: it goes out as a JSON string. */
void mcp_log(mcp_logger *lg, mcp_level level, const char *fmt, ...) _printf_(3, 4);
/* "msp-mcp: MESSAGE" on stderr, escaped the same way: for messages before a logger exists
 * or after the loop stopped (start-up failures). */
void mcp_log_stderr(const char *fmt, ...) _printf_(1, 2);
