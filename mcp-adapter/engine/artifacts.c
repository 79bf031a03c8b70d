/* Artifacts: the sandbox controls everything under /workspace, so the walk opens each
 * entry relative to its parent's fd with O_NOFOLLOW (and out/ itself with openat2
 * RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS), reads only regular files, and never blocks on a
 * FIFO (O_NONBLOCK, then fstat). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "engine/artifacts.h"
#include "session/session.h"
#include "oci/oci.h"

typedef struct scan {
        const mcp_artifacts_snap *before;
        mcp_artifacts_snap *snap;       /* non-NULL: record instead of report */
        const char *uri_prefix;
        uint64_t max_image;
        mcp_artifact *a;
        size_t n;
} scan;

static const char *
mime_of(const unsigned char *h, size_t n, const char *name, bool *image)
{
        *image = true;
        if (n >= 8 && memcmp(h, "\x89PNG\r\n\x1a\n", 8) == 0)
                return "image/png";
        if (n >= 3 && memcmp(h, "\xff\xd8\xff", 3) == 0)
                return "image/jpeg";
        if (n >= 6 && (memcmp(h, "GIF87a", 6) == 0 || memcmp(h, "GIF89a", 6) == 0))
                return "image/gif";
        if (memmem(h, n, "<svg", 4))
                return "image/svg+xml";
        *image = false;
        const char *dot = strrchr(name, '.');
        static const char *const ext[][2] = {
                { ".txt", "text/plain" },  { ".csv", "text/csv" },   { ".json", "application/json" },
                { ".html", "text/html" },  { ".md", "text/markdown" }, { ".log", "text/plain" },
        };
        for (size_t i = 0; dot && i < ARRAY_SIZE(ext); i++)
                if (strcmp(dot, ext[i][0]) == 0)
                        return ext[i][1];
        return "application/octet-stream";
}

static int
add_file(scan *s, int dirfd, const char *name, const char *rel)
{
        _cleanup_close_ int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0)
                return 0;
        struct stat st;
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
                return 0;
        uint64_t ctime = (uint64_t) st.st_ctim.tv_sec * 1000000000ull + (uint64_t) st.st_ctim.tv_nsec;
        if (s->snap) {
                if (s->snap->n < MCP_ARTIFACTS_SNAP_MAX)
                        s->snap->seen[s->snap->n++] = (struct mcp_artifacts_seen){ st.st_ino, ctime };
                return 0;
        }
        for (size_t i = 0; s->before && i < s->before->n; i++)
                if (s->before->seen[i].ino == st.st_ino && s->before->seen[i].ctime_ns == ctime)
                        return 0;               /* unchanged since before the run */
        unsigned char head[512];
        ssize_t hn = pread(fd, head, sizeof head, 0);
        bool image;
        const char *mime = mime_of(head, hn > 0 ? (size_t) hn : 0, name, &image);

        mcp_artifact a = { .size = (uint64_t) st.st_size };
        a.path = strdup(rel);
        a.mime_type = strdup(mime);
        size_t ulen = strlen(s->uri_prefix) + strlen(rel) + 1;
        a.uri = malloc(ulen);
        if (!a.path || !a.mime_type || !a.uri)
                goto oom;
        snprintf(a.uri, ulen, "%s%s", s->uri_prefix, rel);
        /* Small files of any type carry their data: images become image content, the
         * protocol layer keeps the others of a fresh run readable as resources. */
        if (a.size <= s->max_image) {
                a.data = malloc(a.size ? a.size : 1);
                if (!a.data)
                        goto oom;
                ssize_t n = pread(fd, a.data, a.size, 0);
                if (n != (ssize_t) a.size) {    /* changed under us: report without data */
                        free(a.data);
                        a.data = NULL;
                }
        }
        s->a[s->n++] = a;
        return 0;
oom:
        free(a.path);
        free(a.mime_type);
        free(a.uri);
        return -ENOMEM;
}

static int
walk(scan *s, int fd, const char *rel, int depth)
{
        _cleanup_closedir_ DIR *d = fdopendir(fd);
        if (!d) {
                close(fd);
                return 0;
        }
        struct dirent *de;
        while ((de = readdir(d)) && s->n < MCP_ARTIFACTS_MAX &&
               !(s->snap && s->snap->n >= MCP_ARTIFACTS_SNAP_MAX)) {
                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                        continue;
                char path[4096];
                if (snprintf(path, sizeof path, "%s/%s", rel, de->d_name) >= (int) sizeof path)
                        continue;
                if (de->d_type == DT_DIR) {
                        if (depth >= MCP_ARTIFACTS_DEPTH)
                                continue;
                        int sub = openat(dirfd(d), de->d_name,
                                         O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                        if (sub >= 0) {
                                int r = walk(s, sub, path, depth + 1);
                                if (r < 0)
                                        return r;
                        }
                } else if (de->d_type == DT_REG || de->d_type == DT_UNKNOWN) {
                        int r = add_file(s, dirfd(d), de->d_name, path);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

static int
open_out(int workspace_fd)
{
        struct open_how how = { .flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
                                .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS |
                                           RESOLVE_NO_MAGICLINKS };
        return (int) syscall(SYS_openat2, workspace_fd, MCP_OUT_DIR, &how, sizeof how);
}

int
mcp_artifacts_snapshot(int workspace_fd, mcp_artifacts_snap *ret, msp_err *err)
{
        *ret = (mcp_artifacts_snap){ 0 };
        int fd = open_out(workspace_fd);
        if (fd < 0)
                return 0;                       /* no out/ yet */
        ret->seen = calloc(MCP_ARTIFACTS_SNAP_MAX, sizeof *ret->seen);
        if (!ret->seen) {
                close(fd);
                return msp_err_set(err, ENOMEM, "artifacts: out of memory");
        }
        scan s = { .snap = ret };
        (void) walk(&s, fd, MCP_OUT_DIR, 0);
        return 0;
}

void
mcp_artifacts_snap_done(mcp_artifacts_snap *snap)
{
        free(snap->seen);
        *snap = (mcp_artifacts_snap){ 0 };
}

int
mcp_artifacts_scan(int workspace_fd, const mcp_artifacts_snap *before, const char *uri_prefix,
                   uint64_t max_image_bytes, mcp_artifact **ret, size_t *ret_n, msp_err *err)
{
        *ret = NULL;
        *ret_n = 0;
        int fd = open_out(workspace_fd);
        if (fd < 0)
                return 0;                       /* no out/ (or a symlink): nothing to report */
        scan s = { .before = before, .uri_prefix = uri_prefix, .max_image = max_image_bytes };
        s.a = calloc(MCP_ARTIFACTS_MAX, sizeof *s.a);
        if (!s.a) {
                close(fd);
                return msp_err_set(err, ENOMEM, "artifacts: out of memory");
        }
        int r = walk(&s, fd, MCP_OUT_DIR, 0);
        if (r < 0) {
                mcp_artifacts_free(s.a, s.n);
                return msp_err_set(err, -r, "artifacts: out of memory");
        }
        if (s.n == 0) {
                free(s.a);
                return 0;
        }
        *ret = s.a;
        *ret_n = s.n;
        return 0;
}

void
mcp_artifacts_free(mcp_artifact *a, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                free(a[i].path);
                free(a[i].mime_type);
                free(a[i].data);
                free(a[i].uri);
        }
        free(a);
}
