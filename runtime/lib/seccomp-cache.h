/* Compiled seccomp programs cached beside the state root, in <state root>/../msp-cache/
 * seccomp/ (the state root holds only container directories: Docker points every
 * runtime at one root, where runc lists every directory): compiling a
 * large profile with libseccomp costs 13-14 ms of CPU, reading the cached program a few
 * hundredths of that. Called by the parent of create before clone, and by the parent
 * of exec before it opens or joins any of the container's namespaces, so the cache is
 * never read or written from inside a container's namespaces. docs/SECURITY_MODEL.md
 * says why a cached program is as good as a fresh one. */
#pragma once

#include "lib/ctx.h"
#include "lib/seccomp.h"

#define RT_SECCOMP_CACHE_TOP "msp-cache"
#define RT_SECCOMP_CACHE_DIR RT_SECCOMP_CACHE_TOP "/seccomp"

/* rt_seccomp_prepare() through the cache beside the state root (state_root_fd; -1: no
 * cache). Rootless, the cache is the caller's, as its state root is (the owner checks
 * compare with the effective uid). The profile checks and load flags are
 * computed every time; only the BPF program is cached, keyed by everything that shapes
 * it. Any cache problem (missing, foreign owner, loose mode, symlink, short, corrupt,
 * another key, a write that fails) falls back to compiling. Returns 1 when the program
 * came from the cache, 0 when it was compiled, -errno for a profile error. */
int rt_seccomp_prepare_cached(const rt_ctx *ctx, int state_root_fd, const oci_seccomp *s,
                              rt_seccomp **ret, msp_err *err);
