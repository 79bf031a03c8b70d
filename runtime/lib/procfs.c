/* A trusted procfs handle (CVE-2019-16884, CVE-2025-52881).
 *
 * The handle is a private procfs instance that no mount in any namespace covers, so a
 * container sharing volumes with us cannot redirect a write under /proc by mounting or
 * symlinking over it. Every file is then opened beneath that handle without following
 * any symlink or crossing a mount, and checked to be on procfs.
 *
 * PID namespace rule: a procfs instance shows the pids of the PID namespace its creator
 * was in (after unshare(CLONE_NEWPID) that is still the old one; only children enter the
 * new one). "<pid>/..." paths must use pids of that namespace; "self/..." and
 * "thread-self/..." are resolved through the instance's own "self" link, so they always
 * mean the caller, and fail with ENOENT when the caller is not visible in the instance.
 * Open the handle in the PID namespace whose pids you use. */
#include "lib/procfs.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "oci/oci.h"
#include "lib/pathres.h"

#define PROC_ROOT_INO 1

/* A fresh procfs instance as a detached mount: nobody else can have mounted anything
 * beneath it, and it is not reachable from any mount table. nosuid/nodev/noexec because
 * the runtime only reads and writes control files through it. */
static int
procfs_new_instance(void)
{
        _cleanup_close_ int fsfd = fsopen("proc", FSOPEN_CLOEXEC);
        if (fsfd < 0)
                return -errno;
        if (fsconfig(fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
                return -errno;
        int mfd = fsmount(fsfd, FSMOUNT_CLOEXEC,
                          MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
        return mfd < 0 ? -errno : mfd;
}

int
rt_procfs_verify_root(int procfd, msp_err *err)
{
        struct statfs sfs;
        struct stat st;

        if (fstatfs(procfd, &sfs) < 0)
                return msp_err_sys(err, errno, "procfs handle: fstatfs");
        if (sfs.f_type != PROC_SUPER_MAGIC)
                return msp_err_set(err, EXDEV, "procfs handle: not a procfs (magic 0x%lx)",
                                   (unsigned long) sfs.f_type);
        if (fstat(procfd, &st) < 0)
                return msp_err_sys(err, errno, "procfs handle: fstat");
        if (!S_ISDIR(st.st_mode) || st.st_ino != PROC_ROOT_INO)
                return msp_err_set(err, EXDEV, "procfs handle: not the root of a procfs");
        return 0;
}

int
rt_procfs_open(msp_err *err)
{
        _cleanup_close_ int fd = procfs_new_instance();

        /* FIXME: the two fallbacks below exist for kernels without the new mount API
         * (< 5.2) and for callers without CAP_SYS_ADMIN over their PID namespace; remove
         * them once fsopen("proc") works everywhere we run. A clone of the host mount is
         * still private to us (nothing can be mounted on it later) but shows whatever
         * the host mounted at /proc; a plain open is the weakest and is only checked. */
        if (fd < 0)
                fd = open_tree(AT_FDCWD, "/proc", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
        if (fd < 0)
                fd = open("/proc", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return msp_err_sys(err, errno, "open procfs");

        int r = rt_procfs_verify_root(fd, err);
        if (r < 0)
                return r;
        return TAKE_FD(fd);
}

/* "self/x" -> "<pid>/x", "thread-self/x" -> "<pid>/task/<tid>/x": the only symlinks the
 * runtime needs inside /proc, replaced so that the lookup can refuse all symlinks. The
 * numbers come from reading the instance's own "self" link, which the kernel answers
 * with our pid in the PID namespace of that instance: never another process's pid, and
 * ENOENT when we are not visible in it (a handle from a child PID namespace). */
static int
rewrite_self(int procfd, const char *path, char *buf, size_t size)
{
        char link[64];
        int n;

        while (*path == '/')
                path++;
        size_t len = strcspn(path, "/");
        if ((len == 4 && !strncmp(path, "self", 4)) ||
            (len == 11 && !strncmp(path, "thread-self", 11))) {
                char name[12];
                memcpy(name, path, len);
                name[len] = '\0';
                ssize_t l = readlinkat(procfd, name, link, sizeof link - 1);
                if (l < 0)
                        return -errno;
                link[l] = '\0';
                /* Only digits and "/task/": anything else is not a procfs we trust. */
                if (strspn(link, "0123456789/task") != (size_t) l || link[0] == '/')
                        return -EXDEV;
                n = snprintf(buf, size, "%s%s", link, path + len);
        } else {
                n = snprintf(buf, size, "%s", path);
        }
        if (n < 0 || (size_t) n >= size)
                return -ENAMETOOLONG;
        return 0;
}

int
rt_procfs_openat(int procfd, const char *path, int flags, msp_err *err)
{
        char real[PATH_MAX];
        struct statfs sfs;

        int r = rewrite_self(procfd, path, real, sizeof real);
        if (r < 0)
                return msp_err_sys(err, -r, "open '/proc/%s'", path);

        /* openat2 refuses O_PATH with any other open flag. */
        if (!(flags & O_PATH))
                flags |= O_NOCTTY;
        _cleanup_close_ int fd = rt_openat2(procfd, real, flags,
                                            RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS |
                                                    RESOLVE_NO_SYMLINKS | RESOLVE_NO_XDEV);
        if (fd < 0)
                return msp_err_sys(err, -fd, "open '/proc/%s'", path);

        /* RESOLVE_NO_XDEV already keeps us on the handle's mount; this catches a handle
         * that was not procfs in the first place. */
        if (fstatfs(fd, &sfs) < 0)
                return msp_err_sys(err, errno, "open '/proc/%s': fstatfs", path);
        if (sfs.f_type != PROC_SUPER_MAGIC)
                return msp_err_set(err, EXDEV, "open '/proc/%s': not on procfs, refusing", path);
        return TAKE_FD(fd);
}

int
rt_procfs_write(int procfd, const char *path, const char *data, msp_err *err)
{
        _cleanup_close_ int fd = rt_procfs_openat(procfd, path, O_WRONLY, err);
        if (fd < 0)
                return fd;

        /* /proc control files parse exactly one write(); never split or retry. */
        size_t len = strlen(data);
        ssize_t n = write(fd, data, len);
        if (n < 0)
                return msp_err_sys(err, errno, "write '/proc/%s'", path);
        if ((size_t) n != len)
                return msp_err_set(err, EIO, "write '/proc/%s': short write (%zd of %zu bytes)",
                                   path, n, len);
        return 0;
}

/* ---- a process by pid and start time ---- */

int
rt_pid_start_time(pid_t pid, uint64_t *ret, msp_err *err)
{
        char path[64], buf[1024];
        _cleanup_close_ int fd = -1;
        ssize_t n;

        snprintf(path, sizeof path, "/proc/%d/stat", (int) pid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return msp_err_sys(err, errno, "open '%s'", path);
        n = read(fd, buf, sizeof buf - 1);
        if (n < 0)
                return msp_err_sys(err, errno, "read '%s'", path);
        buf[n] = '\0';
        /* comm may contain spaces and parentheses: fields start after the last ')'. */
        char *p = strrchr(buf, ')');
        if (!p)
                return msp_err_set(err, EINVAL, "malformed '%s'", path);
        p += 2;
        char state = *p;
        for (int field = 3; field < 22 && p; field++) {
                p = strchr(p, ' ');
                if (p)
                        p++;
        }
        if (!p)
                return msp_err_set(err, EINVAL, "malformed '%s'", path);
        if (state == 'Z' || state == 'X')
                return msp_err_set(err, ESRCH, "process %d has exited", (int) pid);
        *ret = strtoull(p, NULL, 10);
        return 0;
}

bool
rt_pid_alive(pid_t pid, uint64_t start_time)
{
        uint64_t now;

        if (pid <= 0)
                return false;
        if (rt_pid_start_time(pid, &now, NULL) < 0)
                return false;
        return now == start_time;
}
