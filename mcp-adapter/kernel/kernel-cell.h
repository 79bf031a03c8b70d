/* What a cell collects from the messages answering its execute_request, every length
 * bounded: the types are part of kernel.h's face, the functions private to kernel/.
 * Owner: kernel-cell.c. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/kernel-wire.h"

/* Bounds on what a cell keeps: the text of each stream, and everything. */
#define MCP_KERNEL_STREAM_MAX (1u * 1024 * 1024)
#define MCP_KERNEL_CELL_MAX (16u * 1024 * 1024)
#define MCP_KERNEL_IMAGES_MAX 16u

typedef struct mcp_kernel_buf {
        char *data;                     /* NUL-terminated; NULL when nothing came */
        size_t len;
} mcp_kernel_buf;

typedef struct mcp_kernel_image {
        const char *mime;               /* "image/png" (data is base64, as sent) or "image/svg+xml" */
        mcp_kernel_buf data;
} mcp_kernel_image;

/* What one execute_request produced, as the kernel sent it (untrusted bytes: not
 * necessarily UTF-8; tracebacks carry ANSI colours). */
typedef struct mcp_kernel_cell {
        mcp_kernel_buf out, err;        /* stream stdout, stderr */
        mcp_kernel_buf result;          /* execute_result text/plain: the cell's Out[n] */
        mcp_kernel_buf display;         /* display_data text/plain without an image */
        mcp_kernel_image images[MCP_KERNEL_IMAGES_MAX];
        size_t n_images;
        mcp_kernel_buf ename, evalue, traceback;        /* traceback: lines joined by \n */
        char status[16];                /* execute_reply's: "ok", "error", "aborted" */
        int64_t execution_count;
        size_t kept;                    /* bytes held, <= MCP_KERNEL_CELL_MAX */
        bool truncated;                 /* something was dropped at a bound */
        bool got_reply, got_idle;       /* done when both came */
} mcp_kernel_cell;

/* Frees what a cell holds (one the caller took: mcp_kernel_take_cell); public. */
void mcp_kernel_cell_clear(mcp_kernel_cell *c);

void kernel_cell_clear(mcp_kernel_cell *c);
/* An iopub message of the cell (stream, execute_result, display_data, error, status). */
void kernel_cell_iopub(mcp_kernel_cell *c, const kernel_msg *m);
/* The cell's execute_reply. */
void kernel_cell_reply(mcp_kernel_cell *c, const kernel_msg *m);
