/* The run engine's types: a run request, its result and the callbacks that deliver it.
 * Types only (no .c): shared by the engine's interface (engine.h) and the parts below it
 * (runner.h, artifacts.h, run-setup.h, engine-int.h), which thus need not include engine.h. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "egress/egress.h"
#include "sandbox/sandbox.h"

typedef struct mcp_engine mcp_engine;
typedef struct mcp_run mcp_run;
typedef struct mcp_session_store mcp_session_store;     /* session.h */

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
        bool fresh;                     /* with session_id: a process of its own in the
                                         * session's sandbox, never the session's kernel */
        bool background;                /* with session_id: done as soon as the program has
                                         * started (result.process_id); it runs on */
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
        const char *process_id;         /* a background run's ("p-" and 8 hex digits) */
        const char *value_text;         /* a kernel cell's text/plain result (Out[n]), NULL:
                                         * none */
        size_t value_len;
        const char *kernel_note;        /* what happened to the session's kernel in this
                                         * call: "interrupted", "killed and restarted", "died:
                                         * ...", "started"; NULL: nothing */
        bool kernel_error;              /* the cell raised: stderr holds the traceback */
} mcp_run_result;

/* Output as it arrives (for progress notifications); chunks are raw bytes. */
typedef void (*mcp_run_output_fn)(mcp_run *run, mcp_stream stream, const char *buf, size_t len,
                                  void *data);
/* Called exactly once unless the run was cancelled; the result is valid only during the
 * call; the run is freed right after it returns. */
typedef void (*mcp_run_done_fn)(mcp_run *run, const mcp_run_result *result, void *data);
