/* Rootless mode: whether msp runs without the host's root (docs/ROOTLESS.md). What a
 * rootless runtime does differently is decided where each mechanism lives; whether it is
 * rootless is decided here only. */
#pragma once

#include <stdbool.h>

/* True when msp lacks the host's root: euid != 0, or euid 0 in a user namespace other
 * than the initial one (rootless podman runs the runtime as uid 0 inside its own). */
bool rt_rootless_detect(void);

/* True when msp runs in the initial user namespace (or procfs cannot tell). */
bool rt_in_initial_userns(void);

/* True when the caller's user namespace denies setgroups(2) (/proc/self/setgroups
 * "deny": made by an unprivileged writer of its gid_map, e.g. `unshare -r`, or msp-mcp
 * run by a user without subordinate ranges). Every user namespace made in it inherits
 * "deny"; runc then leaves supplementary groups alone. */
bool rt_rootless_setgroups_denied(void);
