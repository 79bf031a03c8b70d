/* The container init: runs in the child after clone3, sets up the container from the
 * config and parks on exec.fifo until `start`; then execs process.args. */
#pragma once

#include <stdbool.h>

#include "lib/cgroup/cgroup.h"
#include "lib/ctx.h"
#include "lib/ns.h"
#include "lib/seccomp.h"
#include "oci/oci.h"

typedef struct rt_init_args {
        const rt_ctx *ctx;
        const oci_spec *spec;
        const oci_state *state;         /* for container-namespace hooks */
        const char *rootfs;
        const char *bundle;
        const rt_ns_plan *plan;
        int sync_fd;
        int fifo_fd;
        int console_fd;                 /* -1: no terminal */
        const int *stdio;               /* fds 0-2 to take (rt_stdio_enter_child) */
        int seccomp_sock;               /* connected to listenerPath; -1: no NOTIFY rules */
        rt_seccomp *seccomp;            /* linux.seccomp prepared by the parent; NULL: none */
        int lock_fd;                    /* the parent's flock()ed state dir: closed at once */
        int state_root_fd;              /* closed at once */
        int listen_fds;                 /* socket activation fds at 3.. (rt_listen_fds) */
        int preserve_fds;               /* the --preserve-fds after them */
        bool no_pivot;
        bool no_new_keyring;
        bool start_at_ready;            /* exec after READY, without waiting for start */
        int unshare_flags;              /* CLONE_NEW* the init unshares after GO (and after
                                           joining a user namespace) */
        rt_cgroup_join *cgroup_join;    /* v1 cgroups the init moves itself into */
        bool cgroup_wait;               /* the v1 cgroups come later: RT_SYNC_CGROUP */
} rt_init_args;

_Noreturn void rt_init_child(const rt_init_args *a);
