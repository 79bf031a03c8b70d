/* The OCI state (runtime.md#state) as printed by `state`/`list` and persisted in
 * msp's per-container state directory, plus the `features` document (features.md). */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "oci/spec.h"

typedef struct oci_state {
        char *oci_version;
        char *id;
        char *status;                   /* "created" | "running" | "stopped" | "paused" */
        pid_t pid;                      /* 0 when there is no process */
        char *bundle;                   /* absolute */
        char *rootfs;                   /* absolute */
        char *created;                  /* RFC 3339, UTC, nanoseconds */
        char *owner;                    /* user name or "" */
        oci_map annotations;

        /* msp-private: persisted in the state directory, never printed by `state`. */
        uint64_t pid_start_time;        /* field 22 of /proc/<pid>/stat: guards pid reuse */
        char *cgroup_path;              /* the cgroup msp created or joined; NULL if none */
        bool cgroup_owned;              /* msp created it and must remove it */
        bool systemd_cgroup;
        bool detached;                  /* started by `run --detach` or create/start */
        bool no_new_keyring;            /* create --no-new-keyring: exec keeps it too */
        oci_arena *arena;               /* owns the strings when parsed; NULL when borrowed */
        /* oci_state_free(): a parsed state is freed with its arena; a state with
         * arena == NULL must come from malloc/calloc and only the struct is freed. */
} oci_state;

enum {
        OCI_STATE_JSON_PRIVATE = 1u << 0,       /* include the msp-private fields */
        OCI_STATE_JSON_PRETTY = 1u << 1,
};

/* Serialise. *ret_json is malloc'd, NUL-terminated, without a trailing newline. */
int oci_state_to_json(const oci_state *st, unsigned flags, char **ret_json, size_t *ret_len,
                      msp_err *err);
/* Serialise several states as one JSON array (for `list --format json`). */
int oci_state_list_to_json(const oci_state *const *states, size_t n, char **ret_json,
                           size_t *ret_len, msp_err *err);
int oci_state_parse_data(const char *name, const char *data, size_t len, oci_state **ret_state,
                         msp_err *err);
oci_state *oci_state_free(oci_state *st);
static inline void
oci_state_freep(oci_state **s)
{
        if (*s)
                oci_state_free(*s);
}
#define _cleanup_state_ _cleanup_(oci_state_freep)

/* features.md. Lists are borrowed NULL-terminated arrays; a NULL list is written as
 * JSON null (absent), an empty one as []. */
typedef struct oci_features {
        const char *oci_version_min;
        const char *oci_version_max;
        const char *const *hooks;
        const char *const *mount_options;
        const char *const *namespaces;
        const char *const *capabilities;
        bool cgroup_v1, cgroup_v2, cgroup_systemd, cgroup_systemd_user, cgroup_rdma;
        bool seccomp_enabled;
        const char *const *seccomp_actions;
        const char *const *seccomp_operators;
        const char *const *seccomp_archs;
        const char *const *seccomp_known_flags;
        const char *const *seccomp_supported_flags;
        bool apparmor_enabled;
        bool selinux_enabled;
        bool intel_rdt_enabled;
        bool idmap_mounts_enabled;
        bool net_devices_enabled;
        const char *const *memory_policy_modes;
        const char *const *memory_policy_flags;
        /* msp extension, reported under linux.landlock (see docs/LANDLOCK.md). */
        bool landlock_enabled;
        int landlock_abi;               /* ABI probed on this host; 0 = unavailable */
        const char *const *landlock_fs_rights;
        const char *const *landlock_net_rights;
        const char *const *landlock_scopes;
        const char *const *landlock_logging;    /* restrict_self flags (ABI 7) */
        const char *const *annotation_keys;     /* annotations: alternating key, value */
        const char *const *potentially_unsafe_annotations;
} oci_features;

int oci_features_to_json(const oci_features *f, char **ret_json, size_t *ret_len, msp_err *err);

/* The config.json `msp spec` prints: a runnable default like `runc spec`. */
int oci_spec_default_json(bool rootless, char **ret_json, size_t *ret_len, msp_err *err);
