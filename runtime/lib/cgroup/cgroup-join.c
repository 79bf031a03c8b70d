/* The container init joins its cgroup without cgroup_threadgroup_rwsem (cgroup-join.h
 * says why and how). */
#include "lib/cgroup/cgroup-join.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lib/cgroup/cgroup-internal.h"

void
rt_cgroup_join_init(rt_cgroup_join *j)
{
        j->v2_fd = -1;
        j->n = 0;
        j->path = NULL;
}

void
rt_cgroup_join_close(rt_cgroup_join *j)
{
        if (j->v2_fd >= 0)
                close(j->v2_fd);
        for (size_t i = 0; i < j->n; i++)
                if (j->tasks_fd[i] >= 0)
                        close(j->tasks_fd[i]);
        rt_cgroup_join_init(j);
}

/* fd (>= 0) moved to min_fd or above, closed either way; -errno on failure. */
static int
fd_at_least(int fd, int min_fd)
{
        if (fd >= min_fd)
                return fd;
        int n = fcntl(fd, F_DUPFD_CLOEXEC, min_fd);
        int e = errno;
        close(fd);
        return n < 0 ? -e : n;
}

struct prepare_data {
        rt_cgroup_join *j;
        unsigned which;
        int min_fd;
};

static int
prepare_in(const char *hier, int root, bool v2, void *userdata, msp_err *err)
{
        struct prepare_data *pd = userdata;
        rt_cgroup_join *j = pd->j;
        int dfd, fd;

        if (!(pd->which & (v2 ? RT_CGROUP_V2 : RT_CGROUP_V1)))
                return 0;
        dfd = cg_open_dir_at(root, hier, j->path, err);
        if (dfd < 0)
                return dfd;
        if (v2) {
                if (j->v2_fd >= 0) {
                        close(dfd);
                        return msp_err_set(err, EEXIST, "cgroup: more than one cgroup2 hierarchy");
                }
                fd = fd_at_least(dfd, pd->min_fd);
                if (fd < 0)
                        return msp_err_sys(err, -fd, "cgroup: open '%s%s'", hier, j->path);
                j->v2_fd = fd;
                return 0;
        }
        if (j->n >= RT_CGROUP_JOIN_MAX || snprintf(j->hier[j->n], sizeof j->hier[0], "%s", hier) >=
                                                  (int) sizeof j->hier[0]) {
                close(dfd);
                return msp_err_set(err, E2BIG, "cgroup: too many hierarchies");
        }
        fd = openat(dfd, "tasks", O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                fd = -errno;
        close(dfd);
        if (fd >= 0)
                fd = fd_at_least(fd, pd->min_fd);
        if (fd < 0)
                return msp_err_sys(err, -fd, "cgroup: open '%s%s/tasks'", hier, j->path);
        j->tasks_fd[j->n++] = fd;
        return 0;
}

int
rt_cgroup_join_prepare_parent(const char *path, unsigned which, int min_fd, rt_cgroup_join *j,
                              msp_err *err)
{
        struct prepare_data pd = { .j = j, .which = which, .min_fd = min_fd };

        rt_cgroup_join_init(j);
        j->path = path;
        int r = cg_for_each_hierarchy_in(which, prepare_in, &pd, err);
        if (r < 0)
                rt_cgroup_join_close(j);
        return r;
}

int
rt_cgroup_join_child(rt_cgroup_join *j, msp_err *err)
{
        int r = 0;

        for (size_t i = 0; i < j->n && r == 0; i++) {
                ssize_t n = write(j->tasks_fd[i], "0", 1);
                if (n != 1)
                        r = msp_err_sys(err, n < 0 ? errno : EIO,
                                        "join cgroup '%s%s': cgroup: write 'tasks' = '0'", j->hier[i],
                                        j->path);
        }
        rt_cgroup_join_close(j);
        return r;
}

int
rt_cgroup_join_names(const rt_cgroup_join *j, char *buf, size_t size)
{
        size_t len = 0;

        buf[0] = '\0';
        for (size_t i = 0; i < j->n; i++) {
                int n = snprintf(buf + len, size - len, "%s\n", j->hier[i]);
                if (n < 0 || (size_t) n >= size - len)
                        return -ENAMETOOLONG;
                len += (size_t) n;
        }
        return 0;
}

void
rt_cgroup_join_adopt(rt_cgroup_join *j, const char *path, const int *fds, size_t n,
                     const char *names)
{
        rt_cgroup_join_init(j);
        j->path = path;
        for (size_t i = 0; i < n && i < RT_CGROUP_JOIN_MAX; i++) {
                const char *nl = strchr(names, '\n');
                size_t len = nl ? (size_t) (nl - names) : strlen(names);
                snprintf(j->hier[i], sizeof j->hier[i], "%.*s", (int) len, names);
                names += nl ? len + 1 : len;
                j->tasks_fd[j->n++] = fds[i];
        }
        for (size_t i = RT_CGROUP_JOIN_MAX; i < n; i++)
                close(fds[i]);
}
