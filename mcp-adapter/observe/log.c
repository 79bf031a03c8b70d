/* Logging to stderr and to the client (see log.h). */
#include "observe/log.h"

#include <stdio.h>
#include <string.h>

#include "base/base.h"

#define MSG_MAX 2048

static const char *const names[] = { "debug", "info", "notice", "warning", "error",
                                     "critical", "alert", "emergency" };

int
mcp_level_from_name(const char *name)
{
        for (size_t i = 0; i < ARRAY_SIZE(names); i++)
                if (strcmp(names[i], name) == 0)
                        return (int) i;
        return -1;
}

const char *
mcp_level_name(mcp_level level)
{
        return (unsigned) level < ARRAY_SIZE(names) ? names[level] : "info";
}

/* One line: "msp-mcp: " prefix, msg escaped, the only newline ours. At most four bytes
 * of output per byte of msg (\xHH), six per three-byte character (\uHHHH). */
static void
write_line(const char *prefix, const char *msg)
{
        char line[MSG_MAX * 4 + 1];
        mcp_text_escape(msg, strlen(msg), line, sizeof line);
        fprintf(stderr, "msp-mcp: %s%s\n", prefix, line);
}

void
mcp_log_stderr(const char *fmt, ...)
{
        char msg[MSG_MAX];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        write_line("", msg);
}

void
mcp_log(mcp_logger *lg, mcp_level level, const char *fmt, ...)
{
        if (!lg || (level < lg->stderr_level && (!lg->sink || level < lg->client_level)))
                return;
        char msg[MSG_MAX];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        if (level >= lg->stderr_level) {
                char prefix[32];
                snprintf(prefix, sizeof prefix, "%s: ", mcp_level_name(level));
                write_line(prefix, msg);
        }
        if (lg->sink && level >= lg->client_level)
                lg->sink(level, msg, lg->sink_data);
}
