/* Where a container's cgroup goes (cgroup.h, docs/CGROUPS.md, docs/ROOTLESS.md): for
 * root, or an explicit linux.cgroupsPath, the mapped path; for a rootless caller, one of
 * the places cgroup-rootless.c finds, or none, and then a limit that would need a cgroup
 * is refused. */
#include "lib/cgroup/cgroup.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "lib/cgroup/cgroup-internal.h"

/* The first linux.resources key that needs a cgroup ("memory", "pids", ...), or NULL.
 * Device rules do not count: a rootless runtime leaves them to the user namespace, which
 * cannot mknod or open host devices it is not given (runc ignores them rootless). */
static const char *
limit_field(const oci_resources *res)
{
        if (!res)
                return NULL;
        if (res->has_memory)
                return "memory";
        if (res->has_cpu)
                return "cpu";
        if (res->has_pids && res->pids_limit != 0)
                return "pids";
        if (res->has_blockio)
                return "blockIO";
        if (res->n_hugepage_limits)
                return "hugepageLimits";
        if (res->has_network)
                return "network";
        if (res->n_rdma)
                return "rdma";
        if (res->unified.n)
                return "unified";
        return NULL;
}

int
rt_cgroup_choose_path(const rt_cgroup_caller *who, const oci_linux *lx, const char *id,
                      char *buf, size_t bufsz, char *why, size_t whysz, msp_err *err)
{
        const char *path = lx ? lx->cgroups_path : NULL;
        char root[PATH_MAX], sub[PATH_MAX];
        int r;

        buf[0] = '\0';
        why[0] = '\0';
        if (who->rootless && who->systemd &&
            (!path || !*path || (*path != '/' && strchr(path, ':'))))
                return cg_user_scope_path(path, id, buf, bufsz, err);
        if (!who->rootless || (path && *path && (*path == '/' || !strchr(path, ':'))))
                r = rt_cgroup_path_for(path, id, buf, bufsz, err);
        else if (path && *path) {
                /* "slice:prefix:name": below the user's manager, as runc's systemd driver
                 * has that manager place it; without one, from the root as for root. */
                r = rt_cgroup_path_for(path, id, sub, sizeof sub, err);
                if (r < 0)
                        return r;
                if (!cg_systemd_user_root(root, sizeof root))
                        root[0] = '\0';
                if ((size_t) snprintf(buf, bufsz, "%s%s", root, sub) >= bufsz)
                        return msp_err_set(err, ENAMETOOLONG, "linux.cgroupsPath is too long");
        } else {
                r = cg_rootless_path(id, buf, bufsz, why, whysz);
                if (r < 0)
                        return msp_err_sys(err, -r, "rootless: find the caller's cgroup");
        }
        if (r < 0)
                return r;
        if (buf[0])
                return 0;
        const char *field = limit_field(lx ? lx->resources : NULL);
        if (field)
                return msp_err_set(err, EPERM, "linux.resources.%s: rootless, the limit needs a "
                                   "cgroup and msp may make none: %s", field, why);
        return 0;
}
