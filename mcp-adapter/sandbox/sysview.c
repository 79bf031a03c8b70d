/* Resolution of paths as the sandbox sees them, and the /etc entries the languages' own
 * symlinks need (sysview.h). Every hop of a path is looked at on the host with lstat: the
 * view binds host paths at the same place, so a hop the view contains looks the same
 * inside. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "oci/oci.h"
#include "sandbox/sysview.h"

#define MAX_HOPS 40

/* Where a link may lead the view: configuration under /etc, never what the skeleton
 * synthesizes nor what holds secrets (the package manager's holds repository
 * credentials). */
static const char *const deny[] = { "/etc/passwd",   "/etc/group",     "/etc/shadow",
                                    "/etc/gshadow",  "/etc/sudoers",   "/etc/sudoers.d",
                                    "/etc/ssh",      "/etc/ssl/private", "/etc/hosts",
                                    "/etc/hostname", "/etc/resolv.conf", "/etc/nsswitch.conf",
                                    "/etc/localtime", "/etc/os-release", "/etc/machine-id",
                                    "/etc/security", "/etc/apt" };

/* path is dir or below it */
static bool
under(const char *path, const char *dir)
{
        size_t n = strlen(dir);
        return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* Matched as prefixes (also "/etc/shadow-", "/etc/hosts.deny"); nor a directory above one of
 * them: its bind would show them. */
static bool
may_join(const char *path)
{
        if (strncmp(path, "/etc/", 5) != 0)
                return false;
        for (size_t i = 0; i < ARRAY_SIZE(deny); i++)
                if (strncmp(path, deny[i], strlen(deny[i])) == 0 || under(deny[i], path))
                        return false;
        return true;
}

/* as_ancestor false: the view shows path as it is on the host (under a bound directory,
 * a bound file, or a symlink the skeleton reproduces). true: path is a directory of the
 * skeleton above something the view shows. */
static bool
view_has(const mcp_hostview *v, const char *path, bool as_ancestor)
{
        for (size_t i = 0; i < v->n_binds; i++)
                if (as_ancestor ? under(v->binds[i], path) : under(path, v->binds[i]))
                        return true;
        for (size_t i = 0; i < v->n_etc; i++)
                if (as_ancestor ? under(v->etc[i], path) : under(path, v->etc[i]))
                        return true;
        for (size_t i = 0; i < v->n_links; i++)
                if (as_ancestor ? under(v->links[i], path) : strcmp(path, v->links[i]) == 0)
                        return true;
        for (size_t i = 0; i < v->sys.n; i++) {
                const mcp_sysview_entry *e = &v->sys.e[i];
                if (as_ancestor ? under(e->path, path)
                                : e->kind == MCP_SYSVIEW_LINK ? strcmp(path, e->path) == 0
                                                              : under(path, e->path))
                        return true;
        }
        return false;
}

static bool fail(char *why, size_t size, const char *fmt, ...) _printf_(3, 4);

static bool
fail(char *why, size_t size, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, size, fmt, ap);
        va_end(ap);
        return false;
}

/* Make path (outside the view, may_join) part of it: as what it is on the host. */
static bool
join(mcp_hostview *v, const char *path, char *why, size_t size)
{
        struct stat st;
        if (lstat(path, &st) < 0)
                return fail(why, size, "%s: %s", path, strerror(errno));
        if (v->sys.n == MCP_SYSVIEW_MAX)
                return fail(why, size, "%s: more than %d paths outside the system dirs", path,
                            MCP_SYSVIEW_MAX);
        if (strlen(path) >= MCP_SYSVIEW_PATH)
                return fail(why, size, "%s: path too long", path);
        mcp_sysview_entry *e = &v->sys.e[v->sys.n];
        if (S_ISLNK(st.st_mode)) {
                ssize_t n = readlink(path, e->target, sizeof e->target - 1);
                if (n <= 0 || (size_t) n >= sizeof e->target - 1)
                        return fail(why, size, "%s: unreadable or long link", path);
                e->target[n] = '\0';
                e->kind = MCP_SYSVIEW_LINK;
        } else if (S_ISDIR(st.st_mode)) {
                e->kind = MCP_SYSVIEW_DIR;
        } else if (S_ISREG(st.st_mode)) {
                e->kind = MCP_SYSVIEW_FILE;
        } else {
                return fail(why, size, "%s: neither a file, a directory nor a link", path);
        }
        snprintf(e->path, sizeof e->path, "%s", path);
        v->sys.n++;
        return true;
}

bool
mcp_sysview_resolve(mcp_hostview *v, const char *path, bool add, char *why, size_t size)
{
        char done[PATH_MAX] = "";       /* resolved so far, free of symlinks; "" is "/" */
        char rest[PATH_MAX], next[PATH_MAX], target[PATH_MAX];
        if (snprintf(rest, sizeof rest, "%s", path) >= (int) sizeof rest)
                return fail(why, size, "%s: path too long", path);
        const char *r = rest;
        for (int hops = 0;;) {
                while (*r == '/')
                        r++;
                if (!*r)
                        return true;
                size_t len = strcspn(r, "/"), dl = strlen(done);
                const char *comp = r;
                r += len;
                if (len == 1 && comp[0] == '.')
                        continue;
                if (len == 2 && comp[0] == '.' && comp[1] == '.') {
                        char *slash = strrchr(done, '/');
                        if (slash)
                                *slash = '\0';
                        continue;
                }
                if (dl + 1 + len >= sizeof done)
                        return fail(why, size, "%s: path too long", path);
                done[dl] = '/';
                memcpy(done + dl + 1, comp, len);
                done[dl + 1 + len] = '\0';
                if (!view_has(v, done, false)) {
                        if (view_has(v, done, true) || strcmp(done, "/etc") == 0)
                                continue;       /* a directory of the skeleton */
                        if (!add || !may_join(done))
                                return fail(why, size, "%s is outside the system view", done);
                        if (!join(v, done, why, size))
                                return false;
                }
                struct stat st;
                if (lstat(done, &st) < 0)
                        return fail(why, size, "%s: %s", done, strerror(errno));
                if (!S_ISLNK(st.st_mode))
                        continue;
                if (++hops > MAX_HOPS)
                        return fail(why, size, "%s: too many levels of symbolic links", path);
                ssize_t n = readlink(done, target, sizeof target - 1);
                if (n <= 0)
                        return fail(why, size, "%s: unreadable link", done);
                target[n] = '\0';
                /* The link's text, then what was left of the path. */
                if (snprintf(next, sizeof next, "%s/%s", target, r) >= (int) sizeof next)
                        return fail(why, size, "%s: path too long", path);
                memcpy(rest, next, strlen(next) + 1);
                r = rest;
                if (target[0] == '/')
                        done[0] = '\0';
                else
                        *strrchr(done, '/') = '\0';
        }
}

/* The directories above rel (relative to fd), as the skeleton's mount points need. */
static int
parents_at(int fd, const char *rel, msp_err *err)
{
        char p[MCP_SYSVIEW_PATH];
        snprintf(p, sizeof p, "%s", rel);
        for (char *s = strchr(p, '/'); s; s = strchr(s + 1, '/')) {
                *s = '\0';
                if (mkdirat(fd, p, 0755) < 0 && errno != EEXIST)
                        return msp_err_sys(err, errno, "skeleton: mkdir '%s'", p);
                *s = '/';
        }
        return 0;
}

int
mcp_sysview_skeleton(int fd, const mcp_sysview *sys, msp_err *err)
{
        for (size_t i = 0; i < sys->n; i++) {
                const mcp_sysview_entry *e = &sys->e[i];
                const char *rel = e->path + 1;
                int r = parents_at(fd, rel, err);
                if (r < 0)
                        return r;
                if (e->kind == MCP_SYSVIEW_DIR)
                        r = mkdirat(fd, rel, 0755);
                else if (e->kind == MCP_SYSVIEW_LINK)
                        r = symlinkat(e->target, fd, rel);
                else
                        r = mknodat(fd, rel, S_IFREG | 0644, 0);
                if (r < 0 && errno != EEXIST)
                        return msp_err_sys(err, errno, "skeleton: '%s'", e->path);
        }
        return 0;
}
