/* Landlock (raw syscalls) from process.landlock: PR 1241's shape plus msp's extensions
 * (scoped IPC, ioctl_dev, ABI 7 logging flags). */
#pragma once

#include <stdbool.h>

#include "err.h"
#include "spec.h"

typedef struct rt_landlock rt_landlock;

/* The Landlock ABI of this kernel (0 = unavailable). */
int rt_landlock_abi(void);
/* After pivot_root: create the ruleset and add the rules, opening each path inside the
 * container. Strict mode (enableBestEffort false) fails with a message naming the right
 * the kernel lacks; best effort drops it and says so in *dropped (may be NULL). */
int rt_landlock_prepare(const oci_landlock *l, rt_landlock **ret, char *dropped,
                        size_t dropped_sz, msp_err *err);
/* landlock_restrict_self; requires no_new_privs (set by the caller). */
int rt_landlock_apply(rt_landlock *l, msp_err *err);
rt_landlock *rt_landlock_free(rt_landlock *l);
