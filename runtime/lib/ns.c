#include "ns.h"

#include <fcntl.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "log.h"
#include "procfs.h"

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
        if (ret->join[OCI_NS_USER] && (ret->new_flags & CLONE_NEWPID))
                return msp_err_set(err, EINVAL,
                                   "linux.namespaces: joining a user namespace by path together "
                                   "with a new pid namespace is not supported");
        if ((lx->n_uid_mappings || lx->n_gid_mappings) && !(ret->new_flags & CLONE_NEWUSER))
                return msp_err_set(err, EINVAL,
                                   "linux.uidMappings/gidMappings need a new user namespace");
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

static int
format_map(const oci_id_mapping *m, size_t n, char *buf, size_t bufsz)
{
        size_t o = 0;

        buf[0] = '\0';
        for (size_t i = 0; i < n; i++) {
                int w = snprintf(buf + o, bufsz - o, "%u %u %u\n", m[i].container_id,
                                 m[i].host_id, m[i].size);
                if (w < 0 || (size_t) w >= bufsz - o)
                        return -E2BIG;
                o += (size_t) w;
        }
        return 0;
}

int
rt_userns_write_maps(int procfd, pid_t pid, const oci_linux *lx, bool deny_setgroups,
                     msp_err *err)
{
        char path[64], map[8192];
        int r;

        if (deny_setgroups) {
                snprintf(path, sizeof path, "%d/setgroups", (int) pid);
                r = rt_procfs_write(procfd, path, "deny", err);
                if (r < 0)
                        return r;
        }
        if (format_map(lx->uid_mappings, lx->n_uid_mappings, map, sizeof map) < 0)
                return msp_err_set(err, E2BIG, "linux.uidMappings: too many entries");
        snprintf(path, sizeof path, "%d/uid_map", (int) pid);
        r = rt_procfs_write(procfd, path, map, err);
        if (r < 0)
                return msp_err_prefix(err, "linux.uidMappings");
        if (format_map(lx->gid_mappings, lx->n_gid_mappings, map, sizeof map) < 0)
                return msp_err_set(err, E2BIG, "linux.gidMappings: too many entries");
        snprintf(path, sizeof path, "%d/gid_map", (int) pid);
        r = rt_procfs_write(procfd, path, map, err);
        if (r < 0)
                return msp_err_prefix(err, "linux.gidMappings");
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
