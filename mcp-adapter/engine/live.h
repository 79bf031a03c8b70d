/* A live session: the one sandbox a session keeps running from its creation to its close,
 * and the calls, background processes and ports that go through it. Its pid 1 is
 * msp-sandbox-init serving the spawn service (sandbox/spawn-proto.h) on a listening socket
 * made here and inherited as its fd 3; the sandbox itself is an ordinary run of the
 * engine's whose runner never times out. Owner: live.c (the sandbox's life), live-call.c
 * (one call: a program started by pid 1, its pipes, its timeout, its result),
 * live-procs.c (background processes and the output of finished calls' leftovers),
 * live-kernel.c (python and R cells), live-node.c (node cells).
 * engine.c is its caller. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/engine-types.h"
#include "base/base.h"
#include "kernel/kernel.h"
#include "oci/oci.h"

typedef struct mcp_live mcp_live;
typedef struct mcp_live_proc mcp_live_proc;
typedef struct mcp_live_drain mcp_live_drain;
typedef struct mcp_live_repl mcp_live_repl;

/* Kernels per live session: one per language that has one. */
#define MCP_LIVE_KERNELS_MAX 4u

typedef struct mcp_live_kernel {
        char language[32];
        mcp_kernelspec *spec;           /* NULL: the session's root has none for it */
        mcp_kernel_proc *proc;          /* NULL until its first cell, and after its sandbox
                                         * was started again */
} mcp_live_kernel;

/* One call's program inside the sandbox (live-call.c); part of its mcp_run. */
typedef struct mcp_call {
        int conn;                       /* the spawn connection, -1: none */
        int out_fd, err_fd, in_fd;      /* our ends, non-blocking; -1: closed */
        size_t stdin_off;
        int pid;                        /* in the sandbox, 0: not started yet */
        bool exited, timed_out, lost;   /* lost: the sandbox went before its status came */
        bool awaiting_stop;             /* lost, and waiting to hear why from the sandbox */
        size_t denied_before, failed_before;    /* the sandbox's egress proxy's lists */
        uint64_t net_bytes_before;
        int exit_code, term_signal;
        mcp_timer *timer;               /* the timeout, then the grace for its status */
        uint64_t start_usec;
        uint64_t oom_before;            /* the sandbox's OOM kills before the call */
        char code_name[64];             /* its program in the code dir, "" none */
        char wrapper_name[64];          /* a shell's state keeper that sources it, "" none */
        char process_id[16];            /* a background call's */
        mcp_kernel_proc *kernel;        /* a cell's kernel, NULL: a program of its own */
        bool repl;                      /* a cell pending in its session's node REPL */
        bool repl_started;              /* the REPL was started for it */
} mcp_call;

struct mcp_live {
        mcp_live *next;                 /* engine->lives */
        mcp_engine *engine;
        char session_id[64];
        mcp_run *sandbox;               /* the run whose pid 1 serves; NULL: none */
        bool serving;                   /* sandbox's pid 1 has not exited */
        char stop_reason[512];          /* why it stopped last ("" none) */
        unsigned starts;
        char sock_path[4200];           /* the service's listener */
        char code_dir[4200];            /* the sandbox's code dir (bound at MCP_CODE_DIR) */
        char kernel_dir[4200];          /* its kernels' dir (bound at MCP_KERNEL_DIR) */
        char cg_dir[600];               /* its cgroup's memory (or v2) dir, "" none */
        char freeze_file[700];          /* cgroup.freeze (v2) or freezer.state (v1), "" none */
        char oom_file[700];
        char **env;                     /* its programs' environment */
        char cwd[1024];
        char root_path[4200];           /* its root as msp-mcp sees it: kernelspecs */
        unsigned host_uid, host_gid;    /* the sandbox user's host ids: its files' */
        mcp_live_kernel kernels[MCP_LIVE_KERNELS_MAX];
        unsigned n_kernels;
        mcp_live_repl *repl;            /* its node REPL, NULL: none running */
        bool paused;
        mcp_run *call;                  /* the foreground call in it, NULL: none */
        mcp_live_proc *procs;
        unsigned n_procs;
        mcp_live_drain *drains;
        unsigned n_drains;
        mcp_timer *idle_timer;          /* the idle check (live-idle.c), NULL: none */
        uint64_t idle_cpu;              /* its cgroup's CPU time at the last check, 0: none */
};

/* The live session with that id, or NULL. */
mcp_live *mcp_live_find(mcp_engine *e, const char *session_id);
/* A live session for session_id with its sandbox starting. */
int mcp_live_new(mcp_engine *e, const char *session_id, mcp_live **ret, msp_err *err);
/* Its sandbox serving (started again when it stopped, with why it stopped in err when it
 * cannot). Thaws it when paused. */
int mcp_live_ensure(mcp_live *l, msp_err *err);
/* Ends everything in it (calls first: they are cancelled) and the sandbox (killed and
 * deleted before this returns), then frees it. */
void mcp_live_stop(mcp_live *l);

/* From the engine's run handlers, for the sandbox's own run. */
void mcp_live_sandbox_exited(mcp_live *l, mcp_run *sandbox);
void mcp_live_sandbox_gone(mcp_live *l, mcp_run *sandbox);

/* Live counters of its cgroup: processes (0: unknown), memory charged (0: unknown),
 * OOM kills so far. */
void mcp_live_usage(const mcp_live *l, unsigned *ret_procs, uint64_t *ret_memory,
                    uint64_t *ret_oom_kills);

/* ---- one call (live-call.c) ---- */

/* Starts the run's program in its session's sandbox (the run was claimed: the session is
 * acquired, the plan made). On failure nothing runs. */
int mcp_live_call_start(mcp_run *run, msp_err *err);
/* Ends the call's program (its process group) now; its result is not delivered. */
void mcp_live_call_cancel(mcp_run *run);
/* The sandbox of the call's session has stopped: a call that lost its program hears why. */
void mcp_live_call_sandbox_stopped(mcp_run *run);
/* Closes what the call watches (its connection last: that kills its group if no status
 * came yet). */
void mcp_live_call_cancel_io(mcp_run *run);

/* Frees a finished call (its program file, its run). */
void mcp_live_call_free(mcp_run *run);

/* ---- kernels (live-kernel.c) ---- */

/* A run of language in l is a cell of its kernel: not fresh, not background, and the
 * session's root has a kernelspec for the language, or the language is node (its REPL). */
bool mcp_live_kernel_wanted(mcp_live *l, const char *language, bool fresh, bool background);
/* The run (claimed, its files placed) as the next cell of its language's kernel, which is
 * started when none runs. */
int mcp_live_kernel_call_start(mcp_run *run, msp_err *err);
/* The sandbox stopped under a pending cell: its result says so. */
void mcp_live_kernel_call_lost(mcp_run *run);
/* Kills every kernel of l and its node REPL (a pending cell hears nothing: complete it
 * first); their specs stay (mcp_live_kernels_free drops them too). */
void mcp_live_kernels_stop(mcp_live *l);
void mcp_live_kernels_free(mcp_live *l);
bool mcp_live_kernel_running(const mcp_live *l);
/* The kernel whose proc is p is killed (a cancelled cell's). */
void mcp_live_kernel_kill(mcp_live *l, mcp_kernel_proc *p);

/* ---- the node REPL (live-node.c) ---- */

/* The language's cells go to the session's node REPL. */
bool mcp_live_repl_language(const char *language);
/* The run (claimed, its files placed) as the next cell of the session's REPL, which is
 * started when none runs. -EINVAL with stdin or args (a cell takes neither). */
int mcp_live_repl_call_start(mcp_run *run, msp_err *err);
/* The sandbox stopped under a pending cell: its result says so. */
void mcp_live_repl_call_lost(mcp_run *run);
/* Kills l's REPL (a pending cell hears nothing). */
void mcp_live_repl_stop(mcp_live *l);
bool mcp_live_repl_running(const mcp_live *l);

/* ---- background processes and leftovers (live-procs.c) ---- */

/* A call's program runs on in the background: its connection and pipes move into a
 * process of l. -EUSERS at MCP_PROCESS_MAX (nothing moved). */
int mcp_live_proc_adopt(mcp_live *l, mcp_run *run, msp_err *err);
/* A finished call's pipes that a process it left behind still holds: read and dropped
 * until they close, so that its writes never fail (bounded in number). */
void mcp_live_drain_adopt(mcp_live *l, int *fd);
/* Kills and frees every process and drain of l. */
void mcp_live_procs_free(mcp_live *l);
unsigned mcp_live_procs_running(const mcp_live *l);

/* ---- the freezer and the idle pause (live.c, live-idle.c) ---- */

/* Freezes or thaws its sandbox's cgroup, as session_pause and session_resume do. -ENOTSUP
 * without a freezer. */
int mcp_live_set_frozen(mcp_live *l, bool frozen, msp_err *err);
/* With --session-idle-pause: every period, a sandbox with no call running whose cgroup
 * used no CPU since the last check is frozen (its next call thaws it: mcp_live_ensure).
 * Nothing without the option or a freezer. Stopped by mcp_live_idle_stop (mcp_live_stop). */
void mcp_live_idle_start(mcp_live *l);
void mcp_live_idle_stop(mcp_live *l);
