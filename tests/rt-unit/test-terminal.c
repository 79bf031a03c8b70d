/* Terminal: a pty from a devpts instance mounted in a private mount namespace, the
 * master passed over a console socket, the slave made stdio of a child. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "lib/terminal.h"

#include "tests/lib/tap.h"

static char root[64];

/* <root>/dev/pts with a fresh devpts instance, in a mount namespace of our own. */
static int
make_rootfs(bool mount_devpts)
{
        char p[PATH_MAX];
        int fd;

        CHECK(unshare(CLONE_NEWNS) == 0);
        CHECK(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0);
        snprintf(root, sizeof root, "/tmp/rt-term-XXXXXX");
        CHECK(mkdtemp(root));
        /* the tree lives in a tmpfs that vanishes with the namespace */
        CHECK(mount("tmpfs", root, "tmpfs", 0, "mode=0755") == 0);
        snprintf(p, sizeof p, "%s/dev", root);
        CHECK(mkdir(p, 0755) == 0);
        snprintf(p, sizeof p, "%s/dev/pts", root);
        CHECK(mkdir(p, 0755) == 0);
        if (mount_devpts)
                CHECK(mount("devpts", p, "devpts", 0, "newinstance,ptmxmode=0666,mode=0620") == 0);
        CHECK((fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC)) >= 0);
        return fd;
}

static void
drop_rootfs(int fd)
{
        char p[PATH_MAX];

        close(fd);
        snprintf(p, sizeof p, "%s/dev/pts", root);
        (void) umount2(p, MNT_DETACH);
        CHECK(umount2(root, MNT_DETACH) == 0);
        CHECK(rmdir(root) == 0);
}

static void
test_pty_open(void)
{
        int rootfd = make_rootfs(true), master = -1, slave = -1;
        struct winsize ws;
        struct stat st;
        msp_err e;

        CHECK_OK(rt_pty_open_child(rootfd, 24, 80, &master, &slave, &e), e);
        CHECK(isatty(slave));
        CHECK(fcntl(master, F_GETFD) & FD_CLOEXEC);
        CHECK(fcntl(slave, F_GETFD) & FD_CLOEXEC);
        CHECK(ioctl(slave, TIOCGWINSZ, &ws) == 0 && ws.ws_row == 24 && ws.ws_col == 80);
        /* the peer is pty 0 of the new instance */
        CHECK(fstat(slave, &st) == 0 && S_ISCHR(st.st_mode) && minor(st.st_rdev) == 0);
        /* data flows slave -> master */
        char buf[8] = "";
        CHECK(write(slave, "hi", 2) == 2);
        CHECK(read(master, buf, sizeof buf) == 2 && memcmp(buf, "hi", 2) == 0);
        close(master);
        close(slave);
        drop_rootfs(rootfd);
}

static void
test_pty_no_size(void)
{
        int rootfd = make_rootfs(true), master = -1, slave = -1;
        struct winsize ws;
        msp_err e;

        CHECK_OK(rt_pty_open_child(rootfd, 0, 0, &master, &slave, &e), e);
        CHECK(ioctl(slave, TIOCGWINSZ, &ws) == 0 && ws.ws_row == 0 && ws.ws_col == 0);
        close(master);
        close(slave);
        drop_rootfs(rootfd);
}

/* A rootfs without devpts whose dev/pts/ptmx is a plain file, or whose dev/pts is a
 * symlink to the host's: neither may yield a pty. */
static void
test_pty_refuses_fake_ptmx(void)
{
        int rootfd = make_rootfs(false), master = -1, slave = -1, fd;
        char p[PATH_MAX];
        msp_err e;

        snprintf(p, sizeof p, "%s/dev/pts/ptmx", root);
        CHECK((fd = open(p, O_CREAT | O_WRONLY | O_CLOEXEC, 0666)) >= 0);
        close(fd);
        CHECK_ERR(rt_pty_open_child(rootfd, 0, 0, &master, &slave, &e), e, EPERM, "not a devpts ptmx");
        CHECK(unlink(p) == 0);
        snprintf(p, sizeof p, "%s/dev/pts", root);
        CHECK(rmdir(p) == 0);
        CHECK(symlink("/dev/pts", p) == 0);
        msp_err_clear(&e);
        int r = rt_pty_open_child(rootfd, 0, 0, &master, &slave, &e);
        printf("# symlinked dev/pts -> %d '%s'\n", r, e.msg);
        CHECK(r < 0);
        CHECK(unlink(p) == 0);
        drop_rootfs(rootfd);
}

static int
recv_fd(int sock, char *byte)
{
        struct iovec iov = { .iov_base = byte, .iov_len = 1 };
        union {
                char buf[CMSG_SPACE(sizeof(int))];
                struct cmsghdr align;
        } u;
        struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
                              .msg_controllen = sizeof u.buf };
        int fd = -1;

        CHECK(recvmsg(sock, &msg, MSG_CMSG_CLOEXEC) == 1);
        struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
        CHECK(cm && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS);
        memcpy(&fd, CMSG_DATA(cm), sizeof fd);
        return fd;
}

static void
test_send_master_socketpair(void)
{
        int rootfd = make_rootfs(true), master = -1, slave = -1, sv[2];
        struct stat a, b;
        char byte = 0;
        msp_err e;

        CHECK_OK(rt_pty_open_child(rootfd, 0, 0, &master, &slave, &e), e);
        CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
        CHECK_OK(rt_console_send_master(sv[0], master, &e), e);
        int got = recv_fd(sv[1], &byte);
        CHECK(byte == ' ');
        CHECK(fstat(got, &a) == 0 && fstat(master, &b) == 0);
        CHECK(a.st_rdev == b.st_rdev && a.st_ino == b.st_ino && a.st_dev == b.st_dev);
        /* the received master talks to our slave */
        char buf[4] = "";
        CHECK(write(slave, "ok", 2) == 2);
        CHECK(read(got, buf, sizeof buf) == 2 && memcmp(buf, "ok", 2) == 0);
        close(got);
        close(master);
        close(slave);
        drop_rootfs(rootfd);
}

/* conmon's side: a listening socket at a path; the runtime connects and sends. */
static void
test_console_socket_path(void)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int rootfd = make_rootfs(true), master = -1, slave = -1, lsock, conn, c;
        char longpath[200], byte = 0;
        msp_err e;

        snprintf(sa.sun_path, sizeof sa.sun_path, "%s/console.sock", root);
        CHECK((lsock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) >= 0);
        CHECK(bind(lsock, (struct sockaddr *) &sa, sizeof sa) == 0 && listen(lsock, 1) == 0);
        CHECK_OK(rt_pty_open_child(rootfd, 0, 0, &master, &slave, &e), e);
        CHECK_OK(c = rt_console_socket_connect(sa.sun_path, &e), e);
        CHECK(fcntl(c, F_GETFD) & FD_CLOEXEC);
        CHECK((conn = accept4(lsock, NULL, NULL, SOCK_CLOEXEC)) >= 0);
        CHECK_OK(rt_console_send_master(c, master, &e), e);
        int got = recv_fd(conn, &byte);
        CHECK(got >= 0 && isatty(got));
        close(got);
        close(conn);
        close(c);
        close(lsock);
        memset(longpath, 'x', sizeof longpath - 1);
        longpath[sizeof longpath - 1] = '\0';
        CHECK_ERR(rt_console_socket_connect(longpath, &e), e, ENAMETOOLONG, "must be 1 to 107");
        CHECK_ERR(rt_console_socket_connect("/nonexistent/sock", &e), e, ENOENT,
                  "connect to console socket '/nonexistent/sock'");
        close(master);
        close(slave);
        CHECK(unlink(sa.sun_path) == 0);
        drop_rootfs(rootfd);
}

/* A pty from a fresh rootfs, then fork: the child's pid (0 in the child). */
static pid_t
fork_with_pty(int *rootfd, int *master, int *slave)
{
        msp_err e;

        *rootfd = make_rootfs(true);
        CHECK_OK(rt_pty_open_child(*rootfd, 0, 0, master, slave, &e), e);
        fflush(stdout);
        pid_t pid = fork();
        CHECK(pid >= 0);
        return pid;
}

static void
wait_ok(pid_t pid)
{
        int st = 0;

        CHECK(waitpid(pid, &st, 0) == pid);
        printf("# child status 0x%x\n", st);
        CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* In a grandchild: the slave becomes the controlling tty and stdio; it reports back
 * through the pty itself. */
static void
test_make_stdio(void)
{
        int rootfd = -1, master = -1, slave = -1;
        char buf[64] = "";
        msp_err e;

        pid_t pid = fork_with_pty(&rootfd, &master, &slave);
        if (pid == 0) {
                close(master);
                if (rt_stdio_enter_child(NULL, &e) < 0 || rt_pty_make_stdio_child(slave, &e) < 0)
                        _exit(2);
                close(slave);
                bool ok = isatty(0) && isatty(1) && isatty(2) && getsid(0) == getpid() &&
                          tcgetpgrp(0) == getpgrp() && !(fcntl(1, F_GETFD) & FD_CLOEXEC);
                dprintf(1, "%s\n", ok ? "tty-ok" : "tty-bad");
                _exit(ok ? 0 : 3);
        }
        close(slave);
        wait_ok(pid);
        CHECK(read(master, buf, sizeof buf - 1) > 0);
        CHECK(strstr(buf, "tty-ok"));
        CHECK_ERR(rt_pty_make_stdio_child(2, &e), e, EINVAL, "expected above 2");
        close(master);
        drop_rootfs(rootfd);
}

/* The child of a process whose session has a controlling terminal (the caller's):
 * after rt_stdio_enter_child it leads a session of its own, /dev/tty is ENXIO, and the
 * given fd is its stdin (not close-on-exec) while the original is closed. */
static int
enter_child_check(void)
{
        int p[2];
        char c = 0;
        msp_err e;

        if (pipe2(p, O_CLOEXEC) < 0 || write(p[1], "x", 1) != 1)
                return 10;
        int stdio[3] = { fcntl(p[0], F_DUPFD_CLOEXEC, 10), -1, -1 };
        int in = stdio[0];
        if (rt_stdio_enter_child(stdio, &e) < 0)
                return 11;
        if (getsid(0) != getpid())
                return 12;
        if (open("/dev/tty", O_RDWR | O_CLOEXEC) >= 0 || errno != ENXIO)
                return 13;
        if (read(0, &c, 1) != 1 || c != 'x' || (fcntl(0, F_GETFD) & FD_CLOEXEC))
                return 14;
        if (fcntl(in, F_GETFD) >= 0 || errno != EBADF)
                return 15;
        return 0;
}

static void
test_enter_child(void)
{
        int rootfd = -1, master = -1, slave = -1;

        pid_t pid = fork_with_pty(&rootfd, &master, &slave);
        if (pid == 0) {
                /* the caller: a session whose controlling terminal is the pty */
                if (setsid() < 0 || ioctl(slave, TIOCSCTTY, 0) < 0)
                        _exit(2);
                int fd = open("/dev/tty", O_RDWR | O_CLOEXEC);
                if (fd < 0)
                        _exit(3);
                close(fd);
                pid_t child = fork();
                if (child == 0)
                        _exit(enter_child_check());
                int cst = 0;
                if (child < 0 || waitpid(child, &cst, 0) != child)
                        _exit(4);
                _exit(WIFEXITED(cst) ? WEXITSTATUS(cst) : 5);
        }
        wait_ok(pid);
        close(master);
        close(slave);
        drop_rootfs(rootfd);
}

int
main(void)
{
        static const tap_fork_test tests[] = {
                { "pty from the rootfs' devpts, TIOCGPTPEER slave, window size", test_pty_open },
                { "pty without a console size", test_pty_no_size },
                { "fake ptmx and symlinked dev/pts are refused", test_pty_refuses_fake_ptmx },
                { "master over a socketpair with SCM_RIGHTS", test_send_master_socketpair },
                { "console socket path: connect, send, limits", test_console_socket_path },
                { "slave becomes controlling tty and stdio", test_make_stdio },
                { "a session of its own: no /dev/tty; the given fds become stdio", test_enter_child },
        };
        if (geteuid() != 0) {
                printf("1..0 # SKIP needs root\n");
                return 0;
        }
        return tap_run_table(tests, ARRAY_SIZE(tests));
}
