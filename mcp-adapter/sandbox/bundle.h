/* The OCI bundle of one run: config.json written with oci/json.h's writer, and the shared
 * read-only skeleton rootfs that every "host" run uses as its root. Owner: bundle.c. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "oci/oci.h"
#include "sandbox/sandbox-ids.h"
#include "sandbox/sysview.h"
#include "sandbox/budget-share.h"

/* Where the program file is bound (read-only directory holding main.<ext>). */
#define MCP_CODE_DIR "/.msp"
/* Where msp-sandbox-init is bound (read-only, executable): pid 1, the program its child. */
#define MCP_INIT_PATH MCP_CODE_DIR "/init"
/* The egress proxy's unix socket inside an allowlist sandbox (over an empty file of the
 * code dir, like the init), and the loopback port the init relays to it. */
#define MCP_PROXY_SOCKET MCP_CODE_DIR "/proxy.sock"
#define MCP_PROXY_PORT 3128
/* A session's kernels' sockets and connection files (read-write, the sandbox user's),
 * over a directory of the code dir. */
#define MCP_KERNEL_DIR MCP_CODE_DIR "/k"

typedef struct oci_json oci_json;

/* Resource limits of one run or session. 0 means "use the default" in requests and
 * "unlimited" nowhere: every effective limit is > 0. */
typedef struct mcp_limits {
        uint64_t memory_bytes;          /* cgroup memory limit (swap equal: no swap) */
        uint64_t pids;                  /* cgroup pids limit */
        uint64_t cpu_millis;            /* CPU quota in thousandths of a CPU (1000 = one CPU) */
        uint64_t timeout_ms;            /* wall clock of one run, enforced by killing the cgroup */
        uint64_t output_bytes;          /* cap per stream (stdout, stderr) in the result */
        uint64_t tmp_bytes;             /* size of the tmpfs at /tmp */
        uint64_t workspace_bytes;       /* size cap of a fresh (non-session) workspace tmpfs */
} mcp_limits;

/* The kernel's smallest CFS quota is 1 ms per period; the bundle's period is 100 ms, so
 * 0.01 CPU is the least a run can get. */
#define MCP_CPU_MILLIS_MIN 10u

/* The host's system view (sysview.h), without the languages' links: view->sys stays empty. */
int mcp_hostview_probe(mcp_hostview *ret, msp_err *err);

/* Create the skeleton rootfs <dirfd>/<name>: every mount point (of the system view's binds,
 * sysbinds.h, and of a run's own mounts), the merged-/usr symlinks, synthesized
 * /etc/passwd, group, hosts, nsswitch.conf; then read-only from the runtime's point of view
 * (root.readonly). */
int mcp_skeleton_create(int dirfd, const char *name, const mcp_hostview *view, msp_err *err);
/* The copy of msp-sandbox-init in <inst>/b, the source of its bind. */
#define MCP_INIT_COPY "init"
/* In msp-mcp's private mount namespace: tmpfs mounts on <inst>/b (the bundles) and
 * <inst>/rootfs (the skeleton), so that no bind source names a host path, and a copy of
 * init_src (NULL: none) at <inst>/b/MCP_INIT_COPY. Undone by mcp_private_view_release. */
int mcp_private_view(int inst_fd, const char *inst_path, const char *init_src, msp_err *err);
void mcp_private_view_release(const char *inst_path);
/* For a prepared rootfs: mount <dir_path>/<name> (dirfd is dir_path) as a read-only
 * overlay of rootfs under a layer with the mount points it may lack; rootfs itself is
 * never written. With idmap_fd (a user namespace, sandbox-userns.h), over an idmapped
 * mount of rootfs (<name>.lower): a slice's view, its files owned by the slice's ids.
 * Once per instance (and per slice), in msp-mcp's private mount namespace; released by
 * mcp_rootfs_view_release. */
int mcp_rootfs_view(int dirfd, const char *dir_path, const char *name, const char *rootfs,
                    int idmap_fd, msp_err *err);
void mcp_rootfs_view_release(const char *dir_path, const char *name);
/* The directories of that layer (NULL-terminated): every top-level mount point of a run on
 * the view, and /etc. A rootfs's entry of one of these names is hidden or covered there. */
extern const char *const mcp_view_top_dirs[];

typedef struct mcp_bundle_spec {
        const char *root_path;          /* the skeleton (with the system view's binds,
                                         * sysbinds.h), or a prepared rootfs */
        bool host_view;                 /* root_path is the skeleton (rootfs "host") */
        const char *const *argv;        /* NULL-terminated */
        const char *const *env;         /* request env, "KEY=VALUE" (checked by mcp_env_check) */
        size_t n_env;
        const char *const *image_env;   /* an image's Env, NULL-terminated (request env wins) */
        const char *cwd;                /* NULL: /workspace */
        mcp_run_ids ids;                /* process.user; ids.base: the id maps' hostID */
        const char *const *read_dirs;   /* Landlock: read and execute beneath these too */
        const char *const *read_files;  /* Landlock: read and execute these regular files */
        const char *workspace_path;     /* bound rw at /workspace */
        const char *code_path;          /* bound ro at MCP_CODE_DIR */
        const char *init_path;          /* bound ro at MCP_INIT_PATH (the code dir has an empty
                                         * file there) and run as pid 1 with argv after "--";
                                         * NULL: argv is pid 1 itself */
        const char *cgroups_path;       /* NULL: no cgroup (rootless without a delegated one):
                                         * no linux.resources; memory is RLIMIT_DATA, processes
                                         * RLIMIT_NPROC (counted per user namespace), CPU
                                         * RLIMIT_CPU and the timeout, disk the tmpfs sizes */
        const char *hostname;
        bool network;                   /* true: outbound network through usernet_helper (the
                                         * sandbox keeps its own network namespace) */
        const char *usernet_helper;     /* slirp4netns, attached by a createRuntime hook of
                                         * userns_hook's executable (usernet.h); needed when
                                         * network is true */
        unsigned proxy_port;            /* != 0: an allowlist run. The egress proxy's socket
                                         * (proxy_socket) is bound at MCP_PROXY_SOCKET, the init
                                         * relays 127.0.0.1:proxy_port to it, the proxy
                                         * variables name it, and Landlock lets TCP connect and
                                         * bind to that port only */
        const char *proxy_socket;
        mcp_limits limits;              /* effective, every field > 0 */
        uint64_t nproc;                 /* RLIMIT_NPROC (per host uid: shared by runs) */
        mcp_budget_share share;         /* of the per-uid budgets (budget-share.h) */
        const oci_json *seccomp;        /* linux.seccomp */
        const oci_json *landlock;       /* process.landlock (extra rules are added) */
        const char *userns_hook;        /* msp-sandbox-hook, run as the createRuntime hook with
                                         * MCP_USERNS_HOOK_ARG; NULL: none */
        const char *userns_path;        /* a user namespace to join (sandbox-userns.h); NULL:
                                         * the runtime makes one */
        const char *kernel_dir;         /* a session's sandbox: bound rw at MCP_KERNEL_DIR
                                         * (the code dir has a directory there); NULL: none */
        int serve_fd;                   /* > 0: a session's sandbox: pid 1 (the init, needed)
                                         * serves the listening socket it inherits as this fd
                                         * (spawn-serve.h) instead of running argv */
} mcp_bundle_spec;

/* config.json as a malloc'd string. */
int mcp_bundle_config(const mcp_bundle_spec *spec, char **ret, size_t *ret_len, msp_err *err);
/* The sandbox's environment as config.json has it (base < egress proxy < image < request),
 * NULL-terminated, malloc'd (free with mcp_strv_free): what a session's programs get. */
int mcp_bundle_env(const mcp_bundle_spec *spec, char ***ret, msp_err *err);
void mcp_strv_free(char **v);

#define MCP_ENV_NAME_MAX 256

/* The name of an environment variable a request may set: [A-Za-z_][A-Za-z0-9_]*, 1 to
 * MCP_ENV_NAME_MAX bytes. The one rule for the bundle's env and run_code's env argument
 * (inline: the tool layer checks it without linking the bundle writer). */
static inline bool
mcp_env_name_valid(const char *name, size_t len)
{
        bool ok = len > 0 && len <= MCP_ENV_NAME_MAX && !(name[0] >= '0' && name[0] <= '9');
        for (size_t k = 0; ok && k < len; k++) {
                char c = name[k];
                ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                     c == '_';
        }
        return ok;
}

/* "KEY=VALUE" with KEY mcp_env_name_valid and no NUL in VALUE. */
int mcp_env_check(const char *kv, size_t i, msp_err *err);

/* The profiles built into the binary (profiles.S), NUL-terminated. */
extern const char mcp_profile_seccomp[];
extern const char mcp_profile_landlock[];
