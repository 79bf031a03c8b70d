/* The runtime as a child process: one container run (`<runtime> run --keep`, its output
 * pipes, stdin, timeout, exit status, OOM state, then `delete --force`), its processes
 * base/proc.h's children. Owner: runner.c. No threads: everything is driven by the loop. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/engine-types.h"
#include "oci/oci.h"
#include "base/base.h"

/* ---- one container run ---- */

typedef struct mcp_capture {
        char *buf;                      /* the head, up to limit bytes */
        size_t len, limit;
        bool truncated;
        int log_fd;                     /* owned, -1: none; receives up to log_limit bytes */
        uint64_t logged, log_limit;
        bool log_failed;                /* a write failed (ENOSPC...): logging stopped */
} mcp_capture;

typedef struct mcp_runner mcp_runner;
typedef void (*mcp_runner_output_fn)(mcp_runner *r, mcp_stream stream, const char *buf,
                                     size_t len, void *data);
/* The container has exited (or could not start); fields below are final. Called after a
 * cancel too. */
typedef void (*mcp_runner_exit_fn)(mcp_runner *r, void *data);
/* `delete --force` has finished: the run's resources may go. */
typedef void (*mcp_runner_gone_fn)(mcp_runner *r, void *data);

struct mcp_runner {
        /* input, set by the caller before mcp_runner_start() */
        const char *runtime;
        const char *runtime_root;
        const char *bundle;
        const char *id;
        const char *log_path;           /* the runtime's --log (JSON lines) */
        const char *stdin_data;         /* borrowed until exit; NULL: /dev/null */
        size_t stdin_len;
        uint64_t timeout_ms;            /* 0: none (a session's sandbox) */
        bool init_status;               /* pid 1 is msp-sandbox-init: give it a status pipe */
        int serve_fd;                   /* > 0 (a session's sandbox, no status pipe): pid 1's
                                         * fd 3, the spawn service's listener; <= 0: none */
        char oom_file[700];             /* memory.oom_control (v1) or memory.events (v2) */
        char kill_file[700];            /* cgroup.kill (v2), "" when none */
        mcp_runner_output_fn on_output;
        mcp_runner_exit_fn on_exit;
        mcp_runner_gone_fn on_gone;
        void *data;

        /* output */
        mcp_capture out, err;
        bool exited, timed_out, oom_killed, sandbox_failed;
        uint64_t cpu_usec;              /* CPU time of the cgroup (v2 cpu.stat), 0: unknown */
        uint64_t memory_peak;           /* its peak memory (v2 memory.peak, v1
                                         * memory.max_usage_in_bytes), 0: unknown */
        int exit_code, term_signal;
        char error[512];
        uint64_t start_usec, duration_ms;

        /* private */
        mcp_procset *set;
        mcp_proc *run, *killer, *deleter;
        int out_fd, err_fd, in_fd;
        int status_fd;                  /* read end of the init's status pipe, -1: none */
        size_t stdin_off;
        mcp_timer *timer;               /* the timeout or a kill's retry; after the exit,
                                         * the start of `delete --force` */
        bool killing, cancelled, gone, kill_file_used;
};

/* Appends to a capture (the head up to its limit, the log up to its limit). */
void mcp_capture_add(mcp_capture *c, const char *buf, size_t n);
/* Up to max_chunks reads of the non-blocking fd into c, each chunk also to fn (may be
 * NULL) as it comes: 1 at EOF or an error, 0 when nothing more is there yet. */
typedef void (*mcp_capture_fn)(void *data, mcp_stream stream, const char *buf, size_t n);
int mcp_capture_read(int fd, mcp_capture *c, int max_chunks, mcp_stream stream,
                     mcp_capture_fn fn, void *data);

/* Starts `run --keep`; on failure nothing is left running and on_exit is not called.
 * stdin is written to a pipe: the process must ignore SIGPIPE (main.c does). */
int mcp_runner_start(mcp_runner *r, mcp_procset *set, msp_err *err);
/* Kill the container (timeout or cancel); on_exit still follows when the run exits. */
void mcp_runner_kill(mcp_runner *r);
/* Teardown without the loop: kill the container until the runtime's `run` has exited
 * (the container may still be being created), then delete it. Blocking, bounded. */
void mcp_runner_kill_sync(mcp_runner *r);
/* Releases buffers and fds; only after on_gone, or for a runner never started. */
void mcp_runner_done(mcp_runner *r);
