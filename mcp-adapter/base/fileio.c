/* Generic file helpers (fileio.h). */
#include "base/fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "oci/oci.h"

#define MAX_DEPTH 256                   /* directories deep for mcp_remove_tree_at() */

int
mcp_openat2(int dirfd, const char *path, uint64_t flags, uint64_t mode, uint64_t resolve)
{
        struct open_how how = { .flags = flags | O_CLOEXEC, .mode = mode, .resolve = resolve };
        int fd = -1;
        /* EAGAIN: a concurrent rename raced the lookup (RESOLVE_IN_ROOT); try again. */
        for (int i = 0; i < 16; i++) {
                fd = (int) syscall(SYS_openat2, dirfd, path, &how, sizeof how);
                if (fd >= 0 || errno != EAGAIN)
                        break;
        }
        return fd < 0 ? -errno : fd;
}

int
mcp_write_all(int fd, const void *data, size_t len)
{
        const char *p = data;
        while (len > 0) {
                ssize_t n = write(fd, p, len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                p += n;
                len -= (size_t) n;
        }
        return 0;
}

static int
remove_tree(int parent, const char *name, dev_t dev, unsigned depth, msp_err *err)
{
        if (unlinkat(parent, name, 0) == 0 || errno == ENOENT)
                return 0;
        if (errno != EISDIR && errno != EPERM)
                return msp_err_sys(err, errno, "unlink \"%s\"", name);
        if (depth >= MAX_DEPTH)
                return msp_err_set(err, ELOOP, "remove \"%s\": deeper than %d directories",
                                   name, MAX_DEPTH);
        int fd = mcp_openat2(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW, 0,
                               RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_XDEV);
        if (fd == -ENOENT)
                return 0;
        if (fd == -EXDEV)
                return msp_err_set(err, EBUSY, "remove \"%s\": a mount point", name);
        if (fd < 0)
                return msp_err_sys(err, -fd, "remove \"%s\": open", name);
        struct stat st;
        if (fstat(fd, &st) < 0 || st.st_dev != dev) {
                close(fd);
                return msp_err_set(err, EBUSY, "remove \"%s\": a mount point", name);
        }
        _cleanup_closedir_ DIR *d = fdopendir(fd);
        if (!d) {
                close(fd);
                return msp_err_sys(err, errno, "remove \"%s\": opendir", name);
        }
        struct dirent *de;
        while ((de = readdir(d))) {
                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                        continue;
                int r = remove_tree(dirfd(d), de->d_name, dev, depth + 1, err);
                if (r < 0)
                        return msp_err_prefix(err, "in \"%s\"", name);
        }
        if (unlinkat(parent, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
                return msp_err_sys(err, errno, "rmdir \"%s\"", name);
        return 0;
}

int
mcp_remove_tree_at(int dirfd, const char *name, msp_err *err)
{
        struct stat st;
        /* the parent's device: name itself must not be a mount point either */
        if (fstat(dirfd, &st) < 0)
                return msp_err_sys(err, errno, "remove \"%s\": fstat", name);
        return remove_tree(dirfd, name, st.st_dev, 0, err);
}

DIR *
mcp_image_opendir_at(int dir_fd, const char *name)
{
        int fd = openat(dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return NULL;
        DIR *d = fdopendir(fd);
        if (!d)
                close(fd);
        return d;
}

int
mcp_own_dir(const char *path, mode_t refused, struct stat *st)
{
        if (lstat(path, st) < 0)
                return -errno;
        if (!S_ISDIR(st->st_mode))
                return -ENOTDIR;
        if (st->st_uid != geteuid() || (st->st_mode & refused))
                return -EPERM;
        return 0;
}

int
mcp_mkdir_parents(const char *path, mode_t mode, msp_err *err)
{
        char buf[PATH_MAX];
        if (snprintf(buf, sizeof buf, "%s", path) >= (int) sizeof buf)
                return msp_err_set(err, ENAMETOOLONG, "\"%.100s...\": too long", path);
        for (char *p = buf + 1;; p++) {
                if (*p != '/' && *p != '\0')
                        continue;
                char c = *p;
                *p = '\0';
                if (mkdir(buf, mode) < 0 && errno != EEXIST)
                        return msp_err_sys(err, errno, "mkdir \"%s\"", buf);
                if (!(*p = c))
                        break;
        }
        return 0;
}

int
mcp_write_new_at(int dirfd, const char *name, const void *data, size_t len, mode_t mode,
                 msp_err *err)
{
        _cleanup_close_ int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
        if (fd < 0)
                return msp_err_sys(err, errno, "create '%s'", name);
        for (const char *p = data; len > 0;) {
                ssize_t n = write(fd, p, len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return msp_err_sys(err, n < 0 ? errno : EIO, "write '%s'", name);
                p += n;
                len -= (size_t) n;
        }
        return 0;
}

int
mcp_write_text(const char *path, const char *text)
{
        _cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        size_t len = strlen(text);
        ssize_t n = write(fd, text, len);
        return n == (ssize_t) len ? 0 : n < 0 ? -errno : -EIO;
}

ssize_t
mcp_read_text(const char *path, char *buf, size_t size)
{
        buf[0] = '\0';
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        ssize_t n = read(fd, buf, size - 1);
        if (n < 0)
                return -errno;
        buf[n] = '\0';
        return n;
}

int
mcp_read_fd(int fd, size_t max, char **ret, size_t *ret_len, msp_err *err)
{
        _cleanup_free_ char *buf = malloc(max + 1);
        if (!buf)
                return msp_err_set(err, ENOMEM, "out of memory");
        size_t len = 0;
        while (len < max) {
                ssize_t n = read(fd, buf + len, max - len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return msp_err_sys(err, errno, "read");
                if (n == 0)
                        break;
                len += (size_t) n;
        }
        buf[len] = '\0';
        *ret = TAKE_PTR(buf);
        *ret_len = len;
        return 0;
}

void
mcp_close_pair(int p[2])
{
        for (int i = 0; i < 2; i++)
                if (p[i] >= 0)
                        close(p[i]);
}
