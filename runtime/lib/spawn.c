/* The runtime's side of starting a container process (rtspawn.h: a spawn.h would hide
 * <spawn.h>). */
#include "lib/rtspawn.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <unistd.h>

#include "lib/cgroup/cgroup.h"
#include "lib/procfs.h"
#include "lib/seccomp-cache.h"
#include "lib/sync.h"
#include "lib/terminal.h"

int
rt_fd_above(int fd, int min)
{
        if (fd < 0 || fd >= min)
                return fd;
        int n = fcntl(fd, F_DUPFD_CLOEXEC, min);
        int saved = errno;
        close(fd);
        errno = saved;
        return n;
}

static int
open_console(rt_spawn_fds *s, const oci_process *p, const char *path, int fd, int min,
             msp_err *err)
{
        if (!p->terminal) {
                if (path)
                        return msp_err_set(err, EINVAL, "--console-socket given but "
                                           "process.terminal is false");
                return 0;
        }
        if (path) {
                int r = rt_console_socket_connect(path, err);
                if (r < 0)
                        return r;
                s->console = rt_fd_above(r, min);
                return s->console < 0 ? msp_err_sys(err, errno, "dup the console socket") : 0;
        }
        if (fd < 0)
                return msp_err_set(err, EINVAL, "process.terminal is true but no "
                                   "--console-socket was given");
        s->console = fcntl(fd, F_DUPFD_CLOEXEC, min);
        if (s->console < 0)
                return msp_err_sys(err, errno, "dup the console socket");
        return 0;
}

static int
open_stdio(rt_spawn_fds *s, const oci_process *p, const int *stdio, int min, msp_err *err)
{
        for (int i = 0; stdio && !p->terminal && i < 3; i++) {
                if (stdio[i] < 0)
                        continue;
                s->stdio[i] = fcntl(stdio[i], F_DUPFD_CLOEXEC, min);
                if (s->stdio[i] < 0)
                        return msp_err_sys(err, errno, "dup the process's fd %d", i);
        }
        return 0;
}

/* listenerPath is a host path: connected now, the child sends on it from inside. */
static int
open_seccomp(rt_spawn_fds *s, const rt_ctx *ctx, int state_root_fd, const oci_linux *lx,
             int min, msp_err *err)
{
        int r;

        if (!lx || !lx->seccomp)
                return 0;
        if (rt_seccomp_needs_listener(lx->seccomp)) {
                r = rt_seccomp_listener_connect(lx->seccomp, err);
                if (r < 0)
                        return r;
                s->seccomp_sock = rt_fd_above(r, min);
                if (s->seccomp_sock < 0)
                        return msp_err_sys(err, errno, "dup the listenerPath socket");
        }
        r = rt_seccomp_prepare_cached(ctx, state_root_fd, lx->seccomp, &s->seccomp, err);
        return r < 0 ? r : 0;
}

static int
open_sync(rt_spawn_fds *s, int min, msp_err *err)
{
        int r = rt_sync_pair(s->sync, err);

        if (r < 0)
                return r;
        for (int i = 0; i < 2; i++) {
                s->sync[i] = rt_fd_above(s->sync[i], min);
                if (s->sync[i] < 0)
                        return msp_err_sys(err, errno, "dup the sync socket");
        }
        return 0;
}

int
rt_spawn_fds_open(rt_spawn_fds *s, const rt_ctx *ctx, int state_root_fd,
                  const oci_process *p, const oci_linux *lx, const char *console_path,
                  int console_fd, const int *stdio, int min, msp_err *err)
{
        int r;

        r = open_console(s, p, console_path, console_fd, min, err);
        if (r < 0)
                return r;
        r = open_stdio(s, p, stdio, min, err);
        if (r < 0)
                return r;
        r = open_seccomp(s, ctx, state_root_fd, lx, min, err);
        if (r < 0)
                return r;
        return open_sync(s, min, err);
}

void
rt_spawn_fds_close(rt_spawn_fds *s)
{
        int *fds[] = { &s->console, &s->stdio[0], &s->stdio[1], &s->stdio[2], &s->seccomp_sock,
                       &s->sync[0], &s->sync[1] };

        for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++)
                if (*fds[i] >= 0) {
                        close(*fds[i]);
                        *fds[i] = -1;
                }
        s->seccomp = rt_seccomp_free(s->seccomp);
}

int
rt_spawn_oom_score_adj(int procfd, pid_t pid, const oci_process *p, msp_err *err)
{
        char path[64], val[32];
        int r;

        if (!p->has_oom_score_adj)
                return 0;
        snprintf(path, sizeof path, "%d/oom_score_adj", (int) pid);
        snprintf(val, sizeof val, "%d", p->oom_score_adj);
        r = rt_procfs_write(procfd, path, val, err);
        return r < 0 ? msp_err_prefix(err, "process.oomScoreAdj") : 0;
}

int
rt_spawn_recv(int sync_fd, const char *cgroup, const char *what, rt_sync_msg *msg,
              msp_err *err)
{
        struct pollfd p = { .fd = sync_fd, .events = POLLIN };

        while (cgroup && cgroup[0]) {
                int n = poll(&p, 1, 1000);
                if (n > 0)
                        break;
                if (n < 0 && errno != EINTR)
                        return msp_err_sys(err, errno, "%s: wait for the container process", what);
                if (n == 0 && rt_cgroup_is_frozen(cgroup))
                        return msp_err_set(err, EBUSY, "container's cgroup unexpectedly frozen: "
                                           "'%s' was frozen during %s", cgroup, what);
        }
        return rt_sync_recv(sync_fd, msg, err);
}
