/* `msp features` (runtime-spec features.md). The spec asks for compile-time values;
 * capabilities, seccomp flags, Landlock rights and the LSMs (AppArmor/SELinux
 * `enabled`: msp refuses a label for an LSM the host does not run) are the exceptions
 * probed from the running kernel, since a list the kernel cannot honour would mislead
 * callers. */
#include <stdlib.h>

#include "cmd/cmd.h"
#include "lib/rt.h"

static const char *const hooks[] = { "prestart", "createRuntime", "createContainer",
                                     "startContainer", "poststart", "poststop", NULL };
static const char *const mount_options[] = {
        "async", "atime", "bind", "defaults", "dev", "diratime", "dirsync", "exec", "iversion",
        "lazytime", "loud", "mand", "noatime", "nodev", "nodiratime", "noexec", "noiversion",
        "nolazytime", "nomand", "norelatime", "nostrictatime", "nosuid", "nosymfollow", "private",
        "ratime", "rbind", "rdev", "rdiratime", "relatime", "remount", "rexec", "rnoatime",
        "rnodev", "rnodiratime", "rnoexec", "rnorelatime", "rnostrictatime", "rnosuid",
        "rnosymfollow", "ro", "rprivate", "rrelatime", "rro", "rrw", "rshared", "rslave",
        "rstrictatime", "rsuid", "rsymfollow", "runbindable", "rw", "shared", "silent", "slave",
        "strictatime", "suid", "symfollow", "sync", "tmpcopyup", "unbindable", NULL };
static const char *const namespaces[] = { "cgroup", "ipc", "mount", "network", "pid",
                                          "time", "user", "uts", NULL };
static const char *const annotations[] = { "org.opencontainers.msp.landlock", "true", NULL };

/* The Landlock logging flags (ABI 7) this kernel takes, named as in process.landlock
 * .logging, asked of the same fitting `create` uses. */
static void
landlock_logging(int abi, const char **ret)
{
        static const char *const names[] = { "sameExecOff", "newExecOn", "subdomainsOff" };
        size_t k = 0;

        for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
                oci_landlock l = { .enable_best_effort = true, .log_same_exec_off = i == 0,
                                   .log_new_exec_on = i == 1, .log_subdomains_off = i == 2 };
                rt_landlock_effective eff;
                msp_err err = { 0 };
                if (rt_landlock_effective_for_abi(&l, abi, &eff, NULL, 0, &err) == 0 &&
                    eff.restrict_flags)
                        ret[k++] = names[i];
        }
        ret[k] = NULL;
}

int
cmd_features(rt_ctx *ctx, int argc, char **argv)
{
        const char *caps[70] = { 0 };
        const char *seccomp_flags[RT_SECCOMP_FLAGS_MAX + 1] = { 0 };
        const char *ll_fs[RT_LANDLOCK_NAMES_MAX + 1] = { 0 };
        const char *ll_net[RT_LANDLOCK_NAMES_MAX + 1] = { 0 };
        const char *ll_scopes[RT_LANDLOCK_NAMES_MAX + 1] = { 0 };
        const char *ll_logging[4] = { 0 };
        _cleanup_free_ char *json = NULL;
        msp_err err = { 0 };
        int abi = rt_landlock_abi();
        size_t len;

        if (argc > 1)
                return cmd_usage_error(ctx, "features", "unexpected argument '%s'", argv[1]);
        rt_caps_supported_names(caps, ARRAY_SIZE(caps) - 1);
        rt_seccomp_supported_flags(seccomp_flags, ARRAY_SIZE(seccomp_flags));
        rt_landlock_fs_rights(abi, ll_fs, ARRAY_SIZE(ll_fs));
        rt_landlock_net_rights(abi, ll_net, ARRAY_SIZE(ll_net));
        rt_landlock_scopes(abi, ll_scopes, ARRAY_SIZE(ll_scopes));
        landlock_logging(abi, ll_logging);

        oci_features f = {
                .oci_version_min = "1.0.0",
                .oci_version_max = OCI_VERSION_MAX,
                .hooks = hooks,
                .mount_options = mount_options,
                .namespaces = namespaces,
                .capabilities = caps,
                .cgroup_v1 = true,
                .cgroup_v2 = true,
                .cgroup_systemd = false,
                .cgroup_systemd_user = false,
                .cgroup_rdma = false,
                .seccomp_enabled = true,
                .seccomp_actions = rt_seccomp_supported_actions(),
                .seccomp_operators = rt_seccomp_supported_operators(),
                .seccomp_archs = rt_seccomp_supported_archs(),
                .seccomp_known_flags = rt_seccomp_known_flags(),
                .seccomp_supported_flags = seccomp_flags,
                .apparmor_enabled = rt_lsm_active(RT_LSM_APPARMOR) == 1,
                .selinux_enabled = rt_lsm_active(RT_LSM_SELINUX) == 1,
                .intel_rdt_enabled = false,
                .idmap_mounts_enabled = false,
                .net_devices_enabled = false,
                .landlock_enabled = abi > 0,
                .landlock_abi = abi,
                .landlock_fs_rights = ll_fs,
                .landlock_net_rights = ll_net,
                .landlock_scopes = ll_scopes,
                .landlock_logging = ll_logging,
                .annotation_keys = annotations,
        };
        if (oci_features_to_json(&f, &json, &len, &err) < 0)
                return cmd_fail(ctx, &err);
        return cmd_print(ctx, json, len);
}
