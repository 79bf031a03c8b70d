/* The runtime's side of starting a container process, the same for `create`'s init
 * (container.c) and an `exec`'d process (execproc.c): the fds the child takes along,
 * each moved above the range that --preserve-fds hands to the container, and the
 * oom_score_adj the runtime writes for it, the wait for its messages. */
#pragma once

#include <sys/types.h>

#include "lib/ctx.h"
#include "oci/oci.h"
#include "lib/seccomp.h"
#include "lib/sync.h"

#ifndef CLONE_PIDFD
#define CLONE_PIDFD 0x00001000
#endif

typedef struct rt_spawn_fds {
        int console;                    /* where the pty master goes; -1: no terminal */
        int stdio[3];                   /* the process's fds 0-2 instead of the runtime's
                                           (the stdio relay's pipes); -1: inherited */
        int seccomp_sock;               /* connected to listenerPath; -1: no NOTIFY rules */
        int sync[2];                    /* [0] the runtime's end, [1] the child's */
        rt_seccomp *seccomp;            /* compiled or cached; NULL: no linux.seccomp */
} rt_spawn_fds;

#define RT_SPAWN_FDS_INIT { .console = -1, .stdio = { -1, -1, -1 }, .seccomp_sock = -1, \
                           .sync = { -1, -1 } }

/* fd itself when it is >= min (or < 0), else a close-on-exec dup at or above min, with
 * fd closed (errno kept). */
int rt_fd_above(int fd, int min);
/* Open everything in s for process p: the console socket (connected to console_path,
 * or a dup of console_fd; refused when p has no terminal, or has one without either),
 * dups of stdio (NULL or -1: the runtime's own fd; unused when p has a terminal, which
 * replaces fds 0-2),
 * the listenerPath connection, the seccomp program (from the state root's cache or
 * compiled: before any setns, so the cache is never touched from inside a container)
 * and the sync socketpair. On failure s holds what was opened: rt_spawn_fds_close. */
int rt_spawn_fds_open(rt_spawn_fds *s, const rt_ctx *ctx, int state_root_fd,
                      const oci_process *p, const oci_linux *lx, const char *console_path,
                      int console_fd, const int *stdio, int min, msp_err *err);
void rt_spawn_fds_close(rt_spawn_fds *s);
/* process.oomScoreAdj of pid, through the trusted procfs procfd (nothing without it). */
int rt_spawn_oom_score_adj(int procfd, pid_t pid, const oci_process *p, msp_err *err);
/* The child's next message. The child in cgroup (NULL or "": none) stops when someone
 * else, or a hook, freezes it meanwhile, and would never answer: the wait looks at the
 * freezer once a second and gives up (EBUSY, naming the cgroup and what: "create"). */
int rt_spawn_recv(int sync_fd, const char *cgroup, const char *what, rt_sync_msg *msg,
                  msp_err *err);
