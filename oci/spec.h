/* The typed OCI runtime-spec config model (1.0.x to 1.3, plus process.landlock from
 * runtime-spec PR 1241 and msp's documented extensions).
 *
 * Everything a Linux runtime acts on is parsed here once; nothing else in msp sees JSON.
 * Strings and arrays are owned by the spec's arena and freed with oci_spec_free().
 * Optional scalars carry a has_* flag; string lists are NULL-terminated and counted.
 * Fields msp does not (yet) honour are still parsed so the runtime can refuse them
 * by name instead of ignoring them. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "oci/err.h"

/* Input limits: a config past these is refused with a clear error. */
#define OCI_CONFIG_MAX_BYTES (4u * 1024 * 1024)
#define OCI_MAX_ARRAY 65536u          /* elements in any one array or object */
#define OCI_MAX_STRING (256u * 1024)  /* bytes in any one string */
#define OCI_MAX_DEPTH 64u             /* nesting of objects and arrays */

/* Versions (added by the oci/ implementation): configs from OCI_VERSION_MIN to any 1.3.x
 * are accepted; `msp spec` and the state JSON write OCI_SPEC_VERSION. */
#define OCI_VERSION_MIN "1.0.0"
#define OCI_VERSION_MAX "1.3.0"
#define OCI_SPEC_VERSION "1.2.0"

typedef struct oci_strv {
        char **v;       /* NULL-terminated */
        size_t n;
} oci_strv;

typedef struct oci_kv {
        char *key;
        char *value;
} oci_kv;

typedef struct oci_map {
        oci_kv *v;      /* in document order */
        size_t n;
} oci_map;

typedef struct oci_id_mapping {
        uint32_t container_id;
        uint32_t host_id;
        uint32_t size;
} oci_id_mapping;

/* ---- process ---- */

typedef struct oci_user {
        uint32_t uid;
        uint32_t gid;
        bool has_umask;
        uint32_t umask;
        uint32_t *additional_gids;
        size_t n_additional_gids;
        char *username;                 /* Windows only; parsed, not used */
} oci_user;

/* Capability sets as bitmasks indexed by CAP_* number (all fit in 64 bits). */
typedef struct oci_capabilities {
        uint64_t bounding;
        uint64_t effective;
        uint64_t inheritable;
        uint64_t permitted;
        uint64_t ambient;
} oci_capabilities;

typedef struct oci_rlimit {
        int resource;                   /* RLIMIT_* */
        uint64_t hard;
        uint64_t soft;
} oci_rlimit;

typedef struct oci_io_priority {
        int klass;                      /* IOPRIO_CLASS_RT=1, BE=2, IDLE=3 */
        int32_t priority;
} oci_io_priority;

typedef struct oci_scheduler {
        int policy;                     /* SCHED_* */
        int32_t nice;
        int32_t priority;
        uint32_t flags;                 /* SCHED_FLAG_* */
        uint64_t runtime;
        uint64_t deadline;
        uint64_t period;
} oci_scheduler;

/* Landlock access rights use the kernel's bit values (LANDLOCK_ACCESS_FS_*). */
enum {
        OCI_LL_FS_EXECUTE = 1ull << 0,
        OCI_LL_FS_WRITE_FILE = 1ull << 1,
        OCI_LL_FS_READ_FILE = 1ull << 2,
        OCI_LL_FS_READ_DIR = 1ull << 3,
        OCI_LL_FS_REMOVE_DIR = 1ull << 4,
        OCI_LL_FS_REMOVE_FILE = 1ull << 5,
        OCI_LL_FS_MAKE_CHAR = 1ull << 6,
        OCI_LL_FS_MAKE_DIR = 1ull << 7,
        OCI_LL_FS_MAKE_REG = 1ull << 8,
        OCI_LL_FS_MAKE_SOCK = 1ull << 9,
        OCI_LL_FS_MAKE_FIFO = 1ull << 10,
        OCI_LL_FS_MAKE_BLOCK = 1ull << 11,
        OCI_LL_FS_MAKE_SYM = 1ull << 12,
        OCI_LL_FS_REFER = 1ull << 13,           /* ABI 2 */
        OCI_LL_FS_TRUNCATE = 1ull << 14,        /* ABI 3 */
        OCI_LL_FS_IOCTL_DEV = 1ull << 15,       /* ABI 5 */
        OCI_LL_NET_BIND_TCP = 1ull << 0,        /* ABI 4 */
        OCI_LL_NET_CONNECT_TCP = 1ull << 1,     /* ABI 4 */
        OCI_LL_SCOPE_ABSTRACT_UNIX_SOCKET = 1ull << 0,  /* ABI 6 */
        OCI_LL_SCOPE_SIGNAL = 1ull << 1,                /* ABI 6 */
};

typedef struct oci_landlock_path_rule {
        uint64_t allowed_access;        /* OCI_LL_FS_* */
        oci_strv paths;
} oci_landlock_path_rule;

typedef struct oci_landlock_port_rule {
        uint64_t allowed_access;        /* OCI_LL_NET_* */
        uint64_t *ports;
        size_t n_ports;
} oci_landlock_port_rule;

typedef struct oci_landlock {
        uint64_t handled_access_fs;
        uint64_t handled_access_net;
        uint64_t scoped;                /* msp extension: OCI_LL_SCOPE_* */
        oci_landlock_path_rule *path_beneath;
        size_t n_path_beneath;
        oci_landlock_port_rule *network_port;
        size_t n_network_port;
        bool enable_best_effort;        /* default true */
        bool log_same_exec_off;         /* msp extension, ABI 7 restrict_self flags */
        bool log_new_exec_on;
        bool log_subdomains_off;
} oci_landlock;

typedef struct oci_process {
        bool terminal;
        bool has_console_size;
        uint32_t console_height;
        uint32_t console_width;
        oci_user user;
        oci_strv args;
        char *command_line;             /* Windows only */
        oci_strv env;
        char *cwd;
        bool has_capabilities;
        oci_capabilities capabilities;
        oci_rlimit *rlimits;
        size_t n_rlimits;
        bool no_new_privileges;
        char *apparmor_profile;
        char *selinux_label;
        bool has_oom_score_adj;
        int32_t oom_score_adj;
        bool has_io_priority;
        oci_io_priority io_priority;
        bool has_scheduler;
        oci_scheduler scheduler;
        char *exec_cpu_affinity_initial;
        char *exec_cpu_affinity_final;
        oci_landlock *landlock;         /* NULL when absent */
} oci_process;

/* ---- mounts and hooks ---- */

typedef struct oci_mount {
        char *destination;
        char *type;                     /* may be NULL (bind mounts) */
        char *source;                   /* may be NULL */
        oci_strv options;               /* raw; the runtime's mount module parses them */
        oci_id_mapping *uid_mappings;
        size_t n_uid_mappings;
        oci_id_mapping *gid_mappings;
        size_t n_gid_mappings;
} oci_mount;

typedef struct oci_hook {
        char *path;
        oci_strv args;
        oci_strv env;
        bool has_timeout;
        int32_t timeout;                /* seconds, > 0 */
} oci_hook;

typedef struct oci_hook_list {
        oci_hook *v;
        size_t n;
} oci_hook_list;

typedef struct oci_hooks {
        oci_hook_list prestart;
        oci_hook_list create_runtime;
        oci_hook_list create_container;
        oci_hook_list start_container;
        oci_hook_list poststart;
        oci_hook_list poststop;
} oci_hooks;

/* ---- linux ---- */

typedef enum oci_ns_type {
        OCI_NS_PID,
        OCI_NS_NETWORK,
        OCI_NS_MOUNT,
        OCI_NS_IPC,
        OCI_NS_UTS,
        OCI_NS_USER,
        OCI_NS_CGROUP,
        OCI_NS_TIME,
        OCI_NS_TYPE_MAX,
} oci_ns_type;

typedef struct oci_namespace {
        oci_ns_type type;
        char *path;                     /* join this one; NULL = create */
} oci_namespace;

typedef struct oci_device {
        char type;                      /* 'c', 'b', 'u', 'p' */
        char *path;
        int64_t major;
        int64_t minor;
        bool has_file_mode;
        uint32_t file_mode;
        bool has_uid;
        uint32_t uid;
        bool has_gid;
        uint32_t gid;
} oci_device;

typedef struct oci_device_cgroup {
        bool allow;
        char type;                      /* 'a' (default), 'c', 'b' */
        bool has_major;
        int64_t major;                  /* absent = wildcard */
        bool has_minor;
        int64_t minor;
        char access[4];                 /* subset of "rwm"; "" means all */
} oci_device_cgroup;

typedef struct oci_memory {
        bool has_limit;
        int64_t limit;
        bool has_reservation;
        int64_t reservation;
        bool has_swap;
        int64_t swap;
        bool has_kernel;
        int64_t kernel;
        bool has_kernel_tcp;
        int64_t kernel_tcp;
        bool has_swappiness;
        uint64_t swappiness;
        bool has_disable_oom_killer;
        bool disable_oom_killer;
        bool has_use_hierarchy;
        bool use_hierarchy;
        bool has_check_before_update;
        bool check_before_update;
} oci_memory;

typedef struct oci_cpu {
        bool has_shares;
        uint64_t shares;
        bool has_quota;
        int64_t quota;
        bool has_burst;
        uint64_t burst;
        bool has_period;
        uint64_t period;
        bool has_realtime_runtime;
        int64_t realtime_runtime;
        bool has_realtime_period;
        uint64_t realtime_period;
        char *cpus;
        char *mems;
        bool has_idle;
        int64_t idle;
} oci_cpu;

typedef struct oci_weight_device {
        int64_t major;
        int64_t minor;
        bool has_weight;
        uint16_t weight;
        bool has_leaf_weight;
        uint16_t leaf_weight;
} oci_weight_device;

typedef struct oci_throttle_device {
        int64_t major;
        int64_t minor;
        uint64_t rate;
} oci_throttle_device;

typedef struct oci_throttle_list {
        oci_throttle_device *v;
        size_t n;
} oci_throttle_list;

typedef struct oci_blockio {
        bool has_weight;
        uint16_t weight;
        bool has_leaf_weight;
        uint16_t leaf_weight;
        oci_weight_device *weight_device;
        size_t n_weight_device;
        oci_throttle_list throttle_read_bps;
        oci_throttle_list throttle_write_bps;
        oci_throttle_list throttle_read_iops;
        oci_throttle_list throttle_write_iops;
} oci_blockio;

typedef struct oci_hugepage_limit {
        char *page_size;                /* "2MB", "1GB", ... */
        uint64_t limit;
} oci_hugepage_limit;

typedef struct oci_net_priority {
        char *name;
        uint32_t priority;
} oci_net_priority;

typedef struct oci_rdma_limit {
        char *device;
        bool has_hca_handles;
        uint32_t hca_handles;
        bool has_hca_objects;
        uint32_t hca_objects;
} oci_rdma_limit;

typedef struct oci_resources {
        oci_device_cgroup *devices;
        size_t n_devices;
        bool has_memory;
        oci_memory memory;
        bool has_cpu;
        oci_cpu cpu;
        bool has_pids;
        int64_t pids_limit;             /* <= 0 means unlimited */
        bool has_blockio;
        oci_blockio blockio;
        oci_hugepage_limit *hugepage_limits;
        size_t n_hugepage_limits;
        bool has_network;
        bool has_net_class_id;
        uint32_t net_class_id;
        oci_net_priority *net_priorities;
        size_t n_net_priorities;
        oci_rdma_limit *rdma;
        size_t n_rdma;
        oci_map unified;
} oci_resources;

typedef enum oci_seccomp_action {
        OCI_SECCOMP_KILL,               /* SCMP_ACT_KILL == KILL_THREAD */
        OCI_SECCOMP_KILL_PROCESS,
        OCI_SECCOMP_KILL_THREAD,
        OCI_SECCOMP_TRAP,
        OCI_SECCOMP_ERRNO,
        OCI_SECCOMP_TRACE,
        OCI_SECCOMP_ALLOW,
        OCI_SECCOMP_LOG,
        OCI_SECCOMP_NOTIFY,
} oci_seccomp_action;

typedef enum oci_seccomp_op {
        OCI_SECCOMP_OP_NE,
        OCI_SECCOMP_OP_LT,
        OCI_SECCOMP_OP_LE,
        OCI_SECCOMP_OP_EQ,
        OCI_SECCOMP_OP_GE,
        OCI_SECCOMP_OP_GT,
        OCI_SECCOMP_OP_MASKED_EQ,
} oci_seccomp_op;

typedef struct oci_seccomp_arg {
        uint32_t index;
        uint64_t value;
        uint64_t value_two;
        oci_seccomp_op op;
} oci_seccomp_arg;

typedef struct oci_seccomp_syscall {
        oci_strv names;
        oci_seccomp_action action;
        bool has_errno_ret;
        uint32_t errno_ret;
        oci_seccomp_arg *args;
        size_t n_args;
} oci_seccomp_syscall;

enum {
        OCI_SECCOMP_FLAG_TSYNC = 1u << 0,
        OCI_SECCOMP_FLAG_LOG = 1u << 1,
        OCI_SECCOMP_FLAG_SPEC_ALLOW = 1u << 2,
        OCI_SECCOMP_FLAG_WAIT_KILLABLE_RECV = 1u << 3,
};

typedef struct oci_seccomp {
        oci_seccomp_action default_action;
        bool has_default_errno_ret;
        uint32_t default_errno_ret;
        oci_strv architectures;         /* "SCMP_ARCH_X86_64", ... */
        uint32_t flags;                 /* OCI_SECCOMP_FLAG_* */
        char *listener_path;
        char *listener_metadata;
        oci_seccomp_syscall *syscalls;
        size_t n_syscalls;
} oci_seccomp;

typedef struct oci_intel_rdt {
        char *clos_id;
        char *l3_cache_schema;
        char *mem_bw_schema;
        oci_strv schemata;
        bool enable_cmt;
        bool enable_mbm;
        bool enable_monitoring;         /* runtime-spec 1.3 */
} oci_intel_rdt;

typedef struct oci_personality {
        char *domain;                   /* "LINUX" or "LINUX32" */
        oci_strv flags;
} oci_personality;

typedef struct oci_time_offset {
        bool present;
        int64_t secs;
        uint32_t nanosecs;
} oci_time_offset;

typedef struct oci_net_device {
        char *host_name;                /* the map key */
        char *name;                     /* name inside the container; NULL = same */
} oci_net_device;

typedef struct oci_memory_policy {
        char *mode;                     /* "MPOL_BIND", ... */
        char *nodes;
        oci_strv flags;
} oci_memory_policy;

typedef struct oci_linux {
        oci_namespace *namespaces;
        size_t n_namespaces;
        oci_id_mapping *uid_mappings;
        size_t n_uid_mappings;
        oci_id_mapping *gid_mappings;
        size_t n_gid_mappings;
        oci_device *devices;
        size_t n_devices;
        char *cgroups_path;
        oci_resources *resources;       /* NULL when absent */
        oci_map sysctl;
        oci_seccomp *seccomp;           /* NULL when absent */
        bool has_rootfs_propagation;
        unsigned long rootfs_propagation;  /* MS_SHARED, MS_SLAVE, MS_PRIVATE, MS_UNBINDABLE (| MS_REC) */
        oci_strv masked_paths;
        oci_strv readonly_paths;
        char *mount_label;
        oci_intel_rdt *intel_rdt;       /* NULL when absent */
        oci_personality *personality;   /* NULL when absent */
        oci_time_offset time_boottime;
        oci_time_offset time_monotonic;
        oci_net_device *net_devices;
        size_t n_net_devices;
        oci_memory_policy *memory_policy;  /* NULL when absent */
} oci_linux;

/* ---- the whole config ---- */

typedef struct oci_arena oci_arena;

typedef struct oci_spec {
        char *oci_version;
        oci_process *process;           /* NULL when absent (allowed for create) */
        char *root_path;                /* as written; may be relative to the bundle */
        bool root_readonly;
        char *hostname;
        char *domainname;
        oci_mount *mounts;
        size_t n_mounts;
        bool has_hooks;
        oci_hooks hooks;
        oci_map annotations;
        oci_linux *linux_;              /* NULL when absent */
        oci_arena *arena;               /* owns every pointer above */
} oci_spec;

/* Parse a config.json. `name` is used in messages ("config.json: process.args: ...").
 * On failure returns -errno (EINVAL for bad content, E2BIG for limits, ENOENT...) and
 * sets err to a message naming the JSON path and the bad value. */
int oci_spec_parse_file(const char *path, oci_spec **ret_spec, msp_err *err);
int oci_spec_parse_data(const char *name, const char *data, size_t len, oci_spec **ret_spec,
                        msp_err *err);
/* Parse a process.json as given to `exec --process`. The result lives in `arena` of
 * a fresh spec whose only member is process. */
int oci_process_parse_data(const char *name, const char *data, size_t len, oci_spec **ret_spec,
                           msp_err *err);
/* Parse a LinuxResources object as given to `update --resources`. */
int oci_resources_parse_data(const char *name, const char *data, size_t len, oci_spec **ret_spec,
                             msp_err *err);
oci_spec *oci_spec_free(oci_spec *spec);
static inline void
oci_spec_freep(oci_spec **s)
{
        if (*s)
                oci_spec_free(*s);
}
#define _cleanup_spec_ _cleanup_(oci_spec_freep)

/* Name tables shared by the parser, `spec`, `features` and the runtime. */
const char *oci_ns_type_name(oci_ns_type t);           /* "pid", "network", ... */
int oci_cap_from_name(const char *name);               /* "CAP_CHOWN" -> 0; -EINVAL */
const char *oci_cap_name(int cap);                     /* NULL past the table */
int oci_cap_count(void);                               /* entries in the table */
int oci_rlimit_from_name(const char *name);            /* "RLIMIT_NOFILE" -> 7; -EINVAL */
const char *oci_rlimit_name(int resource);
const char *oci_seccomp_action_name(oci_seccomp_action a);
const char *oci_seccomp_op_name(oci_seccomp_op op);
/* Landlock right names as in PR 1241 ("execute", "write_file", ...); NULL past the end. */
const char *oci_landlock_fs_right_name(unsigned bit);
const char *oci_landlock_net_right_name(unsigned bit);
const char *oci_landlock_scope_name(unsigned bit);
/* Added by the oci/ implementation. */
const char *oci_seccomp_flag_name(unsigned bit);        /* bit of OCI_SECCOMP_FLAG_*; NULL past */
/* Index == the kernel's MPOL_* mode number ("MPOL_DEFAULT" = 0 ...); NULL past the end. */
const char *oci_memory_policy_mode_name(unsigned i);
const char *oci_memory_policy_flag_name(unsigned i);    /* "MPOL_F_NUMA_BALANCING", ... */
