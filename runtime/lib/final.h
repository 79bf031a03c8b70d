/* The final steps of every container process, between its namespaces being set up and
 * execve: the init's (init.c) and exec's (execproc.c) take the same sequence, so that
 * the two cannot drift apart. docs/ARCHITECTURE.md lists it step by step.
 *
 * Everything the runtime itself needs happens before the config's seccomp filter is
 * loaded; after it, only syscalls that any profile able to run a container allows
 * (setgroups, setres[ug]id, capset, prctl, fchdir, getcwd, stat, access, close, send).
 * Without no_new_privs the filter goes in before the user switch (loading it needs
 * CAP_SYS_ADMIN then), otherwise last; either way before the init reports READY, so
 * that startContainer hooks run filtered, as with runc. */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>

#include "lib/ctx.h"
#include "oci/oci.h"
#include "lib/seccomp.h"

typedef struct rt_final {
        const rt_ctx *ctx;
        const oci_process *proc;
        const oci_linux *linux_;
        rt_seccomp *seccomp;            /* prepared by the parent (borrowed); NULL: none */
        int procfd;                     /* verified procfs for the LSM label, closed after
                                           use; -1: a private instance is opened */
        int first_fd;                   /* fds from here on are close-on-exec at execve */
        char *const *envp;              /* in: process.env (PATH for the executable
                                           lookup); out: what to execve with (HOME added
                                           when missing, rt_env_default_home) */
        bool in_userns;
        bool new_keyring;               /* join a fresh session keyring */
        /* SCMP_ACT_NOTIFY: the socket connected to listenerPath (-1: none, closed after
         * use), and the state JSON sent with the listener (built by the caller). */
        int listener_sock;
        const char *listener_state;
        pid_t host_pid;
        /* Runs right before the filter is loaded; NULL: nothing. */
        int (*before_seccomp)(void *data, msp_err *err);
        void *data;
        char exec_path[PATH_MAX];       /* out: what to execve */
} rt_final;

/* Take every step up to execve (which the caller does, with f->exec_path). */
int rt_final_steps(rt_final *f, msp_err *err);
