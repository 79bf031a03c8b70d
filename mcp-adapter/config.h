/* msp-mcp's configuration: defaults and maxima from the command line and an optional JSON
 * config file (--config FILE; flags win). Owner: config.c (parsing, --help text); read by
 * every other module, never modified after start-up. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/base.h"
#include "egress/egress.h"
#include "sandbox/sandbox.h"

/* "1.5" -> 1500 (thousandths of a CPU): digits and at most three decimals (trailing zeros
 * beyond are fine), no sign or exponent. -EINVAL, or -ERANGE above a million CPUs. */
int mcp_parse_cpus(const char *s, uint64_t *ret);

/* A rootfs the client may name: "host" (built in: read-only view of the host's system
 * directories) or NAME=DIR from --rootfs. */
typedef struct mcp_rootfs {
        const char *name;
        const char *path;               /* NULL for "host" and for an image not yet unpacked */
        const char *image;              /* --image NAME=REF: the REF; NULL for the others */
        const char *const *env;         /* an image's Env (NULL-terminated), or NULL */
        const char *workdir;            /* an image's WorkingDir, or NULL (/workspace) */
        const char *const *read_dirs;   /* an image's directories runs may read and execute
                                         * (beyond the Landlock profile's), or NULL */
        const char *const *read_files;  /* an image's top-level files, likewise, or NULL */
        bool has_user;                  /* an image's User, resolved in its /etc/passwd: */
        mcp_run_ids user;               /* the ids its runs have inside */
} mcp_rootfs;

/* The ids of runs on rf (NULL: the host view) in the slice of count ids whose container
 * id 0 is host id base. */
static inline mcp_run_ids
mcp_rootfs_ids(const mcp_rootfs *rf, unsigned base, unsigned count)
{
        mcp_run_ids ids = rf && rf->has_user ? rf->user : MCP_RUN_IDS_IN(base, count);
        ids.base = base;
        ids.count = count;
        return ids;
}

/* Where meson installs msp-sandbox-init (mcp-adapter/meson.build sets it). */
#ifndef MCP_SANDBOX_INIT_INSTALLED
#define MCP_SANDBOX_INIT_INSTALLED "/usr/local/libexec/msp/msp-sandbox-init"
#endif
#ifndef MCP_HOOK_INSTALLED
#define MCP_HOOK_INSTALLED "/usr/local/libexec/msp/msp-sandbox-hook"
#endif

typedef struct mcp_config {
        const char *runtime_path;       /* --runtime PATH (default: msp beside msp-mcp) */
        const char *init_path;          /* --sandbox-init PATH: pid 1 of the sandboxes (default:
                                         * msp-sandbox-init beside msp-mcp, then installed);
                                         * NULL when not found: the engine refuses to start */
        const char *unpack_path;        /* msp-mcp-unpack beside msp-mcp, then installed; NULL
                                         * when not found: images are refused */
        const char *state_dir;          /* --state-dir (default /run/msp-mcp) */
        mcp_limits defaults;            /* --memory, --pids, --cpus, --timeout, ... */
        mcp_limits maxima;              /* --max-memory, ... (requests are clamped/refused above) */
        unsigned sandbox_ids;           /* --sandbox-ids: as root, the first of the sandboxes'
                                         * 65536 host ids (sandbox-ids.h) */
        unsigned max_concurrent;        /* --max-concurrent (default: number of CPUs, >= 1) */
        unsigned max_queue;             /* --max-queue: queued runs beyond which calls fail */
        unsigned max_sessions;          /* --max-sessions */
        uint64_t session_ttl_s;         /* --session-ttl default */
        uint64_t session_max_ttl_s;     /* --session-max-ttl */
        uint64_t session_idle_pause_s;  /* --session-idle-pause: an idle session's sandbox is
                                         * frozen after this long; 0: never */
        bool allow_network;             /* --allow-network: sessions/runs may ask for network */
        const char *usernet_path;       /* --slirp4netns: the network sessions' user-mode
                                         * networking helper (default: slirp4netns in PATH);
                                         * NULL: none found (network sessions are refused) */
        bool require_cgroups;           /* --require-cgroups: run by a user, refuse to start
                                         * without cgroup limits (check.c) */
        mcp_egress_policy network_allow; /* --network-allow PATTERN (repeatable): the most a
                                         * call's {"allow": [...]} may ask for; none: allowlists
                                         * are refused */
        mcp_proxy_pin *resolve;         /* --resolve HOST=ADDR (repeatable): the egress proxy's
                                         * pins (exempt from the private-address rule) */
        size_t n_resolve;
        unsigned network_max_conns;     /* --network-max-conns: proxied connections of a run */
        uint64_t network_max_bytes;     /* --network-max-bytes: bytes the proxy relays per run */
        uint64_t network_idle_ms;       /* --network-idle: a proxied connection idle this long
                                         * is closed */
        unsigned run_fds;               /* --run-fds: fds one run's egress proxy may hold
                                         * (0: 512); config-fds.c */
        unsigned tenant_fds;            /* --tenant-fds: the same for a tenant's runs at once
                                         * (0: half the proxies' share with --listen, all of it
                                         * on stdio) */
        struct mcp_fds *fds;            /* the process's fd accountant, set by main (NULL: no
                                         * budget, unit tests) */
        bool weak_policy;               /* --allow-weak-policy: start even when the kernel cannot
                                         * enforce the default policy (documented; logged) */
        const char *seccomp_profile;    /* --seccomp-profile FILE (default: the built-in copy of
                                         * contrib/profiles/seccomp-default.json) */
        const char *landlock_profile;   /* --landlock-profile FILE (default: built-in copy) */
        const char *seed_dir;           /* --seed-dir: lower layer of new session workspaces */
        mcp_rootfs *rootfs;             /* rootfs[0] is "host" */
        size_t n_rootfs;
        const char *image_cache;        /* --image-cache: unpacked images (image-cache.h) */
        uint64_t image_max_bytes;       /* --image-max-size: unpacked size of one image */
        uint64_t max_message_bytes;     /* one JSON-RPC line (default 16 MiB) */
        uint64_t max_image_bytes;       /* one image returned as content (default 1 MiB) */
        unsigned run_log_keep;          /* full logs of the last N runs kept as resources */
        uint64_t kept_files_bytes;      /* --kept-files-size: small out/ files of fresh runs
                                         * kept on disk for resources/read (keptfiles.h) */
        uint64_t kept_files_tenant_bytes; /* --kept-files-tenant-size: of those, one tenant's */
        const char *log_level;          /* initial level for notifications/message and stderr */
        const char *audit_log;          /* --audit-log PATH ("-": stderr; NULL: none) */
        bool audit_code;                /* --audit-code: run_start lines carry the code */
        const char *listen;             /* --listen HOST:PORT | unix:PATH (NULL: stdio) */
        const char *allow_origins;      /* --allow-origin: comma-separated Origin values */
        const char *auth_tokens;        /* --auth-tokens FILE (NULL: no authentication) */
        const char *oauth_issuer;       /* --oauth-issuer URL: who signs access tokens (oauth.h) */
        const char *oauth_jwks;         /* --oauth-jwks FILE|URL: the issuer's public keys */
        const char *oauth_jwks_ca;      /* --oauth-jwks-ca FILE: trust for an https:// one */
        const char *resource;           /* --resource URL: this server, the tokens' audience */
        const char *oauth_tenant_claim; /* --oauth-tenant-claim: the claim naming the tenant */
        uint64_t http_timeout_s;        /* --http-timeout: idle/slow HTTP connection */
        const char *tls_cert, *tls_key; /* --tls-cert/--tls-key: HTTPS (NULL: plain HTTP) */
        uint64_t drain_timeout_s;       /* --drain-timeout: SIGTERM lets requests finish */
        uint64_t http_session_idle_s;   /* --http-session-idle: unused HTTP session ends */
        uint64_t http_head_timeout_s;   /* --http-head-timeout: a request's head, counted from
                                         * the connection's start or its last request's end */
        unsigned http_max_connections;  /* --http-max-connections */
        unsigned http_max_per_address;  /* --http-max-per-address; 0: not given (none on a
                                         * loopback or unix listener, 64 on others) */
        unsigned http_tenant_sessions;  /* --http-tenant-sessions: a tenant's MCP sessions
                                         * unless its token line says mcp_sessions= */
        const char *probe_listen;       /* --probe-listen HOST:PORT (NULL: none) */
        const char *userns_hook;        /* msp-sandbox-hook (hook-main.c), every sandbox's
                                         * createRuntime hook: beside msp-mcp, then installed;
                                         * NULL when not found: the engine refuses to start */
        char **owned_;                  /* config.c's: strings the fields above point to */
        size_t n_owned_;
} mcp_config;

#include <stdio.h>
#include "oci/oci.h"

typedef enum mcp_config_action {
        MCP_ACTION_SERVE,
        MCP_ACTION_HELP,
        MCP_ACTION_VERSION,
        MCP_ACTION_CHECK,
        MCP_ACTION_MAN,
} mcp_config_action;

/* Defaults, then --config FILE, then the other flags. -EINVAL with err naming the flag
 * (or the file's key) and the value. */
int mcp_config_load(mcp_config *cfg, int argc, char **argv, mcp_config_action *ret_action,
                    msp_err *err);
void mcp_config_done(mcp_config *cfg);
/* Whether any --image is configured (then the image cache is used). */
bool mcp_config_has_image(const mcp_config *cfg);
void mcp_config_help(FILE *out);
/* msp-mcp(1) in roff, from the table --help prints (root's defaults; the user's in its
 * text). */
void mcp_config_man(FILE *out);
/* "512M", "1G", "64k", "4096" (binary multiples; a bare number is bytes). */
int mcp_parse_size(const char *s, uint64_t *ret);

/* The fd accountant's plan (base/fd-budget.h) for limit, from --max-concurrent,
 * --max-sessions, --listen, --run-fds and --tenant-fds (config-fds.c says how). */
mcp_fds_plan mcp_config_fds_plan(const mcp_config *cfg, unsigned limit);
/* Raises the soft RLIMIT_NOFILE to the hard one and splits it by that plan. -EMFILE naming
 * the numbers when the limit cannot hold the reserve and a pool. */
int mcp_config_fds_init(const mcp_config *cfg, mcp_fds *f, msp_err *err);
/* --check: the limits and the split, one line. */
void mcp_config_fds_check(const mcp_config *cfg, FILE *out);
