#include "lib/fileio.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/statedir.h"

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
