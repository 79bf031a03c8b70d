/* The config.json `msp spec` prints: a runnable default in the shape of `runc spec`
 * (and `runc spec --rootless`), with msp's hostname and one more masked path. */
#include "oci/json.h"
#include "oci/state.h"

#include <errno.h>
#include <unistd.h>

static const char *const default_caps[] = {
        "CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE", NULL,
};

static const char *const masked_paths[] = {
        "/proc/acpi",          "/proc/asound",   "/proc/kcore",       "/proc/keys",
        "/proc/latency_stats", "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug",
        "/sys/firmware",       "/proc/scsi",     "/sys/devices/virtual/powercap", NULL,
};

static const char *const readonly_paths[] = {
        "/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger", NULL,
};

static void
write_process(oci_jw *w)
{
        static const char *const args[] = { "sh", NULL };
        static const char *const env[] = {
                "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                "TERM=xterm", NULL,
        };
        oci_jw_key(w, "process");
        oci_jw_begin_object(w);
        oci_jw_kv_bool(w, "terminal", true);
        oci_jw_key(w, "user");
        oci_jw_begin_object(w);
        oci_jw_kv_uint64(w, "uid", 0);
        oci_jw_kv_uint64(w, "gid", 0);
        oci_jw_end_object(w);
        oci_jw_kv_strlist(w, "args", args);
        oci_jw_kv_strlist(w, "env", env);
        oci_jw_kv_string(w, "cwd", "/");
        oci_jw_key(w, "capabilities");
        oci_jw_begin_object(w);
        oci_jw_kv_strlist(w, "bounding", default_caps);
        oci_jw_kv_strlist(w, "effective", default_caps);
        oci_jw_kv_strlist(w, "permitted", default_caps);
        oci_jw_end_object(w);
        oci_jw_key(w, "rlimits");
        oci_jw_begin_array(w);
        oci_jw_begin_object(w);
        oci_jw_kv_string(w, "type", "RLIMIT_NOFILE");
        oci_jw_kv_uint64(w, "hard", 1024);
        oci_jw_kv_uint64(w, "soft", 1024);
        oci_jw_end_object(w);
        oci_jw_end_array(w);
        oci_jw_kv_bool(w, "noNewPrivileges", true);
        oci_jw_end_object(w);
}

static void
write_mount(oci_jw *w, const char *dest, const char *type, const char *source,
            const char *const *options)
{
        oci_jw_begin_object(w);
        oci_jw_kv_string(w, "destination", dest);
        oci_jw_kv_string(w, "type", type);
        oci_jw_kv_string(w, "source", source);
        oci_jw_kv_strlist(w, "options", options);
        oci_jw_end_object(w);
}

static void
write_mounts(oci_jw *w, bool rootless)
{
        static const char *const dev[] = { "nosuid", "strictatime", "mode=755", "size=65536k",
                                           NULL };
        static const char *const pts[] = { "nosuid", "noexec", "newinstance", "ptmxmode=0666",
                                           "mode=0620", "gid=5", NULL };
        static const char *const pts_rootless[] = { "nosuid", "noexec", "newinstance",
                                                    "ptmxmode=0666", "mode=0620", NULL };
        static const char *const shm[] = { "nosuid", "noexec", "nodev", "mode=1777",
                                           "size=65536k", NULL };
        static const char *const nne[] = { "nosuid", "noexec", "nodev", NULL };
        static const char *const sys[] = { "nosuid", "noexec", "nodev", "ro", NULL };
        static const char *const sys_rootless[] = { "rbind", "nosuid", "noexec", "nodev", "ro",
                                                    NULL };
        static const char *const cg[] = { "nosuid", "noexec", "nodev", "relatime", "ro", NULL };

        oci_jw_key(w, "mounts");
        oci_jw_begin_array(w);
        write_mount(w, "/proc", "proc", "proc", NULL);
        write_mount(w, "/dev", "tmpfs", "tmpfs", dev);
        write_mount(w, "/dev/pts", "devpts", "devpts", rootless ? pts_rootless : pts);
        write_mount(w, "/dev/shm", "tmpfs", "shm", shm);
        write_mount(w, "/dev/mqueue", "mqueue", "mqueue", nne);
        if (rootless)
                write_mount(w, "/sys", "none", "/sys", sys_rootless);
        else
                write_mount(w, "/sys", "sysfs", "sysfs", sys);
        write_mount(w, "/sys/fs/cgroup", "cgroup", "cgroup", cg);
        oci_jw_end_array(w);
}

static void
write_mapping(oci_jw *w, const char *key, unsigned host_id)
{
        oci_jw_key(w, key);
        oci_jw_begin_array(w);
        oci_jw_begin_object(w);
        oci_jw_kv_uint64(w, "containerID", 0);
        oci_jw_kv_uint64(w, "hostID", host_id);
        oci_jw_kv_uint64(w, "size", 1);
        oci_jw_end_object(w);
        oci_jw_end_array(w);
}

static void
write_namespaces(oci_jw *w, bool rootless)
{
        static const char *const rootful[] = { "pid", "network", "ipc", "uts", "mount", NULL };
        static const char *const unpriv[] = { "pid", "ipc", "uts", "mount", "user", NULL };
        oci_jw_key(w, "namespaces");
        oci_jw_begin_array(w);
        for (const char *const *ns = rootless ? unpriv : rootful; *ns; ns++) {
                oci_jw_begin_object(w);
                oci_jw_kv_string(w, "type", *ns);
                oci_jw_end_object(w);
        }
        oci_jw_end_array(w);
}

static void
write_linux(oci_jw *w, bool rootless)
{
        oci_jw_key(w, "linux");
        oci_jw_begin_object(w);
        if (rootless) {
                /* As `runc spec --rootless`: map root to the calling user. */
                write_mapping(w, "uidMappings", (unsigned) geteuid());
                write_mapping(w, "gidMappings", (unsigned) getegid());
        } else {
                /* Deny every device; the runtime allows the default set (null, zero,
                 * full, random, urandom, tty, ptmx...) on top. */
                oci_jw_key(w, "resources");
                oci_jw_begin_object(w);
                oci_jw_key(w, "devices");
                oci_jw_begin_array(w);
                oci_jw_begin_object(w);
                oci_jw_kv_bool(w, "allow", false);
                oci_jw_kv_string(w, "access", "rwm");
                oci_jw_end_object(w);
                oci_jw_end_array(w);
                oci_jw_end_object(w);
        }
        write_namespaces(w, rootless);
        oci_jw_kv_strlist(w, "maskedPaths", masked_paths);
        oci_jw_kv_strlist(w, "readonlyPaths", readonly_paths);
        oci_jw_end_object(w);
}

int
oci_spec_default_json(bool rootless, char **ret_json, size_t *ret_len, msp_err *err)
{
        _cleanup_jw_ oci_jw *w = oci_jw_new(true);
        if (!w)
                return msp_err_set(err, ENOMEM, "default spec: out of memory");
        oci_jw_begin_object(w);
        oci_jw_kv_string(w, "ociVersion", OCI_SPEC_VERSION);
        write_process(w);
        oci_jw_key(w, "root");
        oci_jw_begin_object(w);
        oci_jw_kv_string(w, "path", "rootfs");
        oci_jw_kv_bool(w, "readonly", true);
        oci_jw_end_object(w);
        oci_jw_kv_string(w, "hostname", "msp");
        write_mounts(w, rootless);
        write_linux(w, rootless);
        oci_jw_end_object(w);
        int k = oci_jw_finish(w, ret_json, ret_len, err);
        return k < 0 ? msp_err_prefix(err, "default spec") : 0;
}
