/* Cleaning up after dead servers. See recover.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"
#include "oci/oci.h"
#include "engine/recover.h"

#define CGROUP_ROOT "/sys/fs/cgroup"

/* Names we made ourselves: "inst-<pid>-<hex>" and "r-<hex>"; anything else is left alone. */
static bool
safe_name(const char *s, const char *prefix)
{
        size_t n = strlen(prefix);
        if (strncmp(s, prefix, n) != 0 || strlen(s) > 64 || !s[n])
                return false;
        for (const char *p = s + n; *p; p++)
                if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f') || *p == '-'))
                        return false;
        return true;
}

static void
delete_containers(const mcp_config *cfg, const char *path)
{
        char root[4200], rt[4096] = "";
        snprintf(root, sizeof root, "%s/runtime", path);
        char file[4200];
        snprintf(file, sizeof file, "%s/runtime-path", path);
        _cleanup_close_ int fd = open(file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd >= 0) {
                ssize_t n = read(fd, rt, sizeof rt - 1);
                rt[n > 0 ? n : 0] = '\0';
        }
        /* Only a root-owned binary nobody else can replace; otherwise our own runtime. */
        struct stat st;
        if (rt[0] != '/' || stat(rt, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != 0 ||
            (st.st_mode & 022) || access(rt, X_OK) < 0)
                snprintf(rt, sizeof rt, "%s", cfg->runtime_path);
        _cleanup_closedir_ DIR *d = opendir(root);
        struct dirent *de;
        while (d && (de = readdir(d))) {
                if (!safe_name(de->d_name, "r-"))
                        continue;
                const char *argv[] = { rt, "--root", root, "delete", "--force", de->d_name, NULL };
                (void) mcp_spawn_wait(argv, NULL);
        }
}

/* rmdir a cgroup tree bottom-up (cgroup directories hold only control files, which
 * rmdir ignores; a populated cgroup fails with EBUSY and is left). */
static void
rmdir_cgroup(const char *path, int depth)
{
        if (depth > 8)
                return;
        _cleanup_closedir_ DIR *d = opendir(path);
        struct dirent *de;
        while (d && (de = readdir(d))) {
                if (de->d_type != DT_DIR || strcmp(de->d_name, ".") == 0 ||
                    strcmp(de->d_name, "..") == 0)
                        continue;
                char sub[4096];
                if (snprintf(sub, sizeof sub, "%s/%s", path, de->d_name) < (int) sizeof sub)
                        rmdir_cgroup(sub, depth + 1);
        }
        /* A cgroup whose last task is still exiting is busy for a moment: bounded retry. */
        for (int i = 0; i < 100 && rmdir(path) < 0 && errno == EBUSY; i++)
                (void) poll(NULL, 0, 10);
}

static void
remove_cgroups(const char *name)
{
        char path[4096];
        _cleanup_closedir_ DIR *d = opendir(CGROUP_ROOT);
        struct dirent *de;
        /* Pure v2: /sys/fs/cgroup/msp-mcp/<name>; v1 and hybrid: one per hierarchy. */
        snprintf(path, sizeof path, CGROUP_ROOT "/msp-mcp/%s", name);
        rmdir_cgroup(path, 0);
        while (d && (de = readdir(d))) {
                if (de->d_name[0] == '.')
                        continue;
                snprintf(path, sizeof path, CGROUP_ROOT "/%s/msp-mcp/%s", de->d_name, name);
                rmdir_cgroup(path, 0);
        }
}

/* Run by a user, the instance's cgroup is below the user's own (rootless-cgroup.h): its
 * path is in <inst>/cgroup. Only a directory of that instance's name below the hierarchy. */
static void
remove_recorded_cgroup(const char *path, const char *name)
{
        char file[4200], dir[4096] = "";
        snprintf(file, sizeof file, "%s/cgroup", path);
        _cleanup_close_ int fd = open(file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        ssize_t n = fd >= 0 ? read(fd, dir, sizeof dir - 1) : -1;
        if (n <= 0)
                return;
        dir[n] = '\0';
        const char *last = strrchr(dir, '/');
        if (strncmp(dir, CGROUP_ROOT "/", sizeof CGROUP_ROOT) != 0 || strstr(dir, "/..") ||
            !last || strcmp(last + 1, name) != 0)
                return;
        rmdir_cgroup(dir, 0);
}

static void
unmount_workspaces(const char *path)
{
        char ws[4096];
        snprintf(ws, sizeof ws, "%s/ws", path);
        _cleanup_closedir_ DIR *d = opendir(ws);
        struct dirent *de;
        while (d && (de = readdir(d))) {
                if (!safe_name(de->d_name, "r-"))
                        continue;
                char p[4400];
                snprintf(p, sizeof p, "%s/%s", ws, de->d_name);
                (void) umount2(p, MNT_DETACH | UMOUNT_NOFOLLOW);
        }
}

void
mcp_recover_instance(const mcp_config *cfg, const char *path, const char *name, bool containers)
{
        if (containers)
                delete_containers(cfg, path);
        remove_cgroups(name);
        remove_recorded_cgroup(path, name);
        unmount_workspaces(path);
        const char *slash = strrchr(path, '/');
        char parent[4096];
        snprintf(parent, sizeof parent, "%.*s", slash ? (int) (slash - path) : 1,
                 slash ? path : ".");
        _cleanup_close_ int pfd = open(parent[0] ? parent : "/",
                                       O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (pfd >= 0)
                (void) mcp_remove_tree_at(pfd, name, NULL);
}

int
mcp_recover(const mcp_config *cfg, msp_err *err)
{
        const char *state = cfg->state_dir ? cfg->state_dir : "/run/msp-mcp";
        _cleanup_closedir_ DIR *d = opendir(state);
        if (!d)
                return errno == ENOENT ? 0 : msp_err_sys(err, errno, "state dir '%s'", state);
        int cleaned = 0;
        struct dirent *de;
        while ((de = readdir(d))) {
                if (!safe_name(de->d_name, "inst-"))
                        continue;
                _cleanup_close_ int fd = openat(dirfd(d), de->d_name,
                                                O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) < 0)
                        continue;               /* alive (or not ours to judge) */
                char path[4096];
                snprintf(path, sizeof path, "%s/%s", state, de->d_name);
                mcp_recover_instance(cfg, path, de->d_name, true);
                cleaned++;
        }
        return cleaned;
}
