/* Logging to stderr and to the client (see log.h). */
#include "log.h"

#include <stdio.h>
#include <string.h>

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

void
mcp_log(mcp_logger *lg, mcp_level level, const char *fmt, ...)
{
        if (!lg || (level < lg->stderr_level && (!lg->sink || level < lg->client_level)))
                return;
        char msg[2048];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        if (level >= lg->stderr_level)
                fprintf(stderr, "msp-mcp: %s: %s\n", mcp_level_name(level), msg);
        if (lg->sink && level >= lg->client_level)
                lg->sink(level, msg, lg->sink_data);
}
