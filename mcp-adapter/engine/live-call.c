/* One call in a live session's sandbox (live.h): its files and program written, the
 * program started by the sandbox's pid 1 with our pipes as its stdio, its output captured
 * as a fresh run's is, its timeout a SIGKILL to its process group, and its result
 * delivered as soon as its own status comes: what it left running in the background keeps
 * running, and keeps whatever it inherited of the pipes (drained, live-procs.c). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "engine/engine-int.h"
#include "engine/live.h"
#include "engine/run-setup.h"
#include "session/session.h"
#include "sandbox/sandbox.h"

/* How long a killed program's status may take before the call gives up on it. */
#define CALL_KILL_GRACE_MS 2000

static void call_complete(mcp_run *run);
static void call_lost(mcp_run *run);

/* A chunk of the call's output as it comes (progress notifications). */
static void
call_output(void *data, mcp_stream stream, const char *buf, size_t n)
{
        mcp_run *run = data;
        if (run->on_output && !run->cancelled)
                run->on_output(run, stream, buf, n, run->data);
}

/* Up to max_chunks reads; 1 at EOF or error. */
static int
read_output(mcp_run *run, int fd, mcp_stream stream, int max_chunks)
{
        mcp_capture *cap = stream == MCP_STDOUT ? &run->runner.out : &run->runner.err;
        return mcp_capture_read(fd, cap, max_chunks, stream, call_output, run);
}

static int
output_ready(mcp_loop *loop, int fd, uint32_t events, void *data)
{
        mcp_run *run = data;
        mcp_call *c = &run->call;
        (void) loop;
        (void) events;
        bool out = fd == c->out_fd;
        if (read_output(run, fd, out ? MCP_STDOUT : MCP_STDERR, 4) > 0)
                mcp_loop_close_io(run->engine->loop, out ? &c->out_fd : &c->err_fd);
        return 0;
}

static int
stdin_ready(mcp_loop *loop, int fd, uint32_t events, void *data)
{
        mcp_run *run = data;
        mcp_call *c = &run->call;
        (void) loop;
        size_t len = run->plan.stdin_len;
        if (!(events & EPOLLERR)) {
                ssize_t n = write(fd, run->stdin_copy + c->stdin_off, len - c->stdin_off);
                if (n > 0)
                        c->stdin_off += (size_t) n;
                else if (n < 0 && (errno == EAGAIN || errno == EINTR))
                        return 0;
        }
        if ((events & (EPOLLERR | EPOLLHUP)) || c->stdin_off >= len)
                mcp_loop_close_io(run->engine->loop, &c->in_fd);
        return 0;
}

static int
conn_ready(mcp_loop *loop, int fd, uint32_t events, void *data)
{
        mcp_run *run = data;
        mcp_call *c = &run->call;
        (void) loop;
        (void) fd;
        (void) events;
        for (;;) {
                struct spawn_event ev;
                msp_err err = { 0 };
                int r = spawn_client_read(c->conn, &ev, &err);
                if (r == 0)
                        return 0;
                if (r < 0) {
                        call_lost(run);
                        return 0;
                }
                if (ev.kind == SPAWN_STARTED) {
                        c->pid = ev.value;
                        if (run->background) {
                                call_complete(run);
                                return 0;
                        }
                        continue;
                }
                c->exited = true;
                if (ev.kind == SPAWN_EXITED)
                        c->exit_code = ev.value;
                else
                        c->term_signal = ev.value;
                call_complete(run);
                return 0;
        }
}

static int
grace_over(mcp_loop *loop, void *data)
{
        mcp_run *run = data;
        (void) loop;
        run->call.timer = NULL;
        run->call.lost = true;          /* no status (after SIGKILL, or from the sandbox) */
        call_complete(run);
        return 0;
}

/* pid 1 closed the connection without a status: the sandbox is going (or never came up).
 * Its runtime's exit tells why, soon: the call waits for it, within the grace. */
static void
call_lost(mcp_run *run)
{
        mcp_engine *e = run->engine;
        mcp_call *c = &run->call;
        mcp_live *l = run->live;
        c->lost = true;
        mcp_loop_close_io(e->loop, &c->conn);
        if (!l->serving || !l->sandbox) {
                call_complete(run);
                return;
        }
        c->awaiting_stop = true;
        if (c->timer)
                mcp_timer_cancel(e->loop, c->timer);
        c->timer = NULL;
        if (mcp_loop_add_timer(e->loop, CALL_KILL_GRACE_MS * 1000, grace_over, run, &c->timer) < 0)
                call_complete(run);
}

void
mcp_live_call_sandbox_stopped(mcp_run *run)
{
        if (run->call.kernel || run->call.repl)
                mcp_live_kernel_call_lost(run);
        else if (run->call.awaiting_stop)
                call_complete(run);
}

static int
timeout_fired(mcp_loop *loop, void *data)
{
        mcp_run *run = data;
        mcp_call *c = &run->call;
        c->timer = NULL;
        c->timed_out = true;
        /* Its process group (what it forked without a setsid of its own); the status
         * follows, or the grace ends the wait. */
        if (spawn_client_signal(c->conn, SIGKILL, NULL) < 0 ||
            mcp_loop_add_timer(loop, CALL_KILL_GRACE_MS * 1000, grace_over, run, &c->timer) < 0) {
                c->lost = true;
                call_complete(run);
        }
        return 0;
}

/* The request's env over the sandbox's (same name: the request's). */
static const char **
call_env(const mcp_live *l, const mcp_run_plan *p)
{
        size_t n = 0;
        while (l->env && l->env[n])
                n++;
        const char **v = calloc(n + p->n_env + 1, sizeof *v);
        if (!v)
                return NULL;
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
                size_t klen = strcspn(l->env[i], "=") + 1;
                bool over = false;
                for (size_t j = 0; j < p->n_env && !over; j++)
                        over = strncmp(p->env[j], l->env[i], klen) == 0;
                if (!over)
                        v[k++] = l->env[i];
        }
        for (size_t j = 0; j < p->n_env; j++)
                v[k++] = p->env[j];
        return v;
}

/* The request's files in the workspace. */
static int
place_files(mcp_run *run, msp_err *err)
{
        mcp_run_plan *p = &run->plan;
        mcp_run_ids ids = mcp_rootfs_ids(p->rootfs, run->id_base, run->id_count);
        int r = mcp_workspace_make_out(run->ws_fd, ids, err);
        if (r < 0)
                return r;
        for (size_t i = 0; i < p->n_files; i++) {
                const mcp_plan_file *f = &p->files[i];
                r = mcp_workspace_write_file(run->ws_fd, f->path, f->data, f->len, f->executable,
                                             ids, err);
                if (r < 0)
                        return msp_err_prefix(err, "files[%zu]", i);
        }
        return 0;
}

/* A shell's state between a session's calls: what it exports, its functions (bash; dash
 * cannot list its functions) and its cwd, saved on exit to the kernel dir and restored
 * first by the next call's wrapper, which then sources the call's own program (so its
 * line numbers and `exit` stay its own). A program that sets its own EXIT trap or execs
 * keeps nothing. The save writes <shell>.state.<run id> (the call's own name: a
 * cancelled call's shell that dies while saving leaves nothing a later call adopts); the
 * call's end renames it over
 * <shell>.state (adopt_shell_state): an mv in the trap was a process of its own on every
 * call, about half of a live `echo hi`'s CPU in the sandbox. */
static const char shell_prologue_fmt[] =
        "__msp_state=" MCP_KERNEL_DIR "/%s.state\n"
        "if [ -r \"$__msp_state\" ]; then . \"$__msp_state\" 2>/dev/null; cd -- \"$PWD\" 2>/dev/null; fi\n"
        "__msp_save() { export PWD; { %s; } > \"$__msp_state.%s\" 2>/dev/null; }\n"
        "trap __msp_save EXIT\n"
        ". " MCP_CODE_DIR "/%s\n";

static bool
keeps_shell_state(const mcp_run *run)
{
        const char *name = run->plan.lang->name;
        return !run->background && !run->fresh &&
               (strcmp(name, "sh") == 0 || strcmp(name, "bash") == 0);
}

static int
place_shell_wrapper(mcp_run *run, int cfd, msp_err *err)
{
        mcp_call *c = &run->call;
        bool bash = strcmp(run->plan.lang->name, "bash") == 0;
        char text[1024];
        int n = snprintf(text, sizeof text, shell_prologue_fmt, bash ? "bash" : "sh",
                         bash ? "declare -px | grep -v -E '^declare -[a-zA-Z]*r'; declare -f"
                              : "export -p",
                         run->id, c->code_name);
        snprintf(c->wrapper_name, sizeof c->wrapper_name, "run-%s.sh", run->id);
        int r = mcp_write_new_at(cfd, c->wrapper_name, text, (size_t) n, 0640, err);
        if (r < 0) {
                c->wrapper_name[0] = '\0';
                return r;
        }
        if (fchownat(cfd, c->wrapper_name, 0, run->live->host_gid, AT_SYMLINK_NOFOLLOW) < 0)
                return msp_err_sys(err, errno, "chown '%s'", c->wrapper_name);
        return 0;
}

/* Its program in the code dir. */
static int
place_program(mcp_run *run, msp_err *err)
{
        mcp_live *l = run->live;
        mcp_run_plan *p = &run->plan;
        mcp_call *c = &run->call;
        int r;
        _cleanup_close_ int cfd = open(l->code_dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (cfd < 0)
                return msp_err_sys(err, errno, "session %s: its code dir", l->session_id);
        snprintf(c->code_name, sizeof c->code_name, "main-%s.%s", run->id, p->lang->ext);
        if ((r = mcp_write_new_at(cfd, c->code_name, p->code, p->code_len, 0640, err)) < 0) {
                c->code_name[0] = '\0';
                return r;
        }
        if (fchownat(cfd, c->code_name, 0, l->host_gid, AT_SYMLINK_NOFOLLOW) < 0)
                return msp_err_sys(err, errno, "chown '%s'", c->code_name);
        return keeps_shell_state(run) ? place_shell_wrapper(run, cfd, err) : 0;
}


/* Pipes for its stdio, the request to pid 1, the loop's watches. */
static int
spawn_program(mcp_run *run, const char *const *argv, const char *const *envp, msp_err *err)
{
        mcp_engine *e = run->engine;
        mcp_live *l = run->live;
        mcp_call *c = &run->call;
        struct spawn_pipes pipes;
        c->conn = spawn_client_start_piped(l->sock_path, argv, envp, l->cwd,
                                           run->stdin_copy != NULL, &pipes, err);
        if (c->conn < 0) {
                int r = c->conn;
                c->conn = -1;
                return r;
        }
        c->out_fd = pipes.out;
        c->err_fd = pipes.err;
        c->in_fd = pipes.in;
        uint64_t timeout_ms = run->plan.lim.timeout_ms;
        if (mcp_loop_add_io(e->loop, c->conn, EPOLLIN, conn_ready, run) < 0 ||
            mcp_loop_add_io(e->loop, c->out_fd, EPOLLIN, output_ready, run) < 0 ||
            mcp_loop_add_io(e->loop, c->err_fd, EPOLLIN, output_ready, run) < 0 ||
            (c->in_fd >= 0 && mcp_loop_add_io(e->loop, c->in_fd, EPOLLOUT, stdin_ready, run) < 0) ||
            (!run->background &&
             mcp_loop_add_timer(e->loop, timeout_ms * 1000, timeout_fired, run, &c->timer) < 0))
                return msp_err_set(err, ENOMEM, "cannot watch the call (out of memory?)");
        return 0;
}

int
mcp_live_call_start(mcp_run *run, msp_err *err)
{
        mcp_engine *e = run->engine;
        mcp_live *l = run->live;
        mcp_run_plan *p = &run->plan;
        mcp_call *c = &run->call;
        int r = mcp_live_ensure(l, err);
        if (r < 0)
                return r;
        if ((r = place_files(run, err)) < 0)
                return r;
        if (run->kernel_cell)
                return mcp_live_kernel_call_start(run, err);
        if ((r = place_program(run, err)) < 0)
                return r;
        char prog_path[128];
        snprintf(prog_path, sizeof prog_path, MCP_CODE_DIR "/%s",
                 c->wrapper_name[0] ? c->wrapper_name : c->code_name);
        _cleanup_free_ const char **argv = NULL;
        if ((r = mcp_language_argv(p->lang, p->interp, prog_path, (const char *const *) p->args,
                                   p->n_args, &argv, err)) < 0)
                return r;
        _cleanup_free_ const char **envp = call_env(l, p);
        if (!envp)
                return msp_err_set(err, ENOMEM, "out of memory");
        run->runner.out = (mcp_capture){ .limit = p->lim.output_bytes, .log_fd = -1 };
        run->runner.err = (mcp_capture){ .limit = p->lim.output_bytes, .log_fd = -1 };
        mcp_runlogs_open(&e->logs, run->id, &run->runner.out, &run->runner.err, &run->log_reserve);
        mcp_live_usage(l, NULL, NULL, &c->oom_before);
        if (l->sandbox && l->sandbox->proxy) {
                const char *const *v;
                c->denied_before = mcp_proxy_denied(l->sandbox->proxy, &v);
                c->failed_before = mcp_proxy_failed(l->sandbox->proxy, &v);
                c->net_bytes_before = mcp_proxy_bytes(l->sandbox->proxy);
        }
        c->start_usec = mcp_now_usec();
        if ((r = spawn_program(run, argv, envp, err)) < 0) {
                mcp_live_call_cancel_io(run);
                return r;
        }
        l->call = run;
        return 0;
}

/* Everything the call watches closed; its connection last (before its status, that
 * kills its process group). */
void
mcp_live_call_cancel_io(mcp_run *run)
{
        mcp_engine *e = run->engine;
        mcp_call *c = &run->call;
        if (c->timer)
                mcp_timer_cancel(e->loop, c->timer);
        c->timer = NULL;
        mcp_loop_close_io(e->loop, &c->out_fd);
        mcp_loop_close_io(e->loop, &c->err_fd);
        mcp_loop_close_io(e->loop, &c->in_fd);
        mcp_loop_close_io(e->loop, &c->conn);
}

/* Its program file goes with it (the code dir is the sandbox's for its life). */
void
mcp_live_call_free(mcp_run *run)
{
        mcp_call *c = &run->call;
        mcp_live *l = run->live;
        if (c->code_name[0] && l) {
                int cfd = open(l->code_dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (cfd >= 0) {
                        (void) unlinkat(cfd, c->code_name, 0);
                        if (c->wrapper_name[0])
                                (void) unlinkat(cfd, c->wrapper_name, 0);
                        close(cfd);
                }
        }
        if (l && l->call == run)
                l->call = NULL;
        mcp_run_free(run);
}

/* The state its wrapper saved becomes the session's: only from a shell that exited by
 * itself, which ran its EXIT trap to the end (one killed, even inside the trap, leaves
 * nothing: a part of a state file would be sourced by the next call). Every call's end
 * renames or removes the new file, so a later call never adopts an older call's. */
static void
adopt_shell_state(mcp_run *run)
{
        mcp_call *c = &run->call;
        char cur[48], next[128];
        snprintf(cur, sizeof cur, "%s.state", run->plan.lang->name);
        snprintf(next, sizeof next, "%s.%s", cur, run->id);
        _cleanup_close_ int kfd = open(run->live->kernel_dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (kfd < 0)
                return;
        bool whole = c->exited && !c->timed_out && c->term_signal == 0;
        if (!whole || renameat(kfd, next, kfd, cur) < 0)
                (void) unlinkat(kfd, next, 0);
}

static void
call_complete(mcp_run *run)
{
        mcp_engine *e = run->engine;
        mcp_live *l = run->live;
        mcp_call *c = &run->call;
        if (c->timer)
                mcp_timer_cancel(e->loop, c->timer);
        c->timer = NULL;
        run->state = RUN_EXITED;
        e->n_running--;
        if (l->call == run)
                l->call = NULL;

        mcp_run_result res = { .run_id = run->id };
        if (run->background && !c->lost) {
                int r = mcp_live_proc_adopt(l, run, NULL);
                if (r < 0) {
                        res.sandbox_failed = true;
                        snprintf(res.error, sizeof res.error, "background: out of memory");
                } else {
                        res.process_id = c->process_id;
                }
        } else if (c->lost) {
                const mcp_capture *why = l->sandbox ? &l->sandbox->runner.err : NULL;
                if (!c->pid && why && why->len)
                        mcp_capture_add(&run->runner.err, why->buf, why->len);
                res.sandbox_failed = true;
                snprintf(res.error, sizeof res.error,
                         c->pid ? "the session's sandbox stopped while the program ran%s%s"
                                : "the session's sandbox could not start the program%s%s",
                         l->stop_reason[0] ? ": " : "", l->stop_reason);
        }
        /* The program's status came: what is in the pipes now is what it wrote; a process
         * it left running keeps the pipes and gets a reader that drops what it writes. */
        if (!run->background) {
                if (c->out_fd >= 0 && read_output(run, c->out_fd, MCP_STDOUT, 16) > 0)
                        mcp_loop_close_io(e->loop, &c->out_fd);
                if (c->err_fd >= 0 && read_output(run, c->err_fd, MCP_STDERR, 16) > 0)
                        mcp_loop_close_io(e->loop, &c->err_fd);
                if (c->out_fd >= 0) {
                        mcp_loop_del_io(e->loop, c->out_fd);
                        mcp_live_drain_adopt(l, &c->out_fd);
                }
                if (c->err_fd >= 0) {
                        mcp_loop_del_io(e->loop, c->err_fd);
                        mcp_live_drain_adopt(l, &c->err_fd);
                }
        }
        mcp_live_call_cancel_io(run);
        if (c->wrapper_name[0] && !c->lost)
                adopt_shell_state(run);
        uint64_t oom = 0;
        mcp_live_usage(l, NULL, NULL, &oom);
        res.exit_code = c->exit_code;
        res.term_signal = c->term_signal;
        res.timed_out = c->timed_out;
        res.oom_killed = oom > c->oom_before;
        res.stdout_truncated = run->runner.out.truncated;
        res.stderr_truncated = run->runner.err.truncated;
        res.stdout_buf = run->runner.out.buf ? run->runner.out.buf : "";
        res.stdout_len = run->runner.out.len;
        res.stderr_buf = run->runner.err.buf ? run->runner.err.buf : "";
        res.stderr_len = run->runner.err.len;
        res.duration_ms = (mcp_now_usec() - c->start_usec) / 1000;
        const mcp_proxy *proxy = l->sandbox ? l->sandbox->proxy : NULL;
        if (proxy) {
                /* What the session's proxy saw since the call started. */
                const char *const *v;
                size_t n = mcp_proxy_denied(proxy, &v);
                res.denied_hosts = n > c->denied_before ? v + c->denied_before : NULL;
                res.n_denied_hosts = n > c->denied_before ? n - c->denied_before : 0;
                n = mcp_proxy_failed(proxy, &v);
                res.upstream_errors = n > c->failed_before ? v + c->failed_before : NULL;
                res.n_upstream_errors = n > c->failed_before ? n - c->failed_before : 0;
                res.network_bytes = mcp_proxy_bytes(proxy) - c->net_bytes_before;
        }
        mcp_run_finish(run, &res);
        mcp_live_call_free(run);
}

void
mcp_live_call_cancel(mcp_run *run)
{
        mcp_engine *e = run->engine;
        run->cancelled = true;
        run->on_done = NULL;
        run->on_output = NULL;
        /* A cell cannot be taken back from its kernel: the kernel goes (the next cell
         * starts another). */
        if (run->call.kernel && run->live)
                mcp_live_kernel_kill(run->live, run->call.kernel);
        if (run->call.repl && run->live)
                mcp_live_repl_stop(run->live);
        run->call.kernel = NULL;
        mcp_live_call_cancel_io(run);
        if (run->state == RUN_RUNNING)
                e->n_running--;
        run->state = RUN_EXITED;
        mcp_run_result res = { .run_id = run->id };
        mcp_run_finish(run, &res);      /* cancelled: releases the session only */
        mcp_live_call_free(run);
}
