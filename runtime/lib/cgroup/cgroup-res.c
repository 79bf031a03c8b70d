/* The writers of the resources whose files are the same on v1 and v2 but for their
 * names: hugetlb.<size>.* limits (and the check of a page size) and rdma.max lines. Both
 * backends, cgroup-v1.c and cgroup-v2.c, call them on a directory they have open. */
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lib/cgroup/cgroup-internal.h"

bool
cg_hugepage_size_valid(const char *size)
{
        size_t digits = strspn(size, "0123456789");

        return digits > 0 && digits < 16 && size[digits] && strchr("KMGT", size[digits]) &&
               size[digits + 1] == 'B' && size[digits + 2] == '\0';
}

/* The sizes dfd offers, "2MB 1GB", for an error message. */
static void
hugepage_sizes(int dfd, bool v2, char *buf, size_t bufsz)
{
        const char *suffix = v2 ? ".max" : ".limit_in_bytes";
        int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        _cleanup_closedir_ DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
        struct dirent *de;
        size_t o = 0;

        buf[0] = '\0';
        if (!d) {
                if (fd >= 0)
                        close(fd);
                return;
        }
        while ((de = readdir(d))) {
                size_t len = strlen(de->d_name), sl = strlen(suffix);
                if (strncmp(de->d_name, "hugetlb.", 8) != 0 || len <= 8 + sl ||
                    strcmp(de->d_name + len - sl, suffix) != 0 || memchr(de->d_name + 8, '.', len - 8 - sl))
                        continue;
                int n = snprintf(buf + o, bufsz - o, "%s%.*s", o ? " " : "", (int) (len - 8 - sl),
                                 de->d_name + 8);
                if (n < 0 || (size_t) n >= bufsz - o)
                        break;
                o += (size_t) n;
        }
}

int
cg_apply_hugetlb(int dfd, const oci_hugepage_limit *l, size_t n, bool v2, msp_err *err)
{
        for (size_t i = 0; i < n; i++) {
                char file[128], sizes[256];
                if (!cg_hugepage_size_valid(l[i].page_size))
                        return msp_err_set(err, EINVAL,
                                           "linux.resources.hugepageLimits[%zu].pageSize: '%.32s' is not "
                                           "a size like '2MB'", i, l[i].page_size);
                snprintf(file, sizeof file, "hugetlb.%s.%s", l[i].page_size,
                         v2 ? "max" : "limit_in_bytes");
                if (!cg_exists(dfd, file)) {
                        hugepage_sizes(dfd, v2, sizes, sizeof sizes);
                        return msp_err_set(err, EINVAL,
                                           "linux.resources.hugepageLimits[%zu].pageSize: '%s' is not a "
                                           "huge page size of this host (available: %s)", i,
                                           l[i].page_size, sizes[0] ? sizes : "none");
                }
                int r = cg_writef(dfd, file, err, "%" PRIu64, l[i].limit);
                if (r < 0)
                        return r;
        }
        return 0;
}

int
cg_apply_rdma(int dfd, const oci_rdma_limit *l, size_t n, msp_err *err)
{
        for (size_t i = 0; i < n; i++) {
                char handles[32] = "", objects[32] = "";
                if (!l[i].has_hca_handles && !l[i].has_hca_objects)
                        continue;
                if (l[i].has_hca_handles)
                        snprintf(handles, sizeof handles, " hca_handle=%" PRIu32, l[i].hca_handles);
                if (l[i].has_hca_objects)
                        snprintf(objects, sizeof objects, " hca_object=%" PRIu32, l[i].hca_objects);
                int r = cg_writef(dfd, "rdma.max", err, "%s%s%s", l[i].device, handles, objects);
                if (r < 0)
                        return r;
        }
        return 0;
}
