/* The places a rootless caller's container cgroup can go (docs/ROOTLESS.md), for
 * rt_cgroup_choose_path (cgroup-path.c): runc's placement below the caller's own cgroup2
 * cgroup where it was delegated the right to make cgroups and move processes into them;
 * below the caller's systemd user manager; or a transient scope that manager makes
 * (--systemd-cgroup), whose unit rt_cgroup_stop_scope stops again. */
#include "lib/cgroup/cgroup.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/cgroup/cgroup-internal.h"
#include "oci/oci.h"
#include "lib/cgroup/sdunit.h"

/* The caller's cgroup2 path: the "0::" line of /proc/self/cgroup. */
static int
own_cgroup(char *buf, size_t bufsz)
{
        _cleanup_fclose_ FILE *f = fopen("/proc/self/cgroup", "re");
        char line[PATH_MAX + 16];

        if (!f)
                return -errno;
        while (fgets(line, sizeof line, f)) {
                if (strncmp(line, "0::", 3) != 0)
                        continue;
                line[strcspn(line, "\n")] = '\0';
                if ((size_t) snprintf(buf, bufsz, "%s", line + 3) >= bufsz)
                        return -ENAMETOOLONG;
                return 0;
        }
        return -ENOENT;
}

/* Writable by this process as the kernel decides it (a user namespace's root gets no
 * override on files whose owner it does not map). */
static bool
writable_at(int dfd, const char *file)
{
        return faccessat(dfd, file, W_OK, AT_EACCESS) == 0;
}

int
cg_rootless_path(const char *id, char *buf, size_t bufsz, char *why, size_t whysz)
{
        rt_cgroup_mode mode;
        char base[PATH_MAX];
        int r;

        buf[0] = '\0';
        r = rt_cgroup_mode_detect(&mode, NULL);
        if (r < 0)
                return r;
        if (mode != RT_CGROUP_UNIFIED) {
                snprintf(why, whysz, "the host mounts cgroup v1 hierarchies (%s), whose cgroups "
                         "only root makes; a delegated cgroup v2 subtree needs a unified host",
                         mode == RT_CGROUP_HYBRID ? "hybrid" : "legacy");
                return 0;
        }
        r = own_cgroup(base, sizeof base);
        if (r < 0)
                return r;
        /* A .scope holds the caller's own processes: a child cgroup with controllers
         * cannot go under it (no internal processes), so runc uses its parent. */
        size_t len = strlen(base);
        if (len > 6 && strcmp(base + len - 6, ".scope") == 0) {
                char *slash = strrchr(base, '/');
                if (slash == base)
                        slash[1] = '\0';
                else
                        *slash = '\0';
        }
        _cleanup_close_ int dfd = cg_open_dir(CG_ROOT, base, NULL);
        if (dfd < 0 || !writable_at(dfd, ".") || !writable_at(dfd, "cgroup.procs") ||
            !writable_at(dfd, "cgroup.subtree_control")) {
                snprintf(why, whysz, "cgroup '%s%s' is not delegated to uid %u (its directory, "
                         "cgroup.procs and cgroup.subtree_control must be writable)", CG_ROOT,
                         base, (unsigned) geteuid());
                return 0;
        }
        if ((size_t) snprintf(buf, bufsz, "%s/%s", strcmp(base, "/") == 0 ? "" : base, id) >= bufsz) {
                buf[0] = '\0';
                return -ENAMETOOLONG;
        }
        return 1;
}

int
cg_systemd_user_root(char *buf, size_t bufsz)
{
        char own[PATH_MAX];
        char *p, *end = NULL;

        buf[0] = '\0';
        if (own_cgroup(own, sizeof own) < 0)
                return 0;
        /* The last "/user@<uid>.service" component: the user's manager's root. */
        for (p = strstr(own, "/user@"); p; p = strstr(p + 1, "/user@")) {
                char *c = p + 6;
                size_t digits = strspn(c, "0123456789");
                if (digits && strncmp(c + digits, ".service", 8) == 0 &&
                    (c[digits + 8] == '/' || c[digits + 8] == '\0'))
                        end = c + digits + 8;
        }
        if (!end || (size_t) (end - own) >= bufsz)
                return 0;
        memcpy(buf, own, (size_t) (end - own));
        buf[end - own] = '\0';
        return 1;
}

int
cg_user_scope_path(const char *path, const char *id, char *buf, size_t bufsz, msp_err *err)
{
        char why[256], unit[512], slice[256] = "user.slice", scope[PATH_MAX], self[PATH_MAX];
        rt_sdunit_conn conn;
        bool made = false;
        int r;

        if ((r = rt_sdunit_user_conn(&conn, why, sizeof why)) < 0)
                return msp_err_set(err, -r, "--systemd-cgroup: rootless, the container's cgroup "
                                   "is the user's systemd manager's, and none is reachable: %s "
                                   "(no user manager runs: use --cgroup-manager cgroupfs)", why);
        if (path && *path) {
                const char *base;
                if ((r = rt_cgroup_path_for(path, id, scope, sizeof scope, err)) < 0)
                        return r;
                base = strrchr(scope, '/');
                if ((size_t) snprintf(unit, sizeof unit, "%s", base ? base + 1 : scope) >= sizeof unit)
                        return msp_err_set(err, ENAMETOOLONG, "linux.cgroupsPath: unit name too long");
                if (*path != ':')
                        snprintf(slice, sizeof slice, "%.*s", (int) strcspn(path, ":"), path);
        } else if ((size_t) snprintf(unit, sizeof unit, "msp-%s.scope", id) >= sizeof unit)
                return msp_err_set(err, ENAMETOOLONG, "container id '%s' is too long for a unit name", id);
        r = rt_sdunit_start_scope(&conn, unit, slice, getpid(), err);
        if (r == -ENOENT || r == -ECONNREFUSED) {
                char inner[sizeof err->msg - 200];
                snprintf(inner, sizeof inner, "%.800s", err->msg);
                return msp_err_set(err, -r, "--systemd-cgroup: rootless, the container's cgroup "
                                   "is the user's systemd manager's, and none is reachable: %s "
                                   "(no user manager runs: use --cgroup-manager cgroupfs)", inner);
        }
        if (r < 0)
                return msp_err_prefix(err, "--systemd-cgroup");
        r = own_cgroup(scope, sizeof scope);
        if (r < 0)
                return msp_err_sys(err, -r, "--systemd-cgroup: read /proc/self/cgroup");
        size_t sl = strlen(scope), ul = strlen(unit);
        if (sl <= ul || scope[sl - ul - 1] != '/' || strcmp(scope + sl - ul, unit) != 0)
                return msp_err_set(err, EPROTO, "--systemd-cgroup: unit %s started, but this "
                                   "process is in '%s', not in its cgroup", unit, scope);
        if ((size_t) snprintf(self, sizeof self, "%s/%s", scope, RT_CGROUP_SCOPE_SELF) >= sizeof self ||
            (size_t) snprintf(buf, bufsz, "%s/%s", scope, RT_CGROUP_SCOPE_LEAF) >= bufsz)
                return msp_err_set(err, ENAMETOOLONG, "--systemd-cgroup: cgroup path too long");
        if ((r = rt_cgroup_create_in(self, RT_CGROUP_V2, &made, err)) < 0 ||
            (r = rt_cgroup_enter(self, getpid(), err)) < 0)
                return msp_err_prefix(err, "--systemd-cgroup: unit %s", unit);
        return 0;
}

int
rt_cgroup_stop_scope(const char *cgroup_path, msp_err *err)
{
        char unit[512], why[256];
        const char *leaf = strrchr(cgroup_path, '/'), *start;
        rt_sdunit_conn conn;
        size_t n;
        int r;

        if (!leaf || strcmp(leaf + 1, RT_CGROUP_SCOPE_LEAF) != 0 || leaf == cgroup_path)
                return 0;
        for (start = leaf - 1; start > cgroup_path && *start != '/'; start--)
                ;
        n = (size_t) (leaf - start - 1);
        if (*start != '/' || n <= 6 || n >= sizeof unit || strncmp(leaf - 6, ".scope", 6) != 0)
                return 0;
        memcpy(unit, start + 1, n);
        unit[n] = '\0';
        if ((r = rt_sdunit_user_conn(&conn, why, sizeof why)) < 0)
                return msp_err_set(err, -r, "stop unit %s: %s", unit, why);
        return rt_sdunit_stop(&conn, unit, err);
}
