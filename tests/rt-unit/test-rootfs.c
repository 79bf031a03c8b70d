/* The container filesystem against the real kernel: config mounts and their flags,
 * devices, tmpcopyup, pivot_root, masked and read-only paths, the console, and the
 * attacks a hostile rootfs can try (symlinked destinations, /proc, /dev, /dev/null,
 * /dev/console). Each test forks a child that builds a throwaway rootfs on a tmpfs in a
 * private mount namespace and checks from inside; the parent reports TAP. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "oci/macros.h"

#ifndef MQUEUE_MAGIC
#define MQUEUE_MAGIC 0x19800202
#endif
#include "lib/devices.h"
#include "lib/rootfs.h"
#include "tests/lib/fs-test.h"

static char rootfs[128], outside[128], src[128];
static oci_spec spec;
static oci_linux lnx;
static oci_mount mounts[32];
static char *optv[32][16];
static oci_device devs[16];
static char *masked[16], *ropaths[16];

static void
mkdir_p(const char *p)
{
        CHECK(mkdir(p, 0755) == 0 || errno == EEXIST);
}

static size_t
read_file(const char *path, char *buf, size_t size)
{
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        CHECK(fd >= 0);
        ssize_t n = read(fd, buf, size - 1);
        CHECK(n >= 0);
        buf[n] = '\0';
        close(fd);
        return (size_t) n;
}

/* 0 or the errno of opening `path` for writing (creating it if missing). */
static int
write_errno(const char *path)
{
        int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        if (fd < 0)
                return errno;
        close(fd);
        return 0;
}

static long
fs_magic(const char *path)
{
        struct statfs s;
        CHECK(statfs(path, &s) == 0);
        return (long) s.f_type;
}

static unsigned long
vfs_flags(const char *path)
{
        struct statvfs s;
        CHECK(statvfs(path, &s) == 0);
        return s.f_flag;
}

static bool
is_mount_root(const char *path)
{
        struct statx stx;
        CHECK(statx(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW, 0, &stx) == 0);
        return stx.stx_attributes & STATX_ATTR_MOUNT_ROOT;
}

static void
add_mount(const char *dest, const char *type, const char *source, const char *opts)
{
        size_t i = spec.n_mounts++, n = 0;
        mounts[i] = (oci_mount){ .destination = (char *) dest, .type = (char *) type,
                                 .source = (char *) source };
        if (opts)
                for (char *t = strtok(strdup(opts), ","); t; t = strtok(NULL, ","))
                        optv[i][n++] = t;
        optv[i][n] = NULL;
        mounts[i].options = (oci_strv){ .v = optv[i], .n = n };
}

static void
add_device(char type, const char *path, int major_, int minor_, int mode)
{
        oci_device *d = &devs[lnx.n_devices++];
        *d = (oci_device){ .type = type, .path = (char *) path, .major = major_, .minor = minor_ };
        d->has_file_mode = mode >= 0;
        d->file_mode = mode < 0 ? 0 : (unsigned) mode;
}

static rt_rootfs_params
params(void)
{
        return (rt_rootfs_params){ .spec = &spec, .rootfs = rootfs, .bundle = base };
}

/* A private mount namespace with <base> as a tmpfs: <base>/rootfs (bin etc tmp proc sys
 * dev), <base>/outside (the host directory attacks aim at) and <base>/src (a bind source
 * holding the file "f"). */
static void
sandbox(void)
{
        CHECK(unshare(CLONE_NEWNS) == 0);
        CHECK(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0);
        CHECK(mount("tmpfs", base, "tmpfs", 0, "mode=0755") == 0);
        snprintf(rootfs, sizeof rootfs, "%s/rootfs", base);
        snprintf(outside, sizeof outside, "%s/outside", base);
        snprintf(src, sizeof src, "%s/src", base);
        mkdir_p(rootfs);
        mkdir_p(outside);
        mkdir_p(src);
        static const char *const dirs[] = { "bin", "etc", "tmp", "proc", "sys", "dev" };
        for (size_t i = 0; i < ARRAY_SIZE(dirs); i++) {
                char p[PATH_MAX];
                snprintf(p, sizeof p, "%s/%s", rootfs, dirs[i]);
                mkdir_p(p);
        }
        char p[PATH_MAX];
        snprintf(p, sizeof p, "%s/f", src);
        write_file(p, "src");
        spec = (oci_spec){ .mounts = mounts, .linux_ = &lnx };
        lnx = (oci_linux){ .devices = devs, .masked_paths = { .v = masked },
                           .readonly_paths = { .v = ropaths } };
        umask(022);
}

static void
copy_busybox(const char *dst)
{
        int in = open("/bin/busybox", O_RDONLY | O_CLOEXEC);
        CHECK(in >= 0);
        int out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
        CHECK(out >= 0);
        struct stat st;
        CHECK(fstat(in, &st) == 0);
        CHECK(sendfile(out, in, NULL, (size_t) st.st_size) == st.st_size);
        close(in);
        close(out);
}

static int
enter(void)
{
        rt_rootfs_params p = params();
        int rootfd = -1;
        CHECK_OK(rt_rootfs_setup_child(&p, &rootfd, &e), e);
        CHECK_OK(rt_rootfs_pivot_child(rootfd, false, &e), e);
        CHECK_OK(rt_rootfs_finalize_child(&p, &e), e);
        return rootfd;
}

/* ---- tests ---- */

static void
test_mount_types(void)
{
        char buf[64];
        sandbox();
        add_mount("/proc", "proc", "proc", "nosuid,noexec,nodev");
        add_mount("/dev", "tmpfs", "tmpfs", "nosuid,strictatime,mode=755,size=65536k");
        add_mount("/dev/pts", "devpts", "devpts",
                  "nosuid,noexec,newinstance,ptmxmode=0666,mode=0620");
        add_mount("/dev/shm", "tmpfs", "shm", "nosuid,noexec,nodev,mode=1777,size=65536k");
        add_mount("/dev/mqueue", "mqueue", "mqueue", "nosuid,noexec,nodev");
        add_mount("/sys", "sysfs", "sysfs", "nosuid,noexec,nodev,ro");
        add_mount("/sys/fs/cgroup", "cgroup", "cgroup", "nosuid,noexec,nodev,relatime,ro");
        add_mount("/data", "tmpfs", "tmpfs", "nosuid,nodev,noexec,mode=750,size=1m");
        add_mount("/mnt/ro", NULL, src, "bind,ro");
        add_mount("/mnt/rw", "bind", "src", "rbind,rw");        /* relative to the bundle */
        add_mount("/etc/f", "none", "src/f", "bind,ro,nosuid");
        enter();

        CHECK(fs_magic("/proc") == PROC_SUPER_MAGIC);
        CHECK(fs_magic("/dev") == TMPFS_MAGIC);
        CHECK(fs_magic("/dev/pts") == DEVPTS_SUPER_MAGIC);
        CHECK(fs_magic("/dev/shm") == TMPFS_MAGIC);
        CHECK(fs_magic("/dev/mqueue") == MQUEUE_MAGIC);
        CHECK(fs_magic("/sys") == SYSFS_MAGIC && (vfs_flags("/sys") & ST_RDONLY));
        CHECK(vfs_flags("/sys/fs/cgroup") & ST_RDONLY);
        if (fs_magic("/sys/fs/cgroup") == TMPFS_MAGIC) {        /* v1 / hybrid host */
                CHECK(fs_magic("/sys/fs/cgroup/memory") == CGROUP_SUPER_MAGIC);
                CHECK(vfs_flags("/sys/fs/cgroup/memory") & ST_RDONLY);
                CHECK(write_errno("/sys/fs/cgroup/memory/x") == EROFS);
                CHECK(write_errno("/sys/fs/cgroup/x") == EROFS);
        } else {
                CHECK(fs_magic("/sys/fs/cgroup") == CGROUP2_SUPER_MAGIC);
        }

        unsigned long want = ST_NOSUID | ST_NODEV | ST_NOEXEC;
        CHECK((vfs_flags("/data") & want) == want);
        CHECK((vfs_flags("/proc") & want) == want);
        CHECK(!(vfs_flags("/dev") & ST_NODEV) && (vfs_flags("/dev") & ST_NOSUID));
        struct stat st;
        CHECK(stat("/data", &st) == 0 && (st.st_mode & 07777) == 0750);
        CHECK(stat("/dev/shm", &st) == 0 && (st.st_mode & 07777) == 01777);

        CHECK(read_file("/mnt/ro/f", buf, sizeof buf) == 3 && !strcmp(buf, "src"));
        CHECK(write_errno("/mnt/ro/f") == EROFS);
        CHECK(write_errno("/mnt/rw/new") == 0);
        CHECK(read_file("/etc/f", buf, sizeof buf) == 3);
        CHECK(write_errno("/etc/f") == EROFS);
        CHECK(vfs_flags("/etc/f") & ST_NOSUID);
        CHECK(stat("/etc/f", &st) == 0 && S_ISREG(st.st_mode));
}

/* noexec must really stop execve, and the same binary elsewhere must run. */
static void
test_noexec_really(void)
{
        char p[PATH_MAX];
        sandbox();
        snprintf(p, sizeof p, "%s/bin/busybox", rootfs);
        copy_busybox(p);
        add_mount("/data", "tmpfs", "tmpfs", "noexec");
        enter();
        copy_busybox("/data/busybox");
        for (int i = 0; i < 2; i++) {
                pid_t pid = fork();
                CHECK(pid >= 0);
                if (pid == 0) {
                        char *argv[] = { "true", NULL };
                        execv(i == 0 ? "/data/busybox" : "/bin/busybox", argv);
                        _exit(errno == EACCES ? 77 : 78);
                }
                int st = 0;
                CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st));
                CHECK(WEXITSTATUS(st) == (i == 0 ? 77 : 0));
        }
}

/* A destination through a symlink to a host path, or with "..", lands inside the
 * rootfs (clamped), never in the host directory. */
static void
test_symlink_destination_stays_inside(void)
{
        char p[PATH_MAX];
        sandbox();
        snprintf(p, sizeof p, "%s/evil", rootfs);
        CHECK(symlink(outside, p) == 0);
        snprintf(p, sizeof p, "%s/up", rootfs);
        CHECK(symlink("../../../../../../../..", p) == 0);
        add_mount("/evil/tmpfs", "tmpfs", "tmpfs", NULL);
        add_mount("/evil/bind", NULL, src, "bind");
        add_mount("/up/outside/x", "tmpfs", "tmpfs", NULL);
        add_mount("/../../../outside/y", "tmpfs", "tmpfs", NULL);
        rt_rootfs_params prm = params();
        int rootfd = -1;
        CHECK_OK(rt_rootfs_setup_child(&prm, &rootfd, &e), e);

        CHECK(dir_is_empty(outside) && !is_mount_root(outside));
        snprintf(p, sizeof p, "%s%s/tmpfs", rootfs, outside);
        CHECK(is_mount_root(p) && fs_magic(p) == TMPFS_MAGIC);
        snprintf(p, sizeof p, "%s%s/bind/f", rootfs, outside);
        CHECK(access(p, F_OK) == 0);
        snprintf(p, sizeof p, "%s/outside/x", rootfs);
        CHECK(is_mount_root(p));
        snprintf(p, sizeof p, "%s/outside/y", rootfs);
        CHECK(is_mount_root(p));
}

/* CVE-2019-19921: proc and sysfs never go through a symlink, nor onto a file. */
static void
test_proc_sys_symlink_refused(void)
{
        char p[PATH_MAX];
        rt_rootfs_params prm;
        int rootfd = -1;

        sandbox();
        snprintf(p, sizeof p, "%s/proc", rootfs);
        CHECK(rmdir(p) == 0 && symlink(outside, p) == 0);
        add_mount("/proc", "proc", "proc", NULL);
        prm = params();
        CHECK_ERR(rt_rootfs_setup_child(&prm, &rootfd, &e), e, ELOOP,
                   "mount[0] 'proc' on '/proc': destination is a symlink, refusing");
        CHECK(fs_magic(outside) != PROC_SUPER_MAGIC && dir_is_empty(outside));

        /* a symlink higher up counts too */
        spec.n_mounts = 0;
        snprintf(p, sizeof p, "%s/sys", rootfs);
        CHECK(rmdir(p) == 0 && symlink(outside, p) == 0);
        add_mount("/sys/kernel/x", "sysfs", "sysfs", NULL);
        CHECK_ERR(rt_rootfs_setup_child(&prm, &rootfd, &e), e, ELOOP, "destination is a symlink");
        CHECK(dir_is_empty(outside));

        spec.n_mounts = 0;
        snprintf(p, sizeof p, "%s/etc/proc", rootfs);
        write_file(p, "");
        add_mount("/etc/proc", "proc", "proc", NULL);
        CHECK_ERR(rt_rootfs_setup_child(&prm, &rootfd, &e), e, ENOTDIR,
                   "destination is not a directory, refusing");
}

/* CVE-2026-41579 / CVE-2026-47766: a /dev symlink never redirects device creation. */
static void
test_dev_symlink_refused(void)
{
        char p[PATH_MAX];
        int rootfd = -1;
        sandbox();
        snprintf(p, sizeof p, "%s/dev", rootfs);
        CHECK(rmdir(p) == 0 && symlink(outside, p) == 0);
        add_device('c', "/dev/evil", 1, 3, 0666);
        rt_rootfs_params prm = params();
        CHECK_ERR(rt_rootfs_setup_child(&prm, &rootfd, &e), e, ELOOP,
                   "'/dev' is or contains a symlink, refusing");
        CHECK(dir_is_empty(outside));

        /* the same through a subdirectory of a real /dev */
        CHECK(unlink(p) == 0);
        mkdir_p(p);
        snprintf(p, sizeof p, "%s/dev/sub", rootfs);
        CHECK(symlink(outside, p) == 0);
        lnx.n_devices = 0;
        add_device('c', "/dev/sub/evil", 1, 3, 0666);
        CHECK_ERR(rt_rootfs_setup_child(&prm, &rootfd, &e), e, ELOOP, "dev/sub");
        CHECK(dir_is_empty(outside));
}

static void
check_node(const char *path, mode_t type, unsigned maj, unsigned min, mode_t mode)
{
        struct stat st;
        CHECK(lstat(path, &st) == 0);
        if ((st.st_mode & S_IFMT) != type || (type != S_IFIFO && st.st_rdev != makedev(maj, min)) ||
            (st.st_mode & 07777) != mode)
                printf("# %s: mode 0%o rdev %u:%u\n", path, st.st_mode, major(st.st_rdev),
                       minor(st.st_rdev));
        CHECK((st.st_mode & S_IFMT) == type && (st.st_mode & 07777) == mode);
        CHECK(type == S_IFIFO || st.st_rdev == makedev(maj, min));
}

static void
test_devices(void)
{
        char buf[64];
        struct stat st;
        sandbox();
        add_mount("/dev", "tmpfs", "tmpfs", "nosuid,mode=755");
        add_device('c', "/dev/mynull", 1, 3, 0600);
        devs[0].has_uid = devs[0].has_gid = true;
        devs[0].uid = 1000;
        devs[0].gid = 1001;
        add_device('p', "/dev/myfifo", 0, 0, 0640);
        add_device('b', "/dev/loop200", 7, 200, 0660);
        add_device('u', "/dev/sub/dir/zero", 1, 5, -1);
        add_device('c', "/dev/tty", 5, 0, 0620);                /* overrides the default */
        umask(077);                                             /* must not matter */
        enter();

        check_node("/dev/null", S_IFCHR, 1, 3, 0666);
        check_node("/dev/zero", S_IFCHR, 1, 5, 0666);
        check_node("/dev/full", S_IFCHR, 1, 7, 0666);
        check_node("/dev/random", S_IFCHR, 1, 8, 0666);
        check_node("/dev/urandom", S_IFCHR, 1, 9, 0666);
        check_node("/dev/tty", S_IFCHR, 5, 0, 0620);
        check_node("/dev/mynull", S_IFCHR, 1, 3, 0600);
        CHECK(stat("/dev/mynull", &st) == 0 && st.st_uid == 1000 && st.st_gid == 1001);
        check_node("/dev/myfifo", S_IFIFO, 0, 0, 0640);
        check_node("/dev/loop200", S_IFBLK, 7, 200, 0660);
        check_node("/dev/sub/dir/zero", S_IFCHR, 1, 5, 0666);
        static const char *const links[][2] = {
                { "/dev/fd", "/proc/self/fd" },   { "/dev/stdin", "/proc/self/fd/0" },
                { "/dev/stdout", "/proc/self/fd/1" }, { "/dev/stderr", "/proc/self/fd/2" },
                { "/dev/ptmx", "pts/ptmx" },
        };
        for (size_t i = 0; i < ARRAY_SIZE(links); i++) {
                ssize_t n = readlink(links[i][0], buf, sizeof buf - 1);
                CHECK(n > 0);
                buf[n] = '\0';
                CHECK(strcmp(buf, links[i][1]) == 0);
        }
        CHECK(stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode));
        CHECK(stat("/dev/pts", &st) == 0 && S_ISDIR(st.st_mode));
        int fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);
        CHECK(fd >= 0 && read(fd, buf, 4) == 4 && buf[0] == 0);
        close(fd);
}

static void
test_device_paths_refused(void)
{
        int rootfd = -1;
        static const char *const bad[] = { "/etc/evil", "/dev/../etc/evil", "/dev/", "/dev",
                                           "dev/x", "/dev/./x" };
        for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
                sandbox();
                add_device('c', bad[i], 1, 3, 0666);
                rt_rootfs_params prm = params();
                CHECK_ERR(rt_rootfs_setup_child(&prm, &rootfd, &e), e, EINVAL,
                           "path must be under /dev");
        }
        char p[PATH_MAX];
        snprintf(p, sizeof p, "%s/etc/evil", rootfs);
        CHECK(access(p, F_OK) < 0);
        sandbox();
        add_device('x', "/dev/x", 1, 3, 0666);
        rt_rootfs_params prm = params();
        CHECK_ERR(rt_rootfs_setup_child(&prm, &rootfd, &e), e, EINVAL, "unknown type 'x'");
}

static void
test_tmpcopyup(void)
{
        char p[PATH_MAX], buf[64];
        struct stat st;
        sandbox();
        snprintf(p, sizeof p, "%s/etc/conf", rootfs);
        CHECK(mkdir(p, 0750) == 0 && chown(p, 5, 6) == 0);
        snprintf(p, sizeof p, "%s/etc/conf/a.txt", rootfs);
        write_file(p, "hello");
        CHECK(chown(p, 123, 456) == 0 && chmod(p, 0640) == 0);
        snprintf(p, sizeof p, "%s/etc/conf/sub", rootfs);
        CHECK(mkdir(p, 0711) == 0);
        snprintf(p, sizeof p, "%s/etc/conf/sub/b", rootfs);
        write_file(p, "bb");
        snprintf(p, sizeof p, "%s/etc/conf/link", rootfs);
        CHECK(symlink("a.txt", p) == 0);
        snprintf(p, sizeof p, "%s/etc/ro", rootfs);
        CHECK(mkdir(p, 0755) == 0);
        snprintf(p, sizeof p, "%s/etc/ro/c", rootfs);
        write_file(p, "c");
        add_mount("/etc/conf", "tmpfs", "tmpfs", "tmpcopyup,nosuid");
        add_mount("/etc/ro", "tmpfs", "tmpfs", "tmpcopyup,ro,mode=700");
        enter();

        CHECK(fs_magic("/etc/conf") == TMPFS_MAGIC && is_mount_root("/etc/conf"));
        CHECK(stat("/etc/conf", &st) == 0 && (st.st_mode & 07777) == 0750);
        CHECK(st.st_uid == 5 && st.st_gid == 6);
        CHECK(read_file("/etc/conf/a.txt", buf, sizeof buf) == 5 && !strcmp(buf, "hello"));
        CHECK(stat("/etc/conf/a.txt", &st) == 0 && (st.st_mode & 07777) == 0640);
        CHECK(st.st_uid == 123 && st.st_gid == 456);
        CHECK(stat("/etc/conf/sub", &st) == 0 && (st.st_mode & 07777) == 0711);
        CHECK(read_file("/etc/conf/sub/b", buf, sizeof buf) == 2);
        CHECK(readlink("/etc/conf/link", buf, sizeof buf) == 5);
        CHECK(write_errno("/etc/conf/new") == 0);
        /* copied, then read-only; mode= from the options wins */
        CHECK(read_file("/etc/ro/c", buf, sizeof buf) == 1);
        CHECK(write_errno("/etc/ro/new") == EROFS);
        CHECK(stat("/etc/ro", &st) == 0 && (st.st_mode & 07777) == 0700);
}

static void
test_readonly(void)
{
        char p[PATH_MAX];
        sandbox();
        snprintf(p, sizeof p, "%s/sub", src);
        mkdir_p(p);
        CHECK(mount("tmpfs", p, "tmpfs", 0, NULL) == 0);        /* a submount of the source */
        spec.root_readonly = true;
        ropaths[0] = "/etc";
        ropaths[1] = "/missing";
        ropaths[2] = "/proc/sys";
        lnx.readonly_paths.n = 3;
        add_mount("/proc", "proc", "proc", NULL);
        add_mount("/tmp", "tmpfs", "tmpfs", NULL);
        add_mount("/mnt/rro", NULL, src, "rbind,rro");
        add_mount("/mnt/ro", NULL, src, "rbind,ro");
        enter();

        CHECK(write_errno("/newfile") == EROFS);
        CHECK(write_errno("/etc/newfile") == EROFS);
        CHECK(write_errno("/tmp/newfile") == 0);                /* only "/" itself */
        CHECK(write_errno("/mnt/rro/sub/x") == EROFS);          /* recursive */
        CHECK(write_errno("/mnt/ro/new") == EROFS);
        CHECK(write_errno("/mnt/ro/sub/x") == 0);               /* "ro" is the top only */
        CHECK(vfs_flags("/proc/sys") & ST_RDONLY);
        CHECK(write_errno("/proc/sys/kernel/hostname") == EROFS);
        CHECK(!(vfs_flags("/proc") & ST_RDONLY));
}

static void
test_masked(void)
{
        char p[PATH_MAX], buf[64];
        struct stat st;
        sandbox();
        snprintf(p, sizeof p, "%s/secret.txt", rootfs);
        write_file(p, "secret");
        snprintf(p, sizeof p, "%s/secretdir", rootfs);
        mkdir_p(p);
        snprintf(p, sizeof p, "%s/secretdir/x", rootfs);
        write_file(p, "x");
        masked[0] = "/secret.txt";
        masked[1] = "/secretdir";
        masked[2] = "/missing";
        masked[3] = "/proc/kcore";
        masked[4] = "/proc/acpi";
        lnx.masked_paths.n = 5;
        add_mount("/proc", "proc", "proc", NULL);
        add_mount("/dev", "tmpfs", "tmpfs", NULL);
        enter();

        CHECK(read_file("/secret.txt", buf, sizeof buf) == 0);
        CHECK(stat("/secret.txt", &st) == 0 && S_ISCHR(st.st_mode));
        CHECK(vfs_flags("/secret.txt") & ST_RDONLY);
        CHECK(dir_is_empty("/secretdir"));
        CHECK(write_errno("/secretdir/new") == EROFS);
        if (access("/proc/kcore", F_OK) == 0)           /* not every kernel has one */
                CHECK(read_file("/proc/kcore", buf, sizeof buf) == 0);
        CHECK(access("/missing", F_OK) < 0);
        if (access("/proc/acpi", F_OK) == 0)
                CHECK(dir_is_empty("/proc/acpi"));
}

/* CVE-2025-31133: /dev/null swapped for a symlink (or a file) before masking. The mask
 * is refused and the target is never bound over the masked path. */
static void
test_masked_devnull_swapped(void)
{
        char p[PATH_MAX], buf[64];
        for (int variant = 0; variant < 2; variant++) {
                pid_t pid = fork();
                CHECK(pid >= 0);
                if (pid > 0) {
                        int st = 0;
                        CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && !WEXITSTATUS(st));
                        continue;
                }
                sandbox();
                snprintf(p, sizeof p, "%s/secret.txt", rootfs);
                write_file(p, "secret");
                snprintf(p, sizeof p, "%s/etc/precious", rootfs);
                write_file(p, "precious");
                masked[0] = "/secret.txt";
                lnx.masked_paths.n = 1;
                add_mount("/dev", "tmpfs", "tmpfs", NULL);
                rt_rootfs_params prm = params();
                int rootfd = -1;
                CHECK_OK(rt_rootfs_setup_child(&prm, &rootfd, &e), e);
                snprintf(p, sizeof p, "%s/dev/null", rootfs);
                CHECK(unlink(p) == 0);
                if (variant == 0)
                        CHECK(symlink("/etc/precious", p) == 0);
                else
                        write_file(p, "");
                CHECK_OK(rt_rootfs_pivot_child(rootfd, false, &e), e);
                CHECK_ERR(rt_rootfs_finalize_child(&prm, &e), e, EPERM,
                           "'/dev/null' is not the null device, refusing");
                CHECK(read_file("/secret.txt", buf, sizeof buf) == 6);
                CHECK(!is_mount_root("/secret.txt") && !is_mount_root("/etc/precious"));
                CHECK(read_file("/etc/precious", buf, sizeof buf) == 8);
                _exit(0);
        }
}

/* After pivot_root nothing of the host tree is reachable. */
static void
test_pivot_no_old_root(void)
{
        char p[PATH_MAX], line[1024];
        struct stat want, st, up;
        sandbox();
        snprintf(p, sizeof p, "%s/marker", rootfs);
        write_file(p, "m");
        CHECK(stat(p, &want) == 0);
        add_mount("/proc", "proc", "proc", NULL);
        enter();

        char cwd[PATH_MAX];
        CHECK(getcwd(cwd, sizeof cwd) && strcmp(cwd, "/") == 0);
        CHECK(stat("/marker", &st) == 0 && st.st_ino == want.st_ino && st.st_dev == want.st_dev);
        CHECK(stat("/", &st) == 0 && stat("/..", &up) == 0 && st.st_ino == up.st_ino);
        CHECK(access(base, F_OK) < 0 && access("/tmp/rt-rootfs-marker", F_OK) < 0);
        /* exactly two mounts are left: the rootfs and /proc */
        FILE *f = fopen("/proc/self/mountinfo", "re");
        CHECK(f);
        int n = 0;
        while (fgets(line, sizeof line, f)) {
                printf("# mountinfo: %s", line);
                n++;
        }
        fclose(f);
        CHECK(n == 2);
}

static void
test_no_pivot(void)
{
        char p[PATH_MAX];
        struct stat want, st, up;
        sandbox();
        snprintf(p, sizeof p, "%s/marker", rootfs);
        write_file(p, "m");
        CHECK(stat(p, &want) == 0);
        rt_rootfs_params prm = params();
        prm.no_pivot = true;
        int rootfd = -1;
        CHECK_OK(rt_rootfs_setup_child(&prm, &rootfd, &e), e);
        CHECK_OK(rt_rootfs_pivot_child(rootfd, true, &e), e);
        CHECK_OK(rt_rootfs_finalize_child(&prm, &e), e);
        CHECK(stat("/marker", &st) == 0 && st.st_ino == want.st_ino);
        CHECK(stat("/", &st) == 0 && stat("/..", &up) == 0 && st.st_ino == up.st_ino);
        CHECK(access(base, F_OK) < 0);
}

/* CVE-2025-52565: the console is the TIOCGPTPEER fd, whatever /dev/console or
 * /dev/pts/N have been swapped for. */
static void
test_console(void)
{
        char p[PATH_MAX], target[PATH_MAX];
        struct stat st, want;
        sandbox();
        add_mount("/dev", "tmpfs", "tmpfs", NULL);
        add_mount("/dev/pts", "devpts", "devpts", "newinstance,ptmxmode=0666,mode=0620");
        rt_rootfs_params prm = params();
        int rootfd = -1;
        CHECK_OK(rt_rootfs_setup_child(&prm, &rootfd, &e), e);

        snprintf(p, sizeof p, "%s/dev/pts/ptmx", rootfs);
        int master = open(p, O_RDWR | O_NOCTTY | O_CLOEXEC);
        CHECK(master >= 0);
        int unlock = 0;
        CHECK(ioctl(master, TIOCSPTLCK, &unlock) == 0);
        int slave = ioctl(master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
        CHECK(slave >= 0 && fstat(slave, &want) == 0);
        /* the attack: /dev/console is a symlink to a host file */
        snprintf(target, sizeof target, "%s/target", outside);
        write_file(target, "host");
        snprintf(p, sizeof p, "%s/dev/console", rootfs);
        CHECK(symlink(target, p) == 0);
        CHECK_OK(rt_devices_mount_console_child(rootfd, slave, &e), e);

        CHECK(lstat(p, &st) == 0 && S_ISCHR(st.st_mode) && st.st_rdev == want.st_rdev);
        CHECK(!is_mount_root(target) && lstat(target, &st) == 0 && S_ISREG(st.st_mode));
        CHECK_OK(rt_rootfs_pivot_child(rootfd, false, &e), e);
        int fd = open("/dev/console", O_RDWR | O_NOCTTY | O_CLOEXEC);
        CHECK(fd >= 0 && isatty(fd));
        CHECK(write(fd, "x\n", 2) == 2);
}

/* Rootless-style: mknod and sysfs are refused in a user namespace without its own
 * network namespace; device nodes and /sys become read-only binds of the host's. */
static void
test_userns(void)
{
        struct stat st;
        CHECK(unshare(CLONE_NEWUSER) == 0);
        write_file("/proc/self/uid_map", "0 0 1");
        write_file("/proc/self/setgroups", "deny");
        write_file("/proc/self/gid_map", "0 0 1");
        sandbox();
        add_mount("/dev", "tmpfs", "tmpfs", "nosuid,mode=755");
        add_mount("/dev/pts", "devpts", "devpts", "newinstance,ptmxmode=0666,mode=0620,gid=5");
        add_mount("/sys", "sysfs", "sysfs", "nosuid,noexec,nodev");
        add_device('c', "/dev/fuse", 10, 229, 0666);
        rt_rootfs_params p = params();
        p.in_userns = true;
        int rootfd = -1;
        CHECK_OK(rt_rootfs_setup_child(&p, &rootfd, &e), e);
        CHECK_OK(rt_rootfs_pivot_child(rootfd, false, &e), e);
        CHECK_OK(rt_rootfs_finalize_child(&p, &e), e);

        CHECK(stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3));
        CHECK(is_mount_root("/dev/null"));
        if (stat("/dev/fuse", &st) == 0)
                CHECK(S_ISCHR(st.st_mode) && st.st_rdev == makedev(10, 229));
        int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
        CHECK(fd >= 0 && write(fd, "x", 1) == 1);
        close(fd);
        CHECK(fs_magic("/sys") == SYSFS_MAGIC && (vfs_flags("/sys") & ST_RDONLY));
        CHECK(fs_magic("/dev/pts") == DEVPTS_SUPER_MAGIC);     /* unmapped gid=5 dropped */
}

static void
test_errors(void)
{
        static const struct {
                const char *dest, *type, *source, *opts;
                int eno;
                const char *msg;
        } cases[] = {
                { "/data", NULL, "nonexistent", "bind", ENOENT, "mount[0] '/data': source '" },
                { "/x", "tmpfs", "tmpfs", "nosiud", EINVAL,
                  "mount '/x': unknown mount option 'nosiud'" },
                { "/x", NULL, "/tmp", "bind,idmap", EOPNOTSUPP, "idmapped mounts" },
                { "/x", NULL, "/tmp", "bind,tmpcopyup", EINVAL, "'tmpcopyup' needs a tmpfs" },
                { "/x", "none", "none", NULL, EINVAL, "no type and no 'bind' option" },
                { "/", "tmpfs", "tmpfs", NULL, EINVAL, "cannot mount over the root" },
                { "/x", "nosuchfs", "x", NULL, ENODEV, "mount[0] 'nosuchfs' on '/x': fsopen" },
                { "/x", "tmpfs", "tmpfs", "size=bogus", EINVAL, "fsconfig option 'size=bogus'" },
                { "/etc/f", NULL, "src", "bind", ENOTDIR, "open 'etc/f': Not a directory" },
                { "/etc", NULL, "src/f", "bind", EISDIR, "cannot bind a file onto a directory" },
        };
        char p[PATH_MAX];
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                sandbox();
                snprintf(p, sizeof p, "%s/etc/f", rootfs);
                write_file(p, "");
                add_mount(cases[i].dest, cases[i].type, cases[i].source, cases[i].opts);
                rt_rootfs_params prm = params();
                int rootfd = -1;
                CHECK_ERR(rt_rootfs_setup_child(&prm, &rootfd, &e), e, cases[i].eno, cases[i].msg);
        }
}

static void
test_propagation(void)
{
        char line[1024];
        sandbox();
        lnx.has_rootfs_propagation = true;
        lnx.rootfs_propagation = MS_PRIVATE | MS_REC;
        add_mount("/proc", "proc", "proc", NULL);
        add_mount("/shared", "tmpfs", "tmpfs", "rshared");
        add_mount("/private", "tmpfs", "tmpfs", "private");
        enter();
        FILE *f = fopen("/proc/self/mountinfo", "re");
        CHECK(f);
        int shared = 0, private = 0;
        while (fgets(line, sizeof line, f)) {
                printf("# mountinfo: %s", line);
                char *mp = strchr(strchr(strchr(strchr(line, ' ') + 1, ' ') + 1, ' ') + 1, ' ') + 1;
                if (!strncmp(mp, "/shared ", 8))
                        shared = strstr(line, " shared:") != NULL;
                if (!strncmp(mp, "/private ", 9))
                        private = strstr(line, " shared:") == NULL && !strstr(line, "master:");
        }
        fclose(f);
        CHECK(shared && private);
}

/* A shared rootfsPropagation must still pivot (the rootfs mount is made private) and
 * ends up on the new "/". */
static void
test_propagation_shared_root(void)
{
        char line[1024];
        sandbox();
        lnx.has_rootfs_propagation = true;
        lnx.rootfs_propagation = MS_SHARED | MS_REC;
        add_mount("/proc", "proc", "proc", NULL);
        enter();
        FILE *f = fopen("/proc/self/mountinfo", "re");
        CHECK(f && fgets(line, sizeof line, f));
        printf("# mountinfo: %s", line);
        char mp[256];
        CHECK(sscanf(line, "%*d %*d %*s %*s %255s", mp) == 1 && strcmp(mp, "/") == 0);
        CHECK(strstr(line, " shared:"));
        fclose(f);
}

int
main(void)
{
        if (require_root())
                return 0;
        fs_run("mount types and flags: proc sysfs cgroup devpts mqueue tmpfs bind",
               test_mount_types);
        fs_run("noexec really stops execve", test_noexec_really);
        fs_run("attack: symlinked and '..' destinations stay inside",
               test_symlink_destination_stays_inside);
        fs_run("attack: proc/sysfs through a symlink or onto a file refused",
               test_proc_sys_symlink_refused);
        fs_run("attack: /dev symlink never redirects devices", test_dev_symlink_refused);
        fs_run("devices: defaults, linux.devices, modes, owners, links", test_devices);
        fs_run("devices: paths outside /dev and bad types refused", test_device_paths_refused);
        fs_run("tmpcopyup: content, owners, modes, then read-only", test_tmpcopyup);
        fs_run("read-only: root.readonly, readonlyPaths, rro vs ro", test_readonly);
        fs_run("maskedPaths: files, directories, missing paths", test_masked);
        fs_run("attack: /dev/null swapped before masking", test_masked_devnull_swapped);
        fs_run("pivot_root: the old root is gone", test_pivot_no_old_root);
        fs_run("no-pivot: MS_MOVE + chroot", test_no_pivot);
        fs_run("console: TIOCGPTPEER fd over a symlinked /dev/console", test_console);
        fs_run("user namespace: bound device nodes, read-only host /sys, devpts gid", test_userns);
        fs_run("errors name the mount, option and syscall", test_errors);
        fs_run("propagation: rootfsPropagation and per-mount options", test_propagation);
        fs_run("propagation: a shared rootfsPropagation still pivots",
               test_propagation_shared_root);
        return tap_done();
}
