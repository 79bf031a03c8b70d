/* A layer applied entry by entry. Each entry's parent is reached from the rootfs fd one
 * component at a time with openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS): a "../" entry
 * is refused before any lookup, and a symlink a layer made earlier can never redirect a
 * later entry (an image whose layer writes through a symlink is refused, naming both).
 * The last component is replaced, never followed. Lower layers' paths removed by an
 * opaque directory are the ones this layer has not itself written (the set kept in
 * `written`), whatever the order of the tar. The blob is hashed as libarchive reads it
 * (blob_reader): one pass, and the digest covers exactly the bytes that were unpacked. */
#include "image/image-unpack.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <search.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "image/blob-check.h"
#include "base/base.h"
#include "oci/oci.h"
#include "sandbox/sandbox.h"

#define WHITEOUT ".wh."
#define OPAQUE ".wh..wh..opq"

typedef struct unpack {
        int root_fd;
        const char *digest;
        mcp_unpack_budget *budget;
        msp_err *err;
        char parent[PATH_MAX];          /* the cached parent fd's path ("" is the root) */
        int parent_fd;
        char **written;                 /* paths this layer wrote, for opaque directories */
        size_t n_written, cap_written;
} unpack;

static void
archive_freep(struct archive **a)
{
        if (*a)
                archive_read_free(*a);
}

/* entry paths: "./a//b/" -> "a/b"; "" for the root; -EINVAL for any ".." component. */
static int
normalize(const char *in, char *out, size_t size)
{
        size_t n = 0;
        const char *p = in;
        while (*p) {
                while (*p == '/')
                        p++;
                const char *e = strchrnul(p, '/');
                size_t len = (size_t) (e - p);
                if (len == 2 && p[0] == '.' && p[1] == '.')
                        return -EINVAL;
                if (len > 0 && !(len == 1 && p[0] == '.')) {
                        if (n + len + 2 > size)
                                return -ENAMETOOLONG;
                        if (n)
                                out[n++] = '/';
                        memcpy(out + n, p, len);
                        n += len;
                }
                p = e;
        }
        out[n] = '\0';
        return 0;
}

static uint32_t
shift_id(int64_t id)
{
        if (id < 0 || id >= (int64_t) MCP_SANDBOX_ID_COUNT)
                id = 65534;             /* outside the mapping: nobody */
        return MCP_SANDBOX_HOST_BASE + (uint32_t) id;
}

static int
step_beneath(int dir_fd, const char *name)
{
        struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
                                .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
                                           RESOLVE_NO_MAGICLINKS };
        return (int) NERRNO(syscall(SYS_openat2, dir_fd, name, &how, sizeof how));
}

static void
forget_parent(unpack *u)
{
        if (u->parent_fd >= 0 && u->parent_fd != u->root_fd)
                close(u->parent_fd);
        u->parent_fd = -1;
        u->parent[0] = '\0';
}

static int
fail(unpack *u, int errnum, const char *path, const char *what)
{
        return msp_err_set(u->err, errnum, "layer %s: entry \"%.200s\": %s", u->digest, path, what);
}

/* The directory dir (normalized, "" for the root), made when missing (0755, root's). */
static int
open_parent(unpack *u, const char *dir, const char *entry)
{
        if (u->parent_fd >= 0 && strcmp(u->parent, dir) == 0)
                return u->parent_fd;
        forget_parent(u);
        _cleanup_close_ int fd = fcntl(u->root_fd, F_DUPFD_CLOEXEC, 3);
        if (fd < 0)
                return msp_err_sys(u->err, errno, "layer %s", u->digest);
        char comp[NAME_MAX + 1];
        for (const char *p = dir; *p;) {
                const char *e = strchrnul(p, '/');
                snprintf(comp, sizeof comp, "%.*s", (int) (e - p), p);
                int next = step_beneath(fd, comp);
                if (next == -ENOENT) {
                        if (mkdirat(fd, comp, 0755) < 0 && errno != EEXIST)
                                return msp_err_sys(u->err, errno, "layer %s: entry \"%.200s\": mkdir",
                                                   u->digest, entry);
                        if (u->budget->chown)
                                (void) fchownat(fd, comp, shift_id(0), shift_id(0),
                                                AT_SYMLINK_NOFOLLOW);
                        next = step_beneath(fd, comp);
                }
                if (next == -ELOOP || next == -ENOTDIR || next == -EXDEV) {
                        char msg[PATH_MAX + 64];
                        snprintf(msg, sizeof msg, "its parent \"%.*s\" is a symlink or not a directory "
                                 "(entries may not pass through symlinks)", (int) (e - dir), dir);
                        return fail(u, EPERM, entry, msg);
                }
                if (next < 0)
                        return msp_err_sys(u->err, -next, "layer %s: entry \"%.200s\"", u->digest,
                                           entry);
                close(fd);
                fd = next;
                p = *e ? e + 1 : e;
        }
        snprintf(u->parent, sizeof u->parent, "%s", dir);
        u->parent_fd = TAKE_FD(fd);
        return u->parent_fd;
}

static int
cmp_str(const void *a, const void *b)
{
        return strcmp(*(char *const *) a, *(char *const *) b);
}

static bool
was_written(unpack *u, const char *path)
{
        const char *key = path;
        return bsearch(&key, u->written, u->n_written, sizeof(char *), cmp_str) != NULL;
}

static int
remember(unpack *u, const char *path)
{
        if (u->n_written == u->cap_written) {
                size_t cap = u->cap_written ? 2 * u->cap_written : 256;
                char **p = realloc(u->written, cap * sizeof(*p));
                if (!p)
                        return -ENOMEM;
                u->written = p;
                u->cap_written = cap;
        }
        if (!(u->written[u->n_written] = strdup(path)))
                return -ENOMEM;
        u->n_written++;
        return 0;
}

/* An opaque directory: what lower layers put below dir goes; what this layer wrote stays
 * (directories this layer wrote are cleaned the same way, recursively). */
static int
make_opaque(unpack *u, int dir_fd, const char *dir)
{
        _cleanup_closedir_ DIR *d = mcp_image_opendir_at(dir_fd, ".");
        if (!d)
                return msp_err_sys(u->err, errno, "layer %s: opaque \"%.200s\"", u->digest, dir);
        struct dirent *de;
        while ((de = readdir(d))) {
                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                        continue;
                char path[PATH_MAX];
                snprintf(path, sizeof path, "%s%s%s", dir, *dir ? "/" : "", de->d_name);
                int r;
                if (!was_written(u, path))
                        r = mcp_remove_tree_at(dirfd(d), de->d_name, u->err);
                else if (de->d_type == DT_DIR) {
                        _cleanup_close_ int sub = openat(dirfd(d), de->d_name,
                                                         O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                        r = sub < 0 ? -errno : make_opaque(u, sub, path);
                } else
                        r = 0;
                if (r < 0)
                        return r;
        }
        return 0;
}

static int
charge(unpack *u, uint64_t bytes, const char *path)
{
        mcp_unpack_budget *b = u->budget;
        if (bytes > b->max_bytes - b->used) {
                b->used = b->max_bytes;
                return msp_err_set(u->err, EFBIG,
                                   "layer %s: the unpacked image exceeds the limit of %ju bytes "
                                   "(--image-max-size) at \"%.200s\"",
                                   u->digest, (uintmax_t) b->max_bytes, path);
        }
        b->used += bytes;
        return 0;
}

/* The entry's data, all of it within the size it named (and was charged for). */
static int
write_data(unpack *u, struct archive *a, int fd, const char *path, uint64_t size)
{
        const void *buf;
        size_t len;
        la_int64_t off;
        int r;
        while ((r = archive_read_data_block(a, &buf, &len, &off)) == ARCHIVE_OK) {
                if (off < 0 || (uint64_t) off > size || len > size - (uint64_t) off)
                        return fail(u, EINVAL, path, "data beyond the size it names");
                for (size_t done = 0; done < len;) {
                        ssize_t n = pwrite(fd, (const char *) buf + done, len - done,
                                           (off_t) off + (off_t) done);
                        if (n < 0 && errno == EINTR)
                                continue;
                        if (n < 0)
                                return msp_err_sys(u->err, errno, "layer %s: writing \"%.200s\"",
                                                   u->digest, path);
                        done += (size_t) n;
                }
        }
        if (r != ARCHIVE_EOF)
                return msp_err_set(u->err, EIO, "layer %s: \"%.200s\": %s", u->digest, path,
                                   archive_error_string(a));
        return 0;
}

static void
set_owner_time(unpack *u, int dir_fd, const char *base, struct archive_entry *e)
{
        if (u->budget->chown)
                (void) fchownat(dir_fd, base, shift_id(archive_entry_uid(e)),
                                shift_id(archive_entry_gid(e)), AT_SYMLINK_NOFOLLOW);
        struct timespec ts[2] = {
                { .tv_sec = archive_entry_mtime(e), .tv_nsec = archive_entry_mtime_nsec(e) },
                { .tv_sec = archive_entry_mtime(e), .tv_nsec = archive_entry_mtime_nsec(e) },
        };
        (void) utimensat(dir_fd, base, ts, AT_SYMLINK_NOFOLLOW);
}

/* One entry whose parent is open as pfd; base is its last component. */
static int
apply_entry(unpack *u, struct archive *a, struct archive_entry *e, const char *path, int pfd,
            const char *base)
{
        mode_t perm = archive_entry_perm(e) & 01777;    /* no setuid, no setgid */
        const char *hard = archive_entry_hardlink(e);
        mode_t type = archive_entry_filetype(e);
        struct stat st;
        bool is_dir = fstatat(pfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
        int r;

        if (!(hard == NULL && type == AE_IFDIR && is_dir) &&
            (r = mcp_remove_tree_at(pfd, base, u->err)) < 0)
                return msp_err_prefix(u->err, "layer %s: replacing \"%.200s\"", u->digest, path);
        if (hard) {
                char target[PATH_MAX];
                if (normalize(hard, target, sizeof target) < 0 || !*target)
                        return fail(u, EPERM, path, "hard link target escapes the rootfs");
                char *slash = strrchr(target, '/');
                char tdir[PATH_MAX];
                snprintf(tdir, sizeof tdir, "%.*s", slash ? (int) (slash - target) : 0, target);
                /* open_parent may replace the cached parent: keep ours open. */
                _cleanup_close_ int keep = fcntl(pfd, F_DUPFD_CLOEXEC, 3);
                int tfd = open_parent(u, tdir, path);
                if (keep < 0 || tfd < 0)
                        return tfd < 0 ? tfd : msp_err_sys(u->err, errno, "layer %s", u->digest);
                if (linkat(tfd, slash ? slash + 1 : target, keep, base, 0) < 0)
                        return msp_err_sys(u->err, errno, "layer %s: entry \"%.200s\": hard link to \"%.200s\"",
                                           u->digest, path, target);
                return 0;
        }
        switch (type) {
        case AE_IFDIR:
                if (!is_dir && mkdirat(pfd, base, 0700) < 0)
                        return msp_err_sys(u->err, errno, "layer %s: mkdir \"%.200s\"", u->digest, path);
                if (fchmodat(pfd, base, perm, 0) < 0)
                        return msp_err_sys(u->err, errno, "layer %s: chmod \"%.200s\"", u->digest, path);
                break;
        case AE_IFREG: {
                /* The size the entry names is what it costs: a sparse entry carries less
                 * data than that, and its file still has that size. */
                la_int64_t size = archive_entry_size(e);
                if (size < 0)
                        return fail(u, EINVAL, path, "a negative size");
                if ((r = charge(u, (uint64_t) size, path)) < 0)
                        return r;
                _cleanup_close_ int fd = openat(pfd, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
                                                O_CLOEXEC, 0600);
                if (fd < 0)
                        return msp_err_sys(u->err, errno, "layer %s: create \"%.200s\"", u->digest, path);
                if ((r = write_data(u, a, fd, path, (uint64_t) size)) < 0)
                        return r;
                if (ftruncate(fd, (off_t) size) < 0 || fchmod(fd, perm) < 0)
                        return msp_err_sys(u->err, errno, "layer %s: \"%.200s\"", u->digest, path);
                break;
        }
        case AE_IFLNK: {
                /* Any target, absolute too: it is resolved inside the sandbox's root when
                 * used, and never while unpacking. */
                const char *target = archive_entry_symlink(e);
                if (!target || symlinkat(target, pfd, base) < 0)
                        return msp_err_sys(u->err, target ? errno : EINVAL,
                                           "layer %s: symlink \"%.200s\"", u->digest, path);
                break;
        }
        case AE_IFIFO:
                if (mknodat(pfd, base, S_IFIFO | perm, 0) < 0)
                        return msp_err_sys(u->err, errno, "layer %s: mkfifo \"%.200s\"", u->digest, path);
                break;
        default:
                /* Device nodes and sockets: the sandbox's /dev comes from the runtime. */
                return 0;
        }
        set_owner_time(u, pfd, base, e);
        return 0;
}

static int
next_entry(unpack *u, struct archive *a, struct archive_entry *e)
{
        const char *raw = archive_entry_pathname(e);
        char path[PATH_MAX];
        if (!raw)
                return fail(u, EINVAL, "(unnamed)", "no path");
        int r = normalize(raw, path, sizeof path);
        if (r == -EINVAL)
                return fail(u, EPERM, raw, "escapes the rootfs (\"..\")");
        if (r < 0)
                return fail(u, -r, raw, "path too long");
        if ((r = charge(u, MCP_UNPACK_ENTRY_COST, path)) < 0)
                return r;
        if (!*path)
                return 0;                       /* the root itself keeps its mode */
        char *slash = strrchr(path, '/');
        const char *base = slash ? slash + 1 : path;
        char dir[PATH_MAX];
        snprintf(dir, sizeof dir, "%.*s", slash ? (int) (slash - path) : 0, path);
        int pfd = open_parent(u, dir, path);
        if (pfd < 0)
                return pfd;
        if (strcmp(base, OPAQUE) == 0) {
                qsort(u->written, u->n_written, sizeof(char *), cmp_str);
                r = make_opaque(u, pfd, dir);
        } else if (strncmp(base, WHITEOUT, strlen(WHITEOUT)) == 0) {
                const char *victim = base + strlen(WHITEOUT);
                if (!*victim || strcmp(victim, ".") == 0 || strcmp(victim, "..") == 0)
                        return fail(u, EPERM, path, "whiteout of nothing");
                r = mcp_remove_tree_at(pfd, victim, u->err);
        } else {
                if ((r = apply_entry(u, a, e, path, pfd, base)) < 0)
                        return r;
                /* a whiteout or opaque marker may have removed the cached parent */
                return remember(u, path) < 0 ? msp_err_set(u->err, ENOMEM, "out of memory") : 0;
        }
        forget_parent(u);
        return r < 0 ? msp_err_prefix(u->err, "layer %s: whiteout \"%.200s\"", u->digest, path) : 0;
}

/* The blob as libarchive reads it: every byte passes the check once, in order, on its way
 * in. There is no skip or seek callback, so data libarchive skips is read (and hashed) too,
 * and nothing reaches the parser that the check did not see. */
typedef struct blob_reader {
        int fd;
        mcp_blob_check check;
        msp_err err;                    /* why reading failed (the blob grew, EIO) */
        int failed;                     /* -errno, 0 */
        uint8_t buf[128 * 1024];
} blob_reader;

static la_ssize_t
blob_read(struct archive *a, void *data, const void **ret)
{
        blob_reader *b = data;
        ssize_t n;
        do
                n = read(b->fd, b->buf, sizeof b->buf);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                b->failed = msp_err_sys(&b->err, errno, "blob %s: reading", b->check.digest);
        else if (!b->failed)
                b->failed = mcp_blob_check_feed(&b->check, b->buf, (size_t) n, &b->err);
        if (b->failed) {
                archive_set_error(a, -b->failed, "%s", b->err.msg);
                return -1;
        }
        *ret = b->buf;
        return n;
}

/* The check's verdict once the archive is read (or given up): what follows its end is read
 * through the check too, then size and digest. A blob that is not the one named is the
 * error, whatever the entries did; otherwise r stands. */
static int
blob_verdict(struct archive *a, blob_reader *b, int r, msp_err *err)
{
        const void *buf;
        la_ssize_t n;
        while (!b->failed && (n = blob_read(a, b, &buf)) > 0)
                ;
        if (!b->failed)
                b->failed = mcp_blob_check_end(&b->check, &b->err);
        else
                mcp_blob_check_done(&b->check);
        if (b->failed) {
                *err = b->err;
                return msp_err_prefix(err, "layer");
        }
        return r;
}

static int
apply_entries(struct archive *a, unpack *u)
{
        struct archive_entry *e;
        for (;;) {
                int h = archive_read_next_header(a, &e);
                if (h == ARCHIVE_EOF)
                        return 0;
                if (h < ARCHIVE_WARN)
                        return msp_err_set(u->err, EIO, "layer %s: not a readable tar: %s",
                                           u->digest, archive_error_string(a));
                int r = next_entry(u, a, e);
                if (r < 0)
                        return r;
        }
}

int
mcp_image_unpack_layer(int root_fd, int blob_fd, const mcp_image_layer *layer,
                       mcp_unpack_budget *budget, msp_err *err)
{
        const char *digest = layer->digest;
        _cleanup_free_ blob_reader *b = calloc(1, sizeof(*b));
        _cleanup_(archive_freep) struct archive *a = archive_read_new();       /* freed first */
        if (!a || !b)
                return msp_err_set(err, ENOMEM, "out of memory");
        b->fd = blob_fd;
        int r = mcp_blob_check_begin(&b->check, digest, layer->size, err);
        if (r < 0)
                return r;
        int ok = archive_read_support_format_tar(a);
        if (ok == ARCHIVE_OK)
                ok = layer->compression == MCP_LAYER_GZIP ? archive_read_support_filter_gzip(a) :
                     layer->compression == MCP_LAYER_ZSTD ? archive_read_support_filter_zstd(a) :
                     ARCHIVE_OK;
        if (ok < ARCHIVE_WARN)
                r = msp_err_set(err, ENOTSUP, "layer %s: %s", digest, archive_error_string(a));
        else if (archive_read_open(a, b, NULL, blob_read, NULL) != ARCHIVE_OK)
                r = msp_err_set(err, EIO, "layer %s: %s", digest, archive_error_string(a));
        if (r < 0)
                return blob_verdict(a, b, r, err);

        unpack u = { .root_fd = root_fd, .digest = digest, .budget = budget, .err = err,
                     .parent_fd = -1 };
        r = apply_entries(a, &u);
        forget_parent(&u);
        for (size_t i = 0; i < u.n_written; i++)
                free(u.written[i]);
        free(u.written);
        return blob_verdict(a, b, r, err);
}
