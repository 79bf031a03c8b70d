/* The container's filesystem after the mounts: pivot_root, then maskedPaths,
 * readonlyPaths, root.readonly and the final propagation of "/".
 *
 * After pivot_root everything is resolved from the new "/" with RESOLVE_IN_ROOT, so a
 * symlink in a masked or read-only path can only point somewhere inside the container.
 * Masking never trusts a name: the file mask is a bind of the /dev/null node we opened
 * without following symlinks and checked to be the char device 1:3 (CVE-2025-31133),
 * and directory masks are fresh read-only tmpfs instances. */
#include "lib/rootfs.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "oci/oci.h"
#include "lib/pathres.h"
#include "lib/procfs.h"
#include "lib/rootfs-int.h"

/* mountinfo's octal escapes ("\\040" for a space ...) decoded in place. */
static void
unescape_octal(char *s)
{
        char *w = s;

        for (const char *r = s; *r; w++) {
                if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' &&
                    r[3] >= '0' && r[3] <= '7') {
                        *w = (char) ((r[1] - '0') << 6 | (r[2] - '0') << 3 | (r[3] - '0'));
                        r += 4;
                } else
                        *w = *r++;
        }
        *w = '\0';
}

static bool
path_is_under(const char *path, const char *dir)
{
        size_t n = strlen(dir);
        return strncmp(path, dir, n) == 0 &&
               (path[n] == '\0' || path[n] == '/' || (n == 1 && dir[0] == '/'));
}

typedef struct strvec {
        char **v;
        size_t n;
} strvec;

static void
strvec_donep(strvec *sv)
{
        for (size_t i = 0; i < sv->n; i++)
                free(sv->v[i]);
        free(sv->v);
}

/* The mount points of every full (root "/") procfs and sysfs mount outside `rootfs`,
 * in mountinfo order (parents before children). */
static int
full_pseudofs_mounts(int procfd, const char *rootfs, strvec *out, msp_err *err)
{
        _cleanup_free_ char *line = NULL;
        size_t cap = 0;

        int fd = rt_procfs_openat(procfd, "self/mountinfo", O_RDONLY, err);
        if (fd < 0)
                return fd;
        _cleanup_fclose_ FILE *f = fdopen(fd, "re");
        if (!f) {
                (void) close(fd);
                return msp_err_sys(err, errno, "read mountinfo");
        }
        while (getline(&line, &cap, f) > 0) {
                char root[16], type[16], *mp = NULL, *sep = strstr(line, " - ");
                if (!sep || sscanf(line, "%*u %*u %*s %15s %ms", root, &mp) != 2)
                        continue;
                _cleanup_free_ char *mpoint = mp;
                if (sscanf(sep + 3, "%15s", type) != 1 || strcmp(root, "/") != 0 ||
                    (strcmp(type, "proc") != 0 && strcmp(type, "sysfs") != 0))
                        continue;
                unescape_octal(mpoint);
                if (path_is_under(mpoint, rootfs))
                        continue;
                char **v = realloc(out->v, (out->n + 1) * sizeof *v);
                if (!v)
                        return msp_err_set(err, ENOMEM, "read mountinfo");
                out->v = v;
                out->v[out->n++] = TAKE_PTR(mpoint);
        }
        return ferror(f) ? msp_err_sys(err, EIO, "read mountinfo") : 0;
}

/* An empty tmpfs over targetfd, read-only (and nosuid, nodev, noexec) before it
 * becomes visible: a directory mask, or a cover for what cannot be unmounted. */
static int
cover_with_empty_tmpfs(const char *label, int targetfd, msp_err *err)
{
        _cleanup_close_ int mfd = rt_mount_new_fs(label, "tmpfs", "tmpfs", "mode=755", NULL,
                                                  MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID |
                                                          MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC,
                                                  err);
        if (mfd < 0)
                return mfd;
        if (rt_mount_attach(mfd, targetfd) < 0)
                return msp_err_sys(err, errno, "%s: move_mount", label);
        return 0;
}

/* One host procfs or sysfs mount out of the namespace: made a slave first so that the
 * detach cannot propagate to the host; where the mount is locked (a user namespace)
 * an empty read-only tmpfs covers it instead. */
static int
hide_host_mount(const char *path, msp_err *err)
{
        _cleanup_close_ int fd = open(path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 && (errno == ENOENT || errno == ENOTDIR))
                return 0;       /* under a mount detached before it */
        if (fd < 0)
                return msp_err_sys(err, errno, "no-pivot: open host mount '%s'", path);
        if (rt_mount_setattr(fd, true, 0, 0, MS_SLAVE) < 0)
                return msp_err_sys(err, errno, "no-pivot: make host mount '%s' a slave", path);
        if (umount2(path, MNT_DETACH | UMOUNT_NOFOLLOW) == 0)
                return 0;
        if (errno != EINVAL && errno != EPERM)
                return msp_err_sys(err, errno, "no-pivot: detach host mount '%s'", path);
        char label[PATH_MAX + 32];
        snprintf(label, sizeof label, "no-pivot: cover host mount '%s'", path);
        return cover_with_empty_tmpfs(label, fd, err);
}

/* The chroot of --no-pivot hides the host's mounts from paths, not from the kernel: a
 * new procfs or sysfs (in a nested user namespace) is allowed when the mount namespace
 * holds a full mount of that type that nothing covers, and the host's /proc is one.
 * Without them only the container's own, masked, mounts remain, and a fresh procfs
 * cannot bypass maskedPaths. */
static int
hide_host_pseudofs(int rootfd, msp_err *err)
{
        _cleanup_(strvec_donep) strvec mounts = { 0 };
        char link[32], rootfs[PATH_MAX];

        _cleanup_close_ int procfd = rt_procfs_open(err);
        if (procfd < 0)
                return procfd;
        _cleanup_close_ int fds = rt_procfs_openat(procfd, "self/fd", O_PATH | O_DIRECTORY, err);
        if (fds < 0)
                return fds;
        snprintf(link, sizeof link, "%d", rootfd);
        ssize_t n = readlinkat(fds, link, rootfs, sizeof rootfs - 1);
        if (n < 0)
                return msp_err_sys(err, errno, "no-pivot: the rootfs path");
        rootfs[n] = '\0';
        int r = full_pseudofs_mounts(procfd, rootfs, &mounts, err);
        for (size_t i = 0; r >= 0 && i < mounts.n; i++)
                r = hide_host_mount(mounts.v[i], err);
        return r;
}

int
rt_rootfs_pivot_child(int rootfd, bool no_pivot, msp_err *err)
{
        /* The old root by fd: "." after pivot_root names the new root for mount(2),
         * which would turn every container mount into a slave. */
        _cleanup_close_ int oldroot = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (oldroot < 0)
                return msp_err_sys(err, errno, "pivot_root: open the old root");
        if (fchdir(rootfd) < 0)
                return msp_err_sys(err, errno, "pivot_root: fchdir to the rootfs");
        if (no_pivot) {
                /* --no-pivot (e.g. a rootfs on the initramfs): move the rootfs over "/" and
                 * chroot. The old root stays reachable from an escaped chroot; that is
                 * what the option asks for. */
                int r = hide_host_pseudofs(rootfd, err);
                if (r < 0)
                        return r;
                if (mount(".", "/", NULL, MS_MOVE, NULL) < 0)
                        return msp_err_sys(err, errno, "no-pivot: move the rootfs onto '/'");
                if (chroot(".") < 0)
                        return msp_err_sys(err, errno, "no-pivot: chroot");
        } else {
                /* pivot_root(".", ".") stacks the old root on top of the new one, so no
                 * directory for it is needed inside the rootfs. */
                if (syscall(SYS_pivot_root, ".", ".") < 0)
                        return msp_err_sys(err, errno, "pivot_root");
                /* Make the old root a slave so that detaching it cannot propagate an
                 * unmount to the host, then detach it (umount2 looks through "." to the
                 * mount stacked on it): the host tree is gone for us. */
                if (rt_mount_setattr(oldroot, true, 0, 0, MS_SLAVE) < 0)
                        return msp_err_sys(err, errno, "pivot_root: make the old root a slave");
                if (umount2(".", MNT_DETACH) < 0)
                        return msp_err_sys(err, errno, "pivot_root: detach the old root");
        }
        if (chdir("/") < 0)
                return msp_err_sys(err, errno, "pivot_root: chdir '/'");
        return 0;
}

/* The container's /dev/null, opened without following any symlink and accepted only if
 * it is the char device 1:3: a node swapped for a symlink or another file is refused,
 * and the fd that was checked is the one that gets bound. */
static int
open_verified_null(int rootfd, msp_err *err)
{
        struct stat st;
        _cleanup_close_ int fd = rt_openat2(rootfd, "dev/null", O_PATH | O_NOFOLLOW,
                                            RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS |
                                                    RESOLVE_NO_MAGICLINKS);
        if (fd < 0)
                return msp_err_sys(err, -fd, "maskedPaths: open '/dev/null'");
        if (fstat(fd, &st) < 0)
                return msp_err_sys(err, errno, "maskedPaths: stat '/dev/null'");
        if (!S_ISCHR(st.st_mode) || st.st_rdev != makedev(1, 3))
                return msp_err_set(err, EPERM,
                                   "maskedPaths: '/dev/null' is not the null device, refusing");
        return TAKE_FD(fd);
}

/* A directory mask: an empty tmpfs, read-only before it becomes visible. */
static int
mask_dir(const char *path, int targetfd, msp_err *err)
{
        char label[PATH_MAX + 32];
        snprintf(label, sizeof label, "maskedPaths '%s'", path);
        return cover_with_empty_tmpfs(label, targetfd, err);
}

/* A file mask: a read-only bind of the verified null device. Not nodev, so reading the
 * masked file still works (it reads as empty) instead of failing. */
static int
mask_file(const char *path, int nullfd, int targetfd, msp_err *err)
{
        _cleanup_close_ int mfd = open_tree(nullfd, "",
                                            OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
        if (mfd < 0)
                return msp_err_sys(err, errno, "maskedPaths '%s': open_tree '/dev/null'", path);
        if (rt_mount_setattr(mfd, false, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC,
                             0, 0) < 0)
                return msp_err_sys(err, errno, "maskedPaths '%s': mount_setattr", path);
        if (rt_mount_attach(mfd, targetfd) < 0)
                return msp_err_sys(err, errno, "maskedPaths '%s': move_mount", path);
        return 0;
}

static int
mask_paths(int rootfd, const oci_strv *paths, msp_err *err)
{
        _cleanup_close_ int nullfd = -1;

        for (size_t i = 0; i < paths->n; i++) {
                const char *path = paths->v[i];
                struct stat st;
                _cleanup_close_ int fd = rt_openat2(rootfd, path, O_PATH,
                                                    RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS);
                if (fd == -ENOENT)
                        continue;
                if (fd < 0 || fstat(fd, &st) < 0)
                        return msp_err_sys(err, fd < 0 ? -fd : errno, "maskedPaths '%s'", path);
                if (S_ISDIR(st.st_mode)) {
                        int r = mask_dir(path, fd, err);
                        if (r < 0)
                                return r;
                        continue;
                }
                if (nullfd < 0) {
                        nullfd = open_verified_null(rootfd, err);
                        if (nullfd < 0)
                                return msp_err_prefix(err, "maskedPaths '%s'", path);
                }
                int r = mask_file(path, nullfd, fd, err);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* A recursive bind of the path onto itself, made read-only before it is attached. */
static int
readonly_paths(int rootfd, const oci_strv *paths, msp_err *err)
{
        for (size_t i = 0; i < paths->n; i++) {
                const char *path = paths->v[i];
                _cleanup_close_ int fd = rt_openat2(rootfd, path, O_PATH,
                                                    RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS);
                if (fd == -ENOENT)
                        continue;
                if (fd < 0)
                        return msp_err_sys(err, -fd, "readonlyPaths '%s'", path);
                _cleanup_close_ int mfd = open_tree(fd, "",
                                                    OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC |
                                                            AT_EMPTY_PATH | AT_RECURSIVE);
                if (mfd < 0)
                        return msp_err_sys(err, errno, "readonlyPaths '%s': open_tree", path);
                if (rt_mount_setattr(mfd, true, MOUNT_ATTR_RDONLY, 0, 0) < 0)
                        return msp_err_sys(err, errno, "readonlyPaths '%s': mount_setattr", path);
                if (rt_mount_attach(mfd, fd) < 0)
                        return msp_err_sys(err, errno, "readonlyPaths '%s': move_mount", path);
        }
        return 0;
}

/* The "ro" of a tmpfs or /dev mount, held back until its submounts and nodes exist. */
static int
readonly_last(int rootfd, const oci_mount *m, size_t idx, msp_err *err)
{
        if (!rt_rootfs_ro_last(m))
                return 0;
        _cleanup_close_ int fd = rt_openat2(rootfd, m->destination, O_PATH | O_DIRECTORY,
                                            RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS);
        if (fd < 0)
                return msp_err_sys(err, -fd, "mount[%zu] '%s': open it to make it read-only", idx,
                                   m->destination);
        if (rt_mount_setattr(fd, false, MOUNT_ATTR_RDONLY, 0, 0) < 0)
                return msp_err_sys(err, errno, "mount[%zu] '%s': make it read-only", idx,
                                   m->destination);
        return 0;
}

int
rt_rootfs_finalize_child(const rt_rootfs_params *p, msp_err *err)
{
        const oci_linux *lnx = p->spec->linux_;
        int r;

        _cleanup_close_ int rootfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (rootfd < 0)
                return msp_err_sys(err, errno, "open '/'");
        if (lnx) {
                r = readonly_paths(rootfd, &lnx->readonly_paths, err);
                if (r >= 0)
                        r = mask_paths(rootfd, &lnx->masked_paths, err);
                if (r < 0)
                        return r;
        }
        for (size_t i = 0; i < p->spec->n_mounts; i++) {
                r = readonly_last(rootfd, &p->spec->mounts[i], i, err);
                if (r < 0)
                        return r;
        }
        /* Only the root mount itself, keeping its other flags, as runc's bind remount. */
        if (p->spec->root_readonly && rt_mount_setattr(rootfd, false, MOUNT_ATTR_RDONLY, 0, 0) < 0)
                return msp_err_sys(err, errno, "root.readonly: make '/' read-only");
        /* "/" itself only: setup applied it recursively before the config mounts, and a
         * recursive change now would override their own propagation options. */
        if (lnx && lnx->has_rootfs_propagation &&
            rt_mount_setattr(rootfd, false, 0, 0, lnx->rootfs_propagation & ~MS_REC) < 0)
                return msp_err_sys(err, errno, "rootfsPropagation: set on '/'");
        return 0;
}
