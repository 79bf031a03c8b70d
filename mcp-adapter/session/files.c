/* Confined file access inside a workspace: see files.h for the rules. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "session/files.h"
#include "base/base.h"
#include "oci/oci.h"
#include "sandbox/sandbox.h"

/* A path split into components, all pointing into buf. */
typedef struct split_path {
        char buf[MCP_PATH_MAX + 1];
        const char *comp[MCP_PATH_MAX / 2 + 1];
        size_t n;
        char rel[MCP_PATH_MAX + 2];     /* the components joined with '/', or "." */
} split_path;

/* "path \"<path>\": <what>", the path quoted and escaped. */
static int path_failf(msp_err *err, int errnum, const char *path, const char *fmt, ...)
        _printf_(4, 5);

static int
path_failf(msp_err *err, int errnum, const char *path, const char *fmt, ...)
{
        char q[256], what[512];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(what, sizeof what, fmt, ap);
        va_end(ap);
        oci_json_quote(path, q, sizeof q);
        return msp_err_set(err, errnum, "path %s: %s", q, what);
}

static int
path_fail(msp_err *err, int errnum, const char *path, const char *what)
{
        return path_failf(err, errnum, path, "%s", what);
}

/* errnum's text appended, like msp_err_sys. */
#define path_sys(err, errnum, path, what) \
        path_failf(err, errnum, path, "%s: %s", what, strerror(errnum))

int
mcp_path_check(const char *path, size_t len, msp_err *err)
{
        if (!path)
                return msp_err_set(err, EINVAL, "path: missing");
        if (len > MCP_PATH_MAX)
                return path_fail(err, ENAMETOOLONG, path, "longer than 4096 bytes");
        for (size_t i = 0; i < len; i++) {
                unsigned char c = (unsigned char) path[i];
                if (c == '\0')
                        return path_fail(err, EINVAL, path, "contains a NUL byte");
                if (c < 0x20 || c == 0x7f)
                        return path_fail(err, EINVAL, path, "contains a control character");
        }
        return 0;
}

/* Normalize and split; n == 0 means the workspace root. */
static int
split(const char *path, split_path *sp, msp_err *err)
{
        int r = mcp_path_check(path, path ? strlen(path) : 0, err);
        if (r < 0)
                return r;
        const char *p = path;
        if (strncmp(p, "/workspace", 10) == 0 && (p[10] == '/' || p[10] == '\0'))
                p += 10;
        strcpy(sp->buf, p);
        sp->n = 0;
        size_t o = 0;
        for (char *save = NULL, *c = strtok_r(sp->buf, "/", &save); c;
             c = strtok_r(NULL, "/", &save)) {
                if (strcmp(c, ".") == 0)
                        continue;
                if (strcmp(c, "..") == 0)
                        return path_fail(err, EXDEV, path, "escapes the workspace (\"..\")");
                if (strlen(c) > NAME_MAX)
                        return path_fail(err, ENAMETOOLONG, path,
                                         "a component is longer than 255 bytes");
                sp->comp[sp->n++] = c;
                o += (size_t) snprintf(sp->rel + o, sizeof sp->rel - o, "%s%s", o ? "/" : "", c);
        }
        if (sp->n == 0)
                strcpy(sp->rel, ".");
        return 0;
}

#define RESOLVE_READ (RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV)
#define RESOLVE_WRITE (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | \
                       RESOLVE_NO_XDEV)

static int
open_fail(msp_err *err, int r, const char *path)
{
        switch (-r) {
        case ENOENT:
                return path_fail(err, ENOENT, path, "no such file or directory");
        case ELOOP:
                return path_fail(err, ELOOP, path, "is or goes through a symlink");
        case EXDEV:
                return path_fail(err, EXDEV, path, "escapes the workspace");
        case ENOTDIR:
                return path_fail(err, ENOTDIR, path, "a component is not a directory");
        case EISDIR:
                return path_fail(err, EISDIR, path, "is a directory");
        case ENXIO:
                return path_fail(err, EINVAL, path, "is not a regular file");
        default: {
                return path_sys(err, -r, path, "open");
        }
        }
}

static const char *
type_name(mode_t m)
{
        if (S_ISDIR(m))
                return "is a directory";
        if (S_ISFIFO(m))
                return "is a FIFO, not a regular file";
        if (S_ISCHR(m) || S_ISBLK(m))
                return "is a device node, not a regular file";
        if (S_ISSOCK(m))
                return "is a socket, not a regular file";
        return "is not a regular file";
}

/* A new directory name under dirfd, mode 0755, of the run's user: its fd, or -errno
 * (-EEXIST when name is there, whatever it is: nothing existing is followed or changed). */
static int
mkdir_owned(int dirfd, const char *name, mcp_run_ids ids)
{
        if (mkdirat(dirfd, name, 0755) < 0)
                return -errno;
        int fd = mcp_openat2(dirfd, name, O_RDONLY | O_DIRECTORY, 0, RESOLVE_WRITE);
        if (fd < 0)
                return fd;
        /* through the fd: a racing rename cannot redirect the chown */
        if (fchown(fd, MCP_HOST_UID_OF(ids), MCP_HOST_GID_OF(ids)) < 0 || fchmod(fd, 0755) < 0) {
                int e = errno;
                close(fd);
                return -e;
        }
        return fd;
}

/* Open (creating as needed) the directory holding the last component; never follows a
 * symlink; directories it creates belong to the sandbox user. */
static int
open_parent_for_write(int wsfd, const split_path *sp, const char *path, mcp_run_ids ids,
                      msp_err *err)
{
        _cleanup_close_ int cur = mcp_openat2(wsfd, ".", O_RDONLY | O_DIRECTORY, 0,
                                                RESOLVE_WRITE);
        if (cur < 0)
                return open_fail(err, cur, path);
        for (size_t i = 0; i + 1 < sp->n; i++) {
                int fd = mcp_openat2(cur, sp->comp[i], O_RDONLY | O_DIRECTORY, 0,
                                       RESOLVE_WRITE);
                if (fd == -ENOENT) {
                        fd = mkdir_owned(cur, sp->comp[i], ids);
                        if (fd == -EEXIST)      /* made since: opened as any other */
                                fd = mcp_openat2(cur, sp->comp[i], O_RDONLY | O_DIRECTORY,
                                                   0, RESOLVE_WRITE);
                        else if (fd < 0)
                                return path_failf(err, -fd, path, "mkdir \"%s\": %s",
                                                  sp->comp[i], strerror(-fd));
                }
                if (fd < 0)
                        return open_fail(err, fd, path);
                close(cur);
                cur = fd;
        }
        return TAKE_FD(cur);
}

int
mcp_workspace_make_out(int workspace_fd, mcp_run_ids ids, msp_err *err)
{
        int fd = mkdir_owned(workspace_fd, MCP_OUT_DIR, ids);
        if (fd >= 0) {
                close(fd);
                return 0;
        }
        /* A full workspace keeps running without it: the code can still free room. */
        if (fd == -EEXIST || fd == -ENOSPC || fd == -EDQUOT)
                return 0;
        return msp_err_set(err, -fd, "workspace: make %s/: %s", MCP_OUT_DIR, strerror(-fd));
}

static int
check_file(const char *path, size_t len, split_path *sp, msp_err *err)
{
        int r = split(path, sp, err);
        if (r < 0)
                return r;
        if (sp->n == 0)
                return path_fail(err, EISDIR, path, "is the workspace directory");
        if (len > MCP_FILE_MAX_BYTES)
                return path_failf(err, EFBIG, path, "%zu bytes, over the cap of %u bytes", len,
                                  MCP_FILE_MAX_BYTES);
        return 0;
}

int
mcp_workspace_file_check(const char *path, size_t len, msp_err *err)
{
        _cleanup_free_ split_path *sp = malloc(sizeof *sp);
        if (!sp)
                return msp_err_set(err, ENOMEM, "out of memory");
        return check_file(path, len, sp, err);
}

int
mcp_workspace_write_file(int workspace_fd, const char *path, const void *data, size_t len,
                         bool executable, mcp_run_ids ids, msp_err *err)
{
        _cleanup_free_ split_path *sp = malloc(sizeof *sp);
        if (!sp)
                return msp_err_set(err, ENOMEM, "out of memory");
        int r = check_file(path, len, sp, err);
        if (r < 0)
                return r;
        _cleanup_close_ int dir = open_parent_for_write(workspace_fd, sp, path, ids, err);
        if (dir < 0)
                return dir;
        mode_t mode = executable ? 0755 : 0644;
        /* O_NONBLOCK: a FIFO without reader fails with ENXIO instead of blocking. */
        _cleanup_close_ int fd = mcp_openat2(dir, sp->comp[sp->n - 1],
                                               O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK |
                                               O_NOCTTY, mode, RESOLVE_WRITE);
        if (fd < 0)
                return open_fail(err, fd, path);
        struct stat st;
        if (fstat(fd, &st) < 0)
                return path_sys(err, errno, path, "fstat");
        if (!S_ISREG(st.st_mode))
                return path_fail(err, S_ISDIR(st.st_mode) ? EISDIR : EINVAL, path,
                                 type_name(st.st_mode));
        struct statvfs vfs;
        if (fstatvfs(fd, &vfs) == 0 && vfs.f_bsize > 0) {
                uint64_t room = (uint64_t) vfs.f_bavail * vfs.f_bsize + (uint64_t) st.st_size;
                if (len > room)
                        return path_failf(err, EFBIG, path,
                                          "%zu bytes, the workspace has room for %" PRIu64,
                                          len, room);
        }
        if (ftruncate(fd, 0) < 0)
                return path_sys(err, errno, path, "truncate");
        r = mcp_write_all(fd, data, len);
        if (r < 0) {
                (void) ftruncate(fd, 0);
                if (r == -ENOSPC || r == -EDQUOT || r == -EFBIG)
                        return path_fail(err, EFBIG, path, "the workspace is full");
                return path_sys(err, -r, path, "write");
        }
        if (fchown(fd, MCP_HOST_UID_OF(ids), MCP_HOST_GID_OF(ids)) < 0 || fchmod(fd, mode) < 0)
                return path_sys(err, errno, path, "chown/chmod");
        return 0;
}

int
mcp_workspace_read_file(int workspace_fd, const char *path, size_t max, char **ret,
                        size_t *ret_len, uint64_t *ret_size, bool *ret_truncated, msp_err *err)
{
        _cleanup_free_ split_path *sp = malloc(sizeof *sp);
        if (!sp)
                return msp_err_set(err, ENOMEM, "out of memory");
        int r = split(path, sp, err);
        if (r < 0)
                return r;
        if (sp->n == 0)
                return path_fail(err, EISDIR, path, "is the workspace directory");
        _cleanup_close_ int fd = mcp_openat2(workspace_fd, sp->rel,
                                               O_RDONLY | O_NONBLOCK | O_NOCTTY, 0, RESOLVE_READ);
        if (fd < 0)
                return open_fail(err, fd, path);
        struct stat st;
        if (fstat(fd, &st) < 0)
                return path_sys(err, errno, path, "fstat");
        if (!S_ISREG(st.st_mode))
                return path_fail(err, S_ISDIR(st.st_mode) ? EISDIR : EINVAL, path,
                                 type_name(st.st_mode));
        size_t cap = (uint64_t) st.st_size < max ? (size_t) st.st_size : max;
        char *buf;
        size_t len;
        msp_err e = { 0 };
        if (mcp_read_fd(fd, cap, &buf, &len, &e) < 0)
                return path_fail(err, e.errnum, path, e.msg);
        *ret = buf;
        *ret_len = len;
        *ret_size = (uint64_t) st.st_size;
        *ret_truncated = (uint64_t) st.st_size > len;
        return 0;
}

void
mcp_dirents_free(mcp_dirent *ents, size_t n)
{
        for (size_t i = 0; ents && i < n; i++)
                free(ents[i].name);
        free(ents);
}

static int
dirent_cmp(const void *a, const void *b)
{
        return strcmp(((const mcp_dirent *) a)->name, ((const mcp_dirent *) b)->name);
}

static mcp_file_type
file_type(mode_t m)
{
        return S_ISREG(m) ? MCP_FILE_REG : S_ISDIR(m) ? MCP_FILE_DIR
                : S_ISLNK(m) ? MCP_FILE_SYMLINK : MCP_FILE_OTHER;
}

int
mcp_workspace_list_files(int workspace_fd, const char *path, size_t max_entries,
                         mcp_dirent **ret, size_t *ret_n, bool *ret_truncated, msp_err *err)
{
        if (!path)
                path = "";
        _cleanup_free_ split_path *sp = malloc(sizeof *sp);
        if (!sp)
                return msp_err_set(err, ENOMEM, "out of memory");
        int r = split(path, sp, err);
        if (r < 0)
                return r;
        int fd = mcp_openat2(workspace_fd, sp->rel, O_RDONLY | O_DIRECTORY | O_NONBLOCK, 0,
                               RESOLVE_READ);
        if (fd < 0)
                return open_fail(err, fd, path);
        _cleanup_closedir_ DIR *d = fdopendir(fd);
        if (!d) {
                close(fd);
                return path_sys(err, errno, path, "opendir");
        }
        mcp_dirent *ents = NULL;
        size_t n = 0, cap = 0;
        bool truncated = false;
        struct dirent *de;
        while ((errno = 0, de = readdir(d))) {
                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                        continue;
                if (n == MCP_LIST_MAX_ENTRIES) {
                        truncated = true;
                        break;
                }
                struct stat st;
                if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        continue;       /* removed meanwhile */
                if (n == cap) {
                        size_t ncap = cap ? cap * 2 : 32;
                        mcp_dirent *ne = realloc(ents, ncap * sizeof *ne);
                        if (!ne)
                                goto oom;
                        ents = ne;
                        cap = ncap;
                }
                ents[n].name = strdup(de->d_name);
                if (!ents[n].name)
                        goto oom;
                ents[n].type = file_type(st.st_mode);
                ents[n].size = (uint64_t) st.st_size;
                n++;
        }
        if (errno) {
                int e = errno;
                mcp_dirents_free(ents, n);
                return path_sys(err, e, path, "readdir");
        }
        if (n > 0)
                qsort(ents, n, sizeof *ents, dirent_cmp);
        if (n > max_entries) {
                for (size_t i = max_entries; i < n; i++)
                        free(ents[i].name);
                n = max_entries;
                truncated = true;
        }
        *ret = ents;
        *ret_n = n;
        *ret_truncated = truncated;
        return 0;
oom:
        mcp_dirents_free(ents, n);
        return path_fail(err, ENOMEM, path, "out of memory");
}
