/* The `features` document (runtime-spec features.md, features-linux.md). The runtime
 * fills oci_features; this only writes it. A NULL list omits its key, an empty one
 * writes []. msp's Landlock support is reported under linux.landlock (an extension). */
#include "oci/json.h"
#include "oci/state.h"

#include <errno.h>

static void
kv_enabled(oci_jw *w, const char *key, bool enabled)
{
        oci_jw_key(w, key);
        oci_jw_begin_object(w);
        oci_jw_kv_bool(w, "enabled", enabled);
        oci_jw_end_object(w);
}

static void
write_cgroup(oci_jw *w, const oci_features *f)
{
        oci_jw_key(w, "cgroup");
        oci_jw_begin_object(w);
        oci_jw_kv_bool(w, "v1", f->cgroup_v1);
        oci_jw_kv_bool(w, "v2", f->cgroup_v2);
        oci_jw_kv_bool(w, "systemd", f->cgroup_systemd);
        oci_jw_kv_bool(w, "systemdUser", f->cgroup_systemd_user);
        oci_jw_kv_bool(w, "rdma", f->cgroup_rdma);
        oci_jw_end_object(w);
}

static void
write_seccomp(oci_jw *w, const oci_features *f)
{
        oci_jw_key(w, "seccomp");
        oci_jw_begin_object(w);
        oci_jw_kv_bool(w, "enabled", f->seccomp_enabled);
        oci_jw_kv_strlist(w, "actions", f->seccomp_actions);
        oci_jw_kv_strlist(w, "operators", f->seccomp_operators);
        oci_jw_kv_strlist(w, "archs", f->seccomp_archs);
        oci_jw_kv_strlist(w, "knownFlags", f->seccomp_known_flags);
        oci_jw_kv_strlist(w, "supportedFlags", f->seccomp_supported_flags);
        oci_jw_end_object(w);
}

static void
write_landlock(oci_jw *w, const oci_features *f)
{
        oci_jw_key(w, "landlock");
        oci_jw_begin_object(w);
        oci_jw_kv_bool(w, "enabled", f->landlock_enabled);
        oci_jw_kv_int64(w, "abi", f->landlock_abi);
        oci_jw_kv_strlist(w, "handledAccessFS", f->landlock_fs_rights);
        oci_jw_kv_strlist(w, "handledAccessNetwork", f->landlock_net_rights);
        oci_jw_kv_strlist(w, "scoped", f->landlock_scopes);
        oci_jw_kv_strlist(w, "logging", f->landlock_logging);
        oci_jw_end_object(w);
}

static void
write_linux(oci_jw *w, const oci_features *f)
{
        oci_jw_key(w, "linux");
        oci_jw_begin_object(w);
        oci_jw_kv_strlist(w, "namespaces", f->namespaces);
        oci_jw_kv_strlist(w, "capabilities", f->capabilities);
        write_cgroup(w, f);
        write_seccomp(w, f);
        kv_enabled(w, "apparmor", f->apparmor_enabled);
        kv_enabled(w, "selinux", f->selinux_enabled);
        kv_enabled(w, "intelRdt", f->intel_rdt_enabled);
        oci_jw_key(w, "mountExtensions");
        oci_jw_begin_object(w);
        kv_enabled(w, "idmap", f->idmap_mounts_enabled);
        oci_jw_end_object(w);
        kv_enabled(w, "netDevices", f->net_devices_enabled);
        if (f->memory_policy_modes || f->memory_policy_flags) {
                oci_jw_key(w, "memoryPolicy");
                oci_jw_begin_object(w);
                oci_jw_kv_strlist(w, "modes", f->memory_policy_modes);
                oci_jw_kv_strlist(w, "flags", f->memory_policy_flags);
                oci_jw_end_object(w);
        }
        write_landlock(w, f);
        oci_jw_end_object(w);
}

static void
write_annotations(oci_jw *w, const char *const *kv)
{
        if (!kv)
                return;
        oci_jw_key(w, "annotations");
        oci_jw_begin_object(w);
        for (; kv[0] && kv[1]; kv += 2)
                oci_jw_kv_string(w, kv[0], kv[1]);
        oci_jw_end_object(w);
}

int
oci_features_to_json(const oci_features *f, char **ret_json, size_t *ret_len, msp_err *err)
{
        _cleanup_jw_ oci_jw *w = oci_jw_new(true);
        if (!w)
                return msp_err_set(err, ENOMEM, "features JSON: out of memory");
        oci_jw_begin_object(w);
        oci_jw_kv_string(w, "ociVersionMin", f->oci_version_min ? f->oci_version_min
                                                                : OCI_VERSION_MIN);
        oci_jw_kv_string(w, "ociVersionMax", f->oci_version_max ? f->oci_version_max
                                                                : OCI_VERSION_MAX);
        oci_jw_kv_strlist(w, "hooks", f->hooks);
        oci_jw_kv_strlist(w, "mountOptions", f->mount_options);
        write_linux(w, f);
        write_annotations(w, f->annotation_keys);
        oci_jw_kv_strlist(w, "potentiallyUnsafeConfigAnnotations",
                          f->potentially_unsafe_annotations);
        oci_jw_end_object(w);
        int k = oci_jw_finish(w, ret_json, ret_len, err);
        return k < 0 ? msp_err_prefix(err, "features") : 0;
}
