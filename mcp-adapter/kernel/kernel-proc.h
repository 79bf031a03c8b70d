/* One kernel process of a session and its client (kernel-client.h), driven by msp-mcp's loop:
 * the kernel started inside the session's running sandbox through its spawn service
 * (sandbox/spawn-client.h), one cell at a time with a timeout, the kernel's death seen on
 * the spawn connection, a kernel that does not stop killed and started again. Part of
 * kernel.h's face. Owner: kernel-proc.c.
 *
 * A cell's course: the kernel is started when none runs (first cell, or after it died),
 * which is bounded by ready_usec; the cell runs until its execute_reply and idle status
 * came, or until its timeout: then an interrupt as the kernelspec's interrupt_mode says
 * (SIGINT to the kernel's process group, or interrupt_request), and when the cell has not
 * ended grace_usec later, SIGKILL to the group and a new kernel (its variables gone). The
 * done callback says which happened. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "base/base.h"
#include "kernel/kernel-cell.h"
#include "observe/observe.h"
#include "oci/oci.h"

#define MCP_KERNEL_READY_USEC (30ull * 1000000)        /* R's kernel takes seconds */
#define MCP_KERNEL_GRACE_USEC (2ull * 1000000)
#define MCP_KERNEL_OUTPUT_MAX 4096u     /* the tail of the kernel's own stdout and stderr */
#define MCP_KERNEL_NOTE_MAX 128u

typedef struct mcp_kernel_proc mcp_kernel_proc;

/* How to start the kernel; copied by mcp_kernel_proc_new. */
typedef struct mcp_kernel_proc_spec {
        const char *spawn_socket;       /* the spawn service's unix socket (host path) */
        const char *host_dir;           /* the sockets' directory, as msp-mcp sees it */
        const char *sandbox_dir;        /* the same directory inside the sandbox; NULL: host_dir */
        const char *const *argv;        /* a kernelspec's argv: every "{connection_file}" in
                                         * it becomes the file's path inside the sandbox */
        const char *const *envp;        /* "NAME=value", NULL-terminated; PATH finds argv[0] */
        const char *cwd;                /* absolute, inside the sandbox */
        uint64_t ready_usec;            /* 0: MCP_KERNEL_READY_USEC */
        uint64_t grace_usec;            /* 0: MCP_KERNEL_GRACE_USEC */
        const char *interrupt_mode;     /* the kernelspec's: "message" (interrupt_request)
                                         * or "signal" (SIGINT to the group; NULL too) */
} mcp_kernel_proc_spec;

/* What became of one cell. Valid during the callback only. */
typedef struct mcp_kernel_outcome {
        const mcp_kernel_cell *cell;    /* what it produced: partial unless it ended */
        int error;                      /* 0, or -errno: the kernel did not start, the
                                         * cell did not run (-ECHILD: it ended first,
                                         * -ETIMEDOUT: not ready within ready_usec) */
        const char *message;            /* error's message with the tail of the kernel's
                                         * output; "" when error is 0 */
        /* What happened to the kernel, also as note: "started", "interrupted", "killed and
         * restarted", "died: exit code 3", "died: killed by signal 9", joined by "; "
         * ("" when none). */
        bool started, interrupted, killed, died;
        const char *note;
} mcp_kernel_outcome;

/* Called once per mcp_kernel_proc_execute that returned 0. It may call
 * mcp_kernel_proc_execute; it must not free p (free it from a timer or after the loop). */
typedef void (*mcp_kernel_done_fn)(mcp_kernel_proc *p, const mcp_kernel_outcome *o, void *data);

/* Nothing is started yet: the first cell starts the kernel (or mcp_kernel_proc_start).
 * lg may be NULL. */
int mcp_kernel_proc_new(mcp_loop *loop, const mcp_kernel_proc_spec *spec, mcp_logger *lg,
                        mcp_kernel_proc **ret, msp_err *err);
/* Kills the kernel's process group (the spawn connection closed), frees the client and
 * removes its files. A pending cell's callback is not called. */
mcp_kernel_proc *mcp_kernel_proc_free(mcp_kernel_proc *p);

/* Starts the kernel ahead of the first cell, when none runs or starts: 0 or -errno (a
 * failure to become ready later is logged; the next cell starts it again). */
int mcp_kernel_proc_start(mcp_kernel_proc *p, msp_err *err);
/* Runs code as the next cell (starting the kernel first when none runs); fn is called when
 * it is over. timeout_usec 0: none. -EBUSY while another cell is pending. */
int mcp_kernel_proc_execute(mcp_kernel_proc *p, const char *code, uint64_t timeout_usec,
                            mcp_kernel_done_fn fn, void *data, msp_err *err);

bool mcp_kernel_proc_running(const mcp_kernel_proc *p);        /* started, ready or not */
bool mcp_kernel_proc_busy(const mcp_kernel_proc *p);           /* a cell is pending */
/* The kernel's pid inside the sandbox (0 when none runs), and its output's tail. */
int mcp_kernel_proc_pid(const mcp_kernel_proc *p);
const char *mcp_kernel_proc_output(const mcp_kernel_proc *p);

static inline void
mcp_kernel_proc_freep(mcp_kernel_proc **p)
{
        if (*p)
                mcp_kernel_proc_free(*p);
}
#define _cleanup_kernel_proc_ _cleanup_(mcp_kernel_proc_freep)
