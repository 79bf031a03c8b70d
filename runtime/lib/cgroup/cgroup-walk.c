/* The walk of a container's cgroup tree: every sub-cgroup below a cgroup, whatever its
 * name (".x" too: only "." and ".." themselves are not sub-cgroups) and at any depth
 * (the kernel's cgroup.max.depth is unlimited by default, so a container that may write
 * its cgroup can nest thousands deep). The walk keeps one directory fd open and an
 * explicit stack on the heap, one frame per level: no recursion to overflow, and no path
 * that could pass PATH_MAX (every step is relative to an fd). Going back up is an
 * openat(".."), checked against the inode the frame recorded on the way down (cgroupfs
 * never moves a directory to another parent). Used by remove, the pid list and the
 * signals of cgroup.c and cgroup-ctl.c, on v1 and v2 hierarchies alike. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/cgroup/cgroup-internal.h"

typedef struct walk_frame {
        char *names;            /* the sub-cgroups' names, each NUL-terminated; owned */
        size_t len;             /* bytes used in names */
        size_t next;            /* offset of the next name to visit */
        size_t cur;             /* offset of the name being visited */
        dev_t dev;
        ino_t ino;
} walk_frame;

typedef struct walk_stack {
        walk_frame *v;
        size_t n, cap;
} walk_stack;

/* What a walk does: prune(parent, name) before going into a sub-cgroup (> 0: it is
 * done, the walk does not go in); enter(dfd) for each cgroup, parents first (the top
 * too); leave(parent, name) after every cgroup below name is done (not for the top). */
typedef struct walk_ops {
        int (*prune)(int parent, const char *name, void *userdata);
        int (*enter)(int dfd, void *userdata);
        int (*leave)(int parent, const char *name, void *userdata);
        void *userdata;
} walk_ops;

static void
walk_stack_done(walk_stack *s)
{
        for (size_t i = 0; i < s->n; i++)
                free(s->v[i].names);
        free(s->v);
}

static int
add_name(walk_frame *f, size_t *cap, const char *name)
{
        size_t l = strlen(name) + 1;

        if (f->len + l > *cap) {
                size_t ncap = *cap ? *cap * 2 : 256;
                while (ncap < f->len + l)
                        ncap *= 2;
                char *n = realloc(f->names, ncap);
                if (!n)
                        return -ENOMEM;
                f->names = n;
                *cap = ncap;
        }
        memcpy(f->names + f->len, name, l);
        f->len += l;
        return 0;
}

static bool
is_subdir(int dfd, const struct dirent *de)
{
        struct stat st;

        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                return false;
        if (de->d_type != DT_UNKNOWN)
                return de->d_type == DT_DIR;
        return fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
}

/* Push a frame for dfd holding the names of its sub-cgroups, read at once: the
 * directory is closed again before the walk goes down. */
static int
push_frame(walk_stack *s, int dfd)
{
        _cleanup_closedir_ DIR *d = NULL;
        walk_frame f = { 0 };
        size_t cap = 0;
        struct stat st;
        int fd, r = 0;

        if (fstat(dfd, &st) < 0)
                return -errno;
        f.dev = st.st_dev;
        f.ino = st.st_ino;
        fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        d = fdopendir(fd);
        if (!d) {
                r = -errno;
                close(fd);
                return r;
        }
        for (struct dirent *de; r == 0 && (errno = 0, de = readdir(d));)
                if (is_subdir(dfd, de))
                        r = add_name(&f, &cap, de->d_name);
        if (r == 0 && errno)
                r = -errno;
        if (r == 0 && s->n == s->cap) {
                size_t ncap = s->cap ? s->cap * 2 : 16;
                walk_frame *v = reallocarray(s->v, ncap, sizeof *v);
                if (!v)
                        r = -ENOMEM;
                else
                        s->v = v, s->cap = ncap;
        }
        if (r < 0) {
                free(f.names);
                return r;
        }
        s->v[s->n++] = f;
        return 0;
}

/* Into the next sub-cgroup of the top frame: *cur becomes its fd. One that is gone
 * meanwhile is skipped; one on another file system (a mount) is an error. */
static int
go_down(walk_stack *s, int *cur, const walk_ops *ops)
{
        walk_frame *f = &s->v[s->n - 1];
        const char *name = f->names + f->next;
        struct stat st;
        int r;

        f->cur = f->next;
        f->next += strlen(name) + 1;
        r = ops->prune ? ops->prune(*cur, name, ops->userdata) : 0;
        if (r != 0)
                return r < 0 ? r : 0;
        _cleanup_close_ int sub = openat(*cur, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sub < 0)
                return errno == ENOENT ? 0 : -errno;
        if (fstat(sub, &st) < 0)
                return -errno;
        if (st.st_dev != f->dev)
                return -EXDEV;
        r = ops->enter ? ops->enter(sub, ops->userdata) : 0;
        if (r == 0)
                r = push_frame(s, sub);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        close(*cur);
        *cur = TAKE_FD(sub);
        return 0;
}

/* Out of the top frame, done: back to its parent's directory, then leave(). */
static int
go_up(walk_stack *s, int *cur, const walk_ops *ops)
{
        struct stat st;

        free(s->v[--s->n].names);
        if (s->n == 0)
                return 0;
        walk_frame *parent = &s->v[s->n - 1];
        int up = openat(*cur, "..", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (up < 0)
                return -errno;
        close(*cur);
        *cur = up;
        if (fstat(up, &st) < 0)
                return -errno;
        if (st.st_dev != parent->dev || st.st_ino != parent->ino)
                return -ESTALE;
        return ops->leave ? ops->leave(up, parent->names + parent->cur, ops->userdata) : 0;
}

static int
walk(int top, const walk_ops *ops)
{
        walk_stack s = { 0 };
        int cur = fcntl(top, F_DUPFD_CLOEXEC, 3), r;

        if (cur < 0)
                return -errno;
        r = ops->enter ? ops->enter(cur, ops->userdata) : 0;
        if (r == 0)
                r = push_frame(&s, cur);
        while (r == 0 && s.n > 0) {
                const walk_frame *f = &s.v[s.n - 1];
                r = f->next < f->len ? go_down(&s, &cur, ops) : go_up(&s, &cur, ops);
        }
        close(cur);
        walk_stack_done(&s);
        return r;
}

/* ---- pids ---- */

typedef struct pids_walk {
        cg_pid_fn fn;
        void *userdata;
} pids_walk;

static int
enter_pids(int dfd, void *userdata)
{
        const pids_walk *w = userdata;
        _cleanup_fclose_ FILE *f = NULL;
        int fd = openat(dfd, "cgroup.procs", O_RDONLY | O_CLOEXEC), pid, r;

        if (fd < 0)
                return errno == ENOENT ? 0 : -errno;
        f = fdopen(fd, "r");
        if (!f) {
                r = -errno;
                close(fd);
                return r;
        }
        while (fscanf(f, "%d", &pid) == 1)
                if (pid > 0 && (r = w->fn(pid, w->userdata)) < 0)
                        return r;
        /* v2: a threaded cgroup's cgroup.procs is not readable (EOPNOTSUPP); its
         * threaded domain above lists the processes of the whole threaded subtree. */
        if (ferror(f))
                return errno == EOPNOTSUPP ? 0 : -(errno ? errno : EIO);
        return 0;
}

int
cg_walk_pids(int dfd, cg_pid_fn fn, void *userdata)
{
        pids_walk w = { fn, userdata };
        const walk_ops ops = { .enter = enter_pids, .userdata = &w };

        return walk(dfd, &ops);
}

/* ---- removal ---- */

/* An empty sub-cgroup goes at once, without being opened (nor read: one the caller may
 * not list can still be removed); one with sub-cgroups (EBUSY) or that cannot be
 * removed as it is is walked into. */
static int
prune_rmdir(int parent, const char *name, void *userdata)
{
        (void) userdata;
        return unlinkat(parent, name, AT_REMOVEDIR) == 0 || errno == ENOENT ? 1 : 0;
}

static int
leave_rmdir(int parent, const char *name, void *userdata)
{
        (void) userdata;
        if (unlinkat(parent, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
                return -errno;
        return 0;
}

int
cg_walk_rmdir_below(int dfd)
{
        const walk_ops ops = { .prune = prune_rmdir, .leave = leave_rmdir };

        return walk(dfd, &ops);
}
