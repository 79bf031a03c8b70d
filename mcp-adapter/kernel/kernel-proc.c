/* A session's kernel process and its client (kernel-proc.h): the kernel's course through
 * STOPPED -> STARTING -> IDLE <-> RUNNING (-> INTERRUPTING -> KILLING -> STARTING). */
#include "kernel/kernel-proc.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "base/base.h"
#include "kernel/kernel-client.h"
#include "observe/observe.h"
#include "oci/oci.h"
#include "sandbox/sandbox.h"

#define CONN_FILE_PLACEHOLDER "{connection_file}"

enum proc_state {
        STOPPED,        /* no kernel */
        STARTING,       /* spawned, kernel_info not answered yet; timer: ready_usec */
        IDLE,
        RUNNING,        /* a cell sent; timer: its timeout (if any) */
        INTERRUPTING,   /* interrupt_request and SIGINT sent; timer: grace_usec */
        KILLING,        /* SIGKILL sent to the group, its status awaited; timer: grace_usec */
};

struct mcp_kernel_proc {
        mcp_loop *loop;
        mcp_logger *lg;
        char *spawn_socket, *host_dir, *sandbox_dir, *cwd;
        char **argv, **envp;
        uint64_t ready_usec, grace_usec;
        bool interrupt_by_message;

        enum proc_state state;
        mcp_kernel *k;
        int conn;                       /* the spawn connection; -1 when none */
        int out_fd;                     /* the kernel's stdout and stderr; -1 when none */
        int pid;
        mcp_timer *timer;               /* the state's bound */
        char output[MCP_KERNEL_OUTPUT_MAX];     /* its tail, NUL-terminated */
        size_t output_len;

        /* The pending cell: from mcp_kernel_proc_execute to its callback. */
        bool pending, sent, started, interrupted, killed;
        char *code;
        uint64_t timeout_usec;
        mcp_kernel_done_fn fn;
        void *fn_data;
};

static char **
strv_free(char **v)
{
        for (size_t i = 0; v && v[i]; i++)
                free(v[i]);
        free(v);
        return NULL;
}

static void
strv_freep(char ***v)
{
        strv_free(*v);
}

static char **
strv_copy(const char *const *v)
{
        size_t n = 0;
        while (v && v[n])
                n++;
        char **c = calloc(n + 1, sizeof *c);
        if (!c)
                return NULL;
        for (size_t i = 0; i < n; i++)
                if (!(c[i] = strdup(v[i]))) {
                        strv_free(c);
                        return NULL;
                }
        return c;
}

/* s with every "{connection_file}" replaced by path, malloc'd. */
static char *
replace_placeholder(const char *s, const char *path)
{
        size_t plen = strlen(CONN_FILE_PLACEHOLDER), n = 0;
        for (const char *q = strstr(s, CONN_FILE_PLACEHOLDER); q; q = strstr(q + plen, CONN_FILE_PLACEHOLDER))
                n++;
        char *out = malloc(strlen(s) + n * strlen(path) + 1);
        if (!out)
                return NULL;
        char *o = out;
        for (const char *q; (q = strstr(s, CONN_FILE_PLACEHOLDER)); s = q + plen) {
                memcpy(o, s, (size_t) (q - s));
                o += q - s;
                o = stpcpy(o, path);
        }
        strcpy(o, s);
        return out;
}

static void
keep_output(mcp_kernel_proc *p, const char *buf, size_t n)
{
        size_t cap = sizeof p->output - 1;
        if (n >= cap) {
                memcpy(p->output, buf + n - cap, cap);
                p->output_len = cap;
        } else {
                size_t drop = p->output_len + n > cap ? p->output_len + n - cap : 0;
                memmove(p->output, p->output + drop, p->output_len - drop);
                memcpy(p->output + p->output_len - drop, buf, n);
                p->output_len += n - drop;
        }
        p->output[p->output_len] = '\0';
}

/* The output's tail for a message: its last line's newline dropped. */
static const char *
output_tail(mcp_kernel_proc *p)
{
        while (p->output_len && (p->output[p->output_len - 1] == '\n' ||
                                 p->output[p->output_len - 1] == '\r'))
                p->output[--p->output_len] = '\0';
        return p->output[0] ? p->output : "(none)";
}

static void
close_output(mcp_kernel_proc *p)
{
        if (p->out_fd < 0)
                return;
        mcp_loop_del_io(p->loop, p->out_fd);
        close(p->out_fd);
        p->out_fd = -1;
}

/* What the pipe holds now (non-blocking): the kernel's words before it died. */
static void
drain_output(mcp_kernel_proc *p)
{
        char buf[4096];
        while (p->out_fd >= 0) {
                ssize_t n = read(p->out_fd, buf, sizeof buf);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0) {
                        if (n == 0 || errno != EAGAIN)
                                close_output(p);
                        return;
                }
                keep_output(p, buf, (size_t) n);
        }
}

static int
on_output(mcp_loop *loop, int fd, uint32_t events, void *data)
{
        (void) loop, (void) fd, (void) events;
        drain_output(data);
        return 0;
}

static void
set_timer(mcp_kernel_proc *p, uint64_t usec, mcp_timer_fn fn)
{
        mcp_timer_cancel(p->loop, p->timer);
        p->timer = NULL;
        if (mcp_loop_add_timer(p->loop, usec, fn, p, &p->timer) < 0) {
                p->timer = NULL;
                mcp_log(p->lg, MCP_LOG_WARNING, "kernel: no timer: a wait is unbounded");
        }
}

static void
cancel_timer(mcp_kernel_proc *p)
{
        mcp_timer_cancel(p->loop, p->timer);
        p->timer = NULL;
}

/* Everything of the running kernel gone: closing the spawn connection kills its group. */
static void
stop_kernel(mcp_kernel_proc *p)
{
        cancel_timer(p);
        if (p->conn >= 0) {
                mcp_loop_del_io(p->loop, p->conn);
                close(p->conn);
                p->conn = -1;
        }
        close_output(p);
        p->k = mcp_kernel_free(p->k);
        p->pid = 0;
        p->state = STOPPED;
}

static void
note_add(char *note, size_t size, const char *what)
{
        size_t len = strlen(note);
        snprintf(note + len, size - len, "%s%s", len ? "; " : "", what);
}

/* The cell the client collected, moved out of it (before the client goes). */
static void
take_cell(mcp_kernel_proc *p, mcp_kernel_cell *cell)
{
        if (p->k && p->sent)
                mcp_kernel_take_cell(p->k, cell);
}

/* The pending cell's callback, given cell (cleared after). The last thing a caller does:
 * fn may start the next cell. */
static void
finish(mcp_kernel_proc *p, mcp_kernel_cell *cell, int error, const char *message,
       const char *died)
{
        char note[MCP_KERNEL_NOTE_MAX] = "";
        mcp_kernel_outcome o = {
                .cell = cell, .error = error, .message = message ? message : "",
                .started = p->started, .interrupted = p->interrupted, .killed = p->killed,
                .died = died != NULL, .note = note,
        };
        if (o.started)
                note_add(note, sizeof note, "started");
        if (o.interrupted)
                note_add(note, sizeof note, "interrupted");
        if (o.killed)
                note_add(note, sizeof note, p->state == STOPPED ? "killed; the restart failed"
                                                               : "killed and restarted");
        if (died) {
                char d[96];
                snprintf(d, sizeof d, "died: %s", died);
                note_add(note, sizeof note, d);
        }
        mcp_kernel_done_fn fn = p->fn;
        void *data = p->fn_data;
        free(p->code);
        p->code = NULL;
        p->pending = p->sent = p->started = p->interrupted = p->killed = false;
        p->fn = NULL;
        p->fn_data = NULL;
        fn(p, &o, data);
        mcp_kernel_cell_clear(cell);
}

static int on_cell_timeout(mcp_loop *loop, void *data);

static int
send_cell(mcp_kernel_proc *p, msp_err *err)
{
        int r = mcp_kernel_execute(p->k, p->code, err);
        if (r < 0)
                return r;
        p->sent = true;
        p->state = RUNNING;
        if (p->timeout_usec)
                set_timer(p, p->timeout_usec, on_cell_timeout);
        return 0;
}

static int
on_kernel_event(mcp_kernel *k, mcp_kernel_event ev, void *data)
{
        (void) k;
        mcp_kernel_proc *p = data;
        mcp_kernel_cell cell = { 0 };
        if (ev == MCP_KERNEL_READY && p->state == STARTING) {
                cancel_timer(p);
                p->state = IDLE;
                if (!p->pending)
                        return 0;
                msp_err err = { 0 };
                int r = send_cell(p, &err);
                if (r < 0)
                        finish(p, &cell, r, err.msg, NULL);
        } else if (ev == MCP_KERNEL_CELL_DONE && (p->state == RUNNING || p->state == INTERRUPTING)) {
                cancel_timer(p);
                p->state = IDLE;
                take_cell(p, &cell);
                finish(p, &cell, 0, NULL, NULL);
        }
        return 0;
}

static int on_conn(mcp_loop *loop, int fd, uint32_t events, void *data);
static int on_ready_timeout(mcp_loop *loop, void *data);

static int
start_kernel(mcp_kernel_proc *p, msp_err *err)
{
        p->output_len = 0;
        p->output[0] = '\0';
        int r = mcp_kernel_new(p->loop, p->host_dir, p->sandbox_dir, p->lg, on_kernel_event, p,
                               &p->k, err);
        if (r < 0)
                return r;
        const char *conn_file = mcp_kernel_connection_file_in_kernel(p->k);
        size_t argc = 0;
        while (p->argv[argc])
                argc++;
        _cleanup_(strv_freep) char **argv = calloc(argc + 1, sizeof *argv);
        for (size_t i = 0; argv && i < argc; i++)
                if (!(argv[i] = replace_placeholder(p->argv[i], conn_file)))
                        argv = strv_free(argv);
        int pipefd[2] = { -1, -1 };
        _cleanup_close_ int out_w = -1, null = -1;
        if (!argv) {
                r = msp_err_set(err, ENOMEM, "kernel: out of memory");
                goto fail;
        }
        if (pipe2(pipefd, O_CLOEXEC) < 0) {
                r = msp_err_sys(err, errno, "kernel: pipe");
                goto fail;
        }
        out_w = pipefd[1];
        int fl = fcntl(pipefd[0], F_GETFL);
        if (fl < 0 || fcntl(pipefd[0], F_SETFL, fl | O_NONBLOCK) < 0 ||
            (r = mcp_loop_add_io(p->loop, pipefd[0], EPOLLIN, on_output, p)) < 0) {
                r = msp_err_sys(err, fl < 0 || r == 0 ? errno : -r, "kernel: watch its output");
                close(pipefd[0]);
                goto fail;
        }
        p->out_fd = pipefd[0];
        null = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (null < 0) {
                r = msp_err_sys(err, errno, "kernel: /dev/null");
                goto fail;
        }
        const int fds[3] = { null, out_w, out_w };
        int conn = spawn_client_start(p->spawn_socket, (const char *const *) argv,
                                      (const char *const *) p->envp, p->cwd, fds, err);
        if (conn < 0) {
                r = conn;
                msp_err_prefix(err, "kernel: start %s", argv[0]);
                goto fail;
        }
        if ((r = mcp_loop_add_io(p->loop, conn, EPOLLIN, on_conn, p)) < 0) {
                close(conn);
                msp_err_sys(err, -r, "kernel: watch the spawn connection");
                goto fail;
        }
        p->conn = conn;
        if ((r = mcp_kernel_wait_ready(p->k, err)) < 0)
                goto fail;
        p->state = STARTING;
        set_timer(p, p->ready_usec, on_ready_timeout);
        return 0;
fail:
        stop_kernel(p);
        return r;
}

/* The kernel ended (how: "exit code 3", "killed by signal 9", "lost: ..."), or the wait
 * for it did: what that means in the state it was in. */
static void
kernel_gone(mcp_kernel_proc *p, const char *how, bool timed_out)
{
        drain_output(p);
        mcp_kernel_cell cell = { 0 };
        take_cell(p, &cell);
        enum proc_state was = p->state;
        stop_kernel(p);
        char msg[MCP_KERNEL_OUTPUT_MAX + 256];
        msp_err err = { 0 };
        switch (was) {
        case STOPPED:
                break;
        case STARTING:
                snprintf(msg, sizeof msg, "kernel: not ready (%s); its output: %s", how,
                         output_tail(p));
                if (p->pending) {
                        finish(p, &cell, timed_out ? -ETIMEDOUT : -ECHILD, msg, NULL);
                        return;
                }
                mcp_log(p->lg, MCP_LOG_WARNING, "%s", msg);
                break;
        case IDLE:
                mcp_log(p->lg, MCP_LOG_WARNING, "kernel: it ended while idle (%s): the next cell "
                        "starts another", how);
                break;
        case RUNNING:
        case INTERRUPTING:
                finish(p, &cell, 0, NULL, how);
                return;
        case KILLING:
                if (start_kernel(p, &err) < 0)
                        mcp_log(p->lg, MCP_LOG_WARNING, "kernel: restart: %s", err.msg);
                finish(p, &cell, 0, NULL, NULL);
                return;
        }
        mcp_kernel_cell_clear(&cell);
}

static int
on_conn(mcp_loop *loop, int fd, uint32_t events, void *data)
{
        (void) loop, (void) events;
        mcp_kernel_proc *p = data;
        for (;;) {
                struct spawn_event ev;
                msp_err err = { 0 };
                int r = spawn_client_read(fd, &ev, &err);
                if (r == 0)
                        return 0;
                char how[MSP_ERR_MSG_MAX + 16];
                if (r < 0) {
                        snprintf(how, sizeof how, "lost: %s", err.msg);
                } else if (ev.kind == SPAWN_STARTED) {
                        p->pid = ev.value;
                        continue;
                } else if (ev.kind == SPAWN_EXITED) {
                        snprintf(how, sizeof how, "exit code %d", ev.value);
                } else {
                        snprintf(how, sizeof how, "killed by signal %d", ev.value);
                }
                kernel_gone(p, how, false);
                return 0;
        }
}

static int
on_ready_timeout(mcp_loop *loop, void *data)
{
        (void) loop;
        mcp_kernel_proc *p = data;
        p->timer = NULL;
        char how[64];
        snprintf(how, sizeof how, "no answer within %llu ms: killed",
                 (unsigned long long) (p->ready_usec / 1000));
        kernel_gone(p, how, true);
        return 0;
}

static int
on_kill_timeout(mcp_loop *loop, void *data)
{
        (void) loop;
        mcp_kernel_proc *p = data;
        p->timer = NULL;
        kernel_gone(p, "killed", false);       /* the connection closed kills the group */
        return 0;
}

static int
on_grace_over(mcp_loop *loop, void *data)
{
        (void) loop;
        mcp_kernel_proc *p = data;
        p->timer = NULL;
        p->killed = true;
        p->state = KILLING;
        msp_err err = { 0 };
        /* Its status, awaited (bounded), says the group is dead before another kernel
         * binds the same socket names. */
        if (spawn_client_signal(p->conn, SIGKILL, &err) < 0) {
                kernel_gone(p, "killed", false);
                return 0;
        }
        set_timer(p, p->grace_usec, on_kill_timeout);
        return 0;
}

static int
on_cell_timeout(mcp_loop *loop, void *data)
{
        (void) loop;
        mcp_kernel_proc *p = data;
        p->timer = NULL;
        p->interrupted = true;
        p->state = INTERRUPTING;
        msp_err err = { 0 };
        /* One or the other, never both: ipykernel answers interrupt_request by a SIGINT to
         * its own group, and a second one landing while it sends the first's error (a
         * busy host) breaks its reply, so that the cell would end only by a kill. */
        int r = p->interrupt_by_message ? mcp_kernel_interrupt(p->k, &err)
                                        : spawn_client_signal(p->conn, SIGINT, &err);
        if (r < 0)
                mcp_log(p->lg, MCP_LOG_DEBUG, "kernel: interrupt: %s", err.msg);
        set_timer(p, p->grace_usec, on_grace_over);
        return 0;
}

int
mcp_kernel_proc_new(mcp_loop *loop, const mcp_kernel_proc_spec *spec, mcp_logger *lg,
                    mcp_kernel_proc **ret, msp_err *err)
{
        if (!spec->argv || !spec->argv[0] || !spec->spawn_socket || !spec->host_dir || !spec->cwd)
                return msp_err_set(err, EINVAL, "kernel: no argv, spawn socket, directory or cwd");
        mcp_kernel_proc *p = calloc(1, sizeof *p);
        if (!p)
                return msp_err_set(err, ENOMEM, "kernel: out of memory");
        p->loop = loop;
        p->lg = lg;
        p->conn = p->out_fd = -1;
        p->ready_usec = spec->ready_usec ? spec->ready_usec : MCP_KERNEL_READY_USEC;
        p->grace_usec = spec->grace_usec ? spec->grace_usec : MCP_KERNEL_GRACE_USEC;
        p->interrupt_by_message = spec->interrupt_mode && strcmp(spec->interrupt_mode, "message") == 0;
        p->spawn_socket = strdup(spec->spawn_socket);
        p->host_dir = strdup(spec->host_dir);
        p->sandbox_dir = strdup(spec->sandbox_dir ? spec->sandbox_dir : spec->host_dir);
        p->cwd = strdup(spec->cwd);
        p->argv = strv_copy(spec->argv);
        p->envp = strv_copy(spec->envp);
        if (!p->spawn_socket || !p->host_dir || !p->sandbox_dir || !p->cwd || !p->argv || !p->envp) {
                mcp_kernel_proc_free(p);
                return msp_err_set(err, ENOMEM, "kernel: out of memory");
        }
        *ret = p;
        return 0;
}

mcp_kernel_proc *
mcp_kernel_proc_free(mcp_kernel_proc *p)
{
        if (!p)
                return NULL;
        stop_kernel(p);
        free(p->code);
        free(p->spawn_socket);
        free(p->host_dir);
        free(p->sandbox_dir);
        free(p->cwd);
        strv_free(p->argv);
        strv_free(p->envp);
        free(p);
        return NULL;
}

int
mcp_kernel_proc_start(mcp_kernel_proc *p, msp_err *err)
{
        return p->state == STOPPED ? start_kernel(p, err) : 0;
}

int
mcp_kernel_proc_execute(mcp_kernel_proc *p, const char *code, uint64_t timeout_usec,
                        mcp_kernel_done_fn fn, void *data, msp_err *err)
{
        if (p->pending)
                return msp_err_set(err, EBUSY, "kernel: a cell is running");
        if (strlen(code) > MCP_KERNEL_CODE_MAX)
                return msp_err_set(err, E2BIG, "kernel: code over %u bytes", MCP_KERNEL_CODE_MAX);
        char *copy = strdup(code);
        if (!copy)
                return msp_err_set(err, ENOMEM, "kernel: out of memory");
        p->code = copy;
        p->timeout_usec = timeout_usec;
        p->fn = fn;
        p->fn_data = data;
        p->sent = p->started = p->interrupted = p->killed = false;
        int r = 0;
        if (p->state == STOPPED) {
                p->started = true;
                r = start_kernel(p, err);
        } else if (p->state == IDLE) {
                r = send_cell(p, err);
        }
        /* STARTING: the cell goes once the kernel is ready. */
        if (r < 0) {
                free(p->code);
                p->code = NULL;
                p->fn = NULL;
                return r;
        }
        p->pending = true;
        return 0;
}

bool
mcp_kernel_proc_running(const mcp_kernel_proc *p)
{
        return p->state != STOPPED;
}

bool
mcp_kernel_proc_busy(const mcp_kernel_proc *p)
{
        return p->pending;
}

int
mcp_kernel_proc_pid(const mcp_kernel_proc *p)
{
        return p->pid;
}

const char *
mcp_kernel_proc_output(const mcp_kernel_proc *p)
{
        return p->output;
}
