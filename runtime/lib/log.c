#include "lib/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "oci/oci.h"

static void
format_time(char *buf, size_t n)
{
        struct timespec ts;
        struct tm tm;

        clock_gettime(CLOCK_REALTIME, &ts);
        gmtime_r(&ts.tv_sec, &tm);
        size_t w = strftime(buf, n, "%Y-%m-%dT%H:%M:%S", &tm);
        snprintf(buf + w, n - w, ".%09ldZ", ts.tv_nsec);
}

static void
write_all(int fd, const char *s, size_t len)
{
        while (len > 0) {
                ssize_t w = write(fd, s, len);
                if (w < 0) {
                        if (errno == EINTR)
                                continue;
                        return;
                }
                s += w;
                len -= (size_t) w;
        }
}

/* Errors go to the --log file (podman reads it in JSON mode) and to stderr (conmon
 * relays stderr when create fails); warnings and debug lines to one of them. */
_printf_(4, 0) static void
log_v(const rt_ctx *ctx, const char *level, bool also_stderr, const char *fmt, va_list ap)
{
        char msg[2048], line[4096], now[64];
        int saved = errno;

        vsnprintf(msg, sizeof msg, fmt, ap);
        /* Messages quote config values, image paths and helpers' output: nothing in them
         * may drive the terminal or forge a line, and the JSON log stays valid UTF-8. */
        oci_text_clean(msg);
        if (ctx && ctx->log_fd >= 0) {
                int n;
                format_time(now, sizeof now);
                if (ctx->log_format == RT_LOG_JSON) {
                        n = oci_log_line_json(level, msg, now, line, sizeof line);
                        if (n < 0)
                                n = (int) strlen(line);
                } else {
                        n = snprintf(line, sizeof line, "%s %s: %s\n", now, level, msg);
                        if (n < 0 || (size_t) n >= sizeof line)
                                n = (int) strlen(line);
                }
                write_all(ctx->log_fd, line, (size_t) n);
                if (!also_stderr) {
                        errno = saved;
                        return;
                }
        }
        if (strcmp(level, "error") == 0)
                snprintf(line, sizeof line, "msp: %s\n", msg);
        else
                snprintf(line, sizeof line, "msp: %s: %s\n", level, msg);
        write_all(STDERR_FILENO, line, strlen(line));
        errno = saved;
}

void
rt_log_error(const rt_ctx *ctx, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        log_v(ctx, "error", true, fmt, ap);
        va_end(ap);
}

void
rt_log_warning(const rt_ctx *ctx, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        log_v(ctx, "warning", false, fmt, ap);
        va_end(ap);
}

void
rt_log_debug_(const rt_ctx *ctx, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        log_v(ctx, "debug", false, fmt, ap);
        va_end(ap);
}
