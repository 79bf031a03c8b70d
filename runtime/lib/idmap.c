/* The id maps of a new user namespace (ns.h): written directly by a caller that may
 * (root of its own namespace, or an unprivileged caller mapping only its own ids), else
 * through the setuid helpers newuidmap/newgidmap, which allow the ranges /etc/subuid and
 * /etc/subgid grant the caller (as runc and crun do rootless). */
#include "lib/ns.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "oci/oci.h"
#include "lib/procfs.h"

extern char **environ;

/* The one mapping an unprivileged writer may write itself: its own id, one id. */
static bool
own_id_only(const oci_id_mapping *m, size_t n, uint32_t own)
{
        return n == 1 && m[0].host_id == own && m[0].size == 1;
}

bool
rt_userns_needs_helpers(const rt_ctx *ctx, const oci_linux *lx)
{
        if (ctx->caller_euid == 0)
                return false;
        return !own_id_only(lx->uid_mappings, lx->n_uid_mappings, ctx->caller_euid) ||
               !own_id_only(lx->gid_mappings, lx->n_gid_mappings, ctx->caller_egid);
}

bool
rt_userns_setgroups_denied(const rt_ctx *ctx, const oci_linux *lx)
{
        return ctx->caller_euid != 0 && !rt_userns_needs_helpers(ctx, lx);
}

bool
rt_userns_setgroups_allowed(const rt_ctx *ctx, const oci_linux *lx, bool in_userns)
{
        if (ctx->setgroups_denied)
                return false;
        return !in_userns || !lx || !rt_userns_setgroups_denied(ctx, lx);
}

static int
format_map(const oci_id_mapping *m, size_t n, const char *sep, char *buf, size_t bufsz)
{
        size_t o = 0;

        buf[0] = '\0';
        for (size_t i = 0; i < n; i++) {
                int w = snprintf(buf + o, bufsz - o, "%s%u %u %u", i ? sep : "", m[i].container_id,
                                 m[i].host_id, m[i].size);
                if (w < 0 || (size_t) w >= bufsz - o)
                        return -E2BIG;
                o += (size_t) w;
        }
        if (strcmp(sep, "\n") == 0 && o + 1 < bufsz)
                memcpy(buf + o, "\n", 2);
        return 0;
}

/* The helper's path: PATH first (as runc's LookPath), then the usual directories. */
static int
find_helper(const char *name, char *buf, size_t bufsz)
{
        const char *path = getenv("PATH");
        char dirs[4096];

        snprintf(dirs, sizeof dirs, "%s:/usr/bin:/bin:/usr/sbin:/sbin", path ? path : "");
        for (char *save = NULL, *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
                if (*d != '/' || (size_t) snprintf(buf, bufsz, "%s/%s", d, name) >= bufsz)
                        continue;
                if (access(buf, X_OK) == 0)
                        return 0;
        }
        return -ENOENT;
}

/* Run `helper PID inside outside count ...`; its stderr becomes the error. */
static int
run_helper(const char *helper, const char *field, pid_t pid, const oci_id_mapping *m, size_t n,
           msp_err *err)
{
        char path[4096], map[8192], pidbuf[16], out[512];
        const char *argv[3 + 3 * 340 + 1];
        char ids[3 * 340][11];
        size_t argc = 0;
        int p[2], status;

        if (format_map(m, n, ", ", map, sizeof map) < 0 || n > 340)
                return msp_err_set(err, E2BIG, "%s: too many entries", field);
        if (find_helper(helper, path, sizeof path) < 0)
                return msp_err_set(err, ENOENT, "%s: mapping [%s] needs %s (Debian package "
                                   "uidmap), which is not installed", field, map, helper);
        snprintf(pidbuf, sizeof pidbuf, "%d", (int) pid);
        argv[argc++] = helper;
        argv[argc++] = pidbuf;
        for (size_t i = 0; i < n; i++) {
                snprintf(ids[3 * i], sizeof ids[0], "%u", m[i].container_id);
                snprintf(ids[3 * i + 1], sizeof ids[0], "%u", m[i].host_id);
                snprintf(ids[3 * i + 2], sizeof ids[0], "%u", m[i].size);
                for (size_t k = 0; k < 3; k++)
                        argv[argc++] = ids[3 * i + k];
        }
        argv[argc] = NULL;
        if (pipe2(p, O_CLOEXEC) < 0)
                return msp_err_sys(err, errno, "%s: pipe", helper);
        _cleanup_close_ int rd = p[0];
        pid_t child = fork();
        if (child < 0) {
                close(p[1]);
                return msp_err_sys(err, errno, "%s: fork", helper);
        }
        if (child == 0) {
                if (dup2(p[1], STDOUT_FILENO) < 0 || dup2(p[1], STDERR_FILENO) < 0)
                        _exit(127);
                execve(path, (char *const *) argv, environ);
                dprintf(STDERR_FILENO, "exec '%s': %s", path, strerror(errno));
                _exit(127);
        }
        close(p[1]);
        size_t o = 0;
        ssize_t k;
        while ((k = read(rd, out + o, sizeof out - 1 - o)) > 0 || (k < 0 && errno == EINTR))
                if (k > 0)
                        o += (size_t) k;
        out[o] = '\0';
        out[strcspn(out, "\n")] = '\0';
        while (waitpid(child, &status, 0) < 0)
                if (errno != EINTR)
                        return msp_err_sys(err, errno, "%s: wait", helper);
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
                return 0;
        return msp_err_set(err, EPERM, "%s: mapping [%s] refused by %s, which allows the "
                           "caller's own id and its ranges in /etc/%s: %s", field, map, helper,
                           strcmp(helper, "newuidmap") == 0 ? "subuid" : "subgid",
                           *out ? out : "no message");
}

int
rt_userns_write_maps(const rt_ctx *ctx, int procfd, pid_t pid, const oci_linux *lx, msp_err *err)
{
        char path[64], map[8192];
        int r;

        if (rt_userns_needs_helpers(ctx, lx)) {
                /* setgroups stays "allow": newgidmap writes gid_map with CAP_SETGID. */
                r = run_helper("newuidmap", "linux.uidMappings", pid, lx->uid_mappings,
                               lx->n_uid_mappings, err);
                if (r >= 0)
                        r = run_helper("newgidmap", "linux.gidMappings", pid, lx->gid_mappings,
                                       lx->n_gid_mappings, err);
                return r;
        }
        /* The kernel lets a writer without CAP_SETGID over the parent namespace write
         * gid_map only once setgroups is denied. */
        if (rt_userns_setgroups_denied(ctx, lx)) {
                snprintf(path, sizeof path, "%d/setgroups", (int) pid);
                r = rt_procfs_write(procfd, path, "deny", err);
                if (r < 0)
                        return r;
        }
        if (format_map(lx->uid_mappings, lx->n_uid_mappings, "\n", map, sizeof map) < 0)
                return msp_err_set(err, E2BIG, "linux.uidMappings: too many entries");
        snprintf(path, sizeof path, "%d/uid_map", (int) pid);
        r = rt_procfs_write(procfd, path, map, err);
        if (r < 0)
                return msp_err_prefix(err, "linux.uidMappings");
        if (format_map(lx->gid_mappings, lx->n_gid_mappings, "\n", map, sizeof map) < 0)
                return msp_err_set(err, E2BIG, "linux.gidMappings: too many entries");
        snprintf(path, sizeof path, "%d/gid_map", (int) pid);
        r = rt_procfs_write(procfd, path, map, err);
        if (r < 0)
                return msp_err_prefix(err, "linux.gidMappings");
        return 0;
}
