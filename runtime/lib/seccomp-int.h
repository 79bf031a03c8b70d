/* Between seccomp.c and seccomp-cache.c (and their unit tests): the prepare steps
 * split so that the compile (libseccomp) can be replaced by a cached program. */
#pragma once

#include <linux/filter.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "lib/ctx.h"
#include "lib/seccomp.h"

/* The checks and load flags of rt_seccomp_prepare(), without a program. They probe the
 * kernel (actions, flags) and run on every create and exec, cached program or not; a
 * flag they drop is a debug line of ctx (which may be NULL). */
int rt_seccomp_check(const rt_ctx *ctx, const oci_seccomp *s, rt_seccomp **ret, msp_err *err);
/* Compile s with libseccomp into f. The notes (skipped syscalls and architectures) go
 * to `notes` when it is not NULL. */
int rt_seccomp_compile(const oci_seccomp *s, rt_seccomp *f, FILE *notes, msp_err *err);
const struct sock_filter *rt_seccomp_program(const rt_seccomp *f, size_t *ret_n);
/* Takes ownership of insns (malloc'd, 1..BPF_MAXINSNS entries). */
void rt_seccomp_set_program(rt_seccomp *f, struct sock_filter *insns, size_t n);
/* Put runc's ENOSYS stub in front of the program (seccomp-enosys.c): syscall numbers
 * above the highest one s names, per architecture, get ENOSYS instead of the default
 * action. *insns is replaced (malloc'd), *n updated; nothing is done when the default
 * action lets syscalls run or already answers ENOSYS. */
int rt_seccomp_enosys_prepend(const oci_seccomp *s, struct sock_filter **insns, size_t *n,
                              msp_err *err);
/* The action for a syscall of an architecture the filter lacks (probed). */
uint32_t rt_seccomp_badarch_action(void);
