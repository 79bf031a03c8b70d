#include "fileio.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

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
        /* A fifo or device in place of a config would block or never end. */
        if (fstat(fd, &st) < 0)
                return msp_err_sys(err, errno, "stat '%s'", path);
        if (!S_ISREG(st.st_mode))
                return msp_err_set(err, EINVAL, "'%s' is not a regular file", path);
        return rt_read_fd_all(fd, path, max, ret, ret_len, err);
}
