/* The cgroup mount of a v1/hybrid host (a config mount of type "cgroup"), as runc makes
 * it: a tmpfs at the destination and, per v1 hierarchy the container is in, only the
 * container's own cgroup at the hierarchy's root, plus "cpu" -> "cpu,cpuacct" style
 * links for combined controllers:
 * - with a cgroup namespace, a new cgroup mount of the hierarchy (its root is the
 *   namespace's, the container's cgroup);
 * - without one, a bind of the container's cgroup directory of the host's mount, so
 *   that neither the host's limits nor any other cgroup (other containers' ones) shows.
 * The hybrid host's cgroup2 hierarchy is not mounted (runc does not either): without a
 * cgroup namespace it would show the host's whole cgroup2 tree. Read-only only when the
 * config says "ro" (then the tmpfs too). The init has joined its cgroups before the
 * mounts, so /proc/self/cgroup names them. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "lib/fileio.h"
#include "oci/oci.h"
#include "lib/rootfs-int.h"

#define CG_HOST "/sys/fs/cgroup"

/* What every hierarchy needs from the host, looked up once: an fd of /sys/fs/cgroup (each
 * lookup below it stays off the path through sysfs, whose lock a new network namespace
 * holds while it registers lo) and mountinfo (without a cgroup namespace). */
typedef struct cg_host {
        int dirfd;
        char *mountinfo;                /* NULL with a cgroup namespace */
} cg_host;

static void
cg_host_done(cg_host *h)
{
        if (h->dirfd >= 0)
                close(h->dirfd);
        free(h->mountinfo);
}

/* The root of the host's mount at /sys/fs/cgroup/dir (the 4th field of mountinfo): "/"
 * unless the hierarchy is itself a bind of a sub-cgroup (msp running in a container). */
static void
mount_root_of(const cg_host *h, const char *dir, char *root, size_t size)
{
        char mountpoint[PATH_MAX];

        snprintf(root, size, "/");
        snprintf(mountpoint, sizeof mountpoint, CG_HOST "/%s", dir);
        for (const char *line = h->mountinfo; line && *line;) {
                size_t len = strcspn(line, "\n");
                char r[PATH_MAX], mp[PATH_MAX];
                if (len < sizeof r &&
                    sscanf(line, "%*s %*s %*s %4095s %4095s", r, mp) == 2 && strcmp(mp, mountpoint) == 0)
                        snprintf(root, size, "%s", r);
                line += len + (line[len] == '\n');
        }
}

/* The container's cgroup directory in one hierarchy, relative to the host's mount there
 * ("" for the mount's root). */
static const char *
own_cgroup_dir(const cg_host *h, const char *dir, const char *cgpath)
{
        char root[PATH_MAX];
        size_t rl;

        mount_root_of(h, dir, root, sizeof root);
        rl = strcmp(root, "/") == 0 ? 0 : strlen(root);
        if (rl && (strncmp(cgpath, root, rl) != 0 || (cgpath[rl] && cgpath[rl] != '/')))
                return "";      /* outside what the host's mount shows: its root */
        cgpath += rl;
        while (*cgpath == '/')
                cgpath++;
        return cgpath;
}

/* One hierarchy below the tmpfs: ctrls is the /proc/self/cgroup field ("cpu,cpuacct",
 * "name=systemd"), cgpath the container's cgroup there. */
static int
hierarchy(const rt_rootfs_params *p, const cg_host *h, const char *label, int tmpfd,
          const char *ctrls, const char *cgpath, uint64_t attrs, msp_err *err)
{
        const char *dir = strncmp(ctrls, "name=", 5) ? ctrls : ctrls + 5;
        char what[PATH_MAX + 128];
        struct statfs sfs;
        _cleanup_close_ int mfd = -1;

        snprintf(what, sizeof what, "%s: hierarchy '%s'", label, dir);
        if (!*dir || strchr(dir, '/') || strcmp(dir, "..") == 0 || strcmp(dir, ".") == 0)
                return msp_err_set(err, EINVAL, "%s: bad name", what);
        _cleanup_close_ int hier = openat(h->dirfd, dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (hier < 0 || fstatfs(hier, &sfs) < 0 || sfs.f_type != CGROUP_SUPER_MAGIC)
                return 0;       /* not mounted on the host: not shown (as runc) */
        if (mkdirat(tmpfd, dir, 0755) < 0 && errno != EEXIST)
                return msp_err_sys(err, errno, "%s: mkdir", what);
        _cleanup_close_ int sub = openat(tmpfd, dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sub < 0)
                return msp_err_sys(err, errno, "%s: open", what);

        if (p->has_cgroupns) {
                mfd = rt_mount_new_fs(what, "cgroup", "cgroup", ctrls, NULL, attrs, err);
                if (mfd < 0)
                        return mfd;
        } else {
                const char *src = own_cgroup_dir(h, dir, cgpath);
                /* In a user namespace the host mount's atime flags are locked. */
                uint64_t set = p->in_userns ? attrs & ~(uint64_t) MOUNT_ATTR__ATIME : attrs;
                uint64_t clr = p->in_userns ? 0 : MOUNT_ATTR__ATIME;
                mfd = open_tree(hier, src, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
                if (mfd < 0 || rt_mount_setattr(mfd, false, set, clr, 0) < 0)
                        return msp_err_sys(err, errno, "%s: bind '" CG_HOST "/%s/%s'", what, dir, src);
        }
        if (rt_mount_attach(mfd, sub) < 0)
                return msp_err_sys(err, errno, "%s: move_mount", what);

        /* "cpu" and "cpuacct" -> "cpu,cpuacct", as on the host. */
        for (const char *q = dir; strchr(dir, ',') && !strchr(dir, '=') && *q;) {
                char one[64];
                size_t len = strcspn(q, ",");
                snprintf(one, sizeof one, "%.*s", (int) len, q);
                if (symlinkat(dir, tmpfd, one) < 0 && errno != EEXIST)
                        return msp_err_sys(err, errno, "%s: symlink '%s'", what, one);
                q += len + (q[len] == ',');
        }
        return 0;
}

int
rt_rootfs_mount_cgroup_v1(const rt_rootfs_params *p, const char *label, int targetfd,
                          uint64_t attrs, msp_err *err)
{
        char line[4096];
        _cleanup_(cg_host_done) cg_host host = { .dirfd = -1 };

        host.dirfd = open(CG_HOST, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (host.dirfd < 0)
                return msp_err_sys(err, errno, "%s: open " CG_HOST, label);
        if (!p->has_cgroupns) {
                size_t len;
                int r = rt_read_file_at(AT_FDCWD, "/proc/self/mountinfo", false, 16u << 20,
                                        &host.mountinfo, &len, err);
                if (r < 0)
                        return r;
        }
        _cleanup_close_ int mfd = rt_mount_new_fs(label, "tmpfs", "tmpfs", "mode=755", NULL,
                                                  attrs & ~(uint64_t) MOUNT_ATTR_RDONLY, err);
        if (mfd < 0)
                return mfd;
        if (rt_mount_attach(mfd, targetfd) < 0)
                return msp_err_sys(err, errno, "%s: move_mount", label);

        _cleanup_fclose_ FILE *f = fopen("/proc/self/cgroup", "re");
        if (!f)
                return msp_err_sys(err, errno, "%s: read /proc/self/cgroup", label);
        while (fgets(line, sizeof line, f)) {
                char *ctrls = strchr(line, ':'), *path = ctrls ? strchr(ctrls + 1, ':') : NULL;
                if (!path)
                        continue;
                *path++ = '\0';
                path[strcspn(path, "\n")] = '\0';
                ctrls++;
                if (!*ctrls)
                        continue;       /* the cgroup2 hierarchy of a hybrid host */
                int r = hierarchy(p, &host, label, mfd, ctrls, path, attrs, err);
                if (r < 0)
                        return r;
        }
        if ((attrs & MOUNT_ATTR_RDONLY) && rt_mount_setattr(mfd, false, MOUNT_ATTR_RDONLY, 0, 0) < 0)
                return msp_err_sys(err, errno, "%s: make read-only", label);
        return TAKE_FD(mfd);
}
