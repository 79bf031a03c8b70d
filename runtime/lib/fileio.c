#include "lib/fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "oci/oci.h"

int
rt_read_fd_all(int fd, const char *name, size_t max, char **ret, size_t *ret_len, msp_err *err)
{
        _cleanup_free_ char *buf = NULL;
        size_t len = 0, cap = 16384;

        buf = malloc(cap + 1);
        if (!buf)
                return msp_err_set(err, ENOMEM, "out of memory");
        for (;;) {
                if (len == cap) {
                        if (cap >= max)
                                return msp_err_set(err, E2BIG, "'%s' is larger than %zu bytes", name,
                                                   max);
                        cap = cap * 2 > max ? max : cap * 2;
                        char *n = realloc(buf, cap + 1);
                        if (!n)
                                return msp_err_set(err, ENOMEM, "out of memory");
                        buf = n;
                }
                ssize_t n = read(fd, buf + len, cap - len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return msp_err_sys(err, errno, "read '%s'", name);
                if (n == 0)
                        break;
                len += (size_t) n;
        }
        buf[len] = '\0';
        *ret_len = len;
        *ret = TAKE_PTR(buf);
        return 0;
}

int
rt_read_file_at(int dirfd, const char *path, bool nofollow, size_t max, char **ret,
                size_t *ret_len, msp_err *err)
{
        _cleanup_close_ int fd = openat(dirfd, path,
                                        O_RDONLY | O_CLOEXEC | (nofollow ? O_NOFOLLOW : 0));
        struct stat st;

        if (fd < 0)
                return msp_err_sys(err, errno, "open '%s'", path);
        /* A device in place of a config would block or never end; a pipe ends when its
         * writer closes it. */
        if (fstat(fd, &st) < 0)
                return msp_err_sys(err, errno, "stat '%s'", path);
        if (!S_ISREG(st.st_mode) && (nofollow || !S_ISFIFO(st.st_mode)))
                return msp_err_set(err, EINVAL, "'%s' is not a regular file%s", path,
                                   nofollow ? "" : " or a pipe");
        return rt_read_fd_all(fd, path, max, ret, ret_len, err);
}

int
rt_write_pid_file(const char *path, pid_t pid, msp_err *err)
{
        char buf[32];
        int n = snprintf(buf, sizeof buf, "%d", (int) pid);

        if (strncmp(path, "/dev/fd/", 8) != 0 && strncmp(path, "/proc/self/fd/", 14) != 0)
                return rt_write_file_atomic(AT_FDCWD, path, buf, (size_t) n, 0644, err);
        /* No rename into /dev/fd: the fd's file itself takes the pid. */
        _cleanup_close_ int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
        if (fd < 0)
                return msp_err_sys(err, errno, "open pid file '%s'", path);
        ssize_t w = write(fd, buf, (size_t) n);
        if (w < 0)
                return msp_err_sys(err, errno, "write pid file '%s'", path);
        if (w != n)
                return msp_err_set(err, EIO, "write pid file '%s': short write", path);
        return 0;
}

/* exchange: swap the new file in with renameat2(RENAME_EXCHANGE) and unlink the old
 * one (now at the .tmp name) instead of renaming over it, when path is an existing
 * regular file (rt_write_file_exchange in fileio.h says why). Readers see the old or
 * the new file either way. */
static int
write_atomic(int dirfd, const char *path, const char *data, size_t len, mode_t mode,
             bool exchange, msp_err *err)
{
        char tmp[4096];
        struct stat st;
        _cleanup_close_ int fd = -1;

        if ((size_t) snprintf(tmp, sizeof tmp, "%s.tmp", path) >= sizeof tmp)
                return msp_err_set(err, ENAMETOOLONG, "path too long: '%.64s'", path);
        fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, mode);
        if (fd < 0)
                return msp_err_sys(err, errno, "create '%s'", tmp);
        while (len > 0) {
                ssize_t w = write(fd, data, len);
                if (w < 0) {
                        if (errno == EINTR)
                                continue;
                        int r = msp_err_sys(err, errno, "write '%s'", tmp);
                        (void) unlinkat(dirfd, tmp, 0);
                        return r;
                }
                data += w;
                len -= (size_t) w;
        }
        if (exchange && fstatat(dirfd, path, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
            renameat2(dirfd, tmp, dirfd, path, RENAME_EXCHANGE) == 0) {
                (void) unlinkat(dirfd, tmp, 0);
                return 0;
        }
        if (renameat(dirfd, tmp, dirfd, path) < 0) {
                int r = msp_err_sys(err, errno, "rename '%s'", tmp);
                (void) unlinkat(dirfd, tmp, 0);
                return r;
        }
        return 0;
}

int
rt_write_file_atomic(int dirfd, const char *path, const char *data, size_t len, mode_t mode,
                     msp_err *err)
{
        return write_atomic(dirfd, path, data, len, mode, false, err);
}

int
rt_write_file_exchange(int dirfd, const char *path, const char *data, size_t len, mode_t mode,
                       msp_err *err)
{
        return write_atomic(dirfd, path, data, len, mode, true, err);
}
