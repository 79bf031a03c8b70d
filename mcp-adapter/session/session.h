/* Sessions: a workspace that persists across run_code calls (overlayfs, copy-on-write over
 * the optional seed directory), with its own limits, network choice, rootfs and expiry.
 * Sessions live on disk under <state_dir>/sessions/<id>/ so that a crashed msp-mcp's
 * sessions expire and are removed by the next start. Owner: session.c (the confined file
 * access below it: files.h).
 *
 * File tools resolve every path inside the workspace through fds (openat2 with
 * RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS), so that "..", absolute paths and symlinks made by
 * the sandboxed code cannot reach outside it; sizes are capped. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "oci/oci.h"
#include "base/base.h"
#include "session/files.h"

typedef struct mcp_session_store mcp_session_store;

typedef struct mcp_session_opts {
        mcp_limits limits;              /* 0 fields: server defaults; caller checked maxima */
        uint64_t ttl_s;                 /* 0: default; caller checked the maximum */
        bool network;                   /* caller checked config->allow_network */
        const mcp_egress_policy *allow; /* an allowlist for the runs (copied; caller checked it
                                         * against --network-allow); NULL or empty: none */
        const char *rootfs;             /* a configured rootfs name; NULL: "host" */
} mcp_session_opts;

typedef struct mcp_session_info {
        char id[64];
        const char *rootfs;
        bool network;
        const mcp_egress_policy *allow; /* the session's allowlist (n == 0: none); valid while
                                         * the session lives */
        mcp_limits limits;              /* effective */
        uint64_t created_usec, expires_usec;    /* wall clock */
        unsigned runs;
        bool busy;                      /* a run is using it */
        int slice;                      /* its sandbox id slice (sandbox-slices.h), held for its
                                         * whole life; -1: no pool (the storage range) */
        unsigned id_base, id_count;     /* the host id of its container id 0, how many */
} mcp_session_info;

/* Creates <state_dir>/sessions and removes the sessions of dead msp-mcp processes (their
 * lock is free). Needs a private mount namespace (workspaces are mounts). */
int mcp_sessions_new(mcp_loop *loop, const mcp_config *cfg, mcp_session_store **ret, msp_err *err);
typedef struct mcp_slices mcp_slices;
/* Each session created from now on holds a slice of `slices` (borrowed) for its life;
 * without, every session's ids are the storage range's. */
void mcp_sessions_set_slices(mcp_session_store *store, mcp_slices *slices);
/* Unmounts and removes every session of this store (their files die with the server:
 * see docs/MCP.md, "Sessions and workspaces"). Call it before freeing the loop. */
mcp_session_store *mcp_sessions_free(mcp_session_store *store);

/* "s-" and 16 lowercase hex digits: checked on every lookup, so an id is never a path. */
bool mcp_session_id_valid(const char *id);

/* Called by mcp_session_close(force) on a busy session before it is removed: the engine
 * cancels the run using it (and may call mcp_session_release() from the callback). */
typedef void (*mcp_session_evict_fn)(const char *id, void *data);
void mcp_sessions_set_evict(mcp_session_store *store, mcp_session_evict_fn fn, void *data);
/* Called after an expired session was removed (its timer, or the first lookup or release
 * after its time): its id and why ("expired: its ttl_s of N s passed"). Not for sessions
 * closed, removed with the store, or removed at start after a crash. */
typedef void (*mcp_session_expired_fn)(const char *id, const char *why, void *data);
void mcp_sessions_set_expired(mcp_session_store *store, mcp_session_expired_fn fn, void *data);

/* -EUSERS at max_sessions or with no id slice free; -EINVAL for a bad option (err names it). */
int mcp_session_create(mcp_session_store *store, const mcp_session_opts *opts,
                       mcp_session_info *ret, msp_err *err);
/* -ENOENT unknown or expired; -EBUSY while a run uses it (the run is killed first when
 * force is set). */
int mcp_session_close(mcp_session_store *store, const char *id, bool force, msp_err *err);
int mcp_session_get(mcp_session_store *store, const char *id, mcp_session_info *ret, msp_err *err);
/* Array of n infos, malloc'd. */
int mcp_session_list(mcp_session_store *store, mcp_session_info **ret, size_t *ret_n, msp_err *err);

/* The merged workspace directory of a session (what the engine binds at /workspace) and its
 * fd (both owned by the store, valid until release); marks the session busy until
 * mcp_session_release(). One run per session: -EBUSY while another run holds it (the
 * engine queues the run or returns a tool error). An expired session stays usable by the
 * run holding it and is removed at its release. Release as soon as the container's
 * processes are gone, before the result is sent: a client's next run_code on the session
 * otherwise finds it busy while the container is being deleted. */
int mcp_session_acquire(mcp_session_store *store, const char *id, int *ret_workspace_fd,
                        const char **ret_workspace_path, mcp_session_info *ret_info,
                        msp_err *err);
void mcp_session_release(mcp_session_store *store, const char *id);
/* The workspace of a session for its sandbox's whole life (mounted; the fd and path are
 * the store's), without marking it busy: the closing callback tells when it goes. */
int mcp_session_hold(mcp_session_store *store, const char *id, int *ret_workspace_fd,
                     const char **ret_workspace_path, mcp_session_info *ret_info, msp_err *err);
/* Called first whenever a session is removed (closed, expired, with the store): its
 * sandbox must be gone when the callback returns, since its workspace goes next. */
typedef void (*mcp_session_closing_fn)(const char *id, void *data);
void mcp_sessions_set_closing(mcp_session_store *store, mcp_session_closing_fn fn, void *data);

/* Files of a session's workspace. path is relative to /workspace (a leading "/workspace/"
 * or "/" is accepted). Errors name the path: -ENOENT, -EISDIR, -EFBIG (over the cap),
 * -EXDEV (escapes the workspace). */
int mcp_session_write_file(mcp_session_store *store, const char *id, const char *path,
                           const void *data, size_t len, bool executable, msp_err *err);
/* Reads up to max bytes; *ret_truncated when the file is larger; *ret_size its size. */
int mcp_session_read_file(mcp_session_store *store, const char *id, const char *path, size_t max,
                          char **ret, size_t *ret_len, uint64_t *ret_size, bool *ret_truncated,
                          msp_err *err);
int mcp_session_list_files(mcp_session_store *store, const char *id, const char *path,
                           size_t max_entries, mcp_dirent **ret, size_t *ret_n,
                           bool *ret_truncated, msp_err *err);
