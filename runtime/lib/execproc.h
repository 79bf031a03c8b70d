/* `exec`: start one more process inside a live container. The runtime opens the init's
 * namespaces through procfs (checking afterwards that the pid still names the init),
 * clones a child into the container's pid namespace (rootless: through a middle process
 * that joins the user namespace first), moves it into the container's cgroup, and the
 * child joins the other namespaces and then takes the same final steps as the init
 * (rlimits, LSM label, user, capabilities, cwd, lookup, no_new_privs, fds, Landlock,
 * seccomp last). A label for an LSM the host does not run is refused before anything
 * starts. Errors before execve come back over a sync socket. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "lib/container.h"
#include "lib/ctx.h"
#include "oci/oci.h"

typedef struct rt_exec_opts {
        const oci_process *proc;        /* the final process (flags already merged) */
        const char *console_socket;     /* NULL: none */
        int console_fd;                 /* >= 0: send the pty master here (borrowed) */
        const int *stdio;               /* the process's fds 0-2 instead of ours, -1 or
                                           NULL: inherited (borrowed; rt_stdio_relay) */
        int preserve_fds;
        bool ignore_paused;
        char *const *sub_cgroups;       /* --cgroup arguments (rt_cgroup_sub_parse) */
        size_t n_sub_cgroups;
} rt_exec_opts;

/* Start o->proc in the container c (created, running, or paused with ignore_paused).
 * On success the process has exec'd: its host pid and a pidfd are returned. */
int rt_exec_spawn(const rt_ctx *ctx, rt_container *c, const rt_exec_opts *o, pid_t *ret_pid,
                  int *ret_pidfd, msp_err *err);
