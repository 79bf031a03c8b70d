/* A function in a forked child (child-call.h).
 *
 * The pipe carries the child's int result, then out (on success) or the message. */
#include "base/child-call.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static int
write_all(int fd, const void *buf, size_t len)
{
        for (const char *p = buf; len > 0;) {
                ssize_t n = write(fd, p, len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return -1;
                p += n;
                len -= (size_t) n;
        }
        return 0;
}

static size_t
read_all(int fd, void *buf, size_t len)
{
        size_t got = 0;
        while (got < len) {
                ssize_t n = read(fd, (char *) buf + got, len - got);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        break;
                got += (size_t) n;
        }
        return got;
}

int
mcp_child_keep_only(int fd, pid_t parent)
{
        sigset_t none;
        sigemptyset(&none);
        if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != parent ||
            sigprocmask(SIG_SETMASK, &none, NULL) < 0 || dup2(fd, 3) < 0 ||
            close_range(4, ~0U, 0) < 0)
                return -1;
        int null = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0)
                return -1;
        close(null);
        return 0;
}

int
mcp_child_call(int (*fn)(void *data, void *out, msp_err *err), void *data, void *out,
               size_t out_len, msp_err *err)
{
        int p[2];
        if (pipe2(p, O_CLOEXEC) < 0)
                return msp_err_sys(err, errno, "pipe");
        pid_t parent = getpid(), pid = fork();
        if (pid < 0) {
                int e = errno;
                close(p[0]);
                close(p[1]);
                return msp_err_sys(err, e, "fork");
        }
        if (pid == 0) {
                close(p[0]);
                (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
                if (getppid() != parent)
                        _exit(1);
                msp_err e = { 0 };
                int r = fn(data, out, &e);
                bool sent = write_all(p[1], &r, sizeof r) == 0 &&
                            (r >= 0 ? write_all(p[1], out, out_len)
                                    : write_all(p[1], e.msg, strlen(e.msg))) == 0;
                _exit(sent ? 0 : 1);
        }
        close(p[1]);
        int r = 0;
        bool got = read_all(p[0], &r, sizeof r) == sizeof r;
        char msg[sizeof err->msg] = "";
        if (got && r >= 0)
                got = read_all(p[0], out, out_len) == out_len;
        else if (got)
                msg[read_all(p[0], msg, sizeof msg - 1)] = '\0';
        close(p[0]);
        int st = 0;
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
                ;
        if (!got)
                return msp_err_set(err, EIO, "the child process failed (wait status %d)", st);
        if (r < 0)
                return msp_err_set(err, -r, "%s", msg);
        return r;
}
