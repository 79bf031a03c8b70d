/* Name tables: OCI spellings <-> kernel numbers. Compiled in, so the result does not
 * depend on the build host's headers (capability numbers are kernel ABI). */
#include "oci/json.h"
#include "oci/spec.h"

#include <errno.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>

/* Index of name in a NULL-padded table, or -EINVAL. */
static int
table_find(const char *const *table, size_t n, const char *name)
{
        for (size_t i = 0; i < n; i++)
                if (table[i] && strcmp(table[i], name) == 0)
                        return (int) i;
        return -EINVAL;
}

static const char *
table_get(const char *const *table, size_t n, size_t i)
{
        return i < n ? table[i] : NULL;
}

#define FIND(table, name) table_find(table, ARRAY_SIZE(table), name)
#define GET(table, i) table_get(table, ARRAY_SIZE(table), i)

/* ---- namespaces ---- */

static const char *const ns_names[] = {
        [OCI_NS_PID] = "pid",
        [OCI_NS_NETWORK] = "network",
        [OCI_NS_MOUNT] = "mount",
        [OCI_NS_IPC] = "ipc",
        [OCI_NS_UTS] = "uts",
        [OCI_NS_USER] = "user",
        [OCI_NS_CGROUP] = "cgroup",
        [OCI_NS_TIME] = "time",
};

const char *
oci_ns_type_name(oci_ns_type t)
{
        return GET(ns_names, (size_t) t);
}

int
oci_ns_type_from_name(const char *name)
{
        return FIND(ns_names, name);
}

/* ---- capabilities (linux/capability.h numbers) ---- */

static const char *const cap_names[] = {
        "CAP_CHOWN",            "CAP_DAC_OVERRIDE",     "CAP_DAC_READ_SEARCH",
        "CAP_FOWNER",           "CAP_FSETID",           "CAP_KILL",
        "CAP_SETGID",           "CAP_SETUID",           "CAP_SETPCAP",
        "CAP_LINUX_IMMUTABLE",  "CAP_NET_BIND_SERVICE", "CAP_NET_BROADCAST",
        "CAP_NET_ADMIN",        "CAP_NET_RAW",          "CAP_IPC_LOCK",
        "CAP_IPC_OWNER",        "CAP_SYS_MODULE",       "CAP_SYS_RAWIO",
        "CAP_SYS_CHROOT",       "CAP_SYS_PTRACE",       "CAP_SYS_PACCT",
        "CAP_SYS_ADMIN",        "CAP_SYS_BOOT",         "CAP_SYS_NICE",
        "CAP_SYS_RESOURCE",     "CAP_SYS_TIME",         "CAP_SYS_TTY_CONFIG",
        "CAP_MKNOD",            "CAP_LEASE",            "CAP_AUDIT_WRITE",
        "CAP_AUDIT_CONTROL",    "CAP_SETFCAP",          "CAP_MAC_OVERRIDE",
        "CAP_MAC_ADMIN",        "CAP_SYSLOG",           "CAP_WAKE_ALARM",
        "CAP_BLOCK_SUSPEND",    "CAP_AUDIT_READ",       "CAP_PERFMON",
        "CAP_BPF",              "CAP_CHECKPOINT_RESTORE",
};

_Static_assert(ARRAY_SIZE(cap_names) == 41, "CAP_CHECKPOINT_RESTORE is 40");

int
oci_cap_from_name(const char *name)
{
        return FIND(cap_names, name);
}

const char *
oci_cap_name(int cap)
{
        return cap < 0 ? NULL : GET(cap_names, (size_t) cap);
}

int
oci_cap_count(void)
{
        return (int) ARRAY_SIZE(cap_names);
}

/* ---- rlimits ---- */

static const struct {
        const char *name;
        int resource;
} rlimits[] = {
        { "RLIMIT_CPU", RLIMIT_CPU },
        { "RLIMIT_FSIZE", RLIMIT_FSIZE },
        { "RLIMIT_DATA", RLIMIT_DATA },
        { "RLIMIT_STACK", RLIMIT_STACK },
        { "RLIMIT_CORE", RLIMIT_CORE },
        { "RLIMIT_RSS", RLIMIT_RSS },
        { "RLIMIT_NPROC", RLIMIT_NPROC },
        { "RLIMIT_NOFILE", RLIMIT_NOFILE },
        { "RLIMIT_MEMLOCK", RLIMIT_MEMLOCK },
        { "RLIMIT_AS", RLIMIT_AS },
        { "RLIMIT_LOCKS", RLIMIT_LOCKS },
        { "RLIMIT_SIGPENDING", RLIMIT_SIGPENDING },
        { "RLIMIT_MSGQUEUE", RLIMIT_MSGQUEUE },
        { "RLIMIT_NICE", RLIMIT_NICE },
        { "RLIMIT_RTPRIO", RLIMIT_RTPRIO },
        { "RLIMIT_RTTIME", RLIMIT_RTTIME },
};

int
oci_rlimit_from_name(const char *name)
{
        for (size_t i = 0; i < ARRAY_SIZE(rlimits); i++)
                if (strcmp(rlimits[i].name, name) == 0)
                        return rlimits[i].resource;
        return -EINVAL;
}

const char *
oci_rlimit_name(int resource)
{
        for (size_t i = 0; i < ARRAY_SIZE(rlimits); i++)
                if (rlimits[i].resource == resource)
                        return rlimits[i].name;
        return NULL;
}

/* ---- seccomp ---- */

static const char *const seccomp_actions[] = {
        [OCI_SECCOMP_KILL] = "SCMP_ACT_KILL",
        [OCI_SECCOMP_KILL_PROCESS] = "SCMP_ACT_KILL_PROCESS",
        [OCI_SECCOMP_KILL_THREAD] = "SCMP_ACT_KILL_THREAD",
        [OCI_SECCOMP_TRAP] = "SCMP_ACT_TRAP",
        [OCI_SECCOMP_ERRNO] = "SCMP_ACT_ERRNO",
        [OCI_SECCOMP_TRACE] = "SCMP_ACT_TRACE",
        [OCI_SECCOMP_ALLOW] = "SCMP_ACT_ALLOW",
        [OCI_SECCOMP_LOG] = "SCMP_ACT_LOG",
        [OCI_SECCOMP_NOTIFY] = "SCMP_ACT_NOTIFY",
};

static const char *const seccomp_ops[] = {
        [OCI_SECCOMP_OP_NE] = "SCMP_CMP_NE",
        [OCI_SECCOMP_OP_LT] = "SCMP_CMP_LT",
        [OCI_SECCOMP_OP_LE] = "SCMP_CMP_LE",
        [OCI_SECCOMP_OP_EQ] = "SCMP_CMP_EQ",
        [OCI_SECCOMP_OP_GE] = "SCMP_CMP_GE",
        [OCI_SECCOMP_OP_GT] = "SCMP_CMP_GT",
        [OCI_SECCOMP_OP_MASKED_EQ] = "SCMP_CMP_MASKED_EQ",
};

/* Bit i is 1u << i, matching OCI_SECCOMP_FLAG_*. */
static const char *const seccomp_flags[] = {
        "SECCOMP_FILTER_FLAG_TSYNC",
        "SECCOMP_FILTER_FLAG_LOG",
        "SECCOMP_FILTER_FLAG_SPEC_ALLOW",
        "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV",
};

const char *
oci_seccomp_action_name(oci_seccomp_action a)
{
        return GET(seccomp_actions, (size_t) a);
}

int
oci_seccomp_action_from_name(const char *name)
{
        return FIND(seccomp_actions, name);
}

const char *
oci_seccomp_op_name(oci_seccomp_op op)
{
        return GET(seccomp_ops, (size_t) op);
}

int
oci_seccomp_op_from_name(const char *name)
{
        return FIND(seccomp_ops, name);
}

const char *
oci_seccomp_flag_name(unsigned bit)
{
        return GET(seccomp_flags, bit);
}

int
oci_seccomp_flag_from_name(const char *name)
{
        return FIND(seccomp_flags, name);
}

/* ---- scheduler and I/O priority (uapi values; SCHED_ISO is reserved, 4) ---- */

static const char *const sched_policies[] = {
        "SCHED_OTHER", "SCHED_FIFO", "SCHED_RR", "SCHED_BATCH",
        "SCHED_ISO",   "SCHED_IDLE", "SCHED_DEADLINE",
};

/* Bit i is SCHED_FLAG_* == 1u << i (linux/sched.h). */
static const char *const sched_flags[] = {
        "SCHED_FLAG_RESET_ON_FORK",  "SCHED_FLAG_RECLAIM",        "SCHED_FLAG_DL_OVERRUN",
        "SCHED_FLAG_KEEP_POLICY",    "SCHED_FLAG_KEEP_PARAMS",    "SCHED_FLAG_UTIL_CLAMP_MIN",
        "SCHED_FLAG_UTIL_CLAMP_MAX",
};

static const char *const ioprio_classes[] = {
        [1] = "IOPRIO_CLASS_RT",
        [2] = "IOPRIO_CLASS_BE",
        [3] = "IOPRIO_CLASS_IDLE",
};

int
oci_sched_policy_from_name(const char *name)
{
        return FIND(sched_policies, name);
}

int
oci_sched_flag_from_name(const char *name)
{
        return FIND(sched_flags, name);
}

int
oci_ioprio_class_from_name(const char *name)
{
        return FIND(ioprio_classes, name);
}

/* ---- mount propagation ---- */

int
oci_propagation_from_name(const char *name, unsigned long *ret_flags)
{
        static const struct {
                const char *name;
                unsigned long flags;
        } table[] = {
                { "shared", MS_SHARED },
                { "slave", MS_SLAVE },
                { "private", MS_PRIVATE },
                { "unbindable", MS_UNBINDABLE },
                { "rshared", MS_SHARED | MS_REC },
                { "rslave", MS_SLAVE | MS_REC },
                { "rprivate", MS_PRIVATE | MS_REC },
                { "runbindable", MS_UNBINDABLE | MS_REC },
        };
        for (size_t i = 0; i < ARRAY_SIZE(table); i++)
                if (strcmp(table[i].name, name) == 0) {
                        *ret_flags = table[i].flags;
                        return 0;
                }
        return -EINVAL;
}

/* ---- landlock (names from runtime-spec PR 1241; bit i is 1 << i) ---- */

static const char *const ll_fs_rights[] = {
        "execute",   "write_file", "read_file",  "read_dir",  "remove_dir", "remove_file",
        "make_char", "make_dir",   "make_reg",   "make_sock", "make_fifo",  "make_block",
        "make_sym",  "refer",      "truncate",   "ioctl_dev",
};

_Static_assert(ARRAY_SIZE(ll_fs_rights) == 16, "LANDLOCK_ACCESS_FS_IOCTL_DEV is 1 << 15");

static const char *const ll_net_rights[] = { "bind", "connect" };
static const char *const ll_scopes[] = { "abstract_unix_socket", "signal" };

const char *
oci_landlock_fs_right_name(unsigned bit)
{
        return GET(ll_fs_rights, bit);
}

const char *
oci_landlock_net_right_name(unsigned bit)
{
        return GET(ll_net_rights, bit);
}

const char *
oci_landlock_scope_name(unsigned bit)
{
        return GET(ll_scopes, bit);
}

int
oci_landlock_fs_right_from_name(const char *name)
{
        return FIND(ll_fs_rights, name);
}

int
oci_landlock_net_right_from_name(const char *name)
{
        return FIND(ll_net_rights, name);
}

int
oci_landlock_scope_from_name(const char *name)
{
        return FIND(ll_scopes, name);
}

/* ---- memory policy (set_mempolicy(2)) ---- */

static const char *const mpol_modes[] = {
        "MPOL_DEFAULT",   "MPOL_PREFERRED",       "MPOL_BIND", "MPOL_INTERLEAVE",
        "MPOL_LOCAL",     "MPOL_PREFERRED_MANY",  "MPOL_WEIGHTED_INTERLEAVE",
};

static const char *const mpol_flags[] = {
        "MPOL_F_NUMA_BALANCING",
        "MPOL_F_RELATIVE_NODES",
        "MPOL_F_STATIC_NODES",
};

const char *
oci_memory_policy_mode_name(unsigned i)
{
        return GET(mpol_modes, i);
}

const char *
oci_memory_policy_flag_name(unsigned i)
{
        return GET(mpol_flags, i);
}

bool
oci_memory_policy_mode_valid(const char *name)
{
        return FIND(mpol_modes, name) >= 0;
}

bool
oci_memory_policy_flag_valid(const char *name)
{
        return FIND(mpol_flags, name) >= 0;
}
