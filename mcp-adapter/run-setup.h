/* One run's setup, between its submit and its spawn (run-setup.c): the workspace, the
 * bundle and the runner's arguments. engine.c is its only caller. */
#pragma once

#include <stddef.h>

#include "engine.h"

/* The run's workspace (a fresh tmpfs, or the session's, acquired), the request's files in
 * it, its bundle (code, config.json, the user namespace, the network helper's FIFO or the
 * egress proxy), the runner's arguments and a copy of the request's stdin. -EAGAIN while
 * another run uses the session (err says why). What it made is the run's, undone by the
 * run's cleanup whether or not it succeeded. The runner's callbacks are the caller's. */
int mcp_run_setup(mcp_run *run, const mcp_run_request *req, int lang_index, msp_err *err);
