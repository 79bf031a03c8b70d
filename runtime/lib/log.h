/* Logging: debug/warning lines to --log (text or JSON, podman's format) or stderr.
 * Errors are printed once by the command layer with rt_log_error(). Never stdout. */
#pragma once

#include "lib/ctx.h"
#include "oci/oci.h"

void rt_log_error(const rt_ctx *ctx, const char *fmt, ...) _printf_(2, 3);
void rt_log_warning(const rt_ctx *ctx, const char *fmt, ...) _printf_(2, 3);
void rt_log_debug_(const rt_ctx *ctx, const char *fmt, ...) _printf_(2, 3);
#define rt_debug(ctx, ...)                                      \
        do {                                                    \
                if ((ctx) && (ctx)->debug)                      \
                        rt_log_debug_((ctx), __VA_ARGS__);      \
        } while (0)
