/* The run engine: turns a run request into an OCI bundle (config.json + rootfs view +
 * limits + the hardened policy), runs it with the OCI runtime as a child process, streams
 * its output, enforces the timeout by killing the container's cgroup, detects OOM kills,
 * and cleans everything up. Owner: engine.c, run-setup.c, bundle.c, runner.c, languages.c,
 * check.c, recover.c. The protocol layer (mcp/: proto.c and the tools) is its only caller.
 *
 * All calls happen on the loop's thread. Requests are copied on submit. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "config.h"
#include "oci/err.h"
#include "engine/keptfiles.h"
#include "base/loop.h"
#include "egress/proxy.h"

typedef struct mcp_engine mcp_engine;
typedef struct mcp_run mcp_run;
typedef struct mcp_session_store mcp_session_store;

typedef struct mcp_file_in {
        const char *path;               /* relative to /workspace; checked by the engine */
        const char *data;
        size_t len;
        bool executable;
} mcp_file_in;

/* A run's network: none (only loopback), full (user-mode networking, --allow-network),
 * or an allowlist served by the egress proxy (proxy.h). */
typedef enum mcp_net_mode { MCP_NET_NONE, MCP_NET_FULL, MCP_NET_ALLOW } mcp_net_mode;

typedef struct mcp_run_request {
        const char *language;           /* one of mcp_engine_languages() */
        const char *code;
        size_t code_len;
        const char *stdin_data;         /* NULL: stdin is /dev/null */
        size_t stdin_len;
        const mcp_file_in *files;       /* placed in /workspace before the run */
        size_t n_files;
        const char *const *args;        /* argv after the program */
        size_t n_args;
        const char *const *env;         /* "KEY=VALUE", added to the sandbox's base env */
        size_t n_env;
        mcp_limits limits;              /* 0 fields: the session's or the server's defaults;
                                         * the caller has already refused values above maxima */
        const char *session_id;         /* NULL: a fresh workspace, removed after the run */
        mcp_net_mode network;           /* of a fresh run (a session's runs have the session's);
                                         * the caller checked it against the server's options */
        const mcp_egress_policy *allow; /* MCP_NET_ALLOW: the patterns (copied) */
        mcp_proxy_event_fn on_network;  /* the egress proxy's decisions (data: the submit's) */
        const char *tenant;             /* the caller's (NULL: stdio): whose fd budget the
                                         * proxy's fds count in (fd-budget.h) */
} mcp_run_request;

typedef enum mcp_stream { MCP_STDOUT = 1, MCP_STDERR = 2 } mcp_stream;

/* A file the run created or changed under /workspace/out/ (images as bytes, others as a
 * reference the client can read through resources/read). */
typedef struct mcp_artifact {
        char *path;                     /* relative to /workspace, e.g. "out/plot.png" */
        char *mime_type;                /* "image/png", "image/jpeg", "image/svg+xml", ... */
        uint64_t size;
        unsigned char *data;            /* non-NULL for files within max_image_bytes */
        char *uri;                      /* sandbox://... readable with resources/read */
} mcp_artifact;

typedef struct mcp_run_result {
        bool sandbox_failed;            /* the sandbox could not be set up or run: error says why */
        char error[1024];
        int exit_code;                  /* valid when !signaled and !sandbox_failed */
        int term_signal;                /* > 0 when the process died by a signal */
        bool timed_out;
        bool oom_killed;
        bool stdout_truncated, stderr_truncated;
        const char *stdout_buf;         /* up to limits.output_bytes, owned by the run */
        size_t stdout_len;
        const char *stderr_buf;
        size_t stderr_len;
        uint64_t duration_ms;
        uint64_t cpu_usec;              /* the sandbox's CPU time, 0: unknown (no cgroup) */
        uint64_t memory_peak_bytes;     /* its peak memory, 0: unknown */
        const char *run_id;             /* names the run's resources: sandbox://runs/<id>/stdout */
        const mcp_artifact *artifacts;
        size_t n_artifacts;
        const char *const *denied_hosts;        /* "host:port" the egress proxy refused */
        size_t n_denied_hosts;
        const char *const *upstream_errors;     /* "host:port: reason" it could not reach */
        size_t n_upstream_errors;
        uint64_t network_bytes;                 /* relayed by the egress proxy */
} mcp_run_result;

/* Output as it arrives (for progress notifications); chunks are raw bytes. */
typedef void (*mcp_run_output_fn)(mcp_run *run, mcp_stream stream, const char *buf, size_t len,
                                  void *data);
/* Called exactly once unless the run was cancelled; the result is valid only during the
 * call; the run is freed right after it returns. */
typedef void (*mcp_run_done_fn)(mcp_run *run, const mcp_run_result *result, void *data);

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
