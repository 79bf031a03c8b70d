/* The runtime context: everything a command needs, passed explicitly (no globals
 * outside runtime/cmd and main.c). */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "oci/oci.h"

typedef enum rt_log_format {
        RT_LOG_TEXT,
        RT_LOG_JSON,
} rt_log_format;

typedef enum rt_cgroup_manager {
        RT_CGROUP_CGROUPFS,
        RT_CGROUP_SYSTEMD,             /* accepted; mapped onto cgroupfs paths (docs/CGROUPS.md) */
        RT_CGROUP_DISABLED,
} rt_cgroup_manager;

typedef struct rt_ctx {
        const char *state_root;         /* /run/msp, $XDG_RUNTIME_DIR/msp, or NULL: none (rootless) */
        int log_fd;                     /* -1: stderr */
        rt_log_format log_format;
        bool debug;
        bool rootless;
        uid_t caller_euid;              /* the caller's ids at startup, in its own namespace */
        gid_t caller_egid;
        bool setgroups_denied;          /* the caller's user namespace says "deny" in
                                         * /proc/self/setgroups (rootless.h) */
        bool systemd_cgroup;
        rt_cgroup_manager cgroup_manager;
        const char *argv0;
} rt_ctx;
