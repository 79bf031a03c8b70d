/* Background processes of a live session and the leftover pipes of its finished calls
 * (live.h). A background process keeps its spawn connection (closing it would kill its
 * group) and its two pipes; the last MCP_PROCESS_OUTPUT_KEEP bytes of each stream are
 * kept for process_output. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <unistd.h>

#include "engine/engine-int.h"
#include "engine/engine.h"
#include "engine/live.h"
#include "sandbox/sandbox.h"

/* Leftover pipes read and dropped per session; the oldest is closed beyond. */
#define DRAINS_MAX 32u

typedef struct ring {
        char *buf;                      /* the newest len bytes, oldest first */
        size_t len;
        uint64_t total;                 /* bytes written since the start */
} ring;

struct mcp_live_proc {
        mcp_live_proc *next;
        mcp_live *live;
        char id[16];
        char language[32];
        int pid;
        int conn, out_fd, err_fd;       /* -1: closed */
        bool running;
        int exit_code, term_signal;
        uint64_t started_usec;
        ring out, err;
        char code_name[64];             /* its program in the code dir until it exits, "" */
};

struct mcp_live_drain {
        mcp_live_drain *next;
        mcp_live *live;
        int fd;
};

static void
ring_add(ring *r, const char *buf, size_t n)
{
        const size_t keep = MCP_PROCESS_OUTPUT_KEEP;
        r->total += n;
        if (n >= keep) {
                buf += n - keep;
                n = keep;
        }
        if (r->len + n > keep) {
                size_t drop = r->len + n - keep;
                memmove(r->buf, r->buf + drop, r->len - drop);
                r->len -= drop;
        }
        char *nb = realloc(r->buf, r->len + n);
        if (!nb)
                return;                 /* dropped: total still counts it */
        r->buf = nb;
        memcpy(r->buf + r->len, buf, n);
        r->len += n;
}


static int
proc_output(mcp_loop *loop, int fd, uint32_t events, void *data)
{
        mcp_live_proc *p = data;
        (void) events;
        bool out = fd == p->out_fd;
        char buf[65536];
        for (int i = 0; i < 4; i++) {
                ssize_t n = read(fd, buf, sizeof buf);
                if (n > 0) {
                        ring_add(out ? &p->out : &p->err, buf, (size_t) n);
                        continue;
                }
                if (n < 0 && (errno == EAGAIN || errno == EINTR))
                        return 0;
                mcp_loop_close_io(loop, out ? &p->out_fd : &p->err_fd);
                return 0;
        }
        return 0;
}

/* Its program file: the interpreter may open it after the call was answered (at the
 * program's start), so it goes when the process does. */
static void
drop_code(mcp_live_proc *p)
{
        if (!p->code_name[0])
                return;
        int cfd = open(p->live->code_dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (cfd >= 0) {
                (void) unlinkat(cfd, p->code_name, 0);
                close(cfd);
        }
        p->code_name[0] = '\0';
}

static int
proc_status(mcp_loop *loop, int fd, uint32_t events, void *data)
{
        mcp_live_proc *p = data;
        (void) fd;
        (void) events;
        for (;;) {
                struct spawn_event ev;
                int r = spawn_client_read(p->conn, &ev, NULL);
                if (r == 0)
                        return 0;
                if (r < 0) {            /* the sandbox went: so did the process */
                        p->running = false;
                        p->term_signal = SIGKILL;
                } else if (ev.kind == SPAWN_EXITED) {
                        p->running = false;
                        p->exit_code = ev.value;
                } else if (ev.kind == SPAWN_SIGNALED) {
                        p->running = false;
                        p->term_signal = ev.value;
                } else {
                        continue;
                }
                mcp_loop_close_io(loop, &p->conn);
                drop_code(p);
                return 0;
        }
}

static void
proc_free(mcp_live_proc *p)
{
        mcp_loop *loop = p->live->engine->loop;
        mcp_loop_close_io(loop, &p->conn);          /* kills its group if it still runs */
        mcp_loop_close_io(loop, &p->out_fd);
        mcp_loop_close_io(loop, &p->err_fd);
        drop_code(p);
        free(p->out.buf);
        free(p->err.buf);
        free(p);
}

int
mcp_live_proc_adopt(mcp_live *l, mcp_run *run, msp_err *err)
{
        mcp_engine *e = l->engine;
        mcp_call *c = &run->call;
        mcp_live_proc *p = calloc(1, sizeof *p);
        unsigned char rnd[4];
        if (!p || getrandom(rnd, sizeof rnd, 0) != (ssize_t) sizeof rnd) {
                free(p);
                return msp_err_set(err, ENOMEM, "out of memory");
        }
        snprintf(p->id, sizeof p->id, "p-%02x%02x%02x%02x", rnd[0], rnd[1], rnd[2], rnd[3]);
        snprintf(p->language, sizeof p->language, "%s", run->plan.lang ? run->plan.lang->name : "");
        p->live = l;
        p->pid = c->pid;
        p->running = true;
        p->started_usec = mcp_wallclock_usec();
        snprintf(p->code_name, sizeof p->code_name, "%s", c->code_name);
        /* Its fds move here: out of the call's watches, into ours. */
        p->conn = TAKE_FD(c->conn);
        p->out_fd = TAKE_FD(c->out_fd);
        p->err_fd = TAKE_FD(c->err_fd);
        mcp_loop_del_io(e->loop, p->conn);
        mcp_loop_del_io(e->loop, p->out_fd);
        mcp_loop_del_io(e->loop, p->err_fd);
        if (mcp_loop_add_io(e->loop, p->conn, EPOLLIN, proc_status, p) < 0 ||
            mcp_loop_add_io(e->loop, p->out_fd, EPOLLIN, proc_output, p) < 0 ||
            mcp_loop_add_io(e->loop, p->err_fd, EPOLLIN, proc_output, p) < 0) {
                proc_free(p);
                return msp_err_set(err, ENOMEM, "out of memory");
        }
        snprintf(c->process_id, sizeof c->process_id, "%s", p->id);
        c->code_name[0] = '\0';          /* the process's now (drop_code) */
        p->next = l->procs;
        l->procs = p;
        l->n_procs++;
        return 0;
}

static void
drain_free(mcp_live_drain *d)
{
        mcp_loop_close_io(d->live->engine->loop, &d->fd);
        free(d);
}

static void
drain_unlink(mcp_live_drain *d)
{
        mcp_live *l = d->live;
        for (mcp_live_drain **p = &l->drains; *p; p = &(*p)->next)
                if (*p == d) {
                        *p = d->next;
                        l->n_drains--;
                        return;
                }
}

static int
drain_ready(mcp_loop *loop, int fd, uint32_t events, void *data)
{
        mcp_live_drain *d = data;
        char buf[65536];
        (void) loop;
        (void) events;
        for (int i = 0; i < 4; i++) {
                ssize_t n = read(fd, buf, sizeof buf);
                if (n > 0)
                        continue;
                if (n < 0 && (errno == EAGAIN || errno == EINTR))
                        return 0;
                drain_unlink(d);
                drain_free(d);
                return 0;
        }
        return 0;
}

void
mcp_live_drain_adopt(mcp_live *l, int *fd)
{
        mcp_live_drain *d = calloc(1, sizeof *d);
        if (!d) {
                close(TAKE_FD(*fd));
                return;
        }
        d->live = l;
        d->fd = TAKE_FD(*fd);
        if (mcp_loop_add_io(l->engine->loop, d->fd, EPOLLIN, drain_ready, d) < 0) {
                close(d->fd);
                free(d);
                return;
        }
        if (l->n_drains >= DRAINS_MAX) {        /* the oldest is last */
                mcp_live_drain *old = l->drains;
                while (old->next)
                        old = old->next;
                drain_unlink(old);
                drain_free(old);
        }
        d->next = l->drains;
        l->drains = d;
        l->n_drains++;
}

void
mcp_live_procs_free(mcp_live *l)
{
        while (l->procs) {
                mcp_live_proc *p = l->procs;
                l->procs = p->next;
                proc_free(p);
        }
        l->n_procs = 0;
        while (l->drains) {
                mcp_live_drain *d = l->drains;
                l->drains = d->next;
                drain_free(d);
        }
        l->n_drains = 0;
}

unsigned
mcp_live_procs_running(const mcp_live *l)
{
        unsigned n = 0;
        for (const mcp_live_proc *p = l->procs; p; p = p->next)
                n += p->running;
        return n;
}

static mcp_live_proc *
find_proc(mcp_engine *e, const char *session_id, const char *process_id, mcp_live **ret_live,
          msp_err *err)
{
        mcp_live *l = mcp_live_find(e, session_id);
        if (!l) {
                msp_err_set(err, ENOENT, "session %s: no such live session", session_id);
                return NULL;
        }
        if (ret_live)
                *ret_live = l;
        for (mcp_live_proc *p = l->procs; p; p = p->next)
                if (strcmp(p->id, process_id) == 0)
                        return p;
        msp_err_set(err, ENOENT, "process_id: '%.32s' is not a process of session %s", process_id,
                    session_id);
        return NULL;
}

int
mcp_engine_process_list(mcp_engine *e, const char *session_id, mcp_process_info **ret,
                        size_t *ret_n, msp_err *err)
{
        mcp_live *l = mcp_live_find(e, session_id);
        if (!l)
                return msp_err_set(err, ENOENT, "session %s: no such live session", session_id);
        mcp_process_info *v = calloc(l->n_procs + 1, sizeof *v);
        if (!v)
                return msp_err_set(err, ENOMEM, "out of memory");
        size_t n = 0;
        for (const mcp_live_proc *p = l->procs; p; p = p->next, n++) {
                mcp_process_info *i = &v[n];
                snprintf(i->id, sizeof i->id, "%s", p->id);
                snprintf(i->language, sizeof i->language, "%s", p->language);
                i->pid = p->pid;
                i->running = p->running;
                i->exit_code = p->exit_code;
                i->term_signal = p->term_signal;
                i->started_usec = p->started_usec;
                i->stdout_total = p->out.total;
                i->stderr_total = p->err.total;
        }
        *ret = v;
        *ret_n = n;
        return 0;
}

int
mcp_engine_process_output(mcp_engine *e, const char *session_id, const char *process_id,
                          mcp_stream stream, uint64_t offset, size_t max, char **ret,
                          size_t *ret_len, uint64_t *ret_next, uint64_t *ret_skipped,
                          msp_err *err)
{
        mcp_live_proc *p = find_proc(e, session_id, process_id, NULL, err);
        if (!p)
                return -ENOENT;
        const ring *r = stream == MCP_STDERR ? &p->err : &p->out;
        uint64_t oldest = r->total - r->len;
        uint64_t from = offset < oldest ? oldest : offset > r->total ? r->total : offset;
        size_t n = (size_t) (r->total - from);
        if (n > max)
                n = max;
        char *buf = malloc(n + 1);
        if (!buf)
                return msp_err_set(err, ENOMEM, "out of memory");
        if (n)
                memcpy(buf, r->buf + (from - oldest), n);
        buf[n] = '\0';
        *ret = buf;
        *ret_len = n;
        *ret_next = from + n;
        *ret_skipped = offset < oldest ? oldest - offset : 0;
        return 0;
}

int
mcp_engine_process_kill(mcp_engine *e, const char *session_id, const char *process_id, int sig,
                        msp_err *err)
{
        mcp_live *l = NULL;
        mcp_live_proc *p = find_proc(e, session_id, process_id, &l, err);
        if (!p)
                return -ENOENT;
        if (p->running) {
                int r = mcp_live_ensure(l, err);        /* a frozen group cannot die */
                if (r < 0)
                        return r;
                return spawn_client_signal(p->conn, sig ? sig : SIGKILL, err);
        }
        for (mcp_live_proc **pp = &l->procs; *pp; pp = &(*pp)->next)
                if (*pp == p) {
                        *pp = p->next;
                        l->n_procs--;
                        break;
                }
        proc_free(p);
        return 0;
}
