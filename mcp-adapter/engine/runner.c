/* One container run driven by the loop (runner.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "base/base.h"
#include "oci/oci.h"
#include "engine/runner.h"

/* ---- one container run ---- */

void
mcp_capture_add(mcp_capture *c, const char *buf, size_t n)
{
        size_t room = c->limit - c->len;
        size_t take = n < room ? n : room;
        if (take > 0) {
                char *nb = realloc(c->buf, c->len + take + 1);
                if (nb) {
                        c->buf = nb;
                        memcpy(c->buf + c->len, buf, take);
                        c->len += take;
                        c->buf[c->len] = '\0';
                } else {
                        take = 0;
                }
        }
        if (take < n)
                c->truncated = true;
        if (c->log_fd >= 0 && c->logged < c->log_limit) {
                size_t w = n;
                if (w > c->log_limit - c->logged)
                        w = (size_t) (c->log_limit - c->logged);
                if (write(c->log_fd, buf, w) != (ssize_t) w) {
                        c->log_limit = c->logged;       /* stop logging; the head stays */
                        c->log_failed = true;
                } else
                        c->logged += w;
        }
}

static void
close_io(mcp_runner *r, int *fd)
{
        if (*fd >= 0) {
                mcp_loop_del_io(r->set->loop, *fd);
                close(*fd);
                *fd = -1;
        }
}

/* Read what is there (at most a few chunks per wake-up, so that a flood cannot starve
 * the loop); 1 at EOF. */
int
mcp_capture_read(int fd, mcp_capture *c, int max_chunks, mcp_stream stream,
                 mcp_capture_fn fn, void *data)
{
        char buf[65536];
        for (int i = 0; i < max_chunks; i++) {
                ssize_t n = read(fd, buf, sizeof buf);
                if (n == 0)
                        return 1;
                if (n < 0)
                        return errno == EAGAIN || errno == EINTR ? 0 : 1;
                mcp_capture_add(c, buf, (size_t) n);
                if (fn)
                        fn(data, stream, buf, (size_t) n);
        }
        return 0;
}

static void
runner_output(void *data, mcp_stream stream, const char *buf, size_t n)
{
        mcp_runner *r = data;
        if (r->on_output && !r->cancelled)
                r->on_output(r, stream, buf, n, r->data);
}

static int
drain(mcp_runner *r, int fd, mcp_stream stream, int max_chunks)
{
        return mcp_capture_read(fd, stream == MCP_STDOUT ? &r->out : &r->err, max_chunks, stream,
                                runner_output, r);
}

static int
output_ready(mcp_loop *loop, int fd, uint32_t events, void *data)
{
        mcp_runner *r = data;
        (void) loop;
        (void) events;
        mcp_stream s = fd == r->out_fd ? MCP_STDOUT : MCP_STDERR;
        if (drain(r, fd, s, 4) > 0)
                close_io(r, s == MCP_STDOUT ? &r->out_fd : &r->err_fd);
        return 0;
}

static int
stdin_ready(mcp_loop *loop, int fd, uint32_t events, void *data)
{
        mcp_runner *r = data;
        (void) loop;
        if (!(events & EPOLLERR)) {
                ssize_t n = write(fd, r->stdin_data + r->stdin_off, r->stdin_len - r->stdin_off);
                if (n > 0)
                        r->stdin_off += (size_t) n;
                else if (n < 0 && (errno == EAGAIN || errno == EINTR))
                        return 0;
        }
        if ((events & EPOLLERR) || r->stdin_off >= r->stdin_len ||
            (events & EPOLLHUP))
                close_io(r, &r->in_fd);
        return 0;
}

static void runner_kill_now(mcp_runner *r);

static int
kill_retry(mcp_loop *loop, void *data)
{
        mcp_runner *r = data;
        (void) loop;
        r->timer = NULL;
        if (!r->exited)
                runner_kill_now(r);
        return 0;
}

static void
killer_exited(mcp_proc *p, int code, int status, void *data)
{
        mcp_runner *r = data;
        (void) p;
        r->killer = NULL;
        /* `kill` fails while the container is still being created: try again shortly. */
        if (!r->exited && !(code == CLD_EXITED && status == 0) && !r->timer)
                (void) mcp_loop_add_timer(r->set->loop, 20000, kill_retry, r, &r->timer);
}

static void
runner_kill_now(mcp_runner *r)
{
        /* cgroup.kill once; if the run is still there 100 ms later, the runtime's kill. */
        if (r->kill_file[0] && !r->kill_file_used) {
                int fd = open(r->kill_file, O_WRONLY | O_CLOEXEC);
                if (fd >= 0) {
                        bool ok = write(fd, "1", 1) == 1;
                        close(fd);
                        r->kill_file_used = ok;
                        if (ok) {
                                /* Retried in case the cgroup was not populated yet. */
                                if (!r->timer)
                                        (void) mcp_loop_add_timer(r->set->loop, 100000,
                                                                  kill_retry, r, &r->timer);
                                return;
                        }
                }
        }
        if (r->killer)
                return;
        const char *argv[] = { r->runtime, "--root", r->runtime_root, "kill", "--all",
                               r->id, "KILL", NULL };
        if (mcp_proc_spawn(r->set, argv, -1, -1, -1, killer_exited, r, &r->killer, NULL) < 0)
                mcp_proc_signal(r->run, SIGKILL);       /* last resort: the runtime itself */
}

static int
timeout_fired(mcp_loop *loop, void *data)
{
        mcp_runner *r = data;
        (void) loop;
        r->timer = NULL;
        if (!r->exited) {
                r->timed_out = true;
                mcp_runner_kill(r);
        }
        return 0;
}

void
mcp_runner_kill(mcp_runner *r)
{
        if (r->exited || r->killing)
                return;
        r->killing = true;
        if (r->timer) {
                mcp_timer_cancel(r->set->loop, r->timer);
                r->timer = NULL;
        }
        runner_kill_now(r);
}

static bool
read_oom(const char *path)
{
        char buf[1024];
        if (mcp_read_text(path, buf, sizeof buf) <= 0)
                return false;
        /* v1 memory.oom_control and v2 memory.events both have "oom_kill N". */
        const char *p = strstr(buf, "oom_kill ");
        return p && strtoull(p + 9, NULL, 10) > 0;
}

/* A number after `key ` in a small cgroup file (key NULL: the whole file); 0 when absent. */
static uint64_t
read_cgroup_number(const char *dir, const char *file, const char *key)
{
        char path[600], buf[1024];
        if (snprintf(path, sizeof path, "%s/%s", dir, file) >= (int) sizeof path ||
            mcp_read_text(path, buf, sizeof buf) <= 0)
                return 0;
        const char *p = buf;
        if (key) {
                size_t k = strlen(key);
                for (p = buf; (p = strstr(p, key)); p += k)
                        if ((p == buf || p[-1] == '\n') && p[k] == ' ')
                                break;
                if (!p)
                        return 0;
                p += k + 1;
        }
        return strtoull(p, NULL, 10);
}

/* CPU time and peak memory of the container's cgroup, read before `delete` removes it;
 * the memory controller's directory is the OOM file's. */
static void
read_usage(mcp_runner *r)
{
        char dir[sizeof r->oom_file];
        snprintf(dir, sizeof dir, "%s", r->oom_file);
        char *slash = strrchr(dir, '/');
        if (!slash)
                return;
        *slash = '\0';
        bool v2 = strcmp(slash + 1, "memory.events") == 0;
        r->memory_peak = read_cgroup_number(dir, v2 ? "memory.peak" : "memory.max_usage_in_bytes", NULL);
        if (v2) {
                r->cpu_usec = read_cgroup_number(dir, "cpu.stat", "usage_usec");
                return;
        }
        /* v1: the same cgroup path in the cpuacct hierarchy (nanoseconds). */
        static const char mem[] = "/sys/fs/cgroup/memory";
        if (strncmp(dir, mem, sizeof mem - 1) != 0)
                return;
        char acct[sizeof dir + 32];
        for (size_t i = 0; i < 2 && !r->cpu_usec; i++) {
                snprintf(acct, sizeof acct, "/sys/fs/cgroup/%s%s", i ? "cpu,cpuacct" : "cpuacct",
                         dir + sizeof mem - 1);
                r->cpu_usec = read_cgroup_number(acct, "cpuacct.usage", NULL) / 1000;
        }
}

/* The runtime's own error (JSON log lines with "level":"error"), if any. */
static bool
runtime_error(mcp_runner *r)
{
        char buf[8192];
        if (mcp_read_text(r->log_path, buf, sizeof buf) <= 0)
                return false;
        bool found = false;
        for (char *line = buf, *nl; line && *line; line = nl ? nl + 1 : NULL) {
                nl = strchr(line, '\n');
                if (nl)
                        *nl = '\0';
                if (!strstr(line, "\"error\"") && !strstr(line, "\"fatal\""))
                        continue;
                oci_json_doc *doc = NULL;
                msp_err e = { 0 };
                if (oci_json_parse("log", line, strlen(line), &doc, &e) < 0)
                        continue;
                const oci_json *root = oci_json_doc_root(doc);
                const char *lvl = oci_json_string(oci_json_get(root, "level"));
                const char *msg = oci_json_string(oci_json_get(root, "msg"));
                if (lvl && msg && (strcmp(lvl, "error") == 0 || strcmp(lvl, "fatal") == 0)) {
                        snprintf(r->error, sizeof r->error, "%s", msg);
                        found = true;
                }
                oci_json_doc_free(doc);
                if (found)
                        break;
        }
        return found;
}

static void
deleter_exited(mcp_proc *p, int code, int status, void *data)
{
        mcp_runner *r = data;
        (void) p;
        (void) code;
        (void) status;
        r->deleter = NULL;
        r->gone = true;
        if (r->on_gone)
                r->on_gone(r, r->data);
}

/* The init's "exit N\n" or "signal N\n" (one write right before it exits), used only when
 * it is the whole content and agrees with the runtime's status. Nothing there (the init
 * was killed with the cgroup, or failed itself): false, and 128+N is decoded as before. */
static bool
init_status(mcp_runner *r, int status)
{
        char buf[32];
        if (r->status_fd < 0)
                return false;
        /* Every writer is gone (the init exited, then `run`): no wait. */
        ssize_t n = read(r->status_fd, buf, sizeof buf - 1);
        close(r->status_fd);
        r->status_fd = -1;
        if (n <= 0)
                return false;
        buf[n] = '\0';
        bool sig = strncmp(buf, "signal ", 7) == 0;
        const char *num = sig ? buf + 7 : strncmp(buf, "exit ", 5) == 0 ? buf + 5 : NULL;
        if (!num || num[0] < '0' || num[0] > '9')
                return false;
        char *end;
        long v = strtol(num, &end, 10);
        if (strcmp(end, "\n") != 0 || v > 255)
                return false;
        if (sig) {
                if (v < 1 || v > 64 || status != 128 + v)
                        return false;
                r->term_signal = (int) v;
        } else {
                if (status != v)
                        return false;
                r->exit_code = (int) v;
        }
        return true;
}

/* `delete --force`. Started from the loop, in the round after the run's exit, not by
 * run_exited(): posix_spawn() holds the loop until the child has exec'd, and a response
 * that on_exit queued for a transport writing from the loop (HTTP: libmicrohttpd sends a
 * resumed connection's response in its next run, a timer on_exit adds) goes out first. */
static int
delete_start(mcp_loop *loop, void *data)
{
        mcp_runner *r = data;
        (void) loop;
        r->timer = NULL;
        const char *argv[] = { r->runtime, "--root", r->runtime_root, "delete", "--force",
                               r->id, NULL };
        if (mcp_proc_spawn(r->set, argv, -1, -1, -1, deleter_exited, r, &r->deleter, NULL) < 0)
                deleter_exited(NULL, CLD_EXITED, 1, r);
        return 0;
}

static void
run_exited(mcp_proc *p, int code, int status, void *data)
{
        mcp_runner *r = data;
        (void) p;
        r->run = NULL;
        r->exited = true;
        r->duration_ms = (mcp_now_usec() - r->start_usec) / 1000;
        if (r->timer) {
                mcp_timer_cancel(r->set->loop, r->timer);
                r->timer = NULL;
        }
        mcp_proc_forget(r->killer);
        r->killer = NULL;
        /* Every process of the container is dead: what is left in the pipes is all. */
        if (r->out_fd >= 0)
                drain(r, r->out_fd, MCP_STDOUT, 1 << 20);
        if (r->err_fd >= 0)
                drain(r, r->err_fd, MCP_STDERR, 1 << 20);
        close_io(r, &r->out_fd);
        close_io(r, &r->err_fd);
        close_io(r, &r->in_fd);

        if (code == CLD_EXITED && init_status(r, status)) {
                /* the program's own outcome, from the init's status pipe */
        } else if (code == CLD_EXITED && status > 128 && status <= 128 + 64) {
                r->term_signal = status - 128;  /* the runtime's 128+signal convention */
        } else if (code == CLD_EXITED) {
                r->exit_code = status;
        } else {
                r->sandbox_failed = true;
                snprintf(r->error, sizeof r->error, "the runtime died by signal %d", status);
        }
        if (!r->sandbox_failed && !(code == CLD_EXITED && status == 0) && !r->timed_out) {
                char state[4200];
                snprintf(state, sizeof state, "%s/%s", r->runtime_root, r->id);
                if (runtime_error(r)) {
                        r->sandbox_failed = true;
                } else if (access(state, F_OK) < 0) {
                        /* No container state (kept by --keep): the runtime failed first. */
                        r->sandbox_failed = true;
                        snprintf(r->error, sizeof r->error,
                                 "the runtime exited with status %d before creating the "
                                 "container (see stderr)", status);
                }
        }
        r->oom_killed = read_oom(r->oom_file);
        read_usage(r);
        if (r->on_exit)
                r->on_exit(r, r->data);         /* also when cancelled: the slot is free */
        if (mcp_loop_add_timer(r->set->loop, 0, delete_start, r, &r->timer) < 0)
                (void) delete_start(r->set->loop, r);
}

int
mcp_runner_start(mcp_runner *r, mcp_procset *set, msp_err *err)
{
        int po[2] = { -1, -1 }, pe[2] = { -1, -1 }, pi[2] = { -1, -1 }, ps[2] = { -1, -1 };
        int ret;

        r->set = set;
        r->out_fd = r->err_fd = r->in_fd = r->status_fd = -1;
        if (pipe2(po, O_CLOEXEC) < 0 || pipe2(pe, O_CLOEXEC) < 0 ||
            (r->stdin_data && pipe2(pi, O_CLOEXEC) < 0) ||
            (r->init_status && pipe2(ps, O_CLOEXEC | O_NONBLOCK) < 0)) {
                ret = msp_err_sys(err, errno, "pipe");
                goto fail;
        }
        (void) fcntl(po[0], F_SETFL, O_NONBLOCK);
        (void) fcntl(pe[0], F_SETFL, O_NONBLOCK);
        if (pi[1] >= 0)
                (void) fcntl(pi[1], F_SETFL, O_NONBLOCK);

        /* With the init: its status pipe is fd 3 of the runtime, handed on to pid 1 (msp
         * and runc: fds 3..3+N-1; nothing else of ours is inherited). */
        const char *argv[] = { r->runtime, "--root", r->runtime_root, "--log", r->log_path,
                               "--log-format", "json", "run", "--keep", "--bundle", r->bundle,
                               r->id, NULL, NULL, NULL };
        if (r->init_status || r->serve_fd > 0) {
                memmove(&argv[10], &argv[8], 4 * sizeof argv[0]);
                argv[8] = "--preserve-fds";
                argv[9] = "1";
        }
        r->start_usec = mcp_now_usec();
        ret = mcp_proc_spawn_fd3(set, argv, pi[0], po[1], pe[1], r->serve_fd > 0 ? r->serve_fd : ps[1],
                                 run_exited, r, &r->run, err);
        if (ret < 0)
                goto fail;
        close(po[1]);
        close(pe[1]);
        if (pi[0] >= 0)
                close(pi[0]);
        /* Only the runtime and the init hold the write end now. */
        if (ps[1] >= 0)
                close(ps[1]);
        r->status_fd = ps[0];
        r->out_fd = po[0];
        r->err_fd = pe[0];
        r->in_fd = pi[1];
        /* From here on, failures kill the run and still end in on_exit. */
        if (mcp_loop_add_io(set->loop, r->out_fd, EPOLLIN, output_ready, r) < 0 ||
            mcp_loop_add_io(set->loop, r->err_fd, EPOLLIN, output_ready, r) < 0 ||
            (r->in_fd >= 0 && mcp_loop_add_io(set->loop, r->in_fd, EPOLLOUT, stdin_ready, r) < 0) ||
            (r->timeout_ms &&
             mcp_loop_add_timer(set->loop, r->timeout_ms * 1000, timeout_fired, r, &r->timer) < 0)) {
                snprintf(r->error, sizeof r->error, "cannot watch the run (out of memory?)");
                mcp_runner_kill(r);
        }
        return 0;
fail:
        for (int i = 0; i < 2; i++) {
                if (po[i] >= 0)
                        close(po[i]);
                if (pe[i] >= 0)
                        close(pe[i]);
                if (pi[i] >= 0)
                        close(pi[i]);
                if (ps[i] >= 0)
                        close(ps[i]);
        }
        return ret;
}

void
mcp_runner_kill_sync(mcp_runner *r)
{
        const char *kill_argv[] = { r->runtime, "--root", r->runtime_root, "kill", "--all",
                                    r->id, "KILL", NULL };
        const char *del_argv[] = { r->runtime, "--root", r->runtime_root, "delete", "--force",
                                   r->id, NULL };
        const char *kill1_argv[] = { r->runtime, "--root", r->runtime_root, "kill", r->id, "KILL",
                                     NULL };
        /* At most ~10 s: `kill` fails until the runtime has created the container. Some
         * runtimes refuse `kill --all` for a container without a cgroup (runc run by a
         * user): then pid 1 alone, whose end ends its pid namespace. */
        for (int i = 0; r->run && i < 200; i++) {
                if (r->kill_file[0]) {
                        int fd = open(r->kill_file, O_WRONLY | O_CLOEXEC);
                        if (fd >= 0) {
                                (void) !write(fd, "1", 1);
                                close(fd);
                        }
                }
                if (mcp_spawn_wait(kill_argv, NULL) != 0)
                        (void) mcp_spawn_wait(kill1_argv, NULL);
                if (mcp_proc_exited_within(r->run, 50))
                        break;
        }
        if (r->run && !mcp_proc_exited_within(r->run, 0))
                mcp_proc_signal(r->run, SIGKILL);       /* give up on it: never hang */
        (void) mcp_spawn_wait(del_argv, NULL);
}

void
mcp_runner_done(mcp_runner *r)
{
        if (r->set && r->timer) {
                mcp_timer_cancel(r->set->loop, r->timer);
                r->timer = NULL;
        }
        mcp_proc_forget(r->run);
        mcp_proc_forget(r->killer);
        mcp_proc_forget(r->deleter);
        if (r->set) {
                close_io(r, &r->out_fd);
                close_io(r, &r->err_fd);
                close_io(r, &r->in_fd);
                if (r->status_fd >= 0)
                        close(r->status_fd);
                r->status_fd = -1;
        }
        free(r->out.buf);
        free(r->err.buf);
        r->out.buf = r->err.buf = NULL;
        if (r->out.log_fd >= 0)
                close(r->out.log_fd);
        if (r->err.log_fd >= 0)
                close(r->err.log_fd);
        r->out.log_fd = r->err.log_fd = -1;
}
