/* The trusted procfs handle: a private instance, lookups that refuse symlinks, magic
 * links and mount crossings, "self" in the right PID namespace, and writes that cannot
 * be redirected by mounts over the host's /proc (CVE-2025-52881). */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "oci/macros.h"
#include "lib/procfs.h"
#include "tests/lib/fs-test.h"

/* "Key:\tvalue" from a status-like file opened through the handle. */
static long
status_field(int procfd, const char *path, const char *key)
{
        char buf[8192];
        int fd = CHECK_OK(rt_procfs_openat(procfd, path, O_RDONLY, &e), e);
        ssize_t n = read(fd, buf, sizeof buf - 1);
        CHECK(n > 0);
        buf[n] = '\0';
        close(fd);
        char *p = strstr(buf, key);
        CHECK(p);
        return strtol(p + strlen(key), NULL, 10);
}

static void
test_open_verified(void)
{
        struct statfs sfs;
        struct stat st;
        int procfd = CHECK_OK(rt_procfs_open(&e), e);
        CHECK(fstatfs(procfd, &sfs) == 0 && sfs.f_type == PROC_SUPER_MAGIC);
        CHECK(fstat(procfd, &st) == 0 && st.st_ino == 1);
        CHECK(fcntl(procfd, F_GETFD) & FD_CLOEXEC);
        CHECK_OK(rt_procfs_verify_root(procfd, &e), e);
        /* a private instance: not the host's /proc mount */
        struct stat host;
        CHECK(stat("/proc", &host) == 0);
        CHECK(host.st_dev != st.st_dev);
        /* something that is not procfs, or not its root */
        int tmp = open("/tmp", O_PATH | O_CLOEXEC);
        CHECK_ERR(rt_procfs_verify_root(tmp, &e), e, EXDEV, "not a procfs");
        int sub = CHECK_OK(rt_procfs_openat(procfd, "sys", O_PATH | O_DIRECTORY, &e), e);
        CHECK_ERR(rt_procfs_verify_root(sub, &e), e, EXDEV, "not the root of a procfs");
}

static void
test_self(void)
{
        int procfd = CHECK_OK(rt_procfs_open(&e), e);
        CHECK(status_field(procfd, "self/status", "\nPid:\t") == getpid());
        CHECK(status_field(procfd, "/self/status", "\nPid:\t") == getpid());
        CHECK(status_field(procfd, "thread-self/status", "\nPid:\t") == gettid());
        char p[64];
        snprintf(p, sizeof p, "%d/status", (int) getpid());
        CHECK(status_field(procfd, p, "\nPid:\t") == getpid());
        /* "selfish" is not "self" */
        CHECK_ERR(rt_procfs_openat(procfd, "selfish", O_RDONLY, &e), e, ENOENT, "/proc/selfish");
}

static void
test_refuses_links_and_escapes(void)
{
        int procfd = CHECK_OK(rt_procfs_open(&e), e);
        /* magic links */
        CHECK_ERR(rt_procfs_openat(procfd, "self/root/etc/passwd", O_RDONLY, &e), e, ELOOP,
                   "self/root");
        CHECK_ERR(rt_procfs_openat(procfd, "self/exe", O_RDONLY, &e), e, ELOOP, "self/exe");
        CHECK_ERR(rt_procfs_openat(procfd, "self/fd/0", O_RDONLY, &e), e, ELOOP, "self/fd/0");
        /* plain symlinks other than self and thread-self */
        CHECK_ERR(rt_procfs_openat(procfd, "mounts", O_RDONLY, &e), e, ELOOP, "/proc/mounts");
        CHECK_ERR(rt_procfs_openat(procfd, "net/dev", O_RDONLY, &e), e, ELOOP, "/proc/net/dev");
        /* out of the handle */
        CHECK_ERR(rt_procfs_openat(procfd, "../etc/passwd", O_RDONLY, &e), e, EXDEV, "../etc");
        CHECK_ERR(rt_procfs_openat(procfd, "self/../../x", O_RDONLY, &e), e, EXDEV, "self/../..");
}

/* Another mount over a /proc file (the CVE-2025-52881 redirection) does not affect the
 * private instance, and a crossing into a mount below the handle is refused. */
static void
test_overmount_ignored(void)
{
        struct statfs sfs;
        CHECK(unshare(CLONE_NEWNS) == 0);
        CHECK(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0);
        CHECK(mount("tmpfs", "/proc/sys/kernel", "tmpfs", 0, NULL) == 0);
        int procfd = CHECK_OK(rt_procfs_open(&e), e);
        int fd = CHECK_OK(rt_procfs_openat(procfd, "sys/kernel/ostype", O_RDONLY, &e), e);
        CHECK(fstatfs(fd, &sfs) == 0 && sfs.f_type == PROC_SUPER_MAGIC);
        close(fd);

        /* the fallback (a clone of the host /proc) behaves the same: non-recursive */
        int clone = open_tree(AT_FDCWD, "/proc", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
        CHECK(clone >= 0);
        fd = CHECK_OK(rt_procfs_openat(clone, "sys/kernel/ostype", O_RDONLY, &e), e);
        close(fd);
        /* the host's /proc as a handle: the lookup must not cross into the tmpfs */
        int host = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
        CHECK_OK(rt_procfs_verify_root(host, &e), e);
        CHECK_ERR(rt_procfs_openat(host, "sys/kernel/x", O_RDONLY, &e), e, EXDEV, "sys/kernel/x");
}

static void
test_write(void)
{
        int procfd = CHECK_OK(rt_procfs_open(&e), e);
        CHECK_OK(rt_procfs_write(procfd, "self/oom_score_adj", "123", &e), e);
        CHECK(status_field(procfd, "self/oom_score_adj", "") == 123);
        CHECK_ERR(rt_procfs_write(procfd, "self/oom_score_adj", "bogus", &e), e, EINVAL,
                   "write '/proc/self/oom_score_adj'");
        CHECK_ERR(rt_procfs_write(procfd, "self/nonexistent", "1", &e), e, ENOENT,
                   "open '/proc/self/nonexistent'");
        /* a sysctl through the handle, in a private UTS namespace */
        CHECK(unshare(CLONE_NEWUTS) == 0);
        CHECK_OK(rt_procfs_write(procfd, "sys/kernel/hostname", "rt-procfs-test", &e), e);
        char name[64];
        CHECK(gethostname(name, sizeof name) == 0 && strcmp(name, "rt-procfs-test") == 0);
}

/* The PID namespace rule: an instance created in the new namespace shows our namespaced
 * pid for "self"; the parent's instance shows the parent-namespace pid; an instance
 * from a child namespace where we are invisible fails closed. */
static void
test_pid_namespace(void)
{
        int outer = CHECK_OK(rt_procfs_open(&e), e);
        CHECK(unshare(CLONE_NEWPID | CLONE_NEWNS) == 0);
        CHECK(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0);
        pid_t child = fork();
        CHECK(child >= 0);
        if (child == 0) {
                int inner = CHECK_OK(rt_procfs_open(&e), e);
                CHECK(getpid() == 1);
                CHECK(status_field(inner, "self/status", "\nPid:\t") == 1);
                long outer_pid = status_field(outer, "self/status", "\nPid:\t");
                CHECK(outer_pid > 1);
                /* "1/status" through the inner handle is us, not the host's init */
                CHECK(status_field(inner, "1/status", "\nPid:\t") == 1);
                _exit(0);
        }
        int st = 0;
        CHECK(waitpid(child, &st, 0) == child && WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* A handle made in a child PID namespace, used by a process outside it: "self" must
 * not resolve to whichever process has our pid number in there. */
static void
test_invisible_self_fails_closed(void)
{
        int sv[2];
        CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
        CHECK(unshare(CLONE_NEWPID | CLONE_NEWNS) == 0);
        CHECK(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0);
        pid_t child = fork();
        CHECK(child >= 0);
        if (child == 0) {
                int inner = CHECK_OK(rt_procfs_open(&e), e);
                char c = 0;
                struct iovec iov = { &c, 1 };
                char ctl[CMSG_SPACE(sizeof(int))] = { 0 };
                struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl,
                                     .msg_controllen = sizeof ctl };
                struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
                cm->cmsg_level = SOL_SOCKET;
                cm->cmsg_type = SCM_RIGHTS;
                cm->cmsg_len = CMSG_LEN(sizeof(int));
                memcpy(CMSG_DATA(cm), &inner, sizeof inner);
                CHECK(sendmsg(sv[1], &mh, 0) == 1);
                CHECK(read(sv[1], &c, 1) == 1);         /* wait until the parent is done */
                _exit(0);
        }
        char c;
        struct iovec iov = { &c, 1 };
        char ctl[CMSG_SPACE(sizeof(int))];
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl,
                             .msg_controllen = sizeof ctl };
        CHECK(recvmsg(sv[0], &mh, MSG_CMSG_CLOEXEC) == 1);
        int inner;
        memcpy(&inner, CMSG_DATA(CMSG_FIRSTHDR(&mh)), sizeof inner);
        CHECK_ERR(rt_procfs_openat(inner, "self/status", O_RDONLY, &e), e, ENOENT,
                   "/proc/self/status");
        CHECK(write(sv[0], "x", 1) == 1);
        int st = 0;
        CHECK(waitpid(child, &st, 0) == child && WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

int
main(void)
{
        if (require_root())
                return 0;
        fs_run("open: private instance, verified root", test_open_verified);
        fs_run("openat: self, thread-self, numeric pid", test_self);
        fs_run("openat: magic links, symlinks and '..' refused", test_refuses_links_and_escapes);
        fs_run("openat: an overmounted host /proc does not redirect", test_overmount_ignored);
        fs_run("write: single write, errors named, sysctl", test_write);
        fs_run("pid namespace: self is the namespaced pid", test_pid_namespace);
        fs_run("pid namespace: invisible self fails closed", test_invisible_self_fails_closed);
        return tap_done();
}
