#include "oci/err.h"
#include <stdbool.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int err_vset(msp_err *err, int errnum, bool with_strerror, const char *fmt, va_list ap)
        _printf_(4, 0);

static int
err_vset(msp_err *err, int errnum, bool with_strerror, const char *fmt, va_list ap)
{
        if (errnum <= 0)
                errnum = EINVAL;
        if (!err)
                return -errnum;
        err->errnum = errnum;
        int n = vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        if (with_strerror && n >= 0 && (size_t) n < sizeof err->msg)
                snprintf(err->msg + n, sizeof err->msg - (size_t) n, ": %s", strerror(errnum));
        return -errnum;
}

int
msp_err_set(msp_err *err, int errnum, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        int r = err_vset(err, errnum, false, fmt, ap);
        va_end(ap);
        return r;
}

int
msp_err_sys(msp_err *err, int errnum, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        int r = err_vset(err, errnum, true, fmt, ap);
        va_end(ap);
        return r;
}

int
msp_err_prefix(msp_err *err, const char *fmt, ...)
{
        if (!err)
                return -EINVAL;
        if (err->errnum <= 0)
                err->errnum = EINVAL;
        char prefix[MSP_ERR_MSG_MAX];
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(prefix, sizeof prefix, fmt, ap);
        va_end(ap);
        if (n < 0)
                return -err->errnum;
        /* "prefix: msg", truncated to the buffer. */
        char joined[MSP_ERR_MSG_MAX];
        size_t o = 0;
        const char *parts[] = { prefix, ": ", err->msg };
        for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
                size_t len = strlen(parts[i]);
                if (len > sizeof joined - 1 - o)
                        len = sizeof joined - 1 - o;
                memcpy(joined + o, parts[i], len);
                o += len;
        }
        joined[o] = '\0';
        memcpy(err->msg, joined, o + 1);
        return -err->errnum;
}

void
msp_err_clear(msp_err *err)
{
        if (err) {
                err->errnum = 0;
                err->msg[0] = '\0';
        }
}
