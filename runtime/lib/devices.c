/* Device nodes, the /dev symlinks and the console, all made through fds beneath the
 * rootfs. mknodat(), symlinkat() and O_CREAT|O_EXCL|O_NOFOLLOW never follow a symlink in
 * the last component; the parent directory is opened with RESOLVE_NO_SYMLINKS, so an
 * image whose /dev (or /dev/pts, ...) is a symlink cannot redirect anything. */
#include "lib/devices.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "oci/oci.h"
#include "lib/mount-api.h"
#include "lib/pathres.h"

static const struct {
        const char *path;
        unsigned major, minor;
} default_devices[] = {
        { "/dev/null", 1, 3 },    { "/dev/zero", 1, 5 },    { "/dev/full", 1, 7 },
        { "/dev/random", 1, 8 },  { "/dev/urandom", 1, 9 }, { "/dev/tty", 5, 0 },
};

int
rt_devices_open_dir(int rootfd, const char *dir, msp_err *err)
{
        const unsigned long long strict = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS |
                                          RESOLVE_NO_MAGICLINKS;
        int fd = rt_openat2(rootfd, dir, O_PATH | O_DIRECTORY, strict);

        if (fd == -ENOENT) {
                /* Only reached when the walk hit a missing component before any symlink;
                 * the strict re-open below catches a symlink planted in between. */
                _cleanup_close_ int made = rt_mkpath_in_root(rootfd, dir, true, err);
                if (made < 0)
                        return made;
                fd = rt_openat2(rootfd, dir, O_PATH | O_DIRECTORY, strict);
        }
        if (fd == -ELOOP)
                return msp_err_set(err, ELOOP, "'/%s' is or contains a symlink, refusing", dir);
        if (fd < 0)
                return msp_err_sys(err, -fd, "open '/%s' in rootfs", dir);
        return fd;
}

/* Split "/dev/a/b" into the parent "dev/a" (no leading '/') and the name "b". Only paths
 * strictly under /dev without "." or ".." components are accepted. */
static int
split_dev_path(const char *path, char *parent, size_t size, const char **ret_name)
{
        if (strncmp(path, "/dev/", 5) != 0 || strlen(path) >= size)
                return -EINVAL;
        for (const char *c = path + 1; *c;) {
                size_t len = strcspn(c, "/");
                if (len == 0 || (len == 1 && c[0] == '.') || (len == 2 && !strncmp(c, "..", 2)))
                        return -EINVAL;
                c += len + (c[len] == '/');
        }
        const char *slash = strrchr(path, '/');
        if (slash[1] == '\0')
                return -EINVAL;
        memcpy(parent, path + 1, (size_t) (slash - path - 1));
        parent[slash - path - 1] = '\0';
        *ret_name = slash + 1;
        return 0;
}

static int
device_type(char t, mode_t *ret)
{
        switch (t) {
        case 'c':
        case 'u':
                *ret = S_IFCHR;
                return 0;
        case 'b':
                *ret = S_IFBLK;
                return 0;
        case 'p':
                *ret = S_IFIFO;
                return 0;
        default:
                return -EINVAL;
        }
}

/* In a user namespace: an empty file at dirfd/name with the host node of the same path
 * bind-mounted onto it, after checking that the host node is what the config asked for. */
static int
bind_host_node(int dirfd, const char *name, const char *path, mode_t type, dev_t dev,
               msp_err *err)
{
        _cleanup_close_ int file = openat(dirfd, name,
                                          O_CREAT | O_EXCL | O_NOFOLLOW | O_WRONLY | O_CLOEXEC,
                                          0000);
        if (file < 0)
                return msp_err_sys(err, errno, "device '%s': create mount point", path);
        _cleanup_close_ int target = openat(dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (target < 0)
                return msp_err_sys(err, errno, "device '%s': open mount point", path);

        _cleanup_close_ int host = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        struct stat st;
        if (host < 0 || fstat(host, &st) < 0)
                return msp_err_sys(err, errno, "device '%s': host node", path);
        if ((st.st_mode & S_IFMT) != type || st.st_rdev != dev)
                return msp_err_set(err, ENODEV, "device '%s': host node is not %u:%u, refusing",
                                   path, major(dev), minor(dev));
        return rt_mount_bind_fd(host, target, false, err) < 0
                       ? msp_err_prefix(err, "device '%s': bind host node", path)
                       : 0;
}

static int
make_node(int dirfd, const char *name, const oci_device *d, bool in_userns, msp_err *err)
{
        mode_t type, mode = d->has_file_mode ? (mode_t) (d->file_mode & 07777) : 0666;
        dev_t dev = makedev((unsigned) d->major, (unsigned) d->minor);

        if (device_type(d->type, &type) < 0)
                return msp_err_set(err, EINVAL, "device '%s': unknown type '%c'", d->path,
                                   d->type);
        if (unlinkat(dirfd, name, 0) < 0 && errno != ENOENT)
                return msp_err_sys(err, errno, "device '%s': remove existing entry", d->path);

        if (in_userns && type != S_IFIFO)
                return bind_host_node(dirfd, name, d->path, type, dev, err);

        /* umask-independent mode: the process is single-threaded here. */
        mode_t old = umask(0);
        int r = mknodat(dirfd, name, type | mode, dev);
        int saved = errno;
        umask(old);
        if (r < 0 && saved == EPERM && type != S_IFIFO)
                return bind_host_node(dirfd, name, d->path, type, dev, err);
        if (r < 0)
                return msp_err_sys(err, saved, "device '%s': mknod", d->path);

        if ((d->has_uid || d->has_gid) &&
            fchownat(dirfd, name, d->has_uid ? d->uid : 0, d->has_gid ? d->gid : 0,
                     AT_SYMLINK_NOFOLLOW) < 0)
                return msp_err_sys(err, errno, "device '%s': chown", d->path);
        return 0;
}

static int
create_device(int rootfd, const oci_device *d, bool in_userns, msp_err *err)
{
        char parent[PATH_MAX];
        const char *name;

        if (split_dev_path(d->path, parent, sizeof parent, &name) < 0)
                return msp_err_set(err, EINVAL, "device '%s': path must be under /dev", d->path);
        _cleanup_close_ int dirfd = rt_devices_open_dir(rootfd, parent, err);
        if (dirfd < 0)
                return msp_err_prefix(err, "device '%s'", d->path);
        return make_node(dirfd, name, d, in_userns, err);
}

static bool
configured(const oci_linux *lnx, const char *path)
{
        for (size_t i = 0; lnx && i < lnx->n_devices; i++)
                if (strcmp(lnx->devices[i].path, path) == 0)
                        return true;
        return false;
}

int
rt_devices_create(int rootfd, const oci_linux *lnx, bool defaults, bool in_userns,
                  msp_err *err)
{
        for (size_t i = 0; defaults && i < ARRAY_SIZE(default_devices); i++) {
                if (configured(lnx, default_devices[i].path))
                        continue;
                oci_device d = {
                        .type = 'c',
                        .path = (char *) default_devices[i].path,
                        .major = default_devices[i].major,
                        .minor = default_devices[i].minor,
                };
                int r = create_device(rootfd, &d, in_userns, err);
                if (r < 0)
                        return r;
        }
        for (size_t i = 0; lnx && i < lnx->n_devices; i++) {
                int r = create_device(rootfd, &lnx->devices[i], in_userns, err);
                if (r < 0)
                        return r;
        }
        return 0;
}

int
rt_devices_links(int rootfd, msp_err *err)
{
        static const struct {
                const char *name, *target;
        } links[] = {
                { "fd", "/proc/self/fd" },          { "stdin", "/proc/self/fd/0" },
                { "stdout", "/proc/self/fd/1" },    { "stderr", "/proc/self/fd/2" },
                { "ptmx", "pts/ptmx" },
        };
        static const char *const dirs[] = { "shm", "pts" };

        _cleanup_close_ int devfd = rt_devices_open_dir(rootfd, "dev", err);
        if (devfd < 0)
                return devfd;
        for (size_t i = 0; i < ARRAY_SIZE(links); i++)
                if (symlinkat(links[i].target, devfd, links[i].name) < 0 && errno != EEXIST)
                        return msp_err_sys(err, errno, "symlink '/dev/%s'", links[i].name);
        for (size_t i = 0; i < ARRAY_SIZE(dirs); i++)
                if (mkdirat(devfd, dirs[i], 0755) < 0 && errno != EEXIST)
                        return msp_err_sys(err, errno, "mkdir '/dev/%s'", dirs[i]);
        return 0;
}

/* The console is the pty slave we were handed (TIOCGPTPEER), bind-mounted by fd: the
 * name /dev/pts/N is never looked up, so swapping it for a symlink changes nothing
 * (CVE-2025-52565). The mount point is a file msp creates (O_EXCL|O_NOFOLLOW) and binds
 * onto through the fd that create returned, so a container racing names in a shared /dev
 * cannot substitute another target between the create and the mount. Whatever the image
 * had at /dev/console is removed first, except a character device, which is bound over
 * through an O_NOFOLLOW fd (a /dev bind-mounted from the host keeps its node, as with
 * runc). */
int
rt_devices_mount_console_child(int rootfd, int pty_slave_fd, msp_err *err)
{
        struct stat st;

        _cleanup_close_ int devfd = rt_devices_open_dir(rootfd, "dev", err);
        if (devfd < 0)
                return msp_err_prefix(err, "console");
        _cleanup_close_ int target = openat(devfd, "console", O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (target >= 0 && fstat(target, &st) < 0)
                return msp_err_sys(err, errno, "console: fstat '/dev/console'");
        if (target >= 0 && !S_ISCHR(st.st_mode)) {
                if (S_ISDIR(st.st_mode))
                        return msp_err_set(err, EISDIR, "console: '/dev/console' is a directory, "
                                                        "refusing");
                if (unlinkat(devfd, "console", 0) < 0 && errno != ENOENT)
                        return msp_err_sys(err, errno, "console: remove '/dev/console'");
                close(TAKE_FD(target));
        } else if (target < 0 && errno != ENOENT) {
                return msp_err_sys(err, errno, "console: open '/dev/console'");
        }
        if (target < 0) {
                /* O_EXCL|O_NOFOLLOW: fails on anything that appeared in the meantime. */
                target = openat(devfd, "console", O_CREAT | O_EXCL | O_NOFOLLOW | O_WRONLY |
                                                          O_CLOEXEC,
                                0000);
                if (target < 0)
                        return msp_err_sys(err, errno, "console: create '/dev/console'");
        }
        if (rt_mount_bind_fd(pty_slave_fd, target, false, err) < 0)
                return msp_err_prefix(err, "console: bind pty onto '/dev/console'");
        return 0;
}
