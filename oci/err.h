/* The error object: functions return -errno and fill this with a message that the
 * command layer prints once. It lives on the caller's stack and never allocates, so it
 * is safe to use in a child between clone() and exec(). */
#pragma once

#include <stddef.h>

#include "oci/macros.h"

#define MSP_ERR_MSG_MAX 1024

typedef struct msp_err {
        int errnum;                     /* positive errno; 0 when unset */
        char msg[MSP_ERR_MSG_MAX];
} msp_err;

/* Set the message (strerror is NOT appended) and return -errnum. err may be NULL. */
int msp_err_set(msp_err *err, int errnum, const char *fmt, ...) _printf_(3, 4);
/* Like msp_err_set, appending ": strerror(errnum)". */
int msp_err_sys(msp_err *err, int errnum, const char *fmt, ...) _printf_(3, 4);
/* Prefix context to an already-set message: "ctx: inner". Returns -err->errnum. */
int msp_err_prefix(msp_err *err, const char *fmt, ...) _printf_(2, 3);
void msp_err_clear(msp_err *err);
