/* Terminals and the console socket.
 *
 * The pty comes from the container's own devpts instance, and the slave is taken from
 * the master with TIOCGPTPEER rather than opened by name: a name under /dev/pts is
 * something the container can replace with a symlink (CVE-2025-52565). */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <termios.h>
#include <unistd.h>

#include "oci/oci.h"
#include "lib/pathres.h"
#include "lib/terminal.h"

#define RT_PTMX_MAJOR 5
#define RT_PTMX_MINOR 2

int
rt_console_socket_connect(const char *path, msp_err *err)
{
        _cleanup_close_ int fd = -1;
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        size_t len = strlen(path);

        if (len == 0 || len >= sizeof sa.sun_path)
                return msp_err_set(err, ENAMETOOLONG, "console socket path '%s' is %zu bytes "
                                   "(must be 1 to %zu)", path, len, sizeof sa.sun_path - 1);
        memcpy(sa.sun_path, path, len + 1);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return msp_err_sys(err, errno, "socket(AF_UNIX)");
        if (connect(fd, (const struct sockaddr *) &sa, sizeof sa) < 0)
                return msp_err_sys(err, errno, "connect to console socket '%s'", path);
        return TAKE_FD(fd);
}

/* A ptmx that is not devpts' own (a devtmpfs /dev/ptmx, a regular file planted in the
 * image, a bind mount of the host's node) would hand out someone else's ptys. */
static int
ptmx_verify(int fd, msp_err *err)
{
        struct stat st;
        struct statfs sfs;

        if (fstat(fd, &st) < 0)
                return msp_err_sys(err, errno, "fstat /dev/pts/ptmx");
        if (fstatfs(fd, &sfs) < 0)
                return msp_err_sys(err, errno, "fstatfs /dev/pts/ptmx");
        if (!S_ISCHR(st.st_mode) || major(st.st_rdev) != RT_PTMX_MAJOR ||
            minor(st.st_rdev) != RT_PTMX_MINOR || sfs.f_type != DEVPTS_SUPER_MAGIC)
                return msp_err_set(err, EPERM, "/dev/pts/ptmx in the container is not a devpts "
                                   "ptmx device (mode 0%o, rdev %u:%u, fs 0x%lx)",
                                   (unsigned) st.st_mode, major(st.st_rdev), minor(st.st_rdev),
                                   (unsigned long) sfs.f_type);
        return 0;
}

/* FIXME: remove once openat2 (kernel 5.6) is the baseline. Without RESOLVE_IN_ROOT, walk
 * dev/pts/ptmx one component at a time and refuse symlinks, so that nothing in the image
 * can point the open at the host's devpts. */
static int
ptmx_open_nofollow(int rootfd, msp_err *err)
{
        _cleanup_close_ int dev = -1;
        _cleanup_close_ int pts = -1;
        int fd;

        dev = openat(rootfd, "dev", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dev < 0)
                return msp_err_sys(err, errno, "open the container's /dev");
        pts = openat(dev, "pts", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (pts < 0)
                return msp_err_sys(err, errno, "open the container's /dev/pts");
        fd = openat(pts, "ptmx", O_RDWR | O_NOCTTY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return msp_err_sys(err, errno, "open the container's /dev/pts/ptmx");
        return fd;
}

static int
ptmx_open(int rootfd, msp_err *err)
{
        int fd = rt_open_in_root(rootfd, "/dev/pts/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC, err);

        if (fd == -ENOSYS)
                return ptmx_open_nofollow(rootfd, err);
        if (fd < 0)
                return msp_err_prefix(err, "open the container's /dev/pts/ptmx");
        return fd;
}

int
rt_pty_open_child(int rootfd, unsigned rows, unsigned cols, int *ret_master, int *ret_slave,
                  msp_err *err)
{
        _cleanup_close_ int master = -1;
        _cleanup_close_ int slave = -1;
        int unlock = 0, r;

        master = ptmx_open(rootfd, err);
        if (master < 0)
                return master;
        r = ptmx_verify(master, err);
        if (r < 0)
                return r;
        if (ioctl(master, TIOCSPTLCK, &unlock) < 0)
                return msp_err_sys(err, errno, "unlock pty (TIOCSPTLCK)");
        slave = ioctl(master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
        if (slave < 0)
                return msp_err_sys(err, errno, "open pty peer (TIOCGPTPEER)");
        if (rows || cols) {
                struct winsize ws = { .ws_row = (unsigned short) rows, .ws_col = (unsigned short) cols };
                if (ioctl(master, TIOCSWINSZ, &ws) < 0)
                        return msp_err_sys(err, errno, "set the console size %ux%u", rows, cols);
        }
        *ret_master = TAKE_FD(master);
        *ret_slave = TAKE_FD(slave);
        return 0;
}

int
rt_console_send_master(int sockfd, int master, msp_err *err)
{
        /* SOCK_STREAM needs at least one data byte for the cmsg to travel; conmon only
         * logs the payload, crun sends a space. */
        char byte = ' ';
        struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
        union {
                char buf[CMSG_SPACE(sizeof(int))];
                struct cmsghdr align;
        } u;
        struct msghdr msg = {
                .msg_iov = &iov,
                .msg_iovlen = 1,
                .msg_control = u.buf,
                .msg_controllen = sizeof u.buf,
        };
        struct cmsghdr *cm;
        ssize_t n;

        memset(&u, 0, sizeof u);
        cm = CMSG_FIRSTHDR(&msg);
        cm->cmsg_level = SOL_SOCKET;
        cm->cmsg_type = SCM_RIGHTS;
        cm->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(cm), &master, sizeof(int));
        do
                n = sendmsg(sockfd, &msg, MSG_NOSIGNAL);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return msp_err_sys(err, errno, "send the pty master over the console socket");
        if (n != 1)
                return msp_err_set(err, EIO, "send the pty master over the console socket: short write");
        return 0;
}

int
rt_stdio_enter_child(const int *stdio, msp_err *err)
{
        if (setsid() < 0)
                return msp_err_sys(err, errno, "setsid");
        for (int fd = 0; stdio && fd <= 2; fd++) {
                if (stdio[fd] < 0)
                        continue;
                /* dup3 without O_CLOEXEC: these are the process' stdio across execve. */
                if (dup3(stdio[fd], fd, 0) < 0)
                        return msp_err_sys(err, errno, "dup3 the relay pipe onto fd %d", fd);
                close(stdio[fd]);
        }
        return 0;
}

int
rt_pty_make_stdio_child(int slave, msp_err *err)
{
        /* slave stays the caller's (it is close-on-exec; fds 0-2 are the terminal from
         * now on). It must not be one of 0-2 itself, or closing it would close stdio. */
        if (slave <= STDERR_FILENO)
                return msp_err_set(err, EINVAL, "pty slave is fd %d, expected above 2", slave);
        /* The process leads a session without a controlling terminal already
         * (rt_stdio_enter_child): only such a leader can acquire one. */
        if (ioctl(slave, TIOCSCTTY, 0) < 0)
                return msp_err_sys(err, errno, "make the pty the controlling terminal (TIOCSCTTY)");
        for (int fd = 0; fd <= 2; fd++) {
                /* dup3 without O_CLOEXEC: these are the process' stdio across execve. */
                if (dup3(slave, fd, 0) < 0)
                        return msp_err_sys(err, errno, "dup3 pty onto fd %d", fd);
        }
        return 0;
}
