/* Bind-mount sources opened by the runtime inside the init's mount namespace
 * (mountsrc.h says why). */
#include "lib/mountsrc.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "oci/oci.h"
#include "lib/procfs.h"
#include "lib/sync.h"

bool
rt_mount_is_bind(const oci_mount *m)
{
        bool bind = m->type && strcmp(m->type, "bind") == 0;

        for (size_t j = 0; j < m->options.n; j++)
                bind = bind || !strcmp(m->options.v[j], "bind") || !strcmp(m->options.v[j], "rbind");
        return bind;
}

int
rt_mount_source_path(const oci_mount *m, const char *bundle, char *buf, size_t size)
{
        const char *s = m->source;
        int n = s[0] == '/' ? snprintf(buf, size, "%s", s) : snprintf(buf, size, "%s/%s", bundle, s);
        return n < 0 || (size_t) n >= size ? -ENAMETOOLONG : 0;
}

typedef struct batch {
        int fds[RT_SYNC_MAX_FDS];
        size_t n;
        char idx[MSP_ERR_MSG_MAX];
} batch;

static void
batch_close(batch *b)
{
        for (size_t i = 0; i < b->n; i++)
                msp_closep(&b->fds[i]);
        b->n = 0;
        b->idx[0] = '\0';
}

static int
batch_flush(int sync_fd, batch *b)
{
        int r = rt_sync_send_fds(sync_fd, RT_SYNC_MOUNT_SOURCES, b->idx, b->fds, b->n);
        batch_close(b);
        return r;
}

/* Open every bind source from where we are (the init's mount namespace) and send the
 * fds in batches that name their mount indexes; an empty batch ends the list. */
static int
open_sources(int sync_fd, const oci_spec *spec, const char *bundle)
{
        _cleanup_(batch_close) batch b = { .n = 0 };
        char path[PATH_MAX];
        int r;

        for (size_t i = 0; i < spec->n_mounts; i++) {
                const oci_mount *m = &spec->mounts[i];
                if (!rt_mount_is_bind(m) || !m->source || !*m->source ||
                    rt_mount_source_path(m, bundle, path, sizeof path) < 0)
                        continue;
                if ((b.n == RT_SYNC_MAX_FDS || strlen(b.idx) + 24 >= sizeof b.idx) &&
                    (r = batch_flush(sync_fd, &b)) < 0)
                        return r;
                int fd = open(path, O_PATH | O_CLOEXEC);
                if (fd < 0)
                        continue;
                size_t len = strlen(b.idx);
                snprintf(b.idx + len, sizeof b.idx - len, "%s%zu", len ? "," : "", i);
                b.fds[b.n++] = fd;
        }
        if (b.n && (r = batch_flush(sync_fd, &b)) < 0)
                return r;
        return rt_sync_send_fds(sync_fd, RT_SYNC_MOUNT_SOURCES, "", NULL, 0);
}

int
rt_mountsrc_send(int sync_fd, pid_t pid, const oci_spec *spec, const char *bundle, msp_err *err)
{
        char path[64];

        _cleanup_close_ int procfd = rt_procfs_open(err);
        if (procfd < 0)
                return procfd;
        snprintf(path, sizeof path, "%d/ns/mnt", (int) pid);
        _cleanup_close_ int theirs = openat(procfd, path, O_RDONLY | O_CLOEXEC);
        _cleanup_close_ int ours = openat(procfd, "self/ns/mnt", O_RDONLY | O_CLOEXEC);
        _cleanup_close_ int cwd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (theirs < 0 || ours < 0 || cwd < 0)
                return msp_err_sys(err, errno, "bind sources: open the mount namespaces");
        if (setns(theirs, CLONE_NEWNS) < 0)
                return msp_err_sys(err, errno, "bind sources: join the container's mount namespace");
        int r = open_sources(sync_fd, spec, bundle);
        /* Back before anything else: nothing of the runtime may run in the container's
         * namespace. */
        if (setns(ours, CLONE_NEWNS) < 0 || fchdir(cwd) < 0)
                return msp_err_sys(err, errno, "bind sources: return to the runtime's mount "
                                   "namespace");
        if (r < 0)
                return msp_err_set(err, EPIPE, "the container init exited during setup");
        return 0;
}

int
rt_mountsrc_request(int sync_fd, msp_err *err)
{
        if (rt_sync_send(sync_fd, RT_SYNC_MOUNT_SOURCES, 0, NULL) < 0)
                return msp_err_set(err, EPIPE, "the runtime exited during setup");
        return 0;
}

void
rt_mountsrc_free(int *fds, size_t n_mounts)
{
        for (size_t i = 0; fds && i < n_mounts; i++)
                msp_closep(&fds[i]);
        free(fds);
}

int
rt_mountsrc_recv(int sync_fd, size_t n_mounts, int **ret_fds, msp_err *err)
{
        int *v = malloc((n_mounts ? n_mounts : 1) * sizeof *v);

        if (!v)
                return msp_err_set(err, ENOMEM, "bind sources");
        for (size_t i = 0; i < n_mounts; i++)
                v[i] = -1;
        for (;;) {
                int fds[RT_SYNC_MAX_FDS];
                rt_sync_msg msg;
                size_t n = 0, k = 0;
                int r = rt_sync_expect_fds(sync_fd, RT_SYNC_MOUNT_SOURCES, &msg, fds,
                                           RT_SYNC_MAX_FDS, &n, err);
                if (r < 0) {
                        rt_mountsrc_free(v, n_mounts);
                        return r;
                }
                if (n == 0)
                        break;
                for (const char *p = msg.err.msg; k < n && *p; k++) {
                        char *end;
                        unsigned long i = strtoul(p, &end, 10);
                        if (end == p || i >= n_mounts || v[i] >= 0)
                                break;
                        v[i] = fds[k];
                        fds[k] = -1;
                        p = *end == ',' ? end + 1 : end;
                }
                for (size_t j = 0; j < n; j++)
                        msp_closep(&fds[j]);
                if (k != n) {
                        rt_mountsrc_free(v, n_mounts);
                        return msp_err_set(err, EPROTO, "bind sources: a malformed message");
                }
        }
        *ret_fds = v;
        return 0;
}
