/* The run engine: turns a run request into an OCI bundle (config.json + rootfs view +
 * limits + the hardened policy), runs it with the OCI runtime as a child process, streams
 * its output, enforces the timeout by killing the container's cgroup, detects OOM kills,
 * and cleans everything up. Owner: engine.c (with run-setup.c, runner.c, recover.c); its
 * types are engine-types.h. The face of engine/: the one header other folders include
 * (the tools of mcp/, the language probes and main.c at the root).
 *
 * All calls happen on the loop's thread. Requests are copied on submit. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "config.h"
#include "oci/oci.h"
#include "engine/engine-types.h"
#include "engine/keptfiles.h"
#include "base/base.h"

/* Moves the whole process into a private mount namespace (unshare(CLONE_NEWNS), / made
 * MS_REC|MS_PRIVATE) so that the workspace mounts stay invisible to the host and vanish
 * with the process; cleans the instance dirs of dead servers; creates this one's (locked);
 * takes the host view and languages the caller detected (host; NULL: detects them);
 * creates the session store. Once per process. */
typedef struct mcp_host mcp_host;
int mcp_engine_new(mcp_loop *loop, const mcp_config *cfg, const mcp_host *host, mcp_engine **ret,
                   msp_err *err);
/* Kills every run (no done callbacks), removes their containers, bundles and fresh
 * workspaces; sessions stay on disk until they expire. */
mcp_engine *mcp_engine_free(mcp_engine *engine);

/* The languages found in the host view at start-up ("sh", "bash", "python", "node", ...),
 * NULL-terminated, in a stable order. A prepared rootfs may lack some: such a run fails
 * with a tool error naming the language and the rootfs. */
const char *const *mcp_engine_languages(const mcp_engine *engine);
/* The i-th language present on the host but not working in the sandbox, and why; NULL past
 * the last. */
const char *mcp_engine_language_off(const mcp_engine *engine, size_t i, const char **why);
/* Before any server uses the engine: the language is not listed, for why. */
void mcp_engine_language_drop(mcp_engine *engine, const char *name, const char *why);

/* Runs running and runs queued now. */
void mcp_engine_load(const mcp_engine *engine, unsigned *ret_running, unsigned *ret_queued);

/* The session store the engine uses (session.h). */
mcp_session_store *mcp_engine_sessions(mcp_engine *engine);

/* Queue or start a run. -EBUSY when the queue is full, -ENOENT for an unknown session,
 * -EAGAIN while another run uses the session, -EINVAL for a bad request (err names the
 * field and value). */
int mcp_engine_submit(mcp_engine *engine, const mcp_run_request *req, mcp_run_output_fn on_output,
                      mcp_run_done_fn on_done, void *data, mcp_run **ret, msp_err *err);
/* "r-" and 16 hex digits: names the run's resources and its log lines. */
const char *mcp_engine_run_id(const mcp_run *run);
/* Kill the run's container, clean up; on_done is not called. */
void mcp_engine_cancel(mcp_engine *engine, mcp_run *run);

/* Full stdout/stderr of one of the last config->run_log_keep runs: a malloc'd copy.
 * -ENOENT when unknown or dropped. */
int mcp_engine_run_log(mcp_engine *engine, const char *run_id, mcp_stream stream, char **ret,
                       size_t *ret_len, msp_err *err);

/* A small out/ file of a fresh run, kept for resources/read by tenant (NULL: stdio) within
 * the kept files' budgets (keptfiles.h); fn hears of each older file dropped for it. */
int mcp_engine_keep_file(mcp_engine *engine, const char *tenant, const char *uri,
                         const char *mime, const void *data, size_t len,
                         mcp_kept_dropped_fn fn, void *fn_data, msp_err *err);
/* A kept file of tenant's: its bytes (malloc'd) and type (valid until the next keep).
 * -ENOENT when never kept, dropped, or another tenant's. */
int mcp_engine_kept_file(mcp_engine *engine, const char *tenant, const char *uri,
                         unsigned char **ret, size_t *ret_len, const char **ret_mime,
                         msp_err *err);

/* --check: every requirement of the default policy with what this host has, one line each,
 * to out. Returns 0 when the default policy can be enforced, -ENOTSUP otherwise (err names
 * the first missing requirement). Also used at start-up (without printing). */
int mcp_check_host(const mcp_config *cfg, FILE *out, msp_err *err);

/* ---- live sessions: one running sandbox per session (engine/live*.c) ----
 * A session's sandbox starts with the session (mcp_engine_session_start, right after
 * mcp_session_create) and stops with its close or expiry. Every run submitted with a
 * session_id runs inside it: its program is started by the sandbox's pid 1 (the spawn
 * service), a python or R run evaluates in the session's kernel unless req->fresh. */

typedef enum mcp_live_state {
        MCP_LIVE_RUNNING,               /* started (or starting: its first call waits) */
        MCP_LIVE_PAUSED,                /* frozen (cgroup freezer); its next call thaws it */
        MCP_LIVE_STOPPED,               /* its sandbox exited; the next call starts it again */
} mcp_live_state;

typedef struct mcp_live_info {
        mcp_live_state state;
        unsigned processes;             /* in its cgroup (the init included), 0: unknown */
        uint64_t memory_bytes;          /* charged to its cgroup now, 0: unknown */
        unsigned background;            /* background processes still running */
        bool kernel;                    /* a kernel is running in it */
} mcp_live_info;

/* Starts the sandbox of session id (created a moment ago). -ENOENT unknown session. */
int mcp_engine_session_start(mcp_engine *engine, const char *session_id, msp_err *err);
/* -ENOENT when the session has no sandbox. */
int mcp_engine_session_info(mcp_engine *engine, const char *session_id, mcp_live_info *ret);
/* Freeze / thaw the session's sandbox. -ENOENT no such session, -ENOTSUP without a
 * freezer (run by a user with no delegated cgroup), -EALREADY already so. */
int mcp_engine_session_pause(mcp_engine *engine, const char *session_id, msp_err *err);
int mcp_engine_session_resume(mcp_engine *engine, const char *session_id, msp_err *err);

/* A run of session_id in language would be a cell of the session's kernel (a language
 * with a kernel in its sandbox, python or R, not fresh): such a run takes no stdin and no
 * args. False for an unknown session. */
bool mcp_engine_uses_kernel(mcp_engine *engine, const char *session_id, const char *language,
                            bool fresh);

/* A background process of a session (a run submitted with req->background). */
typedef struct mcp_process_info {
        char id[16];                    /* "p-" and 8 hex digits */
        char language[32];
        int pid;                        /* in the sandbox's pid namespace */
        bool running;
        int exit_code, term_signal;     /* when !running */
        uint64_t started_usec;          /* wall clock */
        uint64_t stdout_total, stderr_total;    /* bytes it has written so far */
} mcp_process_info;

/* At most this many background processes per session (running or exited, until killed
 * or the session closes); each keeps the last MCP_PROCESS_OUTPUT_KEEP bytes of each stream. */
#define MCP_PROCESS_MAX 16u
#define MCP_PROCESS_OUTPUT_KEEP (1024u * 1024)

/* An array of *ret_n (malloc'd). -ENOENT unknown session. */
int mcp_engine_process_list(mcp_engine *engine, const char *session_id, mcp_process_info **ret,
                            size_t *ret_n, msp_err *err);
/* Up to max bytes of stream from offset (counted from its first byte): a malloc'd copy,
 * its length, the offset after it (*ret_next), and *ret_skipped: bytes between offset and
 * the oldest kept byte that were dropped. -ENOENT unknown session or process. */
int mcp_engine_process_output(mcp_engine *engine, const char *session_id, const char *process_id,
                              mcp_stream stream, uint64_t offset, size_t max, char **ret,
                              size_t *ret_len, uint64_t *ret_next, uint64_t *ret_skipped,
                              msp_err *err);
/* Signals the process's group (sig 0: SIGKILL) and, once it has exited, forgets it after
 * its output was read or on the next kill. -ENOENT unknown. */
int mcp_engine_process_kill(mcp_engine *engine, const char *session_id, const char *process_id,
                            int sig, msp_err *err);

/* A stream socket connected (or connecting: O_NONBLOCK, wait for POLLOUT) to
 * 127.0.0.1:port inside the session's sandbox, made there by its pid 1; O_CLOEXEC, the
 * caller's. Thaws a paused session. -ENOENT unknown session, -ECONNREFUSED nothing
 * listens. */
int mcp_engine_port_connect(mcp_engine *engine, const char *session_id, uint16_t port,
                            int *ret_fd, msp_err *err);
/* Whether the session's ports can be reached at all: 0, -ENOENT unknown session, -EPERM a
 * session with a network allowlist (its sandbox may connect only to its egress proxy); err
 * says why. */
int mcp_engine_port_check(mcp_engine *engine, const char *session_id, msp_err *err);
/* Called once for every session that goes (closed, expired, or with the engine), after
 * its sandbox is gone: what the layers above keep for it (exposed ports) goes too. One
 * hook; NULL removes it. */
typedef void (*mcp_session_gone_fn)(const char *session_id, void *data);
void mcp_engine_set_session_gone(mcp_engine *engine, mcp_session_gone_fn fn, void *data);
