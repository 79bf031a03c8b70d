/* Rootless mode: whether msp runs without the host's root (docs/ROOTLESS.md). What a
 * rootless runtime does differently is decided where each mechanism lives; whether it is
 * rootless is decided here only. */
#pragma once

#include <stdbool.h>

/* True when msp lacks the host's root: euid != 0, or euid 0 in a user namespace other
 * than the initial one (rootless podman runs the runtime as uid 0 inside its own). */
bool rt_rootless_detect(void);
