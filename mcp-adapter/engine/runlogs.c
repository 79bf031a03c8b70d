/* The run logs within a byte budget (see runlogs.h). */
#include "engine/runlogs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "oci/oci.h"

static void
log_name(char *buf, size_t size, const char *id, mcp_stream s)
{
        snprintf(buf, size, "logs/%s.%s", id, s == MCP_STDOUT ? "out" : "err");
}

static void
unlink_logs(mcp_runlogs *l, const char *id)
{
        char name[64];
        log_name(name, sizeof name, id, MCP_STDOUT);
        (void) unlinkat(l->dirfd, name, 0);
        log_name(name, sizeof name, id, MCP_STDERR);
        (void) unlinkat(l->dirfd, name, 0);
}

static void
drop_slot(mcp_runlogs *l, unsigned i)
{
        if (!l->ids[i][0])
                return;
        unlink_logs(l, l->ids[i]);
        l->kept -= l->bytes[i];
        l->bytes[i] = 0;
        l->ids[i][0] = '\0';
}

/* The oldest kept logs; false when there are none. */
static bool
drop_oldest(mcp_runlogs *l)
{
        for (unsigned k = 0; k < l->keep; k++) {
                unsigned i = (l->next + k) % l->keep;
                if (l->ids[i][0]) {
                        drop_slot(l, i);
                        return true;
                }
        }
        return false;
}

int
mcp_runlogs_init(mcp_runlogs *l, int dirfd, unsigned keep, msp_err *err)
{
        *l = (mcp_runlogs) { .dirfd = dirfd, .keep = keep };
        if (keep == 0)
                return 0;
        struct statvfs sv;
        if (fstatvfs(dirfd, &sv) < 0)
                return msp_err_sys(err, errno, "statvfs of the state dir");
        uint64_t avail = (uint64_t) sv.f_bavail * sv.f_frsize / 4;
        l->budget = avail < RUNLOGS_BUDGET_MAX ? avail : RUNLOGS_BUDGET_MAX;
        l->ids = calloc(keep, sizeof *l->ids);
        l->bytes = calloc(keep, sizeof *l->bytes);
        if (!l->ids || !l->bytes) {
                mcp_runlogs_free(l);
                return msp_err_set(err, ENOMEM, "out of memory");
        }
        return 0;
}

void
mcp_runlogs_free(mcp_runlogs *l)
{
        free(l->ids);
        free(l->bytes);
        l->ids = NULL;
        l->bytes = NULL;
        l->keep = 0;
}

void
mcp_runlogs_open(mcp_runlogs *l, const char *id, mcp_capture *out, mcp_capture *err,
                 uint64_t *ret_reserve)
{
        *ret_reserve = 0;
        if (l->keep == 0)
                return;
        uint64_t want = 2 * RUNLOGS_STREAM_MAX;
        while (l->kept + l->reserved + want > l->budget && drop_oldest(l))
                ;
        uint64_t room = l->budget > l->kept + l->reserved ? l->budget - l->kept - l->reserved : 0;
        uint64_t grant = want < room ? want : room;
        if (grant < 2 * 4096)
                return;         /* no room: the run goes without a log */
        char name[64];
        log_name(name, sizeof name, id, MCP_STDOUT);
        out->log_fd = openat(l->dirfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        log_name(name, sizeof name, id, MCP_STDERR);
        err->log_fd = openat(l->dirfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        out->log_limit = err->log_limit = grant / 2;
        l->reserved += grant;
        *ret_reserve = grant;
}

void
mcp_runlogs_keep(mcp_runlogs *l, const char *id, uint64_t *reserve, const mcp_capture *out,
                 const mcp_capture *err)
{
        l->reserved -= *reserve;
        *reserve = 0;
        if (l->keep == 0)
                return;
        drop_slot(l, l->next);
        /* A log cut by a failed write: the filesystem is full, give back what we hold. */
        if (out->log_failed || err->log_failed)
                while (drop_oldest(l))
                        ;
        snprintf(l->ids[l->next], sizeof l->ids[0], "%s", id);
        l->bytes[l->next] = out->logged + err->logged;
        l->kept += l->bytes[l->next];
        l->next = (l->next + 1) % l->keep;
}

void
mcp_runlogs_forget(mcp_runlogs *l, const char *id, uint64_t *reserve)
{
        l->reserved -= *reserve;
        *reserve = 0;
        unlink_logs(l, id);
}

int
mcp_runlogs_read(const mcp_runlogs *l, const char *id, mcp_stream stream, char **ret,
                 size_t *ret_len, msp_err *err)
{
        bool known = false;
        for (unsigned i = 0; i < l->keep && !known; i++)
                known = strcmp(l->ids[i], id) == 0;
        if (!known)
                return msp_err_set(err, ENOENT, "run '%.64s': no log kept", id);
        char name[64];
        log_name(name, sizeof name, id, stream);
        _cleanup_close_ int fd = openat(l->dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0)
                return msp_err_sys(err, errno, "run '%s': log", id);
        char *buf = malloc((size_t) st.st_size + 1);
        if (!buf)
                return msp_err_set(err, ENOMEM, "out of memory");
        ssize_t n = pread(fd, buf, (size_t) st.st_size, 0);
        if (n < 0) {
                free(buf);
                return msp_err_sys(err, errno, "run '%s': read log", id);
        }
        buf[n] = '\0';
        *ret = buf;
        *ret_len = (size_t) n;
        return 0;
}
