/* seccomp from linux.seccomp through libseccomp. The filter is built and validated
 * during create (so errors reach the caller) and loaded as late as possible. */
#pragma once

#include <stdbool.h>

#include "err.h"
#include "spec.h"

typedef struct rt_seccomp rt_seccomp;

/* Build the filter. Unknown syscall names are skipped (debug message), like runc.
 * `debug` enables those messages on stderr before the container runs. */
int rt_seccomp_prepare(const oci_seccomp *s, bool debug, rt_seccomp **ret, msp_err *err);
/* Load the filter into the calling process. With SCMP_ACT_NOTIFY rules, the listener fd
 * is returned in *ret_listener (else -1). */
int rt_seccomp_load(rt_seccomp *f, int *ret_listener, msp_err *err);
/* Send the listener fd and the container state to listenerPath (seccomp.md protocol). */
int rt_seccomp_send_listener(const oci_seccomp *s, int listener, const char *state_json,
                             msp_err *err);
rt_seccomp *rt_seccomp_free(rt_seccomp *f);
