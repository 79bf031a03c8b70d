/* Path resolution inside a container rootfs through fds.
 *
 * Every lookup is one openat2() with RESOLVE_IN_ROOT, so ".." and absolute symlinks are
 * clamped to the rootfs (the semantics of runc's securejoin) and magic links
 * (/proc/self/fd/N, /proc/self/root) are refused. Nothing is ever re-resolved from a
 * string joined onto the host path of the rootfs. */
#include "lib/pathres.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <string.h>
#include <dirent.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "oci/oci.h"

#ifndef SYS_openat2
#define SYS_openat2 437
#endif

/* openat2 returns EAGAIN when a concurrent rename or mount could have let ".." escape;
 * the lookup is simply retried, a bounded number of times. */
#define OPENAT2_RETRIES 64
/* How often a create step may lose a race against a concurrent creator. */
#define MKPATH_RETRIES 16
/* Dangling symlinks expanded while creating a path, as the kernel's MAXSYMLINKS. */
#define MKPATH_MAX_LINKS 40
/* tmpcopyup refuses deeper trees rather than recursing without bound. */
#define COPY_MAX_DEPTH 128

int
rt_openat2(int dirfd, const char *path, int flags, unsigned long long resolve)
{
        struct open_how how = {
                .flags = (unsigned long long) (flags | O_CLOEXEC),
                /* O_TMPFILE contains O_DIRECTORY: test all of its bits. */
                .mode = (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? 0644 : 0,
                .resolve = resolve,
        };

        for (int i = 0; i < OPENAT2_RETRIES; i++) {
                long fd = syscall(SYS_openat2, dirfd, path, &how, sizeof how);
                if (fd >= 0)
                        return (int) fd;
                if (errno != EAGAIN)
                        return -errno;
        }
        return -EAGAIN;
}

int
rt_open_in_root(int rootfd, const char *path, int flags, msp_err *err)
{
        int fd = rt_openat2(rootfd, path, flags, RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS);
        if (fd < 0)
                return msp_err_sys(err, -fd, "open '%s' in rootfs", path);
        return fd;
}

/* Copy `path` into buf as components separated by single '/', without a leading slash
 * and without "." components. Returns the number of components, or -ENAMETOOLONG. */
static int
split_path(const char *path, char *buf, size_t size, size_t *ends, size_t max_ends)
{
        size_t len = 0;
        int n = 0;

        for (const char *p = path; *p;) {
                size_t clen = strcspn(p, "/");
                if (clen == 0 || (clen == 1 && p[0] == '.')) {
                        p += clen + (p[clen] == '/');
                        continue;
                }
                if ((size_t) n >= max_ends || len + clen + 2 > size)
                        return -ENAMETOOLONG;
                if (len > 0)
                        buf[len++] = '/';
                memcpy(buf + len, p, clen);
                len += clen;
                ends[n++] = len;
                p += clen + (p[clen] == '/');
        }
        buf[len] = '\0';
        return n;
}

/* Create the component `name` in the already resolved directory `parentfd`. EEXIST is
 * not an error: the caller re-resolves and finds whatever won the race. */
static int
create_component(int parentfd, const char *name, bool dir)
{
        if (dir) {
                if (mkdirat(parentfd, name, 0755) < 0 && errno != EEXIST)
                        return -errno;
                return 0;
        }
        _cleanup_close_ int fd = openat(parentfd, name,
                                        O_CREAT | O_EXCL | O_NOFOLLOW | O_WRONLY | O_CLOEXEC,
                                        0644);
        if (fd < 0 && errno != EEXIST)
                return -errno;
        return 0;
}

/* Resolve the first `end` bytes of the split path (a prefix of whole components). */
static int
open_prefix(int rootfd, char *buf, size_t end, bool want_dir)
{
        char saved = buf[end];
        buf[end] = '\0';
        int fd = rt_openat2(rootfd, buf, O_PATH | (want_dir ? O_DIRECTORY : 0),
                            RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS);
        buf[end] = saved;
        return fd;
}

/* The component buf[start..end) is a dangling symlink in parentfd: rewrite buf to go
 * through its target, "<target><rest>" when absolute (the root is the rootfs) or
 * "<prefix><target><rest>" when relative. The next walk resolves it again beneath the
 * root, so the target is clamped like any other path. */
static int
expand_symlink(int parentfd, const char *name, char *buf, size_t size, size_t start,
               size_t end)
{
        char target[PATH_MAX], out[PATH_MAX];
        ssize_t n = readlinkat(parentfd, name, target, sizeof target - 1);
        if (n < 0)
                return -errno;
        target[n] = '\0';
        int len = snprintf(out, sizeof out, "%.*s%s%s", target[0] == '/' ? 0 : (int) start, buf,
                           target, buf + end);
        if (len < 0 || (size_t) len >= size)
                return -ENAMETOOLONG;
        memcpy(buf, out, (size_t) len + 1);
        return 0;
}

/* One walk over `want`; *ret_restart when a dangling symlink was expanded into it. */
static int
mkpath_walk(int rootfd, char *want, size_t size, bool dir, bool *ret_restart, msp_err *err)
{
        char buf[PATH_MAX], name[NAME_MAX + 1];
        size_t ends[PATH_MAX / 2];
        _cleanup_close_ int cur = -1;
        struct stat st;

        int n = split_path(want, buf, sizeof buf, ends, ARRAY_SIZE(ends));
        if (n < 0)
                return msp_err_sys(err, -n, "split");
        cur = rt_openat2(rootfd, ".", O_PATH | O_DIRECTORY, RESOLVE_IN_ROOT);
        if (cur < 0)
                return msp_err_sys(err, -cur, "open root");

        for (int i = 0; i < n; i++) {
                bool want_dir = i < n - 1 || dir;
                size_t start = i == 0 ? 0 : ends[i - 1] + 1;
                int fd = -ENOENT;

                if (ends[i] - start > NAME_MAX)
                        return msp_err_sys(err, ENAMETOOLONG, "component %d", i);
                memcpy(name, buf + start, ends[i] - start);
                name[ends[i] - start] = '\0';
                for (int tries = 0; fd == -ENOENT && tries < MKPATH_RETRIES; tries++) {
                        fd = open_prefix(rootfd, buf, ends[i], want_dir);
                        if (fd != -ENOENT)
                                break;
                        /* The prefix before this component resolved to `cur`, a directory
                         * inside the root: the new entry is made there. */
                        if (fstatat(cur, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                            S_ISLNK(st.st_mode)) {
                                int r = expand_symlink(cur, name, buf, sizeof buf, start, ends[i]);
                                if (r < 0)
                                        return msp_err_sys(err, -r, "symlink '%.*s'",
                                                           (int) ends[i], buf);
                                if (strlen(buf) >= size)
                                        return msp_err_sys(err, ENAMETOOLONG, "expand symlink");
                                strcpy(want, buf);
                                *ret_restart = true;
                                return 0;
                        }
                        int r = create_component(cur, name, want_dir);
                        if (r < 0)
                                return msp_err_sys(err, -r, "%s '%.*s'",
                                                   want_dir ? "mkdir" : "create", (int) ends[i],
                                                   buf);
                }
                if (fd < 0)
                        return msp_err_sys(err, -fd, "open '%.*s'", (int) ends[i], buf);
                msp_closep(&cur);
                cur = fd;
        }
        return TAKE_FD(cur);
}

int
rt_mkpath_in_root(int rootfd, const char *path, bool dir, msp_err *err)
{
        char want[PATH_MAX];

        if (snprintf(want, sizeof want, "%s", path) >= (int) sizeof want)
                return msp_err_sys(err, ENAMETOOLONG, "create '%s' in rootfs", path);
        for (int links = 0; links < MKPATH_MAX_LINKS; links++) {
                bool restart = false;
                int fd = mkpath_walk(rootfd, want, sizeof want, dir, &restart, err);
                if (fd < 0)
                        return msp_err_prefix(err, "create '%s' in rootfs", path);
                if (!restart)
                        return fd;
        }
        return msp_err_sys(err, ELOOP, "create '%s' in rootfs", path);
}

static int copy_dir(int src, int dst, int depth, msp_err *err);

static int
copy_regular(int src, int dst, const char *name, msp_err *err)
{
        struct stat st;
        /* O_NONBLOCK: an entry swapped for a fifo must not hang us; checked below. */
        _cleanup_close_ int in = openat(src, name,
                                        O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
        if (in < 0 || fstat(in, &st) < 0)
                return msp_err_sys(err, errno, "copy '%s': open", name);
        if (!S_ISREG(st.st_mode))
                return msp_err_set(err, EINVAL, "copy '%s': changed type while copying", name);
        _cleanup_close_ int out = openat(dst, name,
                                         O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                                         0600);
        if (out < 0)
                return msp_err_sys(err, errno, "copy '%s': create", name);
        for (;;) {
                ssize_t n = sendfile(out, in, NULL, 1 << 30);
                if (n == 0)
                        return 0;
                if (n < 0)
                        return msp_err_sys(err, errno, "copy '%s'", name);
        }
}

static int
copy_node(int src, int dst, const char *name, const struct stat *st, int depth, msp_err *err)
{
        char target[PATH_MAX];

        switch (st->st_mode & S_IFMT) {
        case S_IFDIR: {
                if (mkdirat(dst, name, 0700) < 0)
                        return msp_err_sys(err, errno, "copy '%s': mkdir", name);
                _cleanup_close_ int s = openat(src, name,
                                               O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                _cleanup_close_ int d = openat(dst, name,
                                               O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (s < 0 || d < 0)
                        return msp_err_sys(err, errno, "copy '%s': open directory", name);
                int r = copy_dir(s, d, depth + 1, err);
                return r < 0 ? msp_err_prefix(err, "%s", name) : 0;
        }
        case S_IFREG:
                return copy_regular(src, dst, name, err);
        case S_IFLNK: {
                ssize_t n = readlinkat(src, name, target, sizeof target - 1);
                if (n < 0)
                        return msp_err_sys(err, errno, "copy '%s': readlink", name);
                target[n] = '\0';
                if (symlinkat(target, dst, name) < 0)
                        return msp_err_sys(err, errno, "copy '%s': symlink", name);
                return 0;
        }
        default:
                if (mknodat(dst, name, st->st_mode, st->st_rdev) < 0)
                        return msp_err_sys(err, errno, "copy '%s': mknod", name);
                return 0;
        }
}

/* Owner first: chown clears the set-id bits that the chmod then restores. The
 * destination is private to us, so following a name here cannot be raced. */
static int
copy_attrs(int dst, const char *name, const struct stat *st, msp_err *err)
{
        const struct timespec times[2] = { st->st_atim, st->st_mtim };

        if (fchownat(dst, name, st->st_uid, st->st_gid, AT_SYMLINK_NOFOLLOW) < 0)
                return msp_err_sys(err, errno, "copy '%s': chown", name);
        if (!S_ISLNK(st->st_mode) && fchmodat(dst, name, st->st_mode & 07777, 0) < 0)
                return msp_err_sys(err, errno, "copy '%s': chmod", name);
        if (utimensat(dst, name, times, AT_SYMLINK_NOFOLLOW) < 0)
                return msp_err_sys(err, errno, "copy '%s': utimensat", name);
        return 0;
}

static int
copy_dir(int src, int dst, int depth, msp_err *err)
{
        if (depth > COPY_MAX_DEPTH)
                return msp_err_set(err, ELOOP, "copy: more than %d levels of directories",
                                   COPY_MAX_DEPTH);
        int dupfd = fcntl(src, F_DUPFD_CLOEXEC, 3);
        if (dupfd < 0)
                return msp_err_sys(err, errno, "copy: dup");
        _cleanup_closedir_ DIR *d = fdopendir(dupfd);
        if (!d) {
                (void) close(dupfd);
                return msp_err_sys(err, errno, "copy: opendir");
        }
        rewinddir(d);
        for (struct dirent *de; (errno = 0, de = readdir(d));) {
                struct stat st;
                if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
                        continue;
                if (fstatat(src, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        return msp_err_sys(err, errno, "copy '%s': stat", de->d_name);
                int r = copy_node(src, dst, de->d_name, &st, depth, err);
                if (r >= 0)
                        r = copy_attrs(dst, de->d_name, &st, err);
                if (r < 0)
                        return r;
        }
        if (errno != 0)
                return msp_err_sys(err, errno, "copy: readdir");
        return 0;
}

int
rt_copy_tree(int srcdirfd, int dstdirfd, msp_err *err)
{
        return copy_dir(srcdirfd, dstdirfd, 0, err);
}
