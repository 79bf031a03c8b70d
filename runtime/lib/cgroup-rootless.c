/* Where a container's cgroup goes (cgroup.h, docs/ROOTLESS.md); for a rootless caller,
 * runc's placement: below the caller's own cgroup2 cgroup, and only where the caller was
 * delegated the right to make cgroups and move processes into them. Elsewhere the
 * container runs without a cgroup, and a limit that would need one is refused. */
#include "cgroup.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "cgroup-internal.h"
#include "log.h"
#include "macros.h"

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

/* runc's rootless placement: "<the caller's cgroup2 cgroup>/<id>" (its parent's when that
 * is a .scope), on a unified host where the caller may make cgroups there and move
 * processes (a delegated subtree). 1: buf holds it; 0: none can be made, why says why
 * (buf ""); -errno when /proc/self/cgroup or the mode cannot be read. */
static int
rootless_path(const char *id, char *buf, size_t bufsz, char *why, size_t whysz)
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

/* The cgroup of the caller's systemd user manager ("/user.slice/user-1000.slice/
 * user@1000.service"), which systemd delegates to the user: 1 and buf filled when the
 * caller runs below one, else 0. */
static int
systemd_user_root(char *buf, size_t bufsz)
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

/* The user's session bus, where its systemd manager listens: the unix path of
 * $DBUS_SESSION_BUS_ADDRESS ("unix:path=P[,guid=...]"), else $XDG_RUNTIME_DIR/bus (where
 * sd_bus_open_user and runc look). 0, or -ENOENT with why filled. */
static int
user_bus_path(char *buf, size_t bufsz, char *why, size_t whysz)
{
        const char *addr = getenv("DBUS_SESSION_BUS_ADDRESS");
        const char *xdg = getenv("XDG_RUNTIME_DIR");

        if (addr && strncmp(addr, "unix:path=", 10) == 0) {
                size_t n = strcspn(addr + 10, ",;");
                if (n && n < bufsz) {
                        memcpy(buf, addr + 10, n);
                        buf[n] = '\0';
                        return 0;
                }
        }
        if (xdg && *xdg == '/' && (size_t) snprintf(buf, bufsz, "%s/bus", xdg) < bufsz)
                return 0;
        snprintf(why, whysz, "neither DBUS_SESSION_BUS_ADDRESS (a unix:path= address) nor "
                 "XDG_RUNTIME_DIR is set");
        return -ENOENT;
}

/* --systemd-cgroup run by a user: the cgroup belongs to the user's systemd manager (runc
 * asks it over D-Bus). msp does not talk D-Bus; it makes the cgroup itself where that
 * manager would, so it requires that one runs: its bus accepts a connection. 0, or
 * -errno with why filled. */
static int
user_manager_reachable(char *why, size_t whysz)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        _cleanup_close_ int fd = -1;
        int r = user_bus_path(sa.sun_path, sizeof sa.sun_path, why, whysz);

        if (r < 0)
                return r;
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        if (connect(fd, (struct sockaddr *) &sa, sizeof sa) == 0)
                return 0;
        r = -errno;
        snprintf(why, whysz, "connect '%s': %s", sa.sun_path, strerror(-r));
        return r;
}

/* The first limit whose controller a systemd manager does not keep enabled for cgroups
 * that are no units of it: it writes a slice's cgroup.subtree_control from its own units'
 * needs, and by default they use only memory and pids. NULL when there is none. */
static const char *
unit_less_limit(const oci_resources *res, const char **ret_ctrl)
{
        if (!res)
                return NULL;
        if (res->has_cpu && (res->cpu.has_shares || res->cpu.has_quota || res->cpu.has_burst ||
                             res->cpu.has_period || res->cpu.has_idle)) {
                *ret_ctrl = "cpu";
                return "cpu";
        }
        if (res->has_cpu && ((res->cpu.cpus && *res->cpu.cpus) || (res->cpu.mems && *res->cpu.mems))) {
                *ret_ctrl = "cpuset";
                return res->cpu.cpus && *res->cpu.cpus ? "cpu.cpus" : "cpu.mems";
        }
        if (res->has_blockio) {
                *ret_ctrl = "io";
                return "blockIO";
        }
        return NULL;
}

/* Rootless --systemd-cgroup makes the cgroup below a live user manager without asking it
 * for a unit (msp speaks no D-Bus): say which limit that manager may drop. */
static void
warn_unit_less(const rt_ctx *ctx, const oci_linux *lx, const char *path)
{
        const char *ctrl = NULL;
        const char *field = unit_less_limit(lx ? lx->resources : NULL, &ctrl);
        char root[PATH_MAX];
        size_t n;

        if (!field || !systemd_user_root(root, sizeof root))
                return;
        n = strlen(root);
        if (strncmp(path, root, n) == 0 && path[n] == '/')
                rt_log_warning(ctx, "linux.resources.%s: the cgroup '%s' is no unit of the user's "
                               "systemd manager, which disables the %s controller in the slice "
                               "above it when it next realizes that slice (daemon-reload), and "
                               "the limit with it (docs/ROOTLESS.md)", field, path, ctrl);
}

int
rt_cgroup_choose_path(const rt_ctx *ctx, const oci_linux *lx, const char *id, char *buf,
                      size_t bufsz, msp_err *err)
{
        const char *path = lx ? lx->cgroups_path : NULL;
        char why[PATH_MAX + 128], root[PATH_MAX], sub[PATH_MAX];
        int r;

        buf[0] = '\0';
        if (ctx->rootless && ctx->cgroup_manager == RT_CGROUP_SYSTEMD &&
            (r = user_manager_reachable(why, sizeof why)) < 0)
                return msp_err_set(err, -r, "--systemd-cgroup: rootless, the container's cgroup "
                                   "is the user's systemd manager's, and none is reachable: %s "
                                   "(no user manager runs: use --cgroup-manager cgroupfs)", why);
        if (!ctx->rootless || (path && *path && (*path == '/' || !strchr(path, ':'))))
                r = rt_cgroup_path_for(path, id, buf, bufsz, err);
        else if (path && *path) {
                /* "slice:prefix:name": below the user's manager, as runc's systemd driver
                 * has that manager place it; without one, from the root as for root. */
                r = rt_cgroup_path_for(path, id, sub, sizeof sub, err);
                if (r < 0)
                        return r;
                if (!systemd_user_root(root, sizeof root))
                        root[0] = '\0';
                if ((size_t) snprintf(buf, bufsz, "%s%s", root, sub) >= bufsz)
                        return msp_err_set(err, ENAMETOOLONG, "linux.cgroupsPath is too long");
        } else {
                r = rootless_path(id, buf, bufsz, why, sizeof why);
                if (r < 0)
                        return msp_err_sys(err, -r, "rootless: find the caller's cgroup");
        }
        if (r < 0)
                return r;
        if (buf[0]) {
                if (ctx->rootless && ctx->cgroup_manager == RT_CGROUP_SYSTEMD)
                        warn_unit_less(ctx, lx, buf);
                return 0;
        }
        const char *field = limit_field(lx ? lx->resources : NULL);
        if (field)
                return msp_err_set(err, EPERM, "linux.resources.%s: rootless, the limit needs a "
                                   "cgroup and msp may make none: %s", field, why);
        rt_debug(ctx, "create '%s': rootless, no cgroup: %s", id, why);
        return 0;
}
