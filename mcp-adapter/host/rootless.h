/* msp-mcp run by an ordinary user (the way MCP clients start it). Owner: rootless.c.
 *
 * A user cannot mount or write another user's ids, so at start msp-mcp moves itself into a
 * user namespace of its own, as rootless podman does: the user is root there (uid 0 maps
 * to the user's uid), and when /etc/subuid and /etc/subgid grant the user a range (and
 * newuidmap/newgidmap are installed) ids 1.. map to that range. Inside it msp-mcp owns its
 * mount namespace (the tmpfs workspaces, the skeleton) and can give the sandbox's files to
 * the sandbox's ids; the runtime it starts runs as root of that namespace, so it creates
 * every sandbox's user namespace itself, with the sandbox's ids taken from that range
 * (sandbox-ids.h). Without a range the sandbox has one id: the user's own. */
#pragma once

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "oci/oci.h"

/* The most ids a sandbox maps (as when msp-mcp runs as root). */
#define MCP_ROOTLESS_IDS_MAX 65536u

typedef struct mcp_rootless {
        bool on;                        /* euid != 0: everything below applies */
        uid_t uid;
        gid_t gid;
        unsigned long subuid, subuid_n; /* the user's first range of at least the sandbox's uid
                                         * + 1 ids in /etc/subuid (n 0: none) */
        unsigned long subgid, subgid_n;
        char newuidmap[64], newgidmap[64];      /* "" when not installed */
        bool multi;                     /* ranges and both helpers: ids 1.. are subordinate */
} mcp_rootless;

/* What this process can use; on is false for root. */
void mcp_rootless_probe(mcp_rootless *ret);

/* How many ids the sandboxes map once msp-mcp entered its namespace: the ranges' when
 * both are there with their helpers (multi), else one (the user's). */
unsigned mcp_rootless_id_count(const mcp_rootless *rl);

/* Enter a user namespace of our own (see above) and set the sandbox's id mapping
 * (sandbox-ids.h) for it. Once, single-threaded, before any mount or child. */
int mcp_rootless_enter(const mcp_rootless *rl, msp_err *err);

/* A state dir msp-mcp run by a user may use: created 0700 when missing, then verified to be
 * a directory (not a symlink) owned by the user and writable by no one else. */
int mcp_rootless_state_check(const char *path, msp_err *err);

/* In msp-mcp's private mount namespace: the sandbox's root (a subordinate id, "other" to
 * the user) must search every directory above the bind sources in the state dir, yet the
 * user's private directories ($XDG_RUNTIME_DIR is 0700) must stay as they are. So the
 * state dir becomes 0711, and when its parent cannot be searched by others, that parent is
 * covered, in this namespace only, by a 0711 tmpfs holding nothing but the state dir bound
 * back in place: every path keeps its name. Higher directories must be searchable
 * (mcp_rootless_reachable). */
int mcp_rootless_reach(const char *state, msp_err *err);
/* What mcp_rootless_reach needs, checked without changing anything: every directory above
 * the state dir's parent exists and can be searched by others (one that does not exist
 * yet would be made 0700). 0, or -EACCES with err naming the directory. --check and the
 * choice of the default state dir use it, so that start-up does what they said. */
int mcp_rootless_reachable(const char *state, msp_err *err);
