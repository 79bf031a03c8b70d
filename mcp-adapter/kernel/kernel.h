/* kernel/: Jupyter kernels for msp-mcp's sessions. The folder's face: the one header other
 * folders include.
 *   kernel-client.h  a client of one kernel (the Jupyter messaging protocol over ZeroMQ)
 *   kernel-cell.h    what a cell collects
 *   kernel-proc.h    a session's kernel process, started through the sandbox's spawn
 *                    service, with its client: cells, timeouts, interrupts, restarts
 *   kernelspec.h     a language's kernelspec found in a root filesystem */
#pragma once

#include "kernel/kernel-cell.h"
#include "kernel/kernel-client.h"
#include "kernel/kernel-proc.h"
#include "kernel/kernelspec.h"
