#include "lib/ns.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/nsfs.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/log.h"
#include "oci/oci.h"
#include "lib/procfs.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

int
rt_ns_clone_flag(oci_ns_type t)
{
        switch (t) {
        case OCI_NS_PID: return CLONE_NEWPID;
        case OCI_NS_NETWORK: return CLONE_NEWNET;
        case OCI_NS_MOUNT: return CLONE_NEWNS;
        case OCI_NS_IPC: return CLONE_NEWIPC;
        case OCI_NS_UTS: return CLONE_NEWUTS;
        case OCI_NS_USER: return CLONE_NEWUSER;
        case OCI_NS_CGROUP: return CLONE_NEWCGROUP;
        case OCI_NS_TIME: return CLONE_NEWTIME;
        case OCI_NS_TYPE_MAX: break;
        }
        return 0;
}

/* Append ",name" (the first without the comma) to buf at *o. */
static void
names_add(char *buf, size_t size, size_t *o, const char *name, const char *path)
{
        int w;

        if (*o >= size)
                return;
        w = snprintf(buf + *o, size - *o, "%s%s%s%s", *o ? "," : "", name, path ? "=" : "",
                     path ? path : "");
        if (w > 0)
                *o += (size_t) w;
}

void
rt_ns_plan_debug(const rt_ctx *ctx, const char *id, const rt_ns_plan *p)
{
        char made[256] = "", joined[1024] = "";
        size_t om = 0, oj = 0;

        if (!ctx || !ctx->debug)
                return;
        for (int t = 0; t < OCI_NS_TYPE_MAX; t++) {
                if (p->join[t])
                        names_add(joined, sizeof joined, &oj, oci_ns_type_name((oci_ns_type) t),
                                  p->join[t]);
                else if (p->new_flags & rt_ns_clone_flag((oci_ns_type) t))
                        names_add(made, sizeof made, &om, oci_ns_type_name((oci_ns_type) t), NULL);
        }
        rt_log_debug_(ctx, "create '%s': namespaces: new %s; join %s", id, om ? made : "none",
                      oj ? joined : "none");
}

void
rt_ns_fds_debug(const rt_ctx *ctx, const char *id, pid_t pid, const int fds[OCI_NS_TYPE_MAX])
{
        char joined[256] = "";
        size_t o = 0;

        if (!ctx || !ctx->debug)
                return;
        for (int t = 0; t < OCI_NS_TYPE_MAX; t++)
                if (fds[t] >= 0)
                        names_add(joined, sizeof joined, &o, oci_ns_type_name((oci_ns_type) t), NULL);
        rt_log_debug_(ctx, "exec in '%s': joins the namespaces of pid %d: %s", id, (int) pid,
                      o ? joined : "none");
}

int
rt_ns_plan_make(const oci_spec *spec, rt_ns_plan *ret, msp_err *err)
{
        const oci_linux *lx = spec->linux_;

        memset(ret, 0, sizeof *ret);
        if (!lx)
                return 0;
        for (size_t i = 0; i < lx->n_namespaces; i++) {
                const oci_namespace *ns = &lx->namespaces[i];
                ret->has[ns->type] = true;
                if (ns->path && *ns->path)
                        ret->join[ns->type] = ns->path;
                else
                        ret->new_flags |= rt_ns_clone_flag(ns->type);
        }
        /* With a joined user namespace the mappings describe it (runc 1.1 requires them
         * there); the init checks them against the namespace's own. */
        if ((lx->n_uid_mappings || lx->n_gid_mappings) && !(ret->new_flags & CLONE_NEWUSER) &&
            !ret->join[OCI_NS_USER])
                return msp_err_set(err, EINVAL,
                                   "linux.uidMappings/gidMappings need a user namespace");
        if ((ret->new_flags & CLONE_NEWUSER) && (!lx->n_uid_mappings || !lx->n_gid_mappings))
                return msp_err_set(err, EINVAL,
                                   "linux.namespaces: a new user namespace needs "
                                   "linux.uidMappings and linux.gidMappings");
        if ((lx->time_boottime.present || lx->time_monotonic.present) &&
            !(ret->new_flags & CLONE_NEWTIME))
                return msp_err_set(err, EINVAL, "linux.timeOffsets need a new time namespace");
        return 0;
}

int
rt_ns_join(oci_ns_type t, const char *path, msp_err *err)
{
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        int type;

        if (fd < 0)
                return msp_err_sys(err, errno, "open %s namespace '%s'", oci_ns_type_name(t), path);
        type = ioctl(fd, NS_GET_NSTYPE);
        if (type < 0)
                return msp_err_sys(err, errno, "'%s' is not a namespace", path);
        if (type != rt_ns_clone_flag(t))
                return msp_err_set(err, EINVAL, "'%s' is not a %s namespace", path,
                                   oci_ns_type_name(t));
        if (setns(fd, type) < 0)
                return msp_err_sys(err, errno, "join %s namespace '%s'", oci_ns_type_name(t), path);
        return 0;
}

int
rt_timens_prepare_parent(int procfd, const oci_linux *lx, msp_err *err)
{
        char buf[256];
        size_t o = 0;

        if (unshare(CLONE_NEWTIME) < 0)
                return msp_err_sys(err, errno, "unshare time namespace");
        if (lx->time_monotonic.present)
                o += (size_t) snprintf(buf + o, sizeof buf - o, "monotonic %lld %u\n",
                                       (long long) lx->time_monotonic.secs,
                                       lx->time_monotonic.nanosecs);
        if (lx->time_boottime.present)
                o += (size_t) snprintf(buf + o, sizeof buf - o, "boottime %lld %u\n",
                                       (long long) lx->time_boottime.secs,
                                       lx->time_boottime.nanosecs);
        if (o == 0)
                return 0;
        /* The kernel accepts one offset per write. */
        for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
                char one[128];
                snprintf(one, sizeof one, "%s\n", line);
                int r = rt_procfs_write(procfd, "self/timens_offsets", one, err);
                if (r < 0)
                        return msp_err_prefix(err, "linux.timeOffsets");
        }
        return 0;
}

long
rt_ns_clone_in_userns(struct clone_args *ca, const char *path, msp_err *err)
{
        int pfd[2];
        if (pipe2(pfd, O_CLOEXEC) < 0)
                return msp_err_sys(err, errno, "pipe");
        pid_t helper = fork();
        if (helper < 0) {
                int e = errno;
                close(pfd[0]);
                close(pfd[1]);
                return msp_err_sys(err, e, "fork");
        }
        if (helper == 0) {
                /* Inside the namespace, pid and the other namespaces the child is born
                 * into belong to it. CLONE_PARENT: the child is the runtime's, not ours. */
                msp_err e = { 0 };
                long pid = rt_ns_join(OCI_NS_USER, path, &e);
                if (pid >= 0) {
                        struct clone_args a = *ca;
                        a.flags = (a.flags & ~(uint64_t) CLONE_PIDFD) | CLONE_PARENT;
                        a.pidfd = 0;
                        a.exit_signal = 0;
                        pid = syscall(SYS_clone3, &a, sizeof a);
                        if (pid == 0) {
                                close(pfd[0]);
                                close(pfd[1]);
                                return 0;
                        }
                        if (pid < 0)
                                pid = -errno;
                }
                (void) !write(pfd[1], &pid, sizeof pid);
                _exit(0);
        }
        close(pfd[1]);
        long pid = -EPIPE;
        ssize_t n = read(pfd[0], &pid, sizeof pid);
        close(pfd[0]);
        while (waitpid(helper, NULL, 0) < 0 && errno == EINTR)
                ;
        if (n != (ssize_t) sizeof pid)
                pid = -EPIPE;
        if (pid < 0)
                return msp_err_sys(err, (int) -pid, "clone the container init in user namespace '%s'",
                                   path);
        /* Our child (CLONE_PARENT): its pid cannot be reused before we reap it. */
        int pidfd = (int) syscall(SYS_pidfd_open, (pid_t) pid, 0);
        if (pidfd < 0) {
                int e = errno;
                (void) kill((pid_t) pid, SIGKILL);
                (void) waitpid((pid_t) pid, NULL, 0);
                return msp_err_sys(err, e, "pidfd_open the container init");
        }
        *(int *) (uintptr_t) ca->pidfd = pidfd;
        return pid;
}

/* One line of uid_map per entry, in order: "inside outside count". */
static int
check_map(const char *file, const char *field, const oci_id_mapping *m, size_t n, msp_err *err)
{
        char buf[8192];
        _cleanup_close_ int fd = open(file, O_RDONLY | O_CLOEXEC);
        ssize_t len = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);
        if (len < 0)
                return msp_err_sys(err, errno, "read '%s'", file);
        buf[len] = '\0';
        const char *p = buf;
        for (size_t i = 0; i < n; i++) {
                unsigned in, out, count;
                int used;
                if (sscanf(p, " %u %u %u%n", &in, &out, &count, &used) != 3 ||
                    in != m[i].container_id || out != m[i].host_id || count != m[i].size)
                        return msp_err_set(err, EINVAL,
                                           "%s[%zu]: %u %u %u is not a mapping of the joined user "
                                           "namespace",
                                           field, i, m[i].container_id, m[i].host_id, m[i].size);
                p += used;
        }
        while (*p == ' ' || *p == '\n')
                p++;
        if (n && *p)
                return msp_err_set(err, EINVAL, "%s: the joined user namespace maps more", field);
        return 0;
}

int
rt_userns_check_maps(const oci_linux *lx, msp_err *err)
{
        int r = check_map("/proc/self/uid_map", "linux.uidMappings", lx->uid_mappings,
                          lx->n_uid_mappings, err);
        if (r >= 0)
                r = check_map("/proc/self/gid_map", "linux.gidMappings", lx->gid_mappings,
                              lx->n_gid_mappings, err);
        return r;
}

/* A pid namespace, as nsfs names it. */
typedef struct pidns_id {
        dev_t dev;
        ino_t ino;
} pidns_id;

static bool
pidns_is(const struct stat *st, const pidns_id *id)
{
        return st->st_dev == id->dev && st->st_ino == id->ino;
}

/* An fd of /proc/<pid>/ns/pid; -errno (ENOENT, ESRCH: it exited; EACCES: the caller may
 * not inspect it, so the process is no more the caller's to signal). */
static int
pidns_open(int procfd, pid_t pid)
{
        char path[64];

        snprintf(path, sizeof path, "%d/ns/pid", (int) pid);
        return NERRNO(openat(procfd, path, O_RDONLY | O_CLOEXEC));
}

static int
pidns_id_of(int procfd, pid_t pid, pidns_id *ret)
{
        _cleanup_close_ int fd = pidns_open(procfd, pid);
        struct stat st;

        if (fd < 0)
                return fd;
        if (fstat(fd, &st) < 0)
                return -errno;
        *ret = (pidns_id) { st.st_dev, st.st_ino };
        return 0;
}

/* Linux nests pid namespaces at most 32 deep. */
#define PIDNS_MAX_LEVEL 32

/* Whether the pid namespace of /proc/<pid> is the container's or below it (a nested one
 * a container process made with unshare -p): up from its own namespace with
 * NS_GET_PARENT, until the container's (yes) or the runtime's own (no: the host's side).
 * The ioctl fails with EPERM for a parent outside the caller's pid namespace: not below
 * the container's either. 1, 0, or -errno (a process that cannot be inspected). */
static int
pidns_within(int procfd, pid_t pid, const pidns_id *want, const pidns_id *own)
{
        _cleanup_close_ int fd = pidns_open(procfd, pid);
        struct stat st;

        if (fd < 0)
                return fd;
        for (int level = 0; level <= PIDNS_MAX_LEVEL; level++) {
                if (fstat(fd, &st) < 0)
                        return -errno;
                if (pidns_is(&st, want))
                        return 1;
                if (pidns_is(&st, own))
                        return 0;
                int parent = ioctl(fd, NS_GET_PARENT);
                if (parent < 0)
                        return errno == EPERM ? 0 : -errno;
                close(fd);
                fd = parent;
        }
        return 0;
}

static int
cmp_pid(const void *a, const void *b)
{
        pid_t x = *(const pid_t *) a, y = *(const pid_t *) b;
        return (x > y) - (x < y);
}

int
rt_pidns_pids(pid_t init, pid_t **ret, size_t *ret_n, msp_err *err)
{
        _cleanup_close_ int procfd = rt_procfs_open(err);
        _cleanup_free_ pid_t *v = NULL;
        size_t n = 0, cap = 0;
        pidns_id want, own;
        int r;

        *ret = NULL;
        *ret_n = 0;
        if (procfd < 0)
                return procfd;
        if (pidns_id_of(procfd, init, &want) < 0)
                return msp_err_set(err, ESRCH, "process %d: its pid namespace cannot be read",
                                   (int) init);
        r = pidns_id_of(procfd, getpid(), &own);
        if (r < 0)
                return msp_err_sys(err, -r, "the runtime's own pid namespace cannot be read");
        if (want.dev == own.dev && want.ino == own.ino)
                return msp_err_set(err, EOPNOTSUPP, "the container shares the runtime's pid "
                                   "namespace: its processes cannot be told from others");
        int dfd = openat(procfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return msp_err_sys(err, errno, "open /proc");
        _cleanup_closedir_ DIR *d = fdopendir(dfd);
        if (!d) {
                close(dfd);
                return msp_err_sys(err, errno, "open /proc");
        }
        for (struct dirent *e; (e = readdir(d));) {
                char *end;
                long pid = strtol(e->d_name, &end, 10);
                if (*end || pid <= 0)
                        continue;
                r = pidns_within(procfd, (pid_t) pid, &want, &own);
                /* Gone, or not the caller's to inspect (nor then to signal): not listed. */
                if (r == -ENOENT || r == -ESRCH || r == -EACCES || r == -EPERM || r == 0)
                        continue;
                if (r < 0)
                        return msp_err_sys(err, -r, "process %ld: read its pid namespace", pid);
                if (n == cap) {
                        cap = cap ? cap * 2 : 16;
                        pid_t *nv = realloc(v, cap * sizeof *v);
                        if (!nv)
                                return msp_err_set(err, ENOMEM, "out of memory");
                        v = nv;
                }
                v[n++] = (pid_t) pid;
        }
        qsort(v, n, sizeof *v, cmp_pid);
        *ret = TAKE_PTR(v);
        *ret_n = n;
        return 0;
}
