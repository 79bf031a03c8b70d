/* The container's filesystem, built in the child inside its new mount namespace.
 *
 * Rules that keep a hostile rootfs from making us touch the host (CVE-2021-30465,
 * CVE-2024-45310, CVE-2019-19921 and friends):
 *  - every destination is resolved beneath the rootfs fd with openat2(RESOLVE_IN_ROOT),
 *    missing components are created with *at() calls relative to verified parent fds;
 *  - every mount is made onto the resolved fd (move_mount with MOVE_MOUNT_T_EMPTY_PATH),
 *    never onto a path string that could be re-resolved after a symlink swap;
 *  - mounts are prepared detached (fsmount / open_tree clone), get their flags there
 *    and only then become visible, so there is no window with the wrong flags;
 *  - procfs and sysfs destinations may not contain any symlink at all.
 * Requires Linux >= 5.12 (openat2, the new mount API and mount_setattr). */
#include "lib/rootfs.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "lib/devices.h"
#include "lib/log.h"
#include "oci/oci.h"
#include "lib/mount-api.h"
#include "lib/mount-opts.h"
#include "lib/mountsrc.h"
#include "lib/pathres.h"
#include "lib/rootfs-int.h"

/* ---- one config mount ---- */

typedef struct mnt {
        const rt_rootfs_params *p;
        int rootfd;
        const oci_mount *m;
        size_t idx;                     /* in spec->mounts */
        rt_mount_opts o;
        char label[PATH_MAX + 64];      /* "mount[3] 'tmpfs' on '/data'" */
        bool dest_existed;              /* tmpcopyup: the destination is in the image */
} mnt;

static void
mnt_donep(mnt *c)
{
        rt_mount_opts_done(&c->o);
}

/* Flags for a new superblock's mount: the per-mount ones and the recursive ones (a fresh
 * mount has no children, so "rro" and "ro" mean the same). */
static uint64_t
new_mount_attrs(const rt_mount_opts *o)
{
        uint64_t set, clr;
        rt_mount_opts_attr(o, &set, &clr);
        if (o->rec_attr_clr & MOUNT_ATTR__ATIME)
                set &= ~(uint64_t) MOUNT_ATTR__ATIME;
        set |= o->rec_attr_set;
        set &= ~(o->rec_attr_clr & ~(uint64_t) MOUNT_ATTR__ATIME);
        return set;
}

static int
apply_propagation(const mnt *c, int mfd, msp_err *err)
{
        if (!c->o.propagation)
                return 0;
        if (rt_mount_setattr(mfd, c->o.propagation & MS_REC, 0, 0, c->o.propagation & ~MS_REC) < 0)
                return msp_err_sys(err, errno, "%s: set propagation", c->label);
        return 0;
}

/* A directory destination that may not contain a symlink anywhere (proc, sysfs). */
static int
strict_dir(const mnt *c, msp_err *err)
{
        int fd = rt_devices_open_dir(c->rootfd, c->m->destination, err);
        if (fd == -ELOOP)
                return msp_err_set(err, ELOOP, "%s: destination is a symlink, refusing", c->label);
        if (fd == -ENOTDIR)
                return msp_err_set(err, ENOTDIR, "%s: destination is not a directory, refusing",
                                   c->label);
        return fd < 0 ? msp_err_prefix(err, "%s", c->label) : fd;
}

static int
mkpath_dest(const mnt *c, bool dir, msp_err *err)
{
        int fd = rt_mkpath_in_root(c->rootfd, c->m->destination, dir, err);
        return fd < 0 ? msp_err_prefix(err, "%s", c->label) : fd;
}

/* The tmpfs root takes the owner and mode of the directory it covers unless the
 * options say otherwise, so that tmpcopyup yields the same tree. A directory that we
 * created as the mount point is not part of the tree: the tmpfs keeps its default
 * (1777), as it does without tmpcopyup and as runc and crun leave it. */
static int
copy_up(const mnt *c, int fromfd, int mfd, msp_err *err)
{
        struct stat st;
        const char *data = c->o.data ? c->o.data : "";

        _cleanup_close_ int dst = openat(mfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dst < 0 || fstat(fromfd, &st) < 0)
                return msp_err_sys(err, errno, "%s: tmpcopyup", c->label);
        if (rt_copy_tree(fromfd, dst, err) < 0)
                return msp_err_prefix(err, "%s: tmpcopyup", c->label);
        if (!c->dest_existed)
                return 0;
        if (!strstr(data, "uid=") && !strstr(data, "gid=") && fchown(dst, st.st_uid, st.st_gid) < 0)
                return msp_err_sys(err, errno, "%s: tmpcopyup: chown", c->label);
        if (!strstr(data, "mode=") && fchmod(dst, st.st_mode & 07777) < 0)
                return msp_err_sys(err, errno, "%s: tmpcopyup: chmod", c->label);
        return 0;
}

/* A new filesystem of `type` with `data` onto targetfd. Returns the attached mount's fd. */
static int
mount_fs(const mnt *c, int targetfd, const char *type, const char *data, msp_err *err)
{
        uint64_t attrs = new_mount_attrs(&c->o);
        _cleanup_close_ int fromfd = -1;

        if (c->o.tmpcopyup) {
                fromfd = openat(targetfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (fromfd < 0)
                        return msp_err_sys(err, errno, "%s: tmpcopyup: open destination",
                                           c->label);
        }
        /* With tmpcopyup the copy goes in before the mount is made read-only. */
        _cleanup_close_ int mfd = rt_mount_new_fs(
                c->label, type, c->m->source, data, &c->o,
                fromfd >= 0 ? attrs & ~(uint64_t) MOUNT_ATTR_RDONLY : attrs, err);
        if (mfd < 0)
                return mfd;
        if (fromfd >= 0) {
                int r = copy_up(c, fromfd, mfd, err);
                if (r < 0)
                        return r;
                if ((attrs & MOUNT_ATTR_RDONLY) &&
                    rt_mount_setattr(mfd, false, MOUNT_ATTR_RDONLY, 0, 0) < 0)
                        return msp_err_sys(err, errno, "%s: make read-only", c->label);
        }
        if (rt_mount_attach(mfd, targetfd) < 0)
                return msp_err_sys(err, errno, "%s: move_mount", c->label);
        int r = apply_propagation(c, mfd, err);
        return r < 0 ? r : TAKE_FD(mfd);
}

/* The per-mount flags on the top mount and the r* ones on the whole tree. An explicit
 * "rw"/"suid"/... that the kernel refuses because the source flag is locked (a mount
 * from a more privileged user namespace) is dropped: it could never be honoured. */
static int
apply_bind_attrs(const mnt *c, int mfd, msp_err *err)
{
        uint64_t set, clr;

        rt_mount_opts_attr(&c->o, &set, &clr);
        if (set | clr) {
                int r = rt_mount_setattr(mfd, false, set, clr, 0);
                if (r == -EPERM && clr)
                        r = rt_mount_setattr(mfd, false, set, clr & MOUNT_ATTR__ATIME, 0);
                if (r < 0)
                        return msp_err_sys(err, -r, "%s: mount_setattr", c->label);
        }
        if ((c->o.rec_attr_set | c->o.rec_attr_clr) &&
            rt_mount_setattr(mfd, true, c->o.rec_attr_set, c->o.rec_attr_clr, 0) < 0)
                return msp_err_sys(err, errno, "%s: mount_setattr (recursive)", c->label);
        return 0;
}

static int
mount_bind(const mnt *c, msp_err *err)
{
        char src[PATH_MAX];
        struct stat sst, tst;
        const char *s = c->m->source;

        if (!s || !*s)
                return msp_err_set(err, EINVAL, "%s: bind mount without a source", c->label);
        if (rt_mount_source_path(c->m, c->p->bundle, src, sizeof src) < 0)
                return msp_err_set(err, ENAMETOOLONG, "%s: source '%s': too long", c->label, s);

        /* The source is host configuration (trusted); only the destination is resolved
         * inside the rootfs. In a user namespace the runtime opened it for us. */
        int srcfd = c->p->src_fds ? c->p->src_fds[c->idx] : -1;
        _cleanup_close_ int mfd = open_tree(srcfd >= 0 ? srcfd : AT_FDCWD, srcfd >= 0 ? "" : src,
                                            OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC |
                                                    (srcfd >= 0 ? AT_EMPTY_PATH : 0) |
                                                    (c->o.rbind ? AT_RECURSIVE : 0));
        if (mfd < 0 || fstat(mfd, &sst) < 0)
                return msp_err_sys(err, errno, "%s: source '%s'", c->label, src);
        _cleanup_close_ int target = mkpath_dest(c, S_ISDIR(sst.st_mode), err);
        if (target < 0)
                return target;
        if (fstat(target, &tst) < 0)
                return msp_err_sys(err, errno, "%s: stat destination", c->label);
        if (S_ISDIR(sst.st_mode) != S_ISDIR(tst.st_mode))
                return msp_err_set(err, S_ISDIR(tst.st_mode) ? EISDIR : ENOTDIR,
                                   "%s: cannot bind a %s onto a %s", c->label,
                                   S_ISDIR(sst.st_mode) ? "directory" : "file",
                                   S_ISDIR(tst.st_mode) ? "directory" : "file");
        int r = apply_bind_attrs(c, mfd, err);
        if (r < 0)
                return r;
        if (rt_mount_attach(mfd, target) < 0)
                return msp_err_sys(err, errno, "%s: move_mount", c->label);
        return apply_propagation(c, mfd, err);
}

static int
mount_proc(const mnt *c, msp_err *err)
{
        struct statfs sfs;

        _cleanup_close_ int target = strict_dir(c, err);
        if (target < 0)
                return target;
        _cleanup_close_ int mfd = mount_fs(c, target, "proc", c->o.data, err);
        if (mfd < 0)
                return mfd;
        if (fstatfs(mfd, &sfs) < 0 || sfs.f_type != PROC_SUPER_MAGIC)
                return msp_err_set(err, EXDEV, "%s: mounted filesystem is not procfs", c->label);
        return 0;
}

/* A recursive bind of a host path with attrs: what a user namespace gets when the kernel
 * refuses it a new sysfs, cgroupfs or mqueue (no own network / cgroup / ipc namespace). */
static int
bind_host(const mnt *c, int targetfd, const char *host, uint64_t attrs, msp_err *err)
{
        _cleanup_close_ int mfd = open_tree(AT_FDCWD, host,
                                            OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
        if (mfd < 0)
                return msp_err_sys(err, errno, "%s: bind host '%s'", c->label, host);
        if (attrs && rt_mount_setattr(mfd, true, attrs, 0, 0) < 0)
                return msp_err_sys(err, errno, "%s: set the flags of host '%s'", c->label, host);
        if (rt_mount_attach(mfd, targetfd) < 0)
                return msp_err_sys(err, errno, "%s: move_mount", c->label);
        return apply_propagation(c, mfd, err);
}

/* The host's sysfs or cgroupfs for a user namespace: read-only, whatever the config says. */
static int
bind_host_ro(const mnt *c, int targetfd, const char *host, msp_err *err)
{
        return bind_host(c, targetfd, host,
                         MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC,
                         err);
}

static int
mount_sysfs(const mnt *c, msp_err *err)
{
        _cleanup_close_ int target = strict_dir(c, err);
        if (target < 0)
                return target;
        _cleanup_close_ int mfd = mount_fs(c, target, "sysfs", c->o.data, err);
        if (mfd == -EPERM && c->p->in_userns) {
                msp_err_clear(err);
                return bind_host_ro(c, target, "/sys", err);
        }
        return mfd < 0 ? mfd : 0;
}

/* `data` without its "gid=..." item. */
static void
strip_gid(const char *data, char *out, size_t size)
{
        size_t n = 0;
        out[0] = '\0';
        for (const char *p = data; *p;) {
                size_t len = strcspn(p, ",");
                if (strncmp(p, "gid=", 4) != 0 && n + len + 2 <= size) {
                        n += (size_t) snprintf(out + n, size - n, "%s%.*s", n ? "," : "",
                                               (int) len, p);
                }
                p += len + (p[len] == ',');
        }
}

static int
mount_other(const mnt *c, const char *type, msp_err *err)
{
        _cleanup_close_ int target = mkpath_dest(c, true, err);
        if (target < 0)
                return target;
        _cleanup_close_ int mfd = mount_fs(c, target, type, c->o.data, err);
        /* devpts "gid=5" names a group that a user namespace may not map (rootless
         * podman passes it anyway): retry without it, as the pty group is cosmetic. */
        if (mfd == -EINVAL && c->p->in_userns && strcmp(type, "devpts") == 0 && c->o.data &&
            strstr(c->o.data, "gid=")) {
                char data[1024];
                strip_gid(c->o.data, data, sizeof data);
                msp_err_clear(err);
                mfd = mount_fs(c, target, type, data, err);
        }
        /* A new mqueue needs the ipc namespace's owner: without an ipc namespace of its
         * own, a user namespace binds the host's /dev/mqueue, which shows the queues of
         * the ipc namespace it shares anyway (crun's fallback), with the config's flags. */
        if (mfd == -EPERM && c->p->in_userns && strcmp(type, "mqueue") == 0) {
                msp_err_clear(err);
                if (access("/dev/mqueue", F_OK) < 0)
                        return msp_err_set(err, EPERM, "%s: a user namespace without an ipc "
                                           "namespace may not mount mqueue, and the host has no "
                                           "/dev/mqueue to bind (add an ipc namespace)", c->label);
                return bind_host(c, target, "/dev/mqueue", new_mount_attrs(&c->o), err);
        }
        return mfd < 0 ? mfd : 0;
}

/* ---- cgroup ---- */

static bool
is_cgroup2(const char *path)
{
        struct statfs sfs;
        return statfs(path, &sfs) == 0 && sfs.f_type == CGROUP2_SUPER_MAGIC;
}

static int
mount_cgroup(const mnt *c, const char *type, msp_err *err)
{
        /* Read-only when the config says so, as runc. In a user namespace without a
         * cgroup namespace the cgroups shown are the host's (the user's), never writable
         * then (CVE-2023-25809). */
        bool ro = c->p->in_userns && !c->p->has_cgroupns;
        uint64_t attrs = new_mount_attrs(&c->o) | (ro ? MOUNT_ATTR_RDONLY : 0);

        _cleanup_close_ int target = mkpath_dest(c, true, err);
        if (target < 0)
                return target;
        if (!is_cgroup2("/sys/fs/cgroup") && strcmp(type, "cgroup2") != 0) {
                _cleanup_close_ int mfd = rt_rootfs_mount_cgroup_v1(c->p, c->label, target, attrs, err);
                return mfd < 0 ? mfd : apply_propagation(c, mfd, err);
        }

        _cleanup_close_ int mfd = rt_mount_new_fs(c->label, "cgroup2", "cgroup2", c->o.data, &c->o,
                                                  attrs, err);
        if (mfd == -EPERM && c->p->in_userns) {
                msp_err_clear(err);
                return bind_host_ro(c, target, "/sys/fs/cgroup", err);
        }
        if (mfd < 0)
                return mfd;
        if (rt_mount_attach(mfd, target) < 0)
                return msp_err_sys(err, errno, "%s: move_mount", c->label);
        return apply_propagation(c, mfd, err);
}

static bool
is_root_path(const char *path)
{
        return strspn(path, "/.") == strlen(path);
}

static int
mount_dispatch(const mnt *c, msp_err *err)
{
        const char *type = c->m->type && *c->m->type ? c->m->type : NULL;
        bool bind = c->o.bind || (type && strcmp(type, "bind") == 0);

        if (is_root_path(c->m->destination))
                return msp_err_set(err, EINVAL, "%s: cannot mount over the root", c->label);
        if (c->o.idmap)
                return msp_err_set(err, EOPNOTSUPP, "%s: idmapped mounts are not supported",
                                   c->label);
        if (c->o.tmpcopyup && (bind || !type || strcmp(type, "tmpfs") != 0))
                return msp_err_set(err, EINVAL, "%s: 'tmpcopyup' needs a tmpfs mount", c->label);
        if (c->o.flags_set & MS_REMOUNT)
                return msp_err_set(err, EINVAL, "%s: 'remount' is not valid for a new mount",
                                   c->label);
        if (bind)
                return mount_bind(c, err);
        if (!type || strcmp(type, "none") == 0)
                return msp_err_set(err, EINVAL, "%s: no type and no 'bind' option", c->label);
        if (strcmp(type, "proc") == 0)
                return mount_proc(c, err);
        if (strcmp(type, "sysfs") == 0)
                return mount_sysfs(c, err);
        if (strcmp(type, "cgroup") == 0 || strcmp(type, "cgroup2") == 0)
                return mount_cgroup(c, type, err);
        return mount_other(c, type, err);
}

/* "//dev/./" and "/dev" name the same place. */
static bool
is_dev_path(const char *path)
{
        int n = 0;
        bool dev = false;

        for (const char *c = path; *c;) {
                size_t len = strcspn(c, "/");
                if (len > 0 && !(len == 1 && c[0] == '.')) {
                        dev = len == 3 && strncmp(c, "dev", 3) == 0;
                        n++;
                }
                c += len + (c[len] == '/');
        }
        return n == 1 && dev;
}

/* A tmpfs or /dev mount stays writable until the container's filesystem is complete
 * (submounts, device nodes, the console): finalize applies its "ro" last, as runc. */
bool
rt_rootfs_ro_last(const oci_mount *m)
{
        bool ro = false;

        if (!m->destination || !((m->type && strcmp(m->type, "tmpfs") == 0) ||
                                 is_dev_path(m->destination)))
                return false;
        for (size_t j = 0; j < m->options.n; j++)
                ro = strcmp(m->options.v[j], "ro") == 0 ||
                     (ro && strcmp(m->options.v[j], "rw") != 0);
        return ro;
}

static int
mount_one(const rt_rootfs_params *p, int rootfd, size_t idx, msp_err *err)
{
        _cleanup_(mnt_donep) mnt c = { .p = p, .rootfd = rootfd, .m = &p->spec->mounts[idx],
                                       .idx = idx };
        const oci_mount *m = c.m;

        if (!m->destination || !*m->destination)
                return msp_err_set(err, EINVAL, "mount[%zu]: no destination", idx);
        if (m->type && *m->type && strcmp(m->type, "bind") != 0 && strcmp(m->type, "none") != 0)
                snprintf(c.label, sizeof c.label, "mount[%zu] '%s' on '%s'", idx, m->type,
                         m->destination);
        else
                snprintf(c.label, sizeof c.label, "mount[%zu] '%s'", idx, m->destination);
        int r = rt_mount_opts_parse(&m->options, m->destination, &c.o, err);
        if (r < 0)
                return r;
        if (rt_rootfs_ro_last(m))
                c.o.flags_set &= ~(unsigned long) MS_RDONLY;
        if (c.o.tmpcopyup) {
                _cleanup_close_ int fd = rt_openat2(rootfd, m->destination, O_PATH,
                                                    RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS);
                c.dest_existed = fd >= 0;
        }
        r = mount_dispatch(&c, err);
        if (r >= 0)
                rt_debug(p->ctx, "%s: mounted from '%s' (options 0x%lx)", c.label,
                         m->source ? m->source : "", c.o.flags_set);
        return r;
}

/* ---- the setup sequence ---- */

/* pivot_root refuses a new root inside a shared mount. With a shared rootfsPropagation,
 * make the mount that holds the rootfs directory private, so that the self-bind below
 * is private too (it is a clone of that mount). Walks up to the mount root by fd. */
static int
make_rootfs_mount_private(const char *rootfs, msp_err *err)
{
        _cleanup_close_ int fd = open(rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);

        for (int depth = 0; fd >= 0 && depth < PATH_MAX / 2; depth++) {
                struct statx stx;
                if (statx(fd, "", AT_EMPTY_PATH, 0, &stx) < 0)
                        break;
                if (stx.stx_attributes & stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) {
                        if (rt_mount_setattr(fd, false, 0, 0, MS_PRIVATE) < 0)
                                break;
                        return 0;
                }
                int up = openat(fd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
                msp_closep(&fd);
                fd = up;
        }
        return msp_err_sys(err, errno, "rootfs '%s': make its mount private", rootfs);
}

static int
prepare_root(const rt_rootfs_params *p, int *ret_rootfd, msp_err *err)
{
        const oci_linux *lnx = p->spec->linux_;
        unsigned long prop = MS_SLAVE | MS_REC;

        /* An unbindable "/" could not be bound below; finalize applies it instead. */
        if (lnx && lnx->has_rootfs_propagation && !(lnx->rootfs_propagation & MS_UNBINDABLE))
                prop = lnx->rootfs_propagation;
        if (mount(NULL, "/", NULL, prop, NULL) < 0)
                return msp_err_sys(err, errno, "rootfs: set the propagation of '/'");
        if (prop & MS_SHARED) {
                int r = make_rootfs_mount_private(p->rootfs, err);
                if (r < 0)
                        return r;
        }
        /* The rootfs must be a mount point of its own for pivot_root; the bind's fd is
         * the handle every later lookup starts from. */
        _cleanup_close_ int mfd = open_tree(AT_FDCWD, p->rootfs,
                                            OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
        if (mfd < 0)
                return msp_err_sys(err, errno, "rootfs '%s'", p->rootfs);
        if (move_mount(mfd, "", AT_FDCWD, p->rootfs, MOVE_MOUNT_F_EMPTY_PATH) < 0)
                return msp_err_sys(err, errno, "rootfs '%s': bind onto itself", p->rootfs);
        *ret_rootfd = TAKE_FD(mfd);
        return 0;
}

/* What the config does with /dev: -1 binds it from the host (leave it alone), 1 mounts
 * a new filesystem there (populate it), 0 nothing. The last mount wins. */
static int
dev_mount_kind(const oci_spec *s)
{
        int kind = 0;

        for (size_t i = 0; i < s->n_mounts; i++) {
                const oci_mount *m = &s->mounts[i];
                if (!m->destination || !is_dev_path(m->destination))
                        continue;
                kind = rt_mount_is_bind(m) ? -1 : 1;
        }
        return kind;
}

static bool
dev_is_empty(int rootfd)
{
        int fd = rt_openat2(rootfd, "dev", O_RDONLY | O_DIRECTORY,
                            RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
        if (fd < 0)
                return fd == -ENOENT;
        _cleanup_closedir_ DIR *d = fdopendir(fd);
        if (!d) {
                (void) close(fd);
                return false;
        }
        for (struct dirent *de; (de = readdir(d));)
                if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
                        return false;
        return true;
}

int
rt_rootfs_setup_child(const rt_rootfs_params *p, int *ret_rootfd, msp_err *err)
{
        _cleanup_close_ int rootfd = -1;

        int r = prepare_root(p, &rootfd, err);
        if (r < 0)
                return r;
        /* Decided before the mounts, which create /dev/pts, /dev/shm, ... */
        bool dev_empty = dev_is_empty(rootfd);
        for (size_t i = 0; i < p->spec->n_mounts; i++) {
                r = mount_one(p, rootfd, i, err);
                if (r < 0)
                        return r;
        }
        int dev = dev_mount_kind(p->spec);
        if (dev >= 0) {
                r = rt_devices_create(rootfd, p->spec->linux_, dev > 0 || dev_empty, p->in_userns,
                                      err);
                if (r >= 0)
                        r = rt_devices_links(rootfd, err);
                if (r < 0)
                        return r;
        }
        *ret_rootfd = TAKE_FD(rootfd);
        return 0;
}
