/* Executable lookup and fd hygiene before execve.
 *
 * The lookup runs inside the container (after pivot_root and the user switch) so that
 * PATH and the permission checks are the container's; its messages carry the phrases
 * podman turns into exit codes 127 ("executable file not found in", "no such file or
 * directory") and 126 ("permission denied"). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "oci/oci.h"
#include "lib/process.h"

#ifndef SYS_faccessat2
#define SYS_faccessat2 439
#endif

#define RT_DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

static const char *
env_path(char *const *env)
{
        for (size_t i = 0; env && env[i]; i++)
                if (strncmp(env[i], "PATH=", 5) == 0)
                        return env[i] + 5;
        return RT_DEFAULT_PATH;
}

/* faccessat2 with AT_EACCESS; where the kernel lacks it or the container's seccomp
 * filter (loaded before the lookup without no_new_privs) predates it, access(2), which
 * checks the real ids: the lookup runs after the user switch made them the effective
 * ones too. */
static int
may_execute(const char *path)
{
        if (syscall(SYS_faccessat2, AT_FDCWD, path, X_OK, AT_EACCESS) == 0)
                return 0;
        if (errno != ENOSYS && errno != EPERM)
                return -errno;
        return access(path, X_OK) < 0 ? -errno : 0;
}

/* 0 when path is a regular file the current (effective) ids may execute, else -errno:
 * EACCES also for directories and other non-regular files, as execve would say. */
static int
check_executable(const char *path)
{
        struct stat st;

        if (stat(path, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return S_ISDIR(st.st_mode) ? -EISDIR : -EACCES;
        return may_execute(path);
}

static int
report(int r, const char *path, msp_err *err)
{
        if (r == -EISDIR)
                return msp_err_set(err, EACCES, "open executable `%s`: permission denied "
                                   "(is a directory)", path);
        if (r == -EACCES || r == -EPERM)
                return msp_err_set(err, -r, "open executable `%s`: permission denied", path);
        if (r == -ENOENT || r == -ENOTDIR)
                return msp_err_set(err, ENOENT, "executable file `%s` not found: "
                                   "no such file or directory", path);
        return msp_err_sys(err, -r, "open executable `%s`", path);
}

static int
copy_out(const char *path, char *buf, size_t bufsz, msp_err *err)
{
        size_t len = strlen(path);

        if (len >= bufsz)
                return msp_err_set(err, ENAMETOOLONG, "executable path too long: `%.64s...`", path);
        memcpy(buf, path, len + 1);
        return 0;
}

/* execvp semantics: the first executable match wins; a match that exists but may not be
 * executed is remembered so that "not found" does not hide a permission problem. */
static int
search_path(const char *file, const char *path, char *buf, size_t bufsz, msp_err *err)
{
        char cand[PATH_MAX], denied[PATH_MAX] = "";
        size_t flen = strlen(file);

        for (const char *p = path;; p++) {
                const char *end = strchrnul(p, ':');
                size_t dlen = (size_t) (end - p);
                const char *dir = dlen ? p : ".";       /* an empty entry means "." */

                if (dlen == 0)
                        dlen = 1;
                if (dlen + 1 + flen < sizeof cand) {
                        memcpy(cand, dir, dlen);
                        cand[dlen] = '/';
                        memcpy(cand + dlen + 1, file, flen + 1);
                        int r = check_executable(cand);
                        if (r == 0)
                                return copy_out(cand, buf, bufsz, err);
                        if ((r == -EACCES || r == -EISDIR) && !denied[0])
                                memcpy(denied, cand, dlen + 1 + flen + 1);
                }
                p = end;
                if (*p == '\0')
                        break;
        }
        if (denied[0])
                return report(-EACCES, denied, err);
        return msp_err_set(err, ENOENT, "executable file `%s` not found in $PATH: "
                           "no such file or directory", file);
}

int
rt_exec_lookup(const char *file, char *const *env, char *buf, size_t bufsz, msp_err *err)
{
        if (!file || !*file)
                return msp_err_set(err, ENOENT, "executable file `` not found in $PATH: "
                                   "no such file or directory");
        if (strchr(file, '/')) {
                int r = check_executable(file);
                if (r < 0)
                        return report(r, file, err);
                return copy_out(file, buf, bufsz, err);
        }
        return search_path(file, env_path(env), buf, bufsz, err);
}

/* FIXME: remove once kernel 5.11 (CLOSE_RANGE_CLOEXEC) is the baseline. */
static int
cloexec_walk(int first_fd, msp_err *err)
{
        _cleanup_closedir_ DIR *d = opendir("/proc/self/fd");
        struct dirent *de;

        if (!d)
                return msp_err_sys(err, errno, "open /proc/self/fd");
        while ((errno = 0, de = readdir(d))) {
                char *end;
                long fd = strtol(de->d_name, &end, 10);

                if (*end || end == de->d_name || fd < first_fd || fd == dirfd(d))
                        continue;
                int fl = fcntl((int) fd, F_GETFD);
                if (fl < 0 || (fl & FD_CLOEXEC))
                        continue;
                if (fcntl((int) fd, F_SETFD, fl | FD_CLOEXEC) < 0)
                        return msp_err_sys(err, errno, "fcntl(%ld, F_SETFD, FD_CLOEXEC)", fd);
        }
        if (errno)
                return msp_err_sys(err, errno, "read /proc/self/fd");
        return 0;
}

/* sd_listen_fds(3)'s rule, which runc follows too: the variables are this process's only
 * when LISTEN_PID names it; anything else is a stale value from some ancestor, and its
 * fds (whatever the caller holds at 3..) must not be passed. */
int
rt_listen_fds(void)
{
        const char *pid_s = getenv("LISTEN_PID"), *fds_s = getenv("LISTEN_FDS");
        char *end;

        if (!pid_s || !fds_s)
                return 0;
        errno = 0;
        long pid = strtol(pid_s, &end, 10);
        if (errno || end == pid_s || *end || pid != (long) getpid())
                return 0;
        long n = strtol(fds_s, &end, 10);
        if (errno || end == fds_s || *end || n <= 0 || n > INT_MAX - 3)
                return 0;
        return (int) n;
}

int
rt_fds_cloexec_from(int first_fd, msp_err *err)
{
        if (first_fd < 0)
                return msp_err_set(err, EINVAL, "invalid first fd %d", first_fd);
        if (close_range((unsigned) first_fd, ~0U, CLOSE_RANGE_CLOEXEC) == 0)
                return 0;
        if (errno != ENOSYS && errno != EINVAL)
                return msp_err_sys(err, errno, "close_range(%d, ~0, CLOSE_RANGE_CLOEXEC)", first_fd);
        return cloexec_walk(first_fd, err);
}
