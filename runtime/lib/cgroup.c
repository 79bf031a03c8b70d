#include "cgroup.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#define CGROUP_ROOT "/sys/fs/cgroup"

int
rt_cgroup_mode_detect(rt_cgroup_mode *ret, msp_err *err)
{
        struct statfs sfs;

        if (statfs(CGROUP_ROOT, &sfs) < 0)
                return msp_err_sys(err, errno, "statfs '%s'", CGROUP_ROOT);
        if (sfs.f_type == CGROUP2_SUPER_MAGIC) {
                *ret = RT_CGROUP_UNIFIED;
                return 0;
        }
        if (statfs(CGROUP_ROOT "/unified", &sfs) == 0 && sfs.f_type == CGROUP2_SUPER_MAGIC)
                *ret = RT_CGROUP_HYBRID;
        else
                *ret = RT_CGROUP_LEGACY;
        return 0;
}

/* "a-b-c.slice" lives at "/a.slice/a-b.slice/a-b-c.slice" (systemd's nesting rule). */
static int
expand_slice(const char *slice, char *buf, size_t bufsz)
{
        size_t len = strlen(slice), o = 0;

        if (len < 6 || strcmp(slice + len - 6, ".slice") != 0 || strchr(slice, '/'))
                return -EINVAL;
        if (strcmp(slice, "-.slice") == 0) {
                buf[0] = '\0';
                return 0;
        }
        for (size_t i = 0; i < len - 6; i++) {
                if (slice[i] != '-' && i != len - 7)
                        continue;
                size_t end = slice[i] == '-' ? i : i + 1;
                int n = snprintf(buf + o, bufsz - o, "/%.*s.slice", (int) end, slice);
                if (n < 0 || (size_t) n >= bufsz - o)
                        return -ENAMETOOLONG;
                o += (size_t) n;
        }
        return 0;
}

int
rt_cgroup_path_for(const char *cgroups_path, const char *id, char *buf, size_t bufsz,
                   msp_err *err)
{
        int n;

        if (!cgroups_path || !*cgroups_path)
                n = snprintf(buf, bufsz, "/msp/%s", id);
        else if (cgroups_path[0] == '/')
                n = snprintf(buf, bufsz, "%s", cgroups_path);
        else if (strchr(cgroups_path, ':')) {
                char slice[256], prefix[256], name[1024], sp[2048];
                if (sscanf(cgroups_path, "%255[^:]:%255[^:]:%1023s", slice, prefix, name) != 3)
                        return msp_err_set(err, EINVAL,
                                           "linux.cgroupsPath: expected \"slice:prefix:name\", got \"%.64s\"",
                                           cgroups_path);
                if (expand_slice(slice, sp, sizeof sp) < 0)
                        return msp_err_set(err, EINVAL, "linux.cgroupsPath: invalid slice \"%.64s\"",
                                           slice);
                n = snprintf(buf, bufsz, "%s/%s-%s.scope", sp, prefix, name);
        } else
                n = snprintf(buf, bufsz, "/msp/%s", cgroups_path);
        if (n < 0 || (size_t) n >= bufsz)
                return msp_err_set(err, ENAMETOOLONG, "linux.cgroupsPath is too long");
        if (strstr(buf, "/../") || (strlen(buf) >= 3 && strcmp(buf + strlen(buf) - 3, "/..") == 0))
                return msp_err_set(err, EINVAL, "linux.cgroupsPath: \"%.64s\" escapes the cgroup root",
                                   cgroups_path);
        return 0;
}

/* Each mounted hierarchy under /sys/fs/cgroup (v1 controllers, name=systemd, unified),
 * or the root itself on a unified host. Calls fn(hierarchy_dir) for each. */
typedef int (*hierarchy_fn)(const char *hier, void *userdata, msp_err *err);

static int
for_each_hierarchy(hierarchy_fn fn, void *userdata, msp_err *err)
{
        struct statfs sfs;
        _cleanup_closedir_ DIR *d = NULL;
        struct dirent *de;
        int r;

        if (statfs(CGROUP_ROOT, &sfs) < 0)
                return msp_err_sys(err, errno, "statfs '%s'", CGROUP_ROOT);
        if (sfs.f_type == CGROUP2_SUPER_MAGIC)
                return fn(CGROUP_ROOT, userdata, err);
        d = opendir(CGROUP_ROOT);
        if (!d)
                return msp_err_sys(err, errno, "open '%s'", CGROUP_ROOT);
        while ((de = readdir(d))) {
                char hier[512];
                struct stat st;
                if (de->d_name[0] == '.')
                        continue;
                snprintf(hier, sizeof hier, CGROUP_ROOT "/%s", de->d_name);
                /* cpu -> cpu,cpuacct style aliases are symlinks: visit each mount once. */
                if (lstat(hier, &st) < 0 || !S_ISDIR(st.st_mode))
                        continue;
                if (statfs(hier, &sfs) < 0 ||
                    (sfs.f_type != CGROUP_SUPER_MAGIC && sfs.f_type != CGROUP2_SUPER_MAGIC))
                        continue;
                r = fn(hier, userdata, err);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int
read_small(const char *path, char *buf, size_t bufsz)
{
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t n;

        if (fd < 0)
                return -errno;
        n = read(fd, buf, bufsz - 1);
        if (n < 0)
                return -errno;
        buf[n] = '\0';
        return (int) n;
}

static int
write_small(const char *path, const char *data)
{
        _cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);

        if (fd < 0)
                return -errno;
        if (write(fd, data, strlen(data)) < 0)
                return -errno;
        return 0;
}

/* A new v1 cpuset cgroup starts with empty cpus/mems and refuses tasks: inherit. */
static void
cpuset_inherit(const char *dir)
{
        static const char *const files[] = { "cpuset.cpus", "cpuset.mems" };
        char parent[4096], path[4200], val[4096];

        snprintf(parent, sizeof parent, "%s", dir);
        char *slash = strrchr(parent, '/');
        if (!slash)
                return;
        *slash = '\0';
        for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
                snprintf(path, sizeof path, "%s/%s", dir, files[i]);
                if (read_small(path, val, sizeof val) < 0 || (val[0] != '\n' && val[0] != '\0'))
                        continue;
                snprintf(path, sizeof path, "%s/%s", parent, files[i]);
                if (read_small(path, val, sizeof val) <= 0)
                        continue;
                snprintf(path, sizeof path, "%s/%s", dir, files[i]);
                (void) write_small(path, val);
        }
}

struct create_data {
        const char *path;
        bool created;
};

static int
create_in(const char *hier, void *userdata, msp_err *err)
{
        struct create_data *cd = userdata;
        char dir[4096];
        size_t hl = strlen(hier);

        if ((size_t) snprintf(dir, sizeof dir, "%s%s", hier, cd->path) >= sizeof dir)
                return msp_err_set(err, ENAMETOOLONG, "cgroup path too long");
        for (char *p = dir + hl + 1; ; p++) {
                bool last = *p == '\0';
                if (*p != '/' && !last)
                        continue;
                *p = '\0';
                if (mkdir(dir, 0755) == 0) {
                        if (last)
                                cd->created = true;
                        if (strstr(hier, "cpuset"))
                                cpuset_inherit(dir);
                } else if (errno != EEXIST)
                        return msp_err_sys(err, errno, "create cgroup '%s'", dir);
                if (last)
                        break;
                *p = '/';
        }
        return 0;
}

int
rt_cgroup_create(const char *path, bool *ret_created, msp_err *err)
{
        struct create_data cd = { .path = path };
        int r = for_each_hierarchy(create_in, &cd, err);

        if (r < 0) {
                (void) rt_cgroup_destroy(path, NULL);
                return r;
        }
        *ret_created = cd.created;
        return 0;
}

static int
enter_in(const char *hier, void *userdata, msp_err *err)
{
        const char *path = ((const char **) userdata)[0];
        const char *pid = ((const char **) userdata)[1];
        char file[4200];

        snprintf(file, sizeof file, "%s%s/cgroup.procs", hier, path);
        int r = write_small(file, pid);
        if (r < 0)
                return msp_err_sys(err, -r, "join cgroup '%s'", file);
        return 0;
}

int
rt_cgroup_enter(const char *path, pid_t pid, msp_err *err)
{
        char pidstr[32];
        const char *args[2] = { path, pidstr };

        snprintf(pidstr, sizeof pidstr, "%d", (int) pid);
        return for_each_hierarchy(enter_in, args, err);
}

struct signal_data {
        const char *path;
        int sig;
        unsigned found;
};

static int
signal_in(const char *hier, void *userdata, msp_err *err)
{
        struct signal_data *sd = userdata;
        char file[4200], buf[65536];

        (void) err;
        snprintf(file, sizeof file, "%s%s/cgroup.procs", hier, sd->path);
        if (read_small(file, buf, sizeof buf) <= 0)
                return 0;
        for (char *tok = strtok(buf, "\n"); tok; tok = strtok(NULL, "\n")) {
                pid_t pid = (pid_t) atoi(tok);
                if (pid > 0 && kill(pid, sd->sig) == 0)
                        sd->found++;
        }
        return 0;
}

int
rt_cgroup_signal_all(const char *path, int sig, msp_err *err)
{
        struct signal_data sd = { .path = path, .sig = sig };
        return for_each_hierarchy(signal_in, &sd, err);
}

static int
rmdir_in(const char *hier, void *userdata, msp_err *err)
{
        char dir[4200];

        snprintf(dir, sizeof dir, "%s%s", hier, (const char *) userdata);
        if (rmdir(dir) < 0 && errno != ENOENT)
                return msp_err_sys(err, errno, "remove cgroup '%s'", dir);
        return 0;
}

int
rt_cgroup_destroy(const char *path, msp_err *err)
{
        int r = 0;

        /* Processes die asynchronously after SIGKILL; retry rmdir (EBUSY) for up to ~2 s,
         * re-killing stragglers (a fork that raced the first kill). */
        for (int attempt = 0; attempt < 200; attempt++) {
                struct signal_data sd = { .path = path, .sig = SIGKILL };
                (void) for_each_hierarchy(signal_in, &sd, NULL);
                r = for_each_hierarchy(rmdir_in, (void *) path, err);
                if (r != -EBUSY)
                        return r;
                struct timespec ts = { 0, 10 * 1000 * 1000 };
                nanosleep(&ts, NULL);
        }
        return r;
}

bool
rt_cgroup_is_frozen(const char *path)
{
        char file[4200], buf[64];
        rt_cgroup_mode mode;

        if (rt_cgroup_mode_detect(&mode, NULL) < 0)
                return false;
        if (mode == RT_CGROUP_UNIFIED) {
                snprintf(file, sizeof file, CGROUP_ROOT "%s/cgroup.freeze", path);
                return read_small(file, buf, sizeof buf) > 0 && buf[0] == '1';
        }
        snprintf(file, sizeof file, CGROUP_ROOT "/freezer%s/freezer.state", path);
        return read_small(file, buf, sizeof buf) > 0 && strncmp(buf, "FROZEN", 6) == 0;
}
