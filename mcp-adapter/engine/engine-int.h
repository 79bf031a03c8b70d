/* Internal to the run engine: the engine's and a run's state, shared by engine.c (the
 * instance, the queue, a run's lifecycle) and run-setup.c (one run's workspace and bundle). */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "engine/artifacts.h"
#include "sandbox/sandbox.h"
#include "engine/engine-types.h"
#include "oci/oci.h"
#include "egress/egress.h"
#include "host/host.h"
#include "engine/keptfiles.h"
#include "engine/runlogs.h"
#include "engine/runner.h"
#include "engine/live.h"

#define RUN_ID_LEN 18                   /* "r-" + 16 hex */
#define MCP_ROOTFS_MAX 32               /* prepared rootfs views per instance */

typedef enum run_state { RUN_QUEUED, RUN_RUNNING, RUN_EXITED } run_state;

typedef struct mcp_plan_file {
        char *path, *data;
        size_t len;
        bool executable;
} mcp_plan_file;

/* What a run keeps of its request from its submit, where it is checked, to its start, where
 * its sandbox is made of it (run-setup.h). */
typedef struct mcp_run_plan {
        const mcp_language *lang;
        char interp[MCP_INTERP_MAX];
        mcp_limits lim;
        bool network;
        const char *root_path;          /* the engine's skeleton or run->root_path */
        bool host_view;
        const mcp_rootfs *rootfs;       /* NULL: the host view */
        char *code;
        size_t code_len;
        mcp_plan_file *files;
        size_t n_files;
        char **args, **env;             /* copies, n_args and n_env of them */
        size_t n_args, n_env;
        size_t stdin_len;               /* of run->stdin_copy */
} mcp_run_plan;

struct mcp_run {
        mcp_run *next, **pprev;         /* engine->runs */
        mcp_run *qnext;                 /* engine->queue */
        mcp_engine *engine;
        run_state state;
        char id[RUN_ID_LEN + 1];
        mcp_runner runner;
        mcp_run_output_fn on_output;
        mcp_run_done_fn on_done;
        void *data;
        bool cancelled;
        mcp_run_plan plan;              /* until its sandbox is made */
        char *stdin_copy;
        char *session_id;               /* acquired until the container exits */
        bool was_session;
        bool background;                /* a call that is done once its program started */
        bool kernel_cell;               /* a call that is a cell of its session's kernel */
        bool fresh;                     /* a call asked for a process of its own state */
        bool log_kept;                  /* its logs are in engine->logs */
        uint64_t log_reserve;           /* its share of the logs' budget while it runs */
        int ws_fd;                      /* fresh: owned; session: borrowed */
        int usernet_fd;                 /* with network: the only writer of the helper's exit
                                         * FIFO (usernet.h); -1 otherwise */
        int slice;                      /* its id slice (sandbox-slices.h), held from claim
                                         * (a session's) or setup (its own) until it is gone;
                                         * -1: none yet */
        unsigned id_base, id_count;     /* the slice's host id of container id 0, how many */
        mcp_sandbox_userns userns;      /* kept until the run is gone */
        mcp_proxy *proxy;               /* an allowlist run's egress proxy (proxy.h) */
        mcp_egress_policy allow;        /* its policy */
        mcp_proxy_event_fn on_network;
        char tenant[65];                /* the caller's (MCP_TENANT_MAX), "" for stdio */
        bool ws_mounted;
        mcp_artifacts_snap before;      /* out/ before the run */
        char bundle[4096];
        char ws_path[4096];
        char log_path[4200];            /* the runtime's --log */
        char root_path[2200];           /* a prepared rootfs' view */
        bool serve;                     /* a session's sandbox: pid 1 serves (live.h) */
        int serve_fd;                   /* its listener until the runtime has it, -1 */
        mcp_live *live;                 /* the live session it is the sandbox of or a call in */
        mcp_call call;                  /* a call's program (not serve, live set) */
};

struct mcp_engine {
        mcp_loop *loop;
        const mcp_config *cfg;
        char inst_name[64];
        char inst_path[2048];
        char runtime_root[2100];
        char skeleton[2100];
        char init_path[2100];           /* the init's copy (mcp_private_view), "" for none */
        bool view_mounted;
        int inst_fd;                    /* holds the flock */
        bool v2;                        /* pure cgroup v2 */
        bool unified;                   /* hybrid with a v2 mount at /sys/fs/cgroup/unified */
        mcp_rootless rootless;          /* run by a user: in a user namespace of our own */
        bool no_cgroup;                 /* rootless without a delegated cgroup: the limits are
                                         * rlimits, tmpfs sizes and the timeout (bundle.h) */
        mcp_user_cgroup user_cg;        /* rootless with one: the sandboxes' cgroups below it */
        char cg_parent[512];            /* the sandboxes' cgroups' parent, from the root */
        mcp_hostview view;
        mcp_languages langs;
        oci_json_doc *seccomp, *landlock;
        mcp_session_store *sessions;
        mcp_procset procs;
        mcp_run *runs;
        mcp_live *lives;                /* the live sessions (live.h) */
        void (*session_gone)(const char *session_id, void *data);      /* engine.h's hook */
        void *session_gone_data;
        mcp_run *qhead, **qtail;
        mcp_timer *start_timer;         /* the next queued run's start, in the loop's next round */
        unsigned n_running, n_queued;
        mcp_runlogs logs;
        mcp_keptfiles kept;             /* out/ files of fresh runs (keptfiles.h) */
        mcp_resolver *resolver;         /* the egress proxies' (resolver.h), from the first
                                         * allowlist run */
        bool rootfs_mounted[MCP_ROOTFS_MAX];    /* <inst>/rootfs-<i>: overlay of cfg->rootfs[i] */
        mcp_slices *slices;             /* every sandbox's own host ids */
        mcp_budget_share share;         /* each sandbox's of the per-uid budgets */
        unsigned n_slices;
        bool *slice_views;              /* [i * n_slices + slice]: <inst>/rootfs-<i>-s<slice>,
                                         * rootfs i idmapped onto the slice, mounted at its
                                         * first use (as root; run by a user, every sandbox
                                         * sees rootfs-<i>) */
};


/* engine.c's, for live.c and live-call.c: a new run (linked, queued nowhere); a run's
 * result delivered (on_done, logs, artifacts; the session released); a run freed with
 * everything it made on the host (its container is gone or never was). */
mcp_run *mcp_run_alloc(mcp_engine *e, msp_err *err);
void mcp_run_finish(mcp_run *run, mcp_run_result *res);
void mcp_run_free(mcp_run *run);
/* A claimed run's sandbox made (bundle, runner) and its runtime started. */
int mcp_run_prepare(mcp_run *run, msp_err *err);
int mcp_run_spawn(mcp_run *run, msp_err *err);
