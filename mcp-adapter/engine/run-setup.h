/* One run's setup (run-setup.c), in two steps: at submit the request is checked and what
 * the run takes at once is claimed (a session, the limits, the rootfs, the language), and a
 * copy of the request is kept; when the run leaves the queue its workspace, bundle and the
 * runner's arguments are made. A queued run holds no mount, directory or user namespace.
 * engine.c is its only caller. */
#pragma once

#include <stddef.h>

#include "engine/engine-types.h"

typedef struct mcp_run_plan mcp_run_plan;    /* engine-int.h */

/* At submit: the session acquired (-EAGAIN while another run uses it, err says why), the
 * limits, network, egress policy, rootfs and language resolved, the files' paths checked
 * (err names files[i]), and the request's code, files, args, env and stdin copied into the
 * run. What it took is the run's, undone by the run's cleanup whether or not it succeeded. */
int mcp_run_claim(mcp_run *run, const mcp_run_request *req, int lang_index, msp_err *err);
/* The same for a session's sandbox (run->live set): the session held, not acquired (its
 * calls acquire it), its limits, network, policy and rootfs. */
int mcp_run_claim_sandbox(mcp_run *run, const char *session_id, msp_err *err);
/* At start: the fresh workspace (a tmpfs), the files in it, the bundle (code, config.json,
 * the user namespace, the network helper's FIFO or the egress proxy), the runner's arguments
 * and its logs. The request's copies are freed. What it made is undone by the run's cleanup
 * whether or not it succeeded. The runner's callbacks are the caller's. */
int mcp_run_setup(mcp_run *run, msp_err *err);
/* Frees the request's copies (the run's cleanup; idempotent). */
void mcp_run_plan_done(mcp_run_plan *plan);
