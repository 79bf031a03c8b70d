/* The files and hierarchies below /sys/fs/cgroup that the rest of the cgroup module
 * works with: one directory's files (and the undo journal their writes keep during an
 * update), paths resolved from an fd of CG_ROOT, the host's mode, controller delegation
 * on v2, the walk over the mounted hierarchies, and waiting for a v2 event. */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include "lib/cgroup/cgroup.h"
#include "lib/cgroup/cgroup-internal.h"

/* ---- files of one cgroup directory ---- */

bool
cg_path_is_safe(const char *path)
{
        bool component = false;

        if (!path || path[0] != '/')
                return false;
        for (const char *p = path; *p; ) {
                while (*p == '/')
                        p++;
                size_t len = strcspn(p, "/");
                if (len == 0)
                        break;
                if ((len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.'))
                        return false;
                component = true;
                p += len;
        }
        return component;
}

int
cg_open_dir(const char *hier, const char *path, msp_err *err)
{
        char dir[PATH_MAX];

        if ((size_t) snprintf(dir, sizeof dir, "%s%s", hier, path) >= sizeof dir)
                return msp_err_set(err, ENAMETOOLONG, "cgroup path too long");
        int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return msp_err_sys(err, errno, "cgroup: open '%s'", dir);
        return fd;
}

int
cg_root_open(void)
{
        int fd = open(CG_ROOT, O_PATH | O_DIRECTORY | O_CLOEXEC);
        return fd < 0 ? -errno : fd;
}

int
cg_relpath(const char *hier, const char *path, char *buf, size_t size)
{
        size_t rl = strlen(CG_ROOT);

        if (strncmp(hier, CG_ROOT, rl) != 0 || (hier[rl] != '\0' && hier[rl] != '/'))
                return -EINVAL;
        const char *h = hier + rl;
        while (*h == '/')
                h++;
        while (*path == '/')
                path++;
        int n = snprintf(buf, size, "%s%s%s", h, *h && *path ? "/" : "", path);
        if (n < 0 || (size_t) n >= size)
                return -ENAMETOOLONG;
        if (!buf[0])
                snprintf(buf, size, ".");
        return 0;
}

int
cg_open_dir_at(int root, const char *hier, const char *path, msp_err *err)
{
        char rel[PATH_MAX];

        if (root < 0 || cg_relpath(hier, path, rel, sizeof rel) < 0)
                return cg_open_dir(hier, path, err);
        int fd = openat(root, rel, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return msp_err_sys(err, errno, "cgroup: open '%s%s'", hier, path);
        return fd;
}

/* The journal's side of cg_write (below, with the journal). */
static bool undo_save(int dfd, const char *file, cg_undo_old *ret);
static void undo_push(int dfd, const char *file, const cg_undo_old *old);
static void undo_failed(const char *file);

int
cg_write_fd(int fd, const char *file, const char *value, msp_err *err)
{
        size_t len = strlen(value);
        ssize_t n = write(fd, value, len);

        if (n < 0)
                return msp_err_sys(err, errno, "cgroup: write '%s' = '%.200s'", file, value);
        if ((size_t) n != len)
                return msp_err_set(err, EIO, "cgroup: write '%s' = '%.200s': short write", file,
                                   value);
        return 0;
}

int
cg_write(int dfd, const char *file, const char *value, msp_err *err)
{
        cg_undo_old old;
        bool journal = undo_save(dfd, file, &old);
        _cleanup_close_ int fd = openat(dfd, file, O_WRONLY | O_CLOEXEC);
        int r = fd < 0 ? msp_err_sys(err, errno, "cgroup: write '%s' = '%.200s'", file, value)
                       : cg_write_fd(fd, file, value, err);

        if (r < 0)
                undo_failed(file);
        else if (journal)
                undo_push(dfd, file, &old);
        return r;
}

int
cg_writef(int dfd, const char *file, msp_err *err, const char *fmt, ...)
{
        char value[4096];
        va_list ap;

        va_start(ap, fmt);
        int n = vsnprintf(value, sizeof value, fmt, ap);
        va_end(ap);
        if (n < 0 || (size_t) n >= sizeof value)
                return msp_err_set(err, ENAMETOOLONG, "cgroup: value for '%s' is too long", file);
        return cg_write(dfd, file, value, err);
}

int
cg_read(int dfd, const char *file, char *buf, size_t bufsz)
{
        _cleanup_close_ int fd = openat(dfd, file, O_RDONLY | O_CLOEXEC);
        size_t o = 0;

        if (fd < 0)
                return -errno;
        while (o + 1 < bufsz) {
                ssize_t n = read(fd, buf + o, bufsz - 1 - o);
                if (n < 0)
                        return -errno;
                if (n == 0)
                        break;
                o += (size_t) n;
        }
        buf[o] = '\0';
        return (int) o;
}

bool
cg_exists(int dfd, const char *file)
{
        return faccessat(dfd, file, F_OK, 0) == 0;
}

/* ---- the undo journal of an update ---- */

/* While a journal is open, every successful cg_write records what the file held before,
 * so that an update the kernel refuses half-way can put the files it already wrote
 * back, last first. Going back through the states the kernel accepted on the way keeps
 * each restoring write valid (memory before memsw and the like). Only one-line values
 * are recorded: multi-line files (memory.oom_control, keyed lists such as
 * blkio.throttle.*) cannot be written back as they read. The runtime is single-threaded
 * and runs one update per process, hence file scope. */
typedef struct undo_entry {
        int dfd;                /* owned: a dup of the cgroup directory */
        char file[64];
        char old[256];
} undo_entry;

static struct {
        undo_entry *v;
        size_t n, cap;
        bool open;
        bool lost;              /* a write whose old value could not be recorded */
        char failed[64];        /* the file whose write failed */
} journal;

void
cg_undo_begin(void)
{
        cg_undo_end();
        journal.open = true;
}

void
cg_undo_end(void)
{
        for (size_t i = 0; i < journal.n; i++)
                close(journal.v[i].dfd);
        free(journal.v);
        journal.v = NULL;
        journal.n = journal.cap = 0;
        journal.open = journal.lost = false;
        journal.failed[0] = '\0';
}

/* For cg_write: read the old value; false when no journal is open or the value cannot
 * be written back (more than one line, too long: the journal notes it is incomplete). */
static bool
undo_save(int dfd, const char *file, cg_undo_old *ret)
{
        char buf[sizeof ret->value + 1];

        if (!journal.open)
                return false;
        int n = cg_read(dfd, file, buf, sizeof buf);
        if (n < 0)
                return false;   /* the write fails too */
        if (n > 0 && buf[n - 1] == '\n')
                buf[--n] = '\0';
        if (n <= 0 || (size_t) n >= sizeof ret->value || strchr(buf, '\n') ||
            strlen(file) >= sizeof journal.v->file) {
                journal.lost = true;
                return false;
        }
        memcpy(ret->value, buf, (size_t) n + 1);
        return true;
}

static void
undo_push(int dfd, const char *file, const cg_undo_old *old)
{
        if (journal.n == journal.cap) {
                size_t cap = journal.cap ? journal.cap * 2 : 16;
                undo_entry *v = reallocarray(journal.v, cap, sizeof *v);
                if (!v) {
                        journal.lost = true;
                        return;
                }
                journal.v = v;
                journal.cap = cap;
        }
        undo_entry *e = &journal.v[journal.n];
        e->dfd = fcntl(dfd, F_DUPFD_CLOEXEC, 3);
        if (e->dfd < 0) {
                journal.lost = true;
                return;
        }
        snprintf(e->file, sizeof e->file, "%s", file);
        snprintf(e->old, sizeof e->old, "%s", old->value);
        journal.n++;
}

/* For cg_write: remember the first file whose write failed. */
static void
undo_failed(const char *file)
{
        if (journal.open && !journal.failed[0])
                snprintf(journal.failed, sizeof journal.failed, "%s", file);
}

const char *
cg_undo_failed_file(void)
{
        return journal.failed;
}

int
cg_undo_rollback(char *unrestored, size_t size)
{
        int bad = journal.lost ? 1 : 0;
        size_t o = 0;

        unrestored[0] = '\0';
        journal.open = false;   /* the restoring writes are not recorded */
        for (size_t i = journal.n; i > 0; i--) {
                const undo_entry *e = &journal.v[i - 1];
                if (cg_write(e->dfd, e->file, e->old, NULL) == 0)
                        continue;
                bad++;
                if (o + strlen(e->file) + 3 < size)
                        o += (size_t) snprintf(unrestored + o, size - o, "%s%s", o ? ", " : "",
                                               e->file);
        }
        return bad;
}

/* word in a space/newline separated list */
static bool
word_in(const char *list, const char *word)
{
        size_t wl = strlen(word);

        for (const char *p = list; *p; ) {
                p += strspn(p, " \n");
                size_t len = strcspn(p, " \n");
                if (len == wl && strncmp(p, word, wl) == 0)
                        return true;
                p += len;
        }
        return false;
}

bool
cg_has_controller(int dfd, const char *ctrl)
{
        char buf[1024];

        return cg_read(dfd, "cgroup.controllers", buf, sizeof buf) >= 0 && word_in(buf, ctrl);
}

/* Controllers msp writes limits for; "misc" too, for unified keys. */
static const char *const v2_managed[] = {
        "cpuset", "cpu", "io", "memory", "hugetlb", "pids", "rdma", "misc",
};

static void enable_controllers(int dfd, bool is_root);

void
cg_v2_enable_controllers(const char *dir, bool is_root)
{
        _cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        enable_controllers(dfd, is_root);
}

void
cg_v2_enable_controllers_at(int root, const char *reldir, bool is_root)
{
        _cleanup_close_ int dfd = openat(root, reldir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        enable_controllers(dfd, is_root);
}

static void
enable_controllers(int dfd, bool is_root)
{
        char avail[1024], enabled[1024], procs[16];

        if (dfd < 0 || cg_read(dfd, "cgroup.controllers", avail, sizeof avail) < 0 ||
            cg_read(dfd, "cgroup.subtree_control", enabled, sizeof enabled) < 0)
                return;
        /* No internal processes: a non-root cgroup with members cannot delegate. */
        if (!is_root && (cg_read(dfd, "cgroup.procs", procs, sizeof procs) != 0))
                return;
        for (size_t i = 0; i < ARRAY_SIZE(v2_managed); i++) {
                if (!word_in(avail, v2_managed[i]) || word_in(enabled, v2_managed[i]))
                        continue;
                /* One at a time: one refused controller must not block the others. */
                (void) cg_writef(dfd, "cgroup.subtree_control", NULL, "+%s", v2_managed[i]);
        }
}

/* ---- the host's mode, and its hierarchies ---- */

int
cg_mode_at(int root, rt_cgroup_mode *ret, msp_err *err)
{
        struct statfs sfs;

        if (fstatfs(root, &sfs) < 0)
                return msp_err_sys(err, errno, "statfs '%s'", CG_ROOT);
        if (sfs.f_type == CGROUP2_SUPER_MAGIC) {
                *ret = RT_CGROUP_UNIFIED;
                return 0;
        }
        _cleanup_close_ int u = openat(root, "unified", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (u >= 0 && fstatfs(u, &sfs) == 0 && sfs.f_type == CGROUP2_SUPER_MAGIC)
                *ret = RT_CGROUP_HYBRID;
        else
                *ret = RT_CGROUP_LEGACY;
        return 0;
}

int
rt_cgroup_mode_detect(rt_cgroup_mode *ret, msp_err *err)
{
        _cleanup_close_ int root = cg_root_open();

        if (root < 0)
                return msp_err_sys(err, -root, "open '%s'", CG_ROOT);
        return cg_mode_at(root, ret, err);
}

/* Everything below CG_ROOT is resolved from one fd of it (cg_open_dir_at says why). */
static int
walk_hierarchies(int root, cg_hierarchy_fn fn, void *userdata, msp_err *err)
{
        struct statfs sfs;
        _cleanup_closedir_ DIR *d = NULL;
        struct dirent *de;
        int fd, r;

        if (fstatfs(root, &sfs) < 0)
                return msp_err_sys(err, errno, "statfs '%s'", CG_ROOT);
        if (sfs.f_type == CGROUP2_SUPER_MAGIC)
                return fn(CG_ROOT, root, true, userdata, err);
        fd = openat(root, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0 || !(d = fdopendir(fd))) {
                r = msp_err_sys(err, errno, "open '%s'", CG_ROOT);
                if (fd >= 0)
                        close(fd);
                return r;
        }
        while ((de = readdir(d))) {
                char hier[512];
                struct stat st;
                if (de->d_name[0] == '.')
                        continue;
                snprintf(hier, sizeof hier, CG_ROOT "/%s", de->d_name);
                /* cpu -> cpu,cpuacct style aliases are symlinks: visit each mount once.
                 * readdir's d_type says so without an lstat per entry (~6 µs a walk on
                 * a 10-hierarchy host, several walks per run); lstat only where the
                 * filesystem leaves it unknown. */
                if (de->d_type == DT_LNK)
                        continue;
                if (de->d_type != DT_DIR &&
                    (fstatat(root, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode)))
                        continue;
                _cleanup_close_ int h = openat(root, de->d_name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (h < 0 || fstatfs(h, &sfs) < 0 ||
                    (sfs.f_type != CGROUP_SUPER_MAGIC && sfs.f_type != CGROUP2_SUPER_MAGIC))
                        continue;
                r = fn(hier, root, sfs.f_type == CGROUP2_SUPER_MAGIC, userdata, err);
                if (r < 0)
                        return r;
        }
        return 0;
}

int
cg_for_each_hierarchy(cg_hierarchy_fn fn, void *userdata, msp_err *err)
{
        _cleanup_close_ int root = cg_root_open();

        if (root < 0)
                return msp_err_sys(err, -root, "open '%s'", CG_ROOT);
        return walk_hierarchies(root, fn, userdata, err);
}

int
cg_for_each_hierarchy_in(unsigned which, cg_hierarchy_fn fn, void *userdata, msp_err *err)
{
        _cleanup_close_ int root = cg_root_open();
        struct statfs sfs;

        if (root < 0)
                return msp_err_sys(err, -root, "open '%s'", CG_ROOT);
        if (which == RT_CGROUP_V2) {
                if (fstatfs(root, &sfs) < 0)
                        return msp_err_sys(err, errno, "statfs '%s'", CG_ROOT);
                if (sfs.f_type == CGROUP2_SUPER_MAGIC)
                        return fn(CG_ROOT, root, true, userdata, err);
                _cleanup_close_ int u = openat(root, "unified", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (u >= 0 && fstatfs(u, &sfs) == 0 && sfs.f_type == CGROUP2_SUPER_MAGIC)
                        return fn(CG_HYBRID_UNIFIED, root, true, userdata, err);
        }
        return walk_hierarchies(root, fn, userdata, err);
}

int64_t
cg_now_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int
cg_wait_event(int dfd, const char *key, char want, int timeout_ms)
{
        _cleanup_close_ int fd = openat(dfd, "cgroup.events", O_RDONLY | O_CLOEXEC);
        int64_t deadline = cg_now_ms() + timeout_ms;
        size_t kl = strlen(key);

        if (fd < 0)
                return -errno;
        for (;;) {
                char buf[256];
                /* Reading re-arms the notification: a change after this read makes
                 * the poll below return at once, so none is missed. */
                ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
                if (n < 0)
                        return -errno;
                buf[n] = '\0';
                const char *p = buf;
                while ((p = strstr(p, key)) && ((p != buf && p[-1] != '\n') || p[kl] != ' '))
                        p += kl;
                if (!p)
                        return -ENOENT;
                if (p[kl + 1] == want)
                        return 0;
                int64_t left = deadline - cg_now_ms();
                if (left <= 0)
                        return -ETIMEDOUT;
                struct pollfd pfd = { .fd = fd, .events = POLLPRI };
                if (poll(&pfd, 1, (int) left) < 0 && errno != EINTR)
                        return -errno;
        }
}

