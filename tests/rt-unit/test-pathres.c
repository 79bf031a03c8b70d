/* Path resolution inside a rootfs: openat2(RESOLVE_IN_ROOT) lookups, the fd-scoped
 * mkdir walk and the tmpcopyup copier, against a real tmpfs in a private mount
 * namespace. Each test runs in a forked child; the parent reports TAP. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "oci/macros.h"
#include "lib/pathres.h"
#include "tests/lib/fs-test.h"

static char root[128];
static char outside[128];

/* <base> becomes a tmpfs in a mount namespace of our own: <base>/root is the rootfs,
 * <base>/outside plays the host directory an attacker aims at. */
static int
sandbox(void)
{
        CHECK(unshare(CLONE_NEWNS) == 0);
        CHECK(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0);
        CHECK(mount("tmpfs", base, "tmpfs", 0, "mode=0755") == 0);
        snprintf(root, sizeof root, "%s/root", base);
        snprintf(outside, sizeof outside, "%s/outside", base);
        CHECK(mkdir(root, 0755) == 0);
        CHECK(mkdir(outside, 0755) == 0);
        umask(022);
        int fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
        CHECK(fd >= 0);
        return fd;
}

static void
put(const char *rel, const char *content)
{
        char p[PATH_MAX];
        snprintf(p, sizeof p, "%s/%s", root, rel);
        int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        CHECK(fd >= 0);
        CHECK(write(fd, content, strlen(content)) == (ssize_t) strlen(content));
        close(fd);
}

static void
link_in_root(const char *target, const char *rel)
{
        char p[PATH_MAX];
        snprintf(p, sizeof p, "%s/%s", root, rel);
        CHECK(symlink(target, p) == 0);
}

/* The file an fd refers to, read back through /proc/self/fd. */
static void
fd_path(int fd, char *buf, size_t size)
{
        char p[64];
        snprintf(p, sizeof p, "/proc/self/fd/%d", fd);
        ssize_t n = readlink(p, buf, size - 1);
        CHECK(n > 0);
        buf[n] = '\0';
}

static void
expect_at(int fd, const char *rel)
{
        char got[PATH_MAX], want[PATH_MAX];
        fd_path(fd, got, sizeof got);
        snprintf(want, sizeof want, "%s%s%s", root, *rel ? "/" : "", rel);
        if (strcmp(got, want) != 0)
                printf("# fd is at '%s', expected '%s'\n", got, want);
        CHECK(strcmp(got, want) == 0);
}

static void
test_open_plain(void)
{
        int rootfd = sandbox();
        put("file", "x");
        int fd = CHECK_OK(rt_open_in_root(rootfd, "/file", O_RDONLY, &e), e);
        expect_at(fd, "file");
        CHECK(fcntl(fd, F_GETFD) & FD_CLOEXEC);
        close(fd);
        CHECK_ERR(rt_open_in_root(rootfd, "missing", O_RDONLY, &e), e, ENOENT,
                   "open 'missing' in rootfs");
}

static void
test_dotdot_clamped(void)
{
        int rootfd = sandbox();
        put("file", "x");
        int fd = CHECK_OK(rt_open_in_root(rootfd, "../../../../file", O_PATH, &e), e);
        expect_at(fd, "file");
        close(fd);
        fd = CHECK_OK(rt_open_in_root(rootfd, "/..", O_PATH | O_DIRECTORY, &e), e);
        expect_at(fd, "");
        close(fd);
        /* the host file next to the rootfs is unreachable */
        CHECK_ERR(rt_open_in_root(rootfd, "../outside", O_PATH, &e), e, ENOENT, "open");
}

static void
test_symlinks_clamped(void)
{
        int rootfd = sandbox();
        char p[PATH_MAX];
        CHECK(mkdir(strcat(strcpy(p, root), "/etc"), 0755) == 0);
        put("etc/passwd", "container");
        link_in_root("/etc", "abs");                    /* absolute: inside the root */
        link_in_root("../../../../../etc", "rel");      /* relative with ..: clamped */
        link_in_root(outside, "host");                  /* a host path: inside the root */
        int fd = CHECK_OK(rt_open_in_root(rootfd, "abs/passwd", O_RDONLY, &e), e);
        expect_at(fd, "etc/passwd");
        close(fd);
        fd = CHECK_OK(rt_open_in_root(rootfd, "rel/passwd", O_RDONLY, &e), e);
        expect_at(fd, "etc/passwd");
        close(fd);
        CHECK_ERR(rt_open_in_root(rootfd, "host", O_PATH, &e), e, ENOENT, "open 'host'");
}

static void
test_magic_links_refused(void)
{
        int rootfd = sandbox();
        char p[PATH_MAX];
        snprintf(p, sizeof p, "%s/proc", root);
        CHECK(mkdir(p, 0755) == 0);
        CHECK(mount("proc", p, "proc", 0, NULL) == 0);
        /* /proc/self/root would lead to the host root */
        CHECK_ERR(rt_open_in_root(rootfd, "proc/self/root/etc", O_PATH, &e), e, ELOOP,
                   "proc/self/root");
        CHECK_ERR(rt_open_in_root(rootfd, "proc/self/cwd", O_PATH, &e), e, ELOOP, "open");
        /* a plain symlink in the image pointing at a magic link is refused too */
        link_in_root("/proc/self/root", "escape");
        CHECK_ERR(rt_open_in_root(rootfd, "escape/etc", O_PATH, &e), e, ELOOP, "open");
}

static void
test_mkpath_dirs(void)
{
        int rootfd = sandbox();
        char p[PATH_MAX];
        umask(077);
        int fd = CHECK_OK(rt_mkpath_in_root(rootfd, "/a/b//./c/", true, &e), e);
        expect_at(fd, "a/b/c");
        struct stat st;
        CHECK(fstat(fd, &st) == 0 && S_ISDIR(st.st_mode));
        close(fd);
        /* existing path: the same directory, nothing changed */
        fd = CHECK_OK(rt_mkpath_in_root(rootfd, "a/b/c", true, &e), e);
        expect_at(fd, "a/b/c");
        close(fd);
        /* the root itself */
        fd = CHECK_OK(rt_mkpath_in_root(rootfd, "/", true, &e), e);
        expect_at(fd, "");
        close(fd);
        snprintf(p, sizeof p, "%s/a", root);
        CHECK(stat(p, &st) == 0 && (st.st_mode & 07777) == 0700);      /* 0755 & ~umask */
}

static void
test_mkpath_file(void)
{
        int rootfd = sandbox();
        struct stat st;
        int fd = CHECK_OK(rt_mkpath_in_root(rootfd, "/etc/hostname", false, &e), e);
        expect_at(fd, "etc/hostname");
        CHECK(fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0);
        CHECK(fcntl(fd, F_GETFL) & O_PATH);
        close(fd);
        /* a file where a directory is wanted */
        CHECK_ERR(rt_mkpath_in_root(rootfd, "/etc/hostname", true, &e), e, ENOTDIR, "etc/hostname");
        CHECK_ERR(rt_mkpath_in_root(rootfd, "/etc/hostname/x", false, &e), e, ENOTDIR,
                   "etc/hostname");
}

/* A destination through a symlink to a host path must be created inside the rootfs
 * (securejoin semantics), never in the host directory. */
static void
test_mkpath_symlink_outside(void)
{
        int rootfd = sandbox();
        char p[PATH_MAX];
        link_in_root(outside, "evil");
        link_in_root("../../../..", "up");
        int fd = CHECK_OK(rt_mkpath_in_root(rootfd, "/evil/sub/dir", true, &e), e);
        close(fd);
        fd = CHECK_OK(rt_mkpath_in_root(rootfd, "/up/up/escaped", false, &e), e);
        expect_at(fd, "escaped");
        close(fd);
        fd = CHECK_OK(rt_mkpath_in_root(rootfd, "../../outside/x", true, &e), e);
        expect_at(fd, "outside/x");
        close(fd);
        CHECK(dir_is_empty(outside));
        snprintf(p, sizeof p, "%s%s/sub/dir", root, outside);
        struct stat st;
        CHECK(stat(p, &st) == 0 && S_ISDIR(st.st_mode));
}

static void
test_mkpath_dangling(void)
{
        int rootfd = sandbox();
        char p[PATH_MAX];
        struct stat st;
        /* dangling symlinks are created through, inside the root (securejoin semantics) */
        link_in_root("/nonexistent/target", "dangling");
        link_in_root("rel/x", "dangling-rel");
        link_in_root("loop2", "loop1");
        link_in_root("loop1", "loop2");
        int fd = CHECK_OK(rt_mkpath_in_root(rootfd, "/dangling/sub", true, &e), e);
        expect_at(fd, "nonexistent/target/sub");
        close(fd);
        fd = CHECK_OK(rt_mkpath_in_root(rootfd, "/dangling-rel", false, &e), e);
        expect_at(fd, "rel/x");
        CHECK(fstat(fd, &st) == 0 && S_ISREG(st.st_mode));
        close(fd);
        CHECK_ERR(rt_mkpath_in_root(rootfd, "/loop1/x", true, &e), e, ELOOP, "create '/loop1/x'");
        /* a magic link on the way is refused, not followed */
        snprintf(p, sizeof p, "%s/proc", root);
        CHECK(mkdir(p, 0755) == 0);
        CHECK(mount("proc", p, "proc", 0, NULL) == 0);
        CHECK_ERR(rt_mkpath_in_root(rootfd, "/proc/self/root/tmp/x", true, &e), e, ELOOP, "open");
        CHECK(dir_is_empty(outside));
}

static void
test_copy_tree(void)
{
        int rootfd = sandbox();
        char src[256], dst[256], p[PATH_MAX], buf[64];
        struct stat st;
        (void) rootfd;
        snprintf(src, sizeof src, "%s/src", root);
        snprintf(dst, sizeof dst, "%s/dst", root);
        CHECK(mkdir(src, 0755) == 0 && mkdir(dst, 0755) == 0);
        put("src/a.txt", "hello");
        snprintf(p, sizeof p, "%s/a.txt", src);
        CHECK(chown(p, 123, 456) == 0 && chmod(p, 04750) == 0);
        struct timespec ts[2] = { { 1000, 0 }, { 2000, 5 } };
        CHECK(utimensat(AT_FDCWD, p, ts, 0) == 0);
        snprintf(p, sizeof p, "%s/sub", src);
        CHECK(mkdir(p, 0700) == 0 && chown(p, 7, 8) == 0);
        put("src/sub/b", "bb");
        link_in_root("a.txt", "src/link");
        link_in_root("/etc/shadow", "src/abs");
        snprintf(p, sizeof p, "%s/fifo", src);
        CHECK(mkfifo(p, 0620) == 0 && chmod(p, 0620) == 0);

        int s = open(src, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        int d = open(dst, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        CHECK(s >= 0 && d >= 0);
        CHECK_OK(rt_copy_tree(s, d, &e), e);

        snprintf(p, sizeof p, "%s/a.txt", dst);
        CHECK(stat(p, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 07777) == 04750);
        CHECK(st.st_uid == 123 && st.st_gid == 456 && st.st_mtim.tv_sec == 2000);
        int fd = open(p, O_RDONLY | O_CLOEXEC);
        CHECK(fd >= 0 && read(fd, buf, sizeof buf) == 5 && memcmp(buf, "hello", 5) == 0);
        close(fd);
        snprintf(p, sizeof p, "%s/sub", dst);
        CHECK(stat(p, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 07777) == 0700);
        CHECK(st.st_uid == 7 && st.st_gid == 8);
        snprintf(p, sizeof p, "%s/sub/b", dst);
        CHECK(stat(p, &st) == 0 && st.st_size == 2);
        snprintf(p, sizeof p, "%s/link", dst);
        CHECK(readlink(p, buf, sizeof buf) == 5 && memcmp(buf, "a.txt", 5) == 0);
        snprintf(p, sizeof p, "%s/abs", dst);
        CHECK(readlink(p, buf, sizeof buf) == 11 && memcmp(buf, "/etc/shadow", 11) == 0);
        snprintf(p, sizeof p, "%s/fifo", dst);
        CHECK(lstat(p, &st) == 0 && S_ISFIFO(st.st_mode) && (st.st_mode & 07777) == 0620);
}

int
main(void)
{
        if (require_root())
                return 0;
        fs_run("open_in_root: plain file, O_CLOEXEC, ENOENT message", test_open_plain);
        fs_run("open_in_root: '..' is clamped to the root", test_dotdot_clamped);
        fs_run("open_in_root: symlinks are clamped to the root", test_symlinks_clamped);
        fs_run("open_in_root: magic links are refused", test_magic_links_refused);
        fs_run("mkpath: nested directories, idempotent", test_mkpath_dirs);
        fs_run("mkpath: final file, O_PATH, type clash", test_mkpath_file);
        fs_run("mkpath: symlink to a host path stays inside", test_mkpath_symlink_outside);
        fs_run("mkpath: through dangling symlinks; loops and magic links refused",
               test_mkpath_dangling);
        fs_run("copy_tree: content, owner, mode, times, symlinks, fifo", test_copy_tree);
        return tap_done();
}
