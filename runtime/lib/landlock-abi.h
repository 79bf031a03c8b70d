/* Landlock uapi constants newer than Debian 12's linux/landlock.h (kernel 6.1, ABI 2).
 * Values are the kernel's (include/uapi/linux/landlock.h); each is guarded so that a
 * newer header wins. Internal to runtime/lib/landlock.c and its test. */
#pragma once

#include <stdint.h>
#include <linux/landlock.h>

#ifndef LANDLOCK_CREATE_RULESET_VERSION
#define LANDLOCK_CREATE_RULESET_VERSION (1U << 0)
#endif

/* ABI 3 */
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif

/* ABI 4: TCP port rules. The enum value is a #define here because the 6.1 header's
 * enum landlock_rule_type lacks it and enumerators cannot be tested with #ifndef. */
#ifndef LANDLOCK_ACCESS_NET_BIND_TCP
#define LANDLOCK_ACCESS_NET_BIND_TCP (1ULL << 0)
#endif
#ifndef LANDLOCK_ACCESS_NET_CONNECT_TCP
#define LANDLOCK_ACCESS_NET_CONNECT_TCP (1ULL << 1)
#endif
#define RT_LANDLOCK_RULE_NET_PORT 2

struct rt_landlock_net_port_attr {
        uint64_t allowed_access;
        uint64_t port;
};

/* ABI 5 */
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)
#endif

/* ABI 6: IPC scoping */
#ifndef LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
#define LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#endif
#ifndef LANDLOCK_SCOPE_SIGNAL
#define LANDLOCK_SCOPE_SIGNAL (1ULL << 1)
#endif

/* ABI 7: audit logging flags of landlock_restrict_self() */
#ifndef LANDLOCK_RESTRICT_SELF_LOG_SAME_EXEC_OFF
#define LANDLOCK_RESTRICT_SELF_LOG_SAME_EXEC_OFF (1U << 0)
#endif
#ifndef LANDLOCK_RESTRICT_SELF_LOG_NEW_EXEC_ON
#define LANDLOCK_RESTRICT_SELF_LOG_NEW_EXEC_ON (1U << 1)
#endif
#ifndef LANDLOCK_RESTRICT_SELF_LOG_SUBDOMAINS_OFF
#define LANDLOCK_RESTRICT_SELF_LOG_SUBDOMAINS_OFF (1U << 2)
#endif

/* Our own copy of struct landlock_ruleset_attr: the 6.1 header stops at
 * handled_access_fs. The size passed to the kernel follows the ABI:
 * 8 bytes (ABI 1-3), 16 (ABI 4-5, + handled_access_net), 24 (ABI 6+, + scoped). */
struct rt_landlock_ruleset_attr {
        uint64_t handled_access_fs;
        uint64_t handled_access_net;
        uint64_t scoped;
};

#define RT_LL_ATTR_SIZE_V1 8u
#define RT_LL_ATTR_SIZE_V4 16u
#define RT_LL_ATTR_SIZE_V6 24u

/* Rights that a rule on a non-directory may carry (the kernel's ACCESS_FILE);
 * anything else on a file makes landlock_add_rule() fail with EINVAL. */
#define RT_LL_ACCESS_FILE                                                               \
        (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE |                   \
         LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_TRUNCATE |                   \
         LANDLOCK_ACCESS_FS_IOCTL_DEV)
