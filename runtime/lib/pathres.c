/* Path resolution inside a container rootfs through fds.
 *
 * Every lookup is one openat2() with RESOLVE_IN_ROOT, so ".." and absolute symlinks are
 * clamped to the rootfs (the semantics of runc's securejoin) and magic links
 * (/proc/self/fd/N, /proc/self/root) are refused. Nothing is ever re-resolved from a
 * string joined onto the host path of the rootfs. */
#include "pathres.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "macros.h"

#ifndef SYS_openat2
#define SYS_openat2 437
#endif

/* openat2 returns EAGAIN when a concurrent rename or mount could have let ".." escape;
 * the lookup is simply retried, a bounded number of times. */
#define OPENAT2_RETRIES 64
/* How often a create step may lose a race against a concurrent creator. */
#define MKPATH_RETRIES 16

int
rt_openat2(int dirfd, const char *path, int flags, unsigned long long resolve)
{
        struct open_how how = {
                .flags = (unsigned long long) (flags | O_CLOEXEC),
                .mode = (flags & (O_CREAT | O_TMPFILE)) ? 0644 : 0,
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

int
rt_mkpath_in_root(int rootfd, const char *path, bool dir, msp_err *err)
{
        char buf[PATH_MAX];
        size_t ends[PATH_MAX / 2];
        _cleanup_close_ int cur = -1;

        int n = split_path(path, buf, sizeof buf, ends, ARRAY_SIZE(ends));
        if (n < 0)
                return msp_err_sys(err, -n, "create '%s' in rootfs", path);

        cur = rt_openat2(rootfd, ".", O_PATH | O_DIRECTORY, RESOLVE_IN_ROOT);
        if (cur < 0)
                return msp_err_sys(err, -cur, "create '%s' in rootfs: open root", path);

        for (int i = 0; i < n; i++) {
                bool last = i == n - 1;
                bool want_dir = !last || dir;
                size_t start = i == 0 ? 0 : ends[i - 1] + 1;
                int fd = -ENOENT;

                for (int tries = 0; tries < MKPATH_RETRIES; tries++) {
                        fd = open_prefix(rootfd, buf, ends[i], want_dir);
                        if (fd != -ENOENT)
                                break;
                        /* The prefix up to here resolved to `cur`, a directory inside the
                         * root, so the new entry is made there; ".." always exists. */
                        char name[NAME_MAX + 1];
                        size_t len = ends[i] - start;
                        if (len > NAME_MAX)
                                return msp_err_sys(err, ENAMETOOLONG, "create '%s' in rootfs",
                                                   path);
                        memcpy(name, buf + start, len);
                        name[len] = '\0';
                        int r = create_component(cur, name, want_dir);
                        if (r < 0)
                                return msp_err_sys(err, -r, "create '%s' in rootfs: %s '%s'",
                                                   path, want_dir ? "mkdir" : "create", name);
                }
                if (fd == -ENOENT)
                        /* Still missing after creating it: a dangling symlink. */
                        return msp_err_sys(err, ENOENT,
                                           "create '%s' in rootfs: '%.*s' is a dangling symlink",
                                           path, (int) ends[i], buf);
                if (fd < 0)
                        return msp_err_sys(err, -fd, "create '%s' in rootfs: open '%.*s'", path,
                                           (int) ends[i], buf);
                msp_closep(&cur);
                cur = fd;
        }
        return TAKE_FD(cur);
}
