/* The full output logs of recent runs: <instance>/logs/<run_id>.out|.err, the last
 * run_log_keep runs, within one byte budget. Owner: runlogs.c; used by engine.c.
 *
 * The budget is a quarter of the space free on the state dir's filesystem when msp-mcp
 * starts, at most RUNLOGS_BUDGET_MAX: logs can never fill the filesystem that the
 * runtime's state needs (a full one made every later run fail). A run reserves its share
 * when it starts (older logs are dropped to make room; with none left to drop it gets
 * less, down to no log at all); what it wrote is charged when it ends. A write that fails
 * (ENOSPC: something else filled the filesystem) stops that log, and when the run ends
 * every older log is dropped to give the space back. Logging never fails a run. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "oci/oci.h"
#include "engine/runner.h"

#define RUNLOGS_STREAM_MAX (16ull << 20)        /* bytes of one stream kept on disk */
#define RUNLOGS_BUDGET_MAX (512ull << 20)

typedef struct mcp_runlogs {
        int dirfd;                      /* the instance dir (not owned) */
        unsigned keep;                  /* slots; 0: no logs at all */
        char (*ids)[32];                /* ring of run ids, "" for a free slot */
        uint64_t *bytes;                /* what each slot's logs take */
        unsigned next;                  /* the oldest slot, overwritten next */
        uint64_t budget, kept, reserved;
} mcp_runlogs;

int mcp_runlogs_init(mcp_runlogs *l, int dirfd, unsigned keep, msp_err *err);
void mcp_runlogs_free(mcp_runlogs *l);
/* Opens the run's log files into out and err (log_fd, log_limit) within the budget; the
 * reservation made is stored in *ret_reserve, for keep or forget. */
void mcp_runlogs_open(mcp_runlogs *l, const char *id, mcp_capture *out, mcp_capture *err,
                      uint64_t *ret_reserve);
/* The run has ended: its logs (out and err, closed or not) join the ring. */
void mcp_runlogs_keep(mcp_runlogs *l, const char *id, uint64_t *reserve,
                      const mcp_capture *out, const mcp_capture *err);
/* The run never ran: its log files go, its reservation is released. */
void mcp_runlogs_forget(mcp_runlogs *l, const char *id, uint64_t *reserve);
/* A kept log, read whole (malloc'd, NUL-terminated). */
int mcp_runlogs_read(const mcp_runlogs *l, const char *id, mcp_stream stream, char **ret,
                     size_t *ret_len, msp_err *err);
