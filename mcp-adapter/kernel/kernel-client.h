/* A client of one Jupyter kernel (the Jupyter messaging protocol 5.3 over ZeroMQ),
 * used from msp-mcp's loop. It writes the kernel's connection file (transport ipc: unix
 * sockets in a directory the caller owns, never TCP; a random key; hmac-sha256), connects
 * shell, iopub, control, stdin and heartbeat, sends signed requests and accepts only replies
 * whose signature verifies. Starting and killing the kernel's process is the caller's.
 * Owner: kernel-client.c (sockets, loop, requests), kernel-cell.c (what a cell collects),
 * kernel-wire.c (signed multipart messages).
 *
 * The loop watches each socket's ZMQ_FD, which is edge-triggered: every wake-up (and every
 * send, which may consume an edge) drains the sockets while ZMQ_EVENTS says POLLIN.
 * libzmq runs two threads of its own inside its context (one I/O thread, its reaper); the
 * client starts none. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/base.h"
#include "observe/observe.h"
#include "oci/oci.h"

#include "kernel/kernel-cell.h"

#define MCP_KERNEL_CODE_MAX (1u * 1024 * 1024)
/* A unix socket path is at most 107 bytes: the directory leaves room for "/kernel-N". */
#define MCP_KERNEL_DIR_MAX 96u

typedef struct mcp_kernel mcp_kernel;

typedef enum mcp_kernel_event {
        MCP_KERNEL_READY,               /* kernel_info answered and iopub is subscribed */
        MCP_KERNEL_CELL_DONE,           /* execute_reply and status idle of the cell came */
        MCP_KERNEL_INTERRUPT_REPLY,
        MCP_KERNEL_SHUTDOWN_REPLY,
        MCP_KERNEL_HEARTBEAT,           /* the heartbeat echoed the ping */
} mcp_kernel_event;

/* Return 0, or -errno to stop the loop. It may send requests; it must not free the
 * client (free it after the loop returns or from a timer). */
typedef int (*mcp_kernel_fn)(mcp_kernel *k, mcp_kernel_event event, void *data);

typedef struct mcp_kernel_stats {
        uint64_t accepted;              /* signed messages that verified */
        uint64_t refused;               /* unsigned, badly signed or malformed: dropped */
        uint64_t unrelated;             /* verified but answering no request of ours */
} mcp_kernel_stats;

/* Writes DIR/kernel.json (new; 0600, or 0640 in DIR's group when that is not msp-mcp's:
 * the sandbox's) for the unix sockets KDIR/kernel-1..5 and connects to
 * them as DIR/kernel-1..5 (the kernel binds them once started with -f KDIR/kernel.json).
 * DIR is the directory as msp-mcp sees it, KDIR the same directory as the kernel sees it
 * (inside its sandbox; NULL: DIR), at most MCP_KERNEL_DIR_MAX bytes. A DIR too long for a
 * unix socket path is reached through /proc/self/fd/N of an O_PATH fd of it. lg may be
 * NULL. */
int mcp_kernel_new(mcp_loop *loop, const char *dir, const char *kernel_dir, mcp_logger *lg,
                   mcp_kernel_fn fn, void *data, mcp_kernel **ret, msp_err *err);
/* Closes the sockets, removes the connection file and the socket files. */
mcp_kernel *mcp_kernel_free(mcp_kernel *k);

/* DIR/kernel.json, and KDIR/kernel.json: the path the kernel's argv names. */
const char *mcp_kernel_connection_file(const mcp_kernel *k);
const char *mcp_kernel_connection_file_in_kernel(const mcp_kernel *k);
bool mcp_kernel_ready(const mcp_kernel *k);
bool mcp_kernel_busy(const mcp_kernel *k);
mcp_kernel_stats mcp_kernel_get_stats(const mcp_kernel *k);

/* kernel_info_request, sent again every 20 ms until the reply came and iopub delivered
 * one of its status messages (SUB drops what comes before its subscription reached the
 * kernel): then MCP_KERNEL_READY. */
int mcp_kernel_wait_ready(mcp_kernel *k, msp_err *err);
/* One cell at a time (-EBUSY otherwise); its result stays until the next one. */
int mcp_kernel_execute(mcp_kernel *k, const char *code, msp_err *err);
const mcp_kernel_cell *mcp_kernel_last_cell(const mcp_kernel *k);
/* Moves the last cell (complete or not) to *to, the caller's to clear
 * (mcp_kernel_cell_clear); the client is no longer busy: what the kernel still sends for
 * that cell is dropped. */
void mcp_kernel_take_cell(mcp_kernel *k, mcp_kernel_cell *to);
/* interrupt_request on control (kernels with interrupt_mode "message", as ipykernel
 * serves; a kernel that does not answer needs SIGINT to its process, the caller's). */
int mcp_kernel_interrupt(mcp_kernel *k, msp_err *err);
int mcp_kernel_shutdown(mcp_kernel *k, msp_err *err);
int mcp_kernel_ping(mcp_kernel *k, msp_err *err);

static inline void
mcp_kernel_freep(mcp_kernel **k)
{
        if (*k)
                mcp_kernel_free(*k);
}
#define _cleanup_kernel_ _cleanup_(mcp_kernel_freep)
