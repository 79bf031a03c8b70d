/* The undo journal of an update: while one is open, every successful cg_write records
 * what the file held before, so that an update the kernel refuses half-way can put the
 * files it already wrote back, last first. Going back through the states the kernel
 * accepted on the way keeps each restoring write valid (memory before memsw and the
 * like). Only one-line values are recorded: multi-line files (memory.oom_control,
 * keyed lists such as blkio.throttle.*) cannot be written back as they read. The
 * runtime is single-threaded and runs one update per process, hence file scope. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/cgroup-internal.h"

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

bool
cg_undo_save(int dfd, const char *file, cg_undo_old *ret)
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

void
cg_undo_push(int dfd, const char *file, const cg_undo_old *old)
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

void
cg_undo_failed(const char *file)
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
