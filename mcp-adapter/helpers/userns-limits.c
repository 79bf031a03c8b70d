/* Per-namespace kernel budgets of a sandbox's user namespace (see userns-limits.h). */
#include "helpers/userns-limits.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/base.h"
#include "oci/oci.h"

/* The sandbox needs no namespaces at all (the seccomp profile refuses creating them too).
 * max_mnt_namespaces stays: the runtime itself still clones mounts (open_tree makes an
 * anonymous mount namespace) after the hook, and the profile refuses open_tree, mount and
 * unshare to the sandbox. */
static const struct {
        const char *name;
        const char *value;
} limits[] = {
        { "max_fanotify_groups", "0" },    { "max_fanotify_marks", "0" },
        { "max_user_namespaces", "0" },    { "max_pid_namespaces", "0" },
        { "max_net_namespaces", "0" },     { "max_ipc_namespaces", "0" },
        { "max_uts_namespaces", "0" },     { "max_cgroup_namespaces", "0" },
        { "max_time_namespaces", "0" },
};

int
mcp_hook_state(FILE *in, const char *who, pid_t *ret, char *bundle, size_t bundle_size)
{
        char buf[65536];
        size_t n = fread(buf, 1, sizeof buf, in);
        msp_err err = { 0 };
        _cleanup_json_doc_ oci_json_doc *doc = NULL;
        if (oci_json_parse("state", buf, n, &doc, &err) < 0) {
                fprintf(stderr, "msp-sandbox-hook %s: %s\n", who, err.msg);
                return -EINVAL;
        }
        const oci_json *pid = oci_json_get(oci_json_doc_root(doc), "pid");
        const char *t = pid ? oci_json_number_text(pid) : NULL;
        char *end;
        long v = t ? strtol(t, &end, 10) : 0;
        if (!t || *end || v <= 0) {
                fprintf(stderr, "msp-sandbox-hook %s: the state has no pid\n", who);
                return -EINVAL;
        }
        *ret = (pid_t) v;
        if (!bundle)
                return 0;
        const oci_json *b = oci_json_get(oci_json_doc_root(doc), "bundle");
        const char *s = b ? oci_json_string(b) : NULL;
        if (!s || s[0] != '/' || strlen(s) >= bundle_size) {
                fprintf(stderr, "msp-sandbox-hook %s: the state has no bundle path\n", who);
                return -EINVAL;
        }
        snprintf(bundle, bundle_size, "%s", s);
        return 0;
}

/* A count the hook was given: decimal digits only. */
static bool
count_valid(const char *v)
{
        return v[0] && strspn(v, "0123456789") == strlen(v) && strlen(v) < 12;
}

int
mcp_userns_limits_hook(FILE *in, const char *instances, const char *watches)
{
        if (!count_valid(instances) || !count_valid(watches)) {
                fprintf(stderr, "msp-sandbox-hook userns limits: inotify counts '%.16s' '%.16s' "
                        "are not decimal numbers\n", instances, watches);
                return 1;
        }
        pid_t pid;
        if (mcp_hook_state(in, "userns limits", &pid, NULL, 0) < 0)
                return 1;
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/ns/user", (int) pid);
        _cleanup_close_ int ns = open(path, O_RDONLY | O_CLOEXEC);
        if (ns < 0 || setns(ns, CLONE_NEWUSER) < 0) {
                fprintf(stderr, "msp-sandbox-hook userns limits: join %s: %s\n", path, strerror(errno));
                return 1;
        }
        /* /proc/sys/user is the set of the caller's user namespace: the sandbox's now. */
        const struct { const char *name, *value; } given[] = {
                { "max_inotify_instances", instances }, { "max_inotify_watches", watches },
        };
        for (size_t i = 0; i < ARRAY_SIZE(limits) + ARRAY_SIZE(given); i++) {
                bool g = i < ARRAY_SIZE(given);
                const char *name = g ? given[i].name : limits[i - ARRAY_SIZE(given)].name;
                const char *value = g ? given[i].value : limits[i - ARRAY_SIZE(given)].value;
                snprintf(path, sizeof path, "/proc/sys/user/%s", name);
                int r = mcp_write_text(path, value);
                if (r == -ENOENT)
                        continue;       /* an older kernel without this budget */
                if (r < 0) {
                        fprintf(stderr, "msp-sandbox-hook userns limits: write %s: %s\n", path,
                                strerror(-r));
                        return 1;
                }
        }
        return 0;
}
