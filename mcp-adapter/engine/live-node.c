/* A live session's node REPL (live.h): on the session's first node cell, node-repl.js
 * (built in, written into the sandbox's code dir, which the sandbox sees read-only) is
 * started by the sandbox's pid 1 with the language's interpreter and a random marker.
 * Each cell is one JSON line on its stdin (its code, the request's env), evaluated in the REPL's one global context
 * (declarations, functions and required modules stay for the next cell); its outcome comes
 * back as one line on stdout that starts with the marker, and everything before it on
 * stdout (and on stderr until then) is the cell's output. A timeout kills the REPL's group
 * and starts another; a REPL that dies is started again by the next cell. */
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
#include "engine/live.h"
#include "sandbox/sandbox.h"
#include "base/base.h"

#define REPL_SCRIPT "node-repl.js"
/* The longest outcome line: its value and error are cut at 1 Mi characters by the REPL,
 * UTF-8 and JSON escapes make them longer. Beyond it the REPL is not ours: killed. */
#define REPL_LINE_MAX (16u << 20)

/* node-repl.js, NUL-terminated (node-repl.S). */
extern const char mcp_node_repl_js[];

struct mcp_live_repl {
        mcp_live *live;
        int conn, in_fd, out_fd, err_fd;        /* -1: closed */
        char marker[40];                        /* "\036MSP" + 16 hex digits + " " */
        size_t marker_len;
        bool started;                           /* since the last outcome: the next says so */
        uint64_t last_id;
        mcp_run *cell;                          /* the pending cell, NULL: none */
        mcp_timer *timer;                       /* its timeout */
        char *req;                              /* its request line, being written */
        size_t req_len, req_off;
        char *pend;                             /* stdout not yet the cell's: a marker may
                                                 * begin in it */
        size_t pend_len;
};

typedef struct repl_outcome {
        bool ok, timed_out, died;
        const char *value, *error;              /* NULL: none */
        const char *failure;                    /* the REPL failed the cell: why */
        const char *note;                       /* "killed and restarted", "died: ..." */
} repl_outcome;

bool
mcp_live_repl_language(const char *language)
{
        return strcmp(language, "node") == 0;
}


/* Ends the REPL (closing its connection kills its group); a pending cell hears nothing. */
static mcp_live_repl *
repl_free(mcp_live_repl *r)
{
        if (!r)
                return NULL;
        mcp_loop *loop = r->live->engine->loop;
        if (r->timer)
                mcp_timer_cancel(loop, r->timer);
        mcp_loop_close_io(loop, &r->in_fd);
        mcp_loop_close_io(loop, &r->out_fd);
        mcp_loop_close_io(loop, &r->err_fd);
        mcp_loop_close_io(loop, &r->conn);
        if (r->cell)
                r->cell->call.repl = false;
        free(r->req);
        free(r->pend);
        free(r);
        return NULL;
}

void
mcp_live_repl_stop(mcp_live *l)
{
        l->repl = repl_free(l->repl);
}

bool
mcp_live_repl_running(const mcp_live *l)
{
        return l->repl && l->repl->conn >= 0;
}

/* The cell's result delivered, the REPL's pending cell cleared. The last thing a caller
 * does: the result's delivery may start the next cell. */
static void
cell_finish(mcp_live *l, mcp_run *run, const repl_outcome *o)
{
        mcp_engine *e = run->engine;
        mcp_live_repl *r = l->repl;
        char note[160] = "";
        if (r && r->cell == run) {
                if (r->timer)
                        mcp_timer_cancel(e->loop, r->timer);
                r->timer = NULL;
                r->cell = NULL;
        }
        if (run->call.repl_started)
                snprintf(note, sizeof note, "started");
        if (o->note)
                snprintf(note + strlen(note), sizeof note - strlen(note), "%s%s", note[0] ? "; " : "",
                         o->note);
        run->call.repl = false;
        if (l->call == run)
                l->call = NULL;
        run->state = RUN_EXITED;
        e->n_running--;

        if (o->error) {
                mcp_capture_add(&run->runner.err, o->error, strlen(o->error));
                mcp_capture_add(&run->runner.err, "\n", 1);
        }
        mcp_run_result res = { .run_id = run->id };
        if (o->failure) {
                res.sandbox_failed = true;
                snprintf(res.error, sizeof res.error, "the session's node REPL: %s", o->failure);
        }
        uint64_t oom = 0;
        mcp_live_usage(l, NULL, NULL, &oom);
        res.oom_killed = oom > run->call.oom_before;
        res.kernel_error = o->error != NULL;
        res.exit_code = !o->ok || o->timed_out || o->died ? 1 : 0;
        res.timed_out = o->timed_out;
        res.value_text = o->value;
        res.value_len = o->value ? strlen(o->value) : 0;
        res.kernel_note = note[0] ? note : NULL;
        res.stdout_truncated = run->runner.out.truncated;
        res.stderr_truncated = run->runner.err.truncated;
        res.stdout_buf = run->runner.out.buf ? run->runner.out.buf : "";
        res.stdout_len = run->runner.out.len;
        res.stderr_buf = run->runner.err.buf ? run->runner.err.buf : "";
        res.stderr_len = run->runner.err.len;
        res.duration_ms = (mcp_now_usec() - run->call.start_usec) / 1000;
        mcp_run_finish(run, &res);
        mcp_live_call_free(run);
}

/* Output of the pending cell (dropped without one: a timer's of an earlier cell). */
static void
cell_output(mcp_live_repl *r, mcp_stream stream, const char *buf, size_t n)
{
        mcp_run *run = r->cell;
        if (!run || !n)
                return;
        mcp_capture_add(stream == MCP_STDOUT ? &run->runner.out : &run->runner.err, buf, n);
        if (run->on_output && !run->cancelled)
                run->on_output(run, stream, buf, n, run->data);
}

/* Up to max_chunks reads of stderr; 1 at EOF or error. */
static int
read_err(mcp_live_repl *r, int max_chunks)
{
        char buf[65536];
        for (int i = 0; i < max_chunks; i++) {
                ssize_t n = read(r->err_fd, buf, sizeof buf);
                if (n == 0)
                        return 1;
                if (n < 0)
                        return errno == EAGAIN || errno == EINTR ? 0 : 1;
                cell_output(r, MCP_STDERR, buf, (size_t) n);
        }
        return 0;
}

static int
err_ready(mcp_loop *loop, int fd, uint32_t events, void *data)
{
        mcp_live_repl *r = data;
        (void) fd;
        (void) events;
        if (read_err(r, 4) > 0)
                mcp_loop_close_io(loop, &r->err_fd);
        return 0;
}

/* The REPL is gone (it died, or it broke the protocol): the pending cell is told, and
 * the next cell starts another. */
static void
repl_died(mcp_live_repl *r, const char *why)
{
        mcp_live *l = r->live;
        mcp_run *run = r->cell;
        if (r->err_fd >= 0)
                (void) read_err(r, 16);
        if (run && r->pend_len)
                cell_output(r, MCP_STDOUT, r->pend, r->pend_len);
        r->cell = NULL;
        l->repl = repl_free(r);
        if (!run)
                return;
        char note[160];
        snprintf(note, sizeof note, "died: %s", why);
        repl_outcome o = { .died = true, .note = note };
        cell_finish(l, run, &o);
}

/* A member's string, NULL: none (the accessors take no NULL). */
static const char *
member_string(const oci_json *obj, const char *key)
{
        const oci_json *v = oci_json_get(obj, key);
        return v ? oci_json_string(v) : NULL;
}

/* The outcome line (JSON, without the marker and newline) of the pending cell. */
static void
outcome_line(mcp_live_repl *r, const char *line, size_t len)
{
        mcp_live *l = r->live;
        mcp_run *run = r->cell;
        _cleanup_json_doc_ oci_json_doc *doc = NULL;
        if (oci_json_parse_limits("node REPL", line, len, REPL_LINE_MAX, REPL_LINE_MAX, &doc, NULL) < 0) {
                repl_died(r, "its answer was not JSON");
                return;
        }
        const oci_json *root = oci_json_doc_root(doc);
        const oci_json *id_v = oci_json_get(root, "id"), *ok_v = oci_json_get(root, "ok");
        const char *id = id_v ? oci_json_number_text(id_v) : NULL;
        if (!id || strtoull(id, NULL, 10) != r->last_id) {
                repl_died(r, "it answered another cell");
                return;
        }
        /* The cell's stderr written before its outcome is in the pipe (node writes pipes
         * synchronously). */
        if (r->err_fd >= 0 && read_err(r, 16) > 0)
                mcp_loop_close_io(l->engine->loop, &r->err_fd);
        repl_outcome o = {
                .ok = ok_v && oci_json_bool(ok_v),
                .value = member_string(root, "value"),
                .error = member_string(root, "error"),
        };
        if (!o.ok && !o.error)
                o.error = "the cell failed";
        cell_finish(l, run, &o);
}

/* What pend holds: the cell's output up to the marker, the outcome line after it. 1: a
 * cell finished or the REPL went (r may be gone: the caller returns). */
static int
scan_pending(mcp_live_repl *r)
{
        if (!r->cell) {
                r->pend_len = 0;
                return 0;
        }
        const char *m = memmem(r->pend, r->pend_len, r->marker, r->marker_len);
        if (!m) {
                /* All but a tail that may be the marker's beginning. */
                size_t keep = 0;
                for (size_t i = 1; i < r->marker_len && i <= r->pend_len; i++)
                        if (memcmp(r->pend + r->pend_len - i, r->marker, i) == 0)
                                keep = i;
                cell_output(r, MCP_STDOUT, r->pend, r->pend_len - keep);
                memmove(r->pend, r->pend + r->pend_len - keep, keep);
                r->pend_len = keep;
                return 0;
        }
        size_t at = (size_t) (m - r->pend);
        cell_output(r, MCP_STDOUT, r->pend, at);
        memmove(r->pend, m, r->pend_len - at);
        r->pend_len -= at;
        const char *nl = memchr(r->pend, '\n', r->pend_len);
        if (!nl) {
                if (r->pend_len > REPL_LINE_MAX) {
                        repl_died(r, "its answer was too long");
                        return 1;
                }
                return 0;
        }
        size_t line_len = (size_t) (nl - r->pend) + 1;
        _cleanup_free_ char *line = malloc(line_len);
        if (!line) {
                repl_died(r, "out of memory");
                return 1;
        }
        memcpy(line, r->pend + r->marker_len, line_len - r->marker_len - 1);
        /* What follows the line stays for the next cell's scan. */
        memmove(r->pend, r->pend + line_len, r->pend_len - line_len);
        r->pend_len -= line_len;
        outcome_line(r, line, line_len - r->marker_len - 1);
        return 1;
}

static int
out_ready(mcp_loop *loop, int fd, uint32_t events, void *data)
{
        mcp_live_repl *r = data;
        (void) events;
        for (int i = 0; i < 4; i++) {
                char *nb = realloc(r->pend, r->pend_len + 65536);
                if (!nb)
                        return 0;
                r->pend = nb;
                ssize_t n = read(fd, r->pend + r->pend_len, 65536);
                if (n < 0 && (errno == EAGAIN || errno == EINTR))
                        return 0;
                if (n <= 0) {
                        mcp_loop_close_io(loop, &r->out_fd);
                        return 0;
                }
                r->pend_len += (size_t) n;
                if (scan_pending(r))
                        return 0;
        }
        return 0;
}

static int
in_ready(mcp_loop *loop, int fd, uint32_t events, void *data)
{
        mcp_live_repl *r = data;
        if (!(events & EPOLLERR) && r->req) {
                ssize_t n = write(fd, r->req + r->req_off, r->req_len - r->req_off);
                if (n > 0)
                        r->req_off += (size_t) n;
                else if (n < 0 && (errno == EAGAIN || errno == EINTR))
                        return 0;
                else
                        events |= EPOLLERR;
        }
        if ((events & (EPOLLERR | EPOLLHUP)) || !r->req || r->req_off >= r->req_len) {
                free(r->req);
                r->req = NULL;
                if (events & (EPOLLERR | EPOLLHUP))
                        mcp_loop_close_io(loop, &r->in_fd);  /* its death follows on conn */
                else
                        mcp_loop_del_io(loop, fd);
        }
        return 0;
}

static int
conn_ready(mcp_loop *loop, int fd, uint32_t events, void *data)
{
        mcp_live_repl *r = data;
        (void) loop;
        (void) fd;
        (void) events;
        for (;;) {
                struct spawn_event ev;
                int n = spawn_client_read(r->conn, &ev, NULL);
                if (n == 0)
                        return 0;
                char why[96];
                if (n < 0)
                        snprintf(why, sizeof why, "its sandbox ended it");
                else if (ev.kind == SPAWN_STARTED)
                        continue;
                else if (ev.kind == SPAWN_EXITED)
                        snprintf(why, sizeof why, "it exited with code %d", ev.value);
                else
                        snprintf(why, sizeof why, "it was killed by signal %d", ev.value);
                /* What it wrote before it went (a broken answer ends r there). */
                mcp_live *l = r->live;
                if (r->out_fd >= 0) {
                        (void) out_ready(loop, r->out_fd, EPOLLIN, r);
                        if (l->repl != r)
                                return 0;
                }
                repl_died(r, why);
                return 0;
        }
}


/* node-repl.js in the code dir, root's and the sandbox group's, 0640 (read-only to it). */
static int
place_script(mcp_live *l, msp_err *err)
{
        _cleanup_close_ int cfd = open(l->code_dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (cfd < 0)
                return msp_err_sys(err, errno, "session %s: its code dir", l->session_id);
        (void) unlinkat(cfd, REPL_SCRIPT, 0);
        int r = mcp_write_new_at(cfd, REPL_SCRIPT, mcp_node_repl_js, strlen(mcp_node_repl_js), 0640, err);
        if (r < 0)
                return r;
        if (fchownat(cfd, REPL_SCRIPT, 0, l->host_gid, AT_SYMLINK_NOFOLLOW) < 0)
                return msp_err_sys(err, errno, "chown '%s'", REPL_SCRIPT);
        return 0;
}

static int
repl_start(mcp_live *l, const char *interp, msp_err *err)
{
        mcp_loop *loop = l->engine->loop;
        unsigned char rnd[8];
        if (getrandom(rnd, sizeof rnd, 0) != (ssize_t) sizeof rnd)
                return msp_err_set(err, EIO, "getrandom failed");
        int r = place_script(l, err);
        if (r < 0)
                return r;
        mcp_live_repl *p = calloc(1, sizeof *p);
        if (!p)
                return msp_err_set(err, ENOMEM, "out of memory");
        *p = (mcp_live_repl){ .live = l, .conn = -1, .in_fd = -1, .out_fd = -1, .err_fd = -1,
                              .started = true };
        char hex[17];
        for (size_t i = 0; i < sizeof rnd; i++)
                snprintf(hex + 2 * i, 3, "%02x", rnd[i]);
        p->marker_len = (size_t) snprintf(p->marker, sizeof p->marker, "\036MSP%s ", hex);

        const char *argv[] = { interp, MCP_CODE_DIR "/" REPL_SCRIPT, hex, NULL };
        struct spawn_pipes pipes;
        p->conn = spawn_client_start_piped(l->sock_path, argv, (const char *const *) l->env,
                                           l->cwd, true, &pipes, err);
        if (p->conn < 0) {
                r = p->conn;
                p->conn = -1;
                goto out;
        }
        p->out_fd = pipes.out;
        p->err_fd = pipes.err;
        p->in_fd = pipes.in;
        if (mcp_loop_add_io(loop, p->conn, EPOLLIN, conn_ready, p) < 0 ||
            mcp_loop_add_io(loop, p->out_fd, EPOLLIN, out_ready, p) < 0 ||
            mcp_loop_add_io(loop, p->err_fd, EPOLLIN, err_ready, p) < 0) {
                r = msp_err_set(err, ENOMEM, "cannot watch the node REPL (out of memory?)");
                goto out;
        }
        l->repl = p;
        p = NULL;
        r = 0;
out:
        repl_free(p);
        return r;
}

static int
cell_timeout(mcp_loop *loop, void *data)
{
        mcp_live_repl *r = data;
        mcp_live *l = r->live;
        mcp_run *run = r->cell;
        r->timer = NULL;
        /* Its output so far is the cell's; then its group goes, and another REPL comes
         * for the next cell. */
        if (r->out_fd >= 0)
                (void) out_ready(loop, r->out_fd, EPOLLIN, r);
        if (l->repl != r || r->cell != run)
                return 0;                       /* it finished or died meanwhile */
        if (r->err_fd >= 0)
                (void) read_err(r, 16);
        if (r->pend_len)
                cell_output(r, MCP_STDOUT, r->pend, r->pend_len);
        r->cell = NULL;
        l->repl = repl_free(r);
        const char *interp = run->plan.interp;
        bool restarted = repl_start(l, interp, NULL) == 0;
        if (restarted)
                l->repl->started = false;       /* this note says so */
        repl_outcome o = { .timed_out = true,
                           .note = restarted ? "killed and restarted" : "killed; the restart failed" };
        cell_finish(l, run, &o);
        return 0;
}

int
mcp_live_repl_call_start(mcp_run *run, msp_err *err)
{
        mcp_engine *e = run->engine;
        mcp_live *l = run->live;
        mcp_run_plan *p = &run->plan;
        mcp_call *c = &run->call;
        int r;
        if (run->stdin_copy || p->n_args)
                return msp_err_set(err, EINVAL, "%s: a node run in a session is evaluated in the "
                                   "session's REPL, which takes no %s; pass \"fresh\": true to run it "
                                   "as a process of its own", run->stdin_copy ? "stdin" : "args",
                                   run->stdin_copy ? "stdin" : "arguments");
        if (l->repl && l->repl->in_fd < 0)
                mcp_live_repl_stop(l);          /* its stdin broke: it is going */
        if (!l->repl && (r = repl_start(l, p->interp, err)) < 0)
                return msp_err_prefix(err, "the session's node REPL");
        mcp_live_repl *rp = l->repl;

        _cleanup_jw_ oci_jw *w = oci_jw_new(false);
        if (!w)
                return msp_err_set(err, ENOMEM, "out of memory");
        oci_jw_begin_object(w);
        oci_jw_kv_uint64(w, "id", rp->last_id + 1);
        oci_jw_key(w, "code");
        mcp_jw_bytes(w, p->code ? p->code : "", p->code_len);
        mcp_jw_obj(w, "env");
        for (size_t i = 0; i < p->n_env; i++) {
                const char *eq = strchr(p->env[i], '=');
                if (!eq)
                        continue;
                _cleanup_free_ char *name = strndup(p->env[i], (size_t) (eq - p->env[i]));
                if (!name)
                        return msp_err_set(err, ENOMEM, "out of memory");
                oci_jw_key(w, name);
                mcp_jw_text(w, eq + 1);
        }
        oci_jw_end_object(w);
        oci_jw_end_object(w);
        char *json = NULL;
        size_t len = 0;
        if ((r = oci_jw_finish(w, &json, &len, err)) < 0)
                return r;
        char *line = realloc(json, len + 1);
        if (!line) {
                free(json);
                return msp_err_set(err, ENOMEM, "out of memory");
        }
        line[len++] = '\n';
        if (mcp_loop_add_io(e->loop, rp->in_fd, EPOLLOUT, in_ready, rp) < 0 ||
            mcp_loop_add_timer(e->loop, p->lim.timeout_ms * 1000, cell_timeout, rp, &rp->timer) < 0) {
                mcp_loop_del_io(e->loop, rp->in_fd);
                free(line);
                return msp_err_set(err, ENOMEM, "cannot watch the node REPL (out of memory?)");
        }
        rp->req = line;
        rp->req_len = len;
        rp->req_off = 0;
        rp->last_id++;
        rp->cell = run;
        rp->pend_len = 0;               /* what came between cells is nobody's */
        c->repl = true;
        c->repl_started = rp->started;
        rp->started = false;
        run->runner.out = (mcp_capture){ .limit = p->lim.output_bytes, .log_fd = -1 };
        run->runner.err = (mcp_capture){ .limit = p->lim.output_bytes, .log_fd = -1 };
        mcp_runlogs_open(&e->logs, run->id, &run->runner.out, &run->runner.err, &run->log_reserve);
        mcp_live_usage(l, NULL, NULL, &c->oom_before);
        c->start_usec = mcp_now_usec();
        l->call = run;
        return 0;
}

void
mcp_live_repl_call_lost(mcp_run *run)
{
        mcp_live *l = run->live;
        if (l->repl && l->repl->cell == run)
                l->repl->cell = NULL;
        l->repl = repl_free(l->repl);
        repl_outcome o = { .died = true, .failure = "the session's sandbox stopped while the cell ran",
                           .note = "died: its sandbox stopped" };
        cell_finish(l, run, &o);
}
