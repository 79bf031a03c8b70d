/* The kept files of fresh runs, on disk within byte budgets (see keptfiles.h). */
#include "engine/keptfiles.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "base/base.h"
#include "oci/oci.h"

struct mcp_kept_file {
        char *uri, *mime, *tenant;
        uint64_t len;
        uint64_t name;                  /* kept/<name> */
};

int
mcp_keptfiles_init(mcp_keptfiles *k, int instance_fd, uint64_t budget, uint64_t tenant_budget,
                   msp_err *err)
{
        *k = (mcp_keptfiles){ .dirfd = -1 };
        struct statvfs sv;
        if (fstatvfs(instance_fd, &sv) < 0)
                return msp_err_sys(err, errno, "statvfs of the state dir");
        uint64_t avail = (uint64_t) sv.f_bavail * sv.f_frsize / 8;
        k->budget = budget < avail ? budget : avail;
        k->tenant_budget = tenant_budget < k->budget ? tenant_budget : k->budget;
        k->files = calloc(KEPT_FILES_MAX, sizeof *k->files);
        if (!k->files)
                return msp_err_set(err, ENOMEM, "out of memory");
        if (mkdirat(instance_fd, "kept", 0700) < 0 && errno != EEXIST) {
                mcp_keptfiles_free(k);
                return msp_err_sys(err, errno, "mkdir 'kept' in the instance dir");
        }
        k->dirfd = openat(instance_fd, "kept", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (k->dirfd < 0) {
                int r = msp_err_sys(err, errno, "open 'kept' in the instance dir");
                mcp_keptfiles_free(k);
                return r;
        }
        return 0;
}

static void
file_name(char buf[24], uint64_t name)
{
        snprintf(buf, 24, "%llu", (unsigned long long) name);
}

static void
drop(mcp_keptfiles *k, size_t i, const char *why, mcp_kept_dropped_fn fn, void *fn_data)
{
        mcp_kept_file *f = &k->files[i];
        char name[24];
        file_name(name, f->name);
        (void) unlinkat(k->dirfd, name, 0);
        if (fn)
                fn(f->uri, f->tenant, why, fn_data);
        k->bytes -= f->len;
        free(f->uri);
        free(f->mime);
        free(f->tenant);
        memmove(f, f + 1, (k->n - i - 1) * sizeof *f);
        k->n--;
}

void
mcp_keptfiles_free(mcp_keptfiles *k)
{
        while (k->n > 0)
                drop(k, 0, NULL, NULL, NULL);
        free(k->files);
        k->files = NULL;
        if (k->dirfd >= 0)
                close(k->dirfd);
        k->dirfd = -1;
}

/* The tenant's bytes and files now, and the index of its oldest (k->n: none). */
static size_t
tenant_usage(const mcp_keptfiles *k, const char *tenant, uint64_t *ret_bytes, size_t *ret_n)
{
        size_t oldest = k->n;
        *ret_bytes = 0;
        *ret_n = 0;
        for (size_t i = k->n; i > 0; i--)
                if (strcmp(k->files[i - 1].tenant, tenant) == 0) {
                        *ret_bytes += k->files[i - 1].len;
                        (*ret_n)++;
                        oldest = i - 1;
                }
        return oldest;
}

/* Room for len more bytes of tenant's: its own oldest first, then anyone's. */
static void
make_room(mcp_keptfiles *k, const char *tenant, uint64_t len, mcp_kept_dropped_fn fn,
          void *fn_data)
{
        for (;;) {
                uint64_t bytes;
                size_t n, oldest = tenant_usage(k, tenant, &bytes, &n);
                if (oldest == k->n || (bytes + len <= k->tenant_budget && n < KEPT_FILES_TENANT_MAX))
                        break;
                drop(k, oldest, "the oldest of its tenant's (--kept-files-tenant-size)", fn, fn_data);
        }
        while (k->n > 0 && (k->bytes + len > k->budget || k->n >= KEPT_FILES_MAX))
                drop(k, 0, "the oldest of the server's (--kept-files-size)", fn, fn_data);
}

int
mcp_keptfiles_add(mcp_keptfiles *k, const char *tenant, const char *uri, const char *mime,
                  const void *data, size_t len, mcp_kept_dropped_fn fn, void *fn_data,
                  msp_err *err)
{
        if (k->dirfd < 0 || len > k->tenant_budget)
                return msp_err_set(err, EFBIG, "%zu bytes: more than the kept files' budget "
                                   "(%llu bytes a tenant, --kept-files-tenant-size)", len,
                                   (unsigned long long) k->tenant_budget);
        /* A file of the same URI (a run's result sent again) replaces the old copy. */
        for (size_t i = 0; i < k->n; i++)
                if (strcmp(k->files[i].uri, uri) == 0 && strcmp(k->files[i].tenant, tenant) == 0) {
                        drop(k, i, NULL, NULL, NULL);
                        break;
                }
        make_room(k, tenant, len, fn, fn_data);
        mcp_kept_file f = { .uri = strdup(uri), .mime = strdup(mime ? mime : "application/octet-stream"),
                            .tenant = strdup(tenant), .len = len, .name = k->next_name++ };
        char name[24];
        file_name(name, f.name);
        int r = !f.uri || !f.mime || !f.tenant ? msp_err_set(err, ENOMEM, "out of memory")
                                               : mcp_write_new_at(k->dirfd, name, data, len, 0600, err);
        if (r < 0) {
                (void) unlinkat(k->dirfd, name, 0);
                free(f.uri);
                free(f.mime);
                free(f.tenant);
                return r;
        }
        k->files[k->n++] = f;
        k->bytes += len;
        return 0;
}

int
mcp_keptfiles_read(const mcp_keptfiles *k, const char *tenant, const char *uri,
                   unsigned char **ret, size_t *ret_len, const char **ret_mime, msp_err *err)
{
        const mcp_kept_file *f = NULL;
        for (size_t i = k->n; i > 0 && !f; i--)
                if (strcmp(k->files[i - 1].uri, uri) == 0 && strcmp(k->files[i - 1].tenant, tenant) == 0)
                        f = &k->files[i - 1];
        if (!f)
                return msp_err_set(err, ENOENT, "not kept");
        char name[24];
        file_name(name, f->name);
        _cleanup_close_ int fd = openat(k->dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return msp_err_sys(err, errno, "kept file");
        unsigned char *buf = malloc(f->len ? f->len : 1);
        if (!buf)
                return msp_err_set(err, ENOMEM, "out of memory");
        ssize_t n = pread(fd, buf, f->len, 0);
        if (n != (ssize_t) f->len) {
                free(buf);
                return msp_err_set(err, EIO, "kept file: short read");
        }
        *ret = buf;
        *ret_len = f->len;
        *ret_mime = f->mime;
        return 0;
}
