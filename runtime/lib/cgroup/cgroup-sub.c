/* exec --cgroup: the sub-cgroups of the container's cgroup that an exec'd process joins,
 * with runc-exec(8)'s syntax and rules: "PATH" for every hierarchy, or, repeatable,
 * "CONTROLLER[,CONTROLLER...]:PATH" for those v1 hierarchies only (the others take the
 * container's cgroup). PATH is relative to the container's cgroup ("/" and "" name it
 * itself), may not leave it, and must exist: nothing is created here. */
#include "lib/cgroup/cgroup.h"

#include <errno.h>
#include <string.h>

#include "lib/cgroup/cgroup-internal.h"
#include "oci/oci.h"

/* base + sub with "." and ".." resolved; -EINVAL when sub climbs out of base. */
static int
sub_join(const char *base, const char *sub, char *buf, size_t size)
{
        size_t len = (size_t) snprintf(buf, size, "%s", base), base_len = len;

        if (len >= size)
                return -ENAMETOOLONG;
        for (const char *p = sub; *p;) {
                size_t n = strcspn(p, "/");
                if (n == 2 && p[0] == '.' && p[1] == '.') {
                        if (len == base_len)
                                return -EINVAL;
                        while (len > base_len && buf[len - 1] != '/')
                                len--;
                        buf[--len] = '\0';
                } else if (n > 0 && !(n == 1 && p[0] == '.')) {
                        if (len + 1 + n >= size)
                                return -ENAMETOOLONG;
                        buf[len++] = '/';
                        memcpy(buf + len, p, n);
                        len += n;
                        buf[len] = '\0';
                }
                p += n + (p[n] == '/');
        }
        return 0;
}

/* Is ctrl ("cpu", "name=systemd") one of the v1 hierarchy hier's names? */
static bool
hier_has(const char *hier, const char *ctrl)
{
        const char *names = strrchr(hier, '/') ? strrchr(hier, '/') + 1 : hier;
        size_t cl;

        if (strncmp(ctrl, "name=", 5) == 0)
                ctrl += 5;
        cl = strlen(ctrl);
        for (const char *p = names; *p;) {
                size_t n = strcspn(p, ",");
                if (n == cl && strncmp(p, ctrl, n) == 0)
                        return true;
                p += n + (p[n] == ',');
        }
        return false;
}

/* The sub path hierarchy hier takes: the last --cgroup naming one of its controllers. */
static const char *
sub_for(const rt_cgroup_sub *s, const char *hier, bool v2)
{
        if (s->all)
                return s->all;
        for (size_t i = s->n; !v2 && i > 0; i--)
                if (hier_has(hier, s->v[i - 1].ctrl))
                        return s->v[i - 1].path;
        return "";
}

static int
mark_known(const char *hier, int root, bool v2, void *userdata, msp_err *err)
{
        rt_cgroup_sub *s = userdata;

        (void) root;
        (void) err;
        for (size_t i = 0; !v2 && i < s->n; i++)
                s->v[i].known = s->v[i].known || hier_has(hier, s->v[i].ctrl);
        return 0;
}

static int
parse_one(rt_cgroup_sub *s, const char *arg, size_t n_args, msp_err *err)
{
        const char *colon = strchr(arg, ':');
        char check[PATH_MAX];

        if (colon && strchr(colon + 1, ':'))
                return msp_err_set(err, EINVAL, "--cgroup '%s': expected PATH or "
                                   "CONTROLLER[,CONTROLLER...]:PATH", arg);
        if (!colon && n_args > 1)
                return msp_err_set(err, EINVAL, "--cgroup '%s': a PATH without a 'CONTROLLER:' "
                                   "prefix must be the only --cgroup", arg);
        const char *path = colon ? colon + 1 : arg;
        if (sub_join("/", path, check, sizeof check) < 0)
                return msp_err_set(err, EINVAL, "--cgroup '%s': '%s' is not a path below the "
                                   "container's cgroup", arg, path);
        if (!colon) {
                s->all = path;
                return 0;
        }
        for (const char *p = arg;;) {
                size_t n = strcspn(p, ",:");
                /* An empty name stands for every hierarchy, as runc 1.1 reads it. */
                if (n == 0)
                        s->all = path;
                else if (s->n >= RT_CGROUP_SUB_MAX || n >= sizeof s->v[0].ctrl)
                        return msp_err_set(err, E2BIG, "--cgroup '%s': too many controllers", arg);
                else {
                        memcpy(s->v[s->n].ctrl, p, n);
                        s->v[s->n].ctrl[n] = '\0';
                        s->v[s->n].path = path;
                        s->v[s->n].arg = arg;
                        s->v[s->n++].known = false;
                }
                if (p[n] != ',')
                        break;
                p += n + 1;
        }
        return 0;
}

int
rt_cgroup_sub_parse(char *const *args, size_t n, rt_cgroup_sub *ret, msp_err *err)
{
        *ret = (rt_cgroup_sub) { 0 };
        for (size_t i = 0; i < n; i++) {
                int r = parse_one(ret, args[i], n, err);
                if (r < 0)
                        return r;
        }
        if (ret->all || ret->n == 0)
                return 0;
        int r = cg_for_each_hierarchy(mark_known, ret, err);
        if (r < 0)
                return r;
        for (size_t i = 0; i < ret->n; i++)
                if (!ret->v[i].known)
                        return msp_err_set(err, EINVAL, "--cgroup '%s': unknown controller '%s' "
                                           "(no cgroup v1 hierarchy of that name is mounted)",
                                           ret->v[i].arg, ret->v[i].ctrl);
        return 0;
}

typedef struct enter_sub {
        const char *base;
        const rt_cgroup_sub *sub;
        const char *pid;
} enter_sub;

static int
enter_in(const char *hier, int root, bool v2, void *userdata, msp_err *err)
{
        const enter_sub *e = userdata;
        char path[PATH_MAX];

        if (sub_join(e->base, e->sub ? sub_for(e->sub, hier, v2) : "", path, sizeof path) < 0)
                return msp_err_set(err, EINVAL, "cgroup path below '%s' is invalid", e->base);
        _cleanup_close_ int dfd = cg_open_dir_at(root, hier, path, err);
        if (dfd < 0)
                return dfd;
        int r = cg_write(dfd, "cgroup.procs", e->pid, err);
        if (r < 0)
                return msp_err_prefix(err, "join cgroup '%s%s'", hier, path);
        return 0;
}

int
rt_cgroup_enter_sub(const char *path, const rt_cgroup_sub *sub, pid_t pid, msp_err *err)
{
        char pidstr[32];
        enter_sub e = { .base = path, .sub = sub, .pid = pidstr };

        snprintf(pidstr, sizeof pidstr, "%d", (int) pid);
        return cg_for_each_hierarchy(enter_in, &e, err);
}

int
rt_cgroup_enter(const char *path, pid_t pid, msp_err *err)
{
        return rt_cgroup_enter_sub(path, NULL, pid, err);
}
