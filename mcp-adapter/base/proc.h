/* Children through pidfds: spawned with stdio of the caller's choice and default signal
 * state, watched by the loop and reaped there (or blocking, at teardown), and one blocking
 * spawn-and-wait. Owner: proc.c. No threads: everything is driven by the loop. */
#pragma once

#include <stdbool.h>

#include "oci/oci.h"
#include "base/loop.h"

typedef struct mcp_proc mcp_proc;
/* si_code (CLD_EXITED, CLD_KILLED...) and si_status of the child. */
typedef void (*mcp_proc_exit_fn)(mcp_proc *proc, int code, int status, void *data);

/* Every child one owner started (the engine's), so that it can reap them all. */
typedef struct mcp_procset {
        mcp_proc *head;
        mcp_loop *loop;
} mcp_procset;

/* argv[0] is an absolute path; fds 0, 1, 2 of the child (-1: /dev/null). fn is called once
 * when the child has exited and been reaped; the proc is freed after it returns. */
int mcp_proc_spawn(mcp_procset *set, const char *const argv[], int in, int out, int errfd,
                   mcp_proc_exit_fn fn, void *data, mcp_proc **ret, msp_err *err);
/* The same with fd3 (>= 0) as the child's fd 3 too: every other fd of ours is O_CLOEXEC. */
int mcp_proc_spawn_fd3(mcp_procset *set, const char *const argv[], int in, int out, int errfd,
                       int fd3, mcp_proc_exit_fn fn, void *data, mcp_proc **ret, msp_err *err);
/* No callback any more; still reaped (by the loop, or by mcp_procset_wait_all()). */
void mcp_proc_forget(mcp_proc *proc);
void mcp_proc_signal(mcp_proc *proc, int sig);
/* Blocking, for teardown: true once the child has exited (not reaped), within ms. */
bool mcp_proc_exited_within(mcp_proc *proc, int ms);
/* Blocking: reap every child of the set (teardown). */
void mcp_procset_wait_all(mcp_procset *set);
/* Blocking spawn and wait with stdio on /dev/null (recovery, teardown, host checks): the
 * exit status, or -errno. */
int mcp_spawn_wait(const char *const argv[], msp_err *err);
