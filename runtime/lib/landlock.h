/* Landlock (raw syscalls) from process.landlock: PR 1241's shape plus msp's extensions
 * (scoped IPC, ioctl_dev, ABI 7 logging flags). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "oci/oci.h"

typedef struct rt_landlock rt_landlock;

/* The Landlock ABI of this kernel (0 = unavailable). */
int rt_landlock_abi(void);
/* After pivot_root: create the ruleset and add the rules, opening each path inside the
 * container. Rules attach to inodes, so call it after every mount is final (a tmpfs
 * mounted on /tmp afterwards would hide the rule's directory). Strict mode (enableBestEffort false) fails with a message naming the right
 * the kernel lacks; best effort drops it and says so in *dropped (may be NULL). */
int rt_landlock_prepare(const oci_landlock *l, rt_landlock **ret, char *dropped,
                        size_t dropped_sz, msp_err *err);
/* landlock_restrict_self; requires no_new_privs (set by the caller). Call it before
 * rt_seccomp_load(): the filter may not allow prctl or landlock_restrict_self. After it,
 * mount(2) and pivot_root fail (EPERM) in the domain. */
int rt_landlock_apply(rt_landlock *l, msp_err *err);
rt_landlock *rt_landlock_free(rt_landlock *l);
static inline void
rt_landlock_freep(rt_landlock **l)
{
        if (*l)
                rt_landlock_free(*l);
}

/* What a kernel with Landlock ABI `abi` can enforce of `l`: the handled sets and the
 * restrict_self flags. Strict mode fails (EOPNOTSUPP) naming the first right the ABI
 * lacks; best effort masks them out and lists them in `dropped` ("truncate, ioctl_dev
 * (kernel ABI 2)"). rt_landlock_prepare() calls it with rt_landlock_abi(); tests and
 * `features` may pass any ABI. */
typedef struct rt_landlock_effective {
        uint64_t fs;                    /* LANDLOCK_ACCESS_FS_* */
        uint64_t net;                   /* LANDLOCK_ACCESS_NET_* */
        uint64_t scoped;                /* LANDLOCK_SCOPE_* */
        uint32_t restrict_flags;        /* LANDLOCK_RESTRICT_SELF_LOG_* */
} rt_landlock_effective;
int rt_landlock_effective_for_abi(const oci_landlock *l, int abi, rt_landlock_effective *ret,
                                  char *dropped, size_t dropped_sz, msp_err *err);

/* For `features`: names (as in config.json) of what ABI `abi` supports, written to
 * ret[0..n-1] and NULL-terminated; returns the count. 17 entries always suffice. */
#define RT_LANDLOCK_NAMES_MAX 17
size_t rt_landlock_fs_rights(int abi, const char **ret, size_t n);
size_t rt_landlock_net_rights(int abi, const char **ret, size_t n);
size_t rt_landlock_scopes(int abi, const char **ret, size_t n);
