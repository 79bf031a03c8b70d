/* The MCP server: its state shared by the protocol layer's modules (tools.h: tools/list and
 * tools/call; resources.h: the resources methods), the hooks a transport installs on it
 * (admission, notices, session changes), and its lifecycle and dispatch. Owner: proto.c. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "config.h"
#include "engine/engine.h"
#include "rpc/rpc.h"
#include "observe/observe.h"
#include "base/base.h"
#include "mcp/owners.h"
#include "session/session.h"

/* Protocol revisions, oldest first, so that gating is a comparison. */
typedef enum mcp_version {
        MCP_V2024_11_05,
        MCP_V2025_03_26,
        MCP_V2025_06_18,
        MCP_V2025_11_25,
        MCP_V_LATEST = MCP_V2025_11_25,
} mcp_version;

/* Echoes a supported version, else the latest. */
mcp_version mcp_version_negotiate(const char *requested);
const char *mcp_version_name(mcp_version v);
/* title, outputSchema, structuredContent, resource_link: 2025-06-18 and later. */
static inline bool
mcp_version_structured(mcp_version v)
{
        return v >= MCP_V2025_06_18;
}
/* Tool annotations: 2025-03-26 and later. */
static inline bool
mcp_version_annotations(mcp_version v)
{
        return v >= MCP_V2025_03_26;
}

typedef struct mcp_call mcp_call;
typedef struct mcp_server mcp_server;
typedef struct mcp_ports mcp_ports;

/* What a caller asks to start, for the transport's admission check (quotas): the policy
 * is the transport's (srv->admit; HTTP: per-tenant quotas), the tools ask it through
 * mcp_tool_admit (tools-args.h). */
typedef enum mcp_admit { MCP_ADMIT_RUN, MCP_ADMIT_SESSION } mcp_admit;
/* 0: go ahead; < 0: refused, msg says why (the tool error's text). */
typedef int (*mcp_admit_fn)(mcp_server *srv, mcp_admit what, char *msg, size_t size, void *data);

/* NULL-safe member access on possibly absent params. */
static inline const char *
mcp_json_str(const oci_json *obj, const char *key)
{
        const oci_json *v = obj ? oci_json_get(obj, key) : NULL;
        return v ? oci_json_string(v) : NULL;
}

struct mcp_server {
        mcp_loop *loop;
        const mcp_config *cfg;
        mcp_engine *engine;             /* NULL in unit tests that only list tools */
        const char *const *languages;   /* the engine's, fixed at start (tests may set it) */
        mcp_logger *log;
        mcp_rpc *rpc;
        bool initialized;               /* initialize answered */
        bool client_initialized;        /* notifications/initialized received */
        mcp_version version;
        mcp_call *calls;                /* in-flight tools/call runs */
        char **recent_runs;             /* ring of run ids whose logs are resources */
        size_t n_recent, recent_next;
        mcp_owners *owners;             /* shared by the HTTP sessions; NULL: stdio */
        const char *tenant;             /* whose sessions and run logs this caller sees */
        const char *http_session;       /* its Mcp-Session-Id; NULL: stdio */
        mcp_metrics *metrics;           /* the HTTP transport's; NULL: stdio */
        mcp_admit_fn admit;             /* NULL: everything within the global limits */
        void *admit_data;
        bool hears_expiries;            /* stdio: the session store's expiry hook is ours */
        bool list_changed;              /* a resources/list_changed notice is due */
        mcp_timer *list_timer;          /* sends it when the loop round is done */
        /* HTTP: where the notice goes (the GET stream); -EAGAIN: nowhere yet, it stays due.
         * NULL: the rpc output (stdio). */
        int (*notice_out)(mcp_server *srv, const char *json, size_t len);
        /* HTTP: a sandbox session changed: every MCP session of tenant sees it. NULL: srv's
         * caller is the only one (stdio). */
        void (*session_changed)(mcp_server *srv, const char *tenant);
        void *transport_data;
        mcp_ports *ports;               /* exposed ports (tools-ports.h): stdio its own, HTTP
                                         * the transport's, shared */
        bool owns_ports;
};

/* srv's caller may use the sandbox session or run log id: always without an owner table,
 * else only its tenant's (another tenant's is "not found"). */
static inline bool
mcp_server_owns(const mcp_server *srv, const char *id)
{
        return !srv->owners || mcp_owners_is(srv->owners, id, srv->tenant);
}

int mcp_server_new(mcp_loop *loop, const mcp_config *cfg, mcp_engine *engine, mcp_logger *log,
                   int in_fd, int out_fd, mcp_server **ret);
/* One MCP session whose messages the caller decodes and hands to mcp_server_dispatch();
 * what the server says goes to sink (an HTTP session: http.c). */
int mcp_server_new_sink(mcp_loop *loop, const mcp_config *cfg, mcp_engine *engine,
                        mcp_logger *log, mcp_rpc_sink_fn sink, void *sink_data,
                        mcp_server **ret);
/* Handles one decoded message (takes it). */
void mcp_server_dispatch(mcp_server *srv, mcp_rpc_msg *msg);
/* True when version is one of the protocol revisions this server speaks. */
bool mcp_version_known(const char *version);
/* Cancels the in-flight runs (no responses), flushes the output. */
mcp_server *mcp_server_free(mcp_server *srv);
