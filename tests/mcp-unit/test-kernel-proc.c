/* kernel/kernel-proc.h: a real ipykernel started through a real msp-sandbox-init --serve
 * ($MSP_SANDBOX_INIT, an ordinary child of this test), driven by msp-mcp's loop. There is
 * no container: the "sandbox" directory of the sockets is a symlink to the host one, so
 * that the two names differ (the host one too deep for a unix socket path, reached through
 * /proc/self/fd/N). Cells: state kept, the last expression's text/plain, an error's
 * traceback, a timeout interrupted, a kernel's death (exit code, signal) and its restart,
 * a cell that ignores interrupts killed and restarted, an image, a kernel that cannot
 * start, and the kernel killed on free. Every wait is bounded. Skips (with the reason)
 * without ipykernel. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/base.h"
#include "kernel/kernel.h"
#include "oci/oci.h"
#include "lib/loop-deadline.h"
#include "lib/tap.h"

#define PYTHON "/usr/bin/python3"
#define SEC 1000000ull

static mcp_loop *loop;
static mcp_kernel_proc *proc;
static const char *init_path;
static pid_t service = -1;
static char dir[] = "/tmp/msp-kproc-XXXXXX";
static char host_dir[512], sandbox_dir[256], sock_path[108];
static char env_home[300], env_ipython[300], env_mpl[300], env_runtime[300];

/* The last outcome, copied out of its callback. */
static struct {
        unsigned calls;
        int error;
        bool started, interrupted, killed, died;
        char note[MCP_KERNEL_NOTE_MAX];
        char *message, *out, *result, *ename, *traceback, *image_mime, *image;
        char status[16];
} got;

static char *
dup_or_null(const char *s)
{
        return s ? strdup(s) : NULL;
}

static void
got_clear(void)
{
        free(got.message);
        free(got.out);
        free(got.result);
        free(got.ename);
        free(got.traceback);
        free(got.image_mime);
        free(got.image);
        memset(&got, 0, sizeof got);
}

static void
on_done(mcp_kernel_proc *p, const mcp_kernel_outcome *o, void *data)
{
        (void) p, (void) data;
        got.calls++;
        got.error = o->error;
        got.started = o->started;
        got.interrupted = o->interrupted;
        got.killed = o->killed;
        got.died = o->died;
        snprintf(got.note, sizeof got.note, "%s", o->note);
        got.message = strdup(o->message);
        const mcp_kernel_cell *c = o->cell;
        got.out = dup_or_null(c->out.data);
        got.result = dup_or_null(c->result.data);
        got.ename = dup_or_null(c->ename.data);
        got.traceback = dup_or_null(c->traceback.data);
        snprintf(got.status, sizeof got.status, "%s", c->status);
        if (c->n_images) {
                got.image_mime = strdup(c->images[0].mime);
                got.image = dup_or_null(c->images[0].data.data);
        }
        mcp_loop_exit(loop, 0);
}

/* code as the next cell; true when its callback came within wait_usec. */
static bool
run_cell_on(mcp_kernel_proc *p, const char *code, uint64_t timeout_usec, uint64_t wait_usec)
{
        got_clear();
        msp_err err = { 0 };
        if (mcp_kernel_proc_execute(p, code, timeout_usec, on_done, NULL, &err) < 0) {
                tap_diag("execute: %s", err.msg);
                return false;
        }
        (void) test_loop_run_within(loop, wait_usec);
        if (got.calls != 1)
                tap_diag("%u callbacks for %s", got.calls, code);
        if (got.error)
                tap_diag("error %d: %s", got.error, got.message);
        return got.calls == 1;
}

static bool
run_cell(const char *code, uint64_t timeout_usec, uint64_t wait_usec)
{
        return run_cell_on(proc, code, timeout_usec, wait_usec);
}

static const char *const kernel_argv[] = { PYTHON, "-m", "ipykernel_launcher", "-f",
                                           "{connection_file}", NULL };

static int
new_proc_as(const char *const *argv, uint64_t ready_usec, const char *interrupt_mode,
            mcp_kernel_proc **ret, msp_err *err)
{
        const char *const envp[] = { "PATH=/usr/bin:/bin", env_home, env_ipython, env_mpl,
                                     env_runtime, NULL };
        mcp_kernel_proc_spec spec = {
                .spawn_socket = sock_path, .host_dir = host_dir, .sandbox_dir = sandbox_dir,
                .argv = argv, .envp = envp, .cwd = dir,
                .ready_usec = ready_usec, .grace_usec = SEC, .interrupt_mode = interrupt_mode,
        };
        return mcp_kernel_proc_new(loop, &spec, NULL, ret, err);
}

static int
new_proc_within(const char *const *argv, uint64_t ready_usec, mcp_kernel_proc **ret, msp_err *err)
{
        return new_proc_as(argv, ready_usec, NULL, ret, err);
}

static int
new_proc(const char *const *argv, mcp_kernel_proc **ret, msp_err *err)
{
        return new_proc_within(argv, 30 * SEC, ret, err);
}

TEST(first_cell_starts_it_and_state_persists)
{
        ASSERT_TRUE(run_cell("x = 41", 0, 40 * SEC));
        ASSERT_EQ_INT(got.error, 0);
        ASSERT_TRUE(got.started);
        ASSERT_STREQ(got.note, "started");
        ASSERT_STREQ(got.status, "ok");
        ASSERT_NULL(got.result);
        ASSERT_TRUE(run_cell("x + 1", 0, 20 * SEC));
        ASSERT_STREQ(got.note, "");
        ASSERT_STREQ(got.result, "42");
}

TEST(connection_file_names_the_sandbox_dir)
{
        char path[600], buf[4096];
        snprintf(path, sizeof path, "%s/kernel.json", host_dir);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        ASSERT_TRUE(fd >= 0);
        ssize_t n = read(fd, buf, sizeof buf);
        close(fd);
        ASSERT_TRUE(n > 0);
        msp_err err = { 0 };
        _cleanup_json_doc_ oci_json_doc *doc = NULL;
        ASSERT_OK_ERR(oci_json_parse("kernel.json", buf, (size_t) n, &doc, &err), err);
        char want[300];
        snprintf(want, sizeof want, "%s/kernel", sandbox_dir);
        ASSERT_STREQ(oci_json_string(oci_json_get(oci_json_doc_root(doc), "ip")), want);
        ASSERT_TRUE(mcp_kernel_proc_pid(proc) > 0);
}

TEST(last_expression_is_text_plain)
{
        ASSERT_TRUE(run_cell("print('hi')\n1+1", 0, 20 * SEC));
        ASSERT_STREQ(got.out, "hi\n");
        ASSERT_STREQ(got.result, "2");
}

TEST(error_returns_the_traceback_and_the_kernel_lives)
{
        ASSERT_TRUE(run_cell("1/0", 0, 20 * SEC));
        ASSERT_STREQ(got.status, "error");
        ASSERT_STREQ(got.ename, "ZeroDivisionError");
        ASSERT_NOT_NULL(got.traceback);
        ASSERT_NOT_NULL(strstr(got.traceback, "ZeroDivisionError"));
        ASSERT_FALSE(got.died);
        ASSERT_TRUE(run_cell("x", 0, 20 * SEC));
        ASSERT_STREQ(got.result, "41");
}

TEST(timeout_interrupts_and_variables_stay)
{
        got_clear();
        msp_err err = { 0 };
        uint64_t t0 = mcp_now_usec();
        ASSERT_OK_ERR(mcp_kernel_proc_execute(proc, "import time; time.sleep(60)", SEC / 2,
                                              on_done, NULL, &err), err);
        ASSERT_TRUE(mcp_kernel_proc_busy(proc));
        ASSERT_EQ_INT(mcp_kernel_proc_execute(proc, "1", 0, on_done, NULL, &err), -EBUSY);
        (void) test_loop_run_within(loop, 10 * SEC);
        uint64_t took = mcp_now_usec() - t0;
        tap_diag("interrupted after %llu ms", (unsigned long long) (took / 1000));
        ASSERT_EQ_INT(got.calls, 1);
        ASSERT_TRUE(got.interrupted);
        ASSERT_FALSE(got.killed);
        ASSERT_STREQ(got.note, "interrupted");
        ASSERT_STREQ(got.ename, "KeyboardInterrupt");
        ASSERT_TRUE(took < 1500000);    /* the timeout and an interrupt, not the grace */
        ASSERT_TRUE(run_cell("x", 0, 20 * SEC));
        ASSERT_STREQ(got.note, "");
        ASSERT_STREQ(got.result, "41");
        /* A busy loop too, a few times: one interrupt each, never a kill. */
        for (int i = 0; i < 3; i++) {
                ASSERT_TRUE(run_cell("n = 0\nwhile True: n += 1", SEC / 5, 10 * SEC));
                ASSERT_STREQ(got.note, "interrupted");
                ASSERT_STREQ(got.ename, "KeyboardInterrupt");
        }
        ASSERT_TRUE(run_cell("x", 0, 20 * SEC));
        ASSERT_STREQ(got.result, "41");
}

TEST(interrupt_mode_message_sends_interrupt_request)
{
        mcp_kernel_proc *p = NULL;
        msp_err err = { 0 };
        char other_host[sizeof host_dir], other_sbx[sizeof sandbox_dir];
        snprintf(other_host, sizeof other_host, "%s", host_dir);
        snprintf(other_sbx, sizeof other_sbx, "%s", sandbox_dir);
        snprintf(host_dir, sizeof host_dir, "%s/msg", dir);
        snprintf(sandbox_dir, sizeof sandbox_dir, "%s/msg", dir);
        ASSERT_OK(mkdir(host_dir, 0700));
        int r = new_proc_as(kernel_argv, 30 * SEC, "message", &p, &err);
        snprintf(host_dir, sizeof host_dir, "%s", other_host);
        snprintf(sandbox_dir, sizeof sandbox_dir, "%s", other_sbx);
        ASSERT_OK_ERR(r, err);
        bool came = run_cell_on(p, "import time; time.sleep(60)", SEC / 2, 40 * SEC);
        mcp_kernel_proc_free(p);
        ASSERT_TRUE(came);
        ASSERT_STREQ(got.note, "started; interrupted");
        ASSERT_STREQ(got.ename, "KeyboardInterrupt");
}

TEST(death_is_reported_and_the_next_cell_restarts)
{
        ASSERT_TRUE(run_cell("import os; os._exit(3)", 0, 20 * SEC));
        ASSERT_TRUE(got.died);
        ASSERT_STREQ(got.note, "died: exit code 3");
        ASSERT_FALSE(mcp_kernel_proc_running(proc));
        ASSERT_TRUE(run_cell("import os, signal; os.kill(os.getpid(), signal.SIGKILL)", 0,
                             40 * SEC));
        ASSERT_STREQ(got.note, "started; died: killed by signal 9");
        ASSERT_TRUE(run_cell("x", 0, 40 * SEC));
        ASSERT_TRUE(got.started);
        ASSERT_STREQ(got.ename, "NameError");     /* a new kernel: its state is gone */
        ASSERT_TRUE(run_cell("x = 7", 0, 20 * SEC));
}

TEST(a_cell_ignoring_interrupts_is_killed_and_restarted)
{
        uint64_t t0 = mcp_now_usec();
        ASSERT_TRUE(run_cell("import signal; signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
                             "while True: pass", SEC / 2, 20 * SEC));
        tap_diag("killed after %llu ms", (unsigned long long) ((mcp_now_usec() - t0) / 1000));
        ASSERT_TRUE(got.interrupted);
        ASSERT_TRUE(got.killed);
        ASSERT_FALSE(got.died);
        ASSERT_STREQ(got.note, "interrupted; killed and restarted");
        ASSERT_TRUE(mcp_kernel_proc_running(proc));
        ASSERT_TRUE(run_cell("x", 0, 40 * SEC));
        ASSERT_STREQ(got.note, "");             /* restarted already, before this cell */
        ASSERT_STREQ(got.ename, "NameError");
}

TEST(a_figure_is_an_image_png)
{
        ASSERT_TRUE(run_cell("import io, matplotlib; matplotlib.use('agg')\n"
                             "import matplotlib.pyplot as plt\n"
                             "from IPython.display import Image, display\n"
                             "fig = plt.figure(); plt.plot([1, 2, 3])\n"
                             "b = io.BytesIO(); fig.savefig(b, format='png')\n"
                             "display(Image(data=b.getvalue()))", 0, 60 * SEC));
        ASSERT_STREQ(got.status, "ok");
        ASSERT_STREQ(got.image_mime, "image/png");
        ASSERT_NOT_NULL(got.image);
        ASSERT_TRUE(strncmp(got.image, "iVBOR", 5) == 0);       /* base64 of \x89PNG */
}

TEST(a_kernel_that_cannot_start_is_an_error_with_its_output)
{
        mcp_kernel_proc *p = NULL;
        msp_err err = { 0 };
        char other_host[sizeof host_dir], other_sbx[sizeof sandbox_dir];
        snprintf(other_host, sizeof other_host, "%s", host_dir);
        snprintf(other_sbx, sizeof other_sbx, "%s", sandbox_dir);
        const char *const argv[] = { "/nonexistent/kernel", "{connection_file}", NULL };
        /* Its own directory: the running kernel's connection file stays. */
        snprintf(host_dir, sizeof host_dir, "%s/bad", dir);
        snprintf(sandbox_dir, sizeof sandbox_dir, "%s/bad", dir);
        ASSERT_OK(mkdir(host_dir, 0700));
        int r = new_proc(argv, &p, &err);
        snprintf(host_dir, sizeof host_dir, "%s", other_host);
        snprintf(sandbox_dir, sizeof sandbox_dir, "%s", other_sbx);
        ASSERT_OK_ERR(r, err);
        bool came = run_cell_on(p, "1", 0, 10 * SEC);
        mcp_kernel_proc_free(p);
        ASSERT_TRUE(came);
        ASSERT_EQ_INT(got.error, -ECHILD);
        tap_diag("%s", got.message);
        ASSERT_NOT_NULL(strstr(got.message, "exit code 127"));
        ASSERT_NOT_NULL(strstr(got.message, "/nonexistent/kernel"));
}

TEST(a_kernel_that_never_answers_is_not_ready_within_its_bound)
{
        mcp_kernel_proc *p = NULL;
        msp_err err = { 0 };
        char other_host[sizeof host_dir], other_sbx[sizeof sandbox_dir];
        snprintf(other_host, sizeof other_host, "%s", host_dir);
        snprintf(other_sbx, sizeof other_sbx, "%s", sandbox_dir);
        const char *const argv[] = { "/bin/sleep", "60", NULL };
        snprintf(host_dir, sizeof host_dir, "%s/mute", dir);
        snprintf(sandbox_dir, sizeof sandbox_dir, "%s/mute", dir);
        ASSERT_OK(mkdir(host_dir, 0700));
        int r = new_proc_within(argv, SEC / 4, &p, &err);
        snprintf(host_dir, sizeof host_dir, "%s", other_host);
        snprintf(sandbox_dir, sizeof sandbox_dir, "%s", other_sbx);
        ASSERT_OK_ERR(r, err);
        /* Started ahead, the cell waits for it: the bound is the start's. */
        r = mcp_kernel_proc_start(p, &err);
        bool running = mcp_kernel_proc_running(p);
        bool came = r == 0 && run_cell_on(p, "1", 0, 10 * SEC);
        bool after = mcp_kernel_proc_running(p);
        mcp_kernel_proc_free(p);
        ASSERT_OK_ERR(r, err);
        ASSERT_TRUE(running);
        ASSERT_TRUE(came);
        ASSERT_EQ_INT(got.error, -ETIMEDOUT);
        ASSERT_FALSE(got.started);
        ASSERT_NOT_NULL(strstr(got.message, "no answer within 250 ms"));
        ASSERT_FALSE(after);
}

TEST(free_kills_the_kernel_and_removes_its_files)
{
        int pid = mcp_kernel_proc_pid(proc);
        ASSERT_TRUE(pid > 0);
        proc = mcp_kernel_proc_free(proc);
        /* No pid namespace here: the sandbox's pid is the host's; the service reaps it. */
        bool gone = false;
        for (int i = 0; i < 500 && !gone; i++) {
                gone = kill(pid, 0) < 0 && errno == ESRCH;
                if (!gone)
                        usleep(10000);
        }
        ASSERT_TRUE(gone);
        char path[600];
        snprintf(path, sizeof path, "%s/kernel.json", host_dir);
        ASSERT_TRUE(access(path, F_OK) < 0 && errno == ENOENT);
        snprintf(path, sizeof path, "%s/kernel-1", host_dir);
        ASSERT_TRUE(access(path, F_OK) < 0 && errno == ENOENT);
}

/* A listening seqpacket socket at sock_path handed to a new init as fd 3. */
static pid_t
start_service(void)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        snprintf(sa.sun_path, sizeof sa.sun_path, "%s", sock_path);
        int lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
        if (lfd < 0 || bind(lfd, (struct sockaddr *) &sa, sizeof sa) < 0 || listen(lfd, 16) < 0)
                return -1;
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_adddup2(&fa, lfd, 3);
        const char *argv[] = { init_path, "--serve", "3", NULL };
        pid_t pid = -1;
        extern char **environ;
        if (posix_spawn(&pid, init_path, &fa, NULL, (char *const *) argv, environ) != 0)
                pid = -1;
        posix_spawn_file_actions_destroy(&fa);
        close(lfd);
        return pid;
}

static bool
python_has(const char *module)
{
        char cmd[256];
        snprintf(cmd, sizeof cmd, PYTHON " -c 'import %s' >/dev/null 2>&1", module);
        return system(cmd) == 0;
}

static void
remove_tmp_dir(const char *path)
{
        int tmp = open("/tmp", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        msp_err err = { 0 };
        if (tmp < 0 || mcp_remove_tree_at(tmp, path + strlen("/tmp/"), &err) < 0)
                tap_diag("could not remove %s: %s", path, err.msg);
        if (tmp >= 0)
                close(tmp);
}

int
main(void)
{
        signal(SIGPIPE, SIG_IGN);
        init_path = getenv("MSP_SANDBOX_INIT");
        if (!init_path) {
                tap_skip("kernel-proc", "set MSP_SANDBOX_INIT (meson test does)");
                return tap_done();
        }
        if (access(PYTHON, X_OK) < 0 || !python_has("ipykernel_launcher")) {
                tap_skip("kernel-proc", "no ipykernel for " PYTHON " (Debian: python3-ipykernel)");
                return tap_done();
        }
        bool have_matplotlib = python_has("matplotlib");
        msp_err err = { 0 };
        if (mcp_loop_new(&loop) < 0 || !mkdtemp(dir)) {
                tap_diag("set-up failed");
                return 1;
        }
        /* A host directory deeper than a unix socket path allows, and its short name. */
        snprintf(host_dir, sizeof host_dir, "%s/%0100d", dir, 0);
        snprintf(sandbox_dir, sizeof sandbox_dir, "%s/k", dir);
        snprintf(sock_path, sizeof sock_path, "%s/spawn.sock", dir);
        snprintf(env_home, sizeof env_home, "HOME=%s", dir);
        snprintf(env_ipython, sizeof env_ipython, "IPYTHONDIR=%s/ipython", dir);
        snprintf(env_mpl, sizeof env_mpl, "MPLCONFIGDIR=%s/mpl", dir);
        snprintf(env_runtime, sizeof env_runtime, "JUPYTER_RUNTIME_DIR=%s/runtime", dir);
        char rel[128];
        snprintf(rel, sizeof rel, "%s", host_dir + strlen(dir) + 1);
        if (mkdir(host_dir, 0700) < 0 || symlink(rel, sandbox_dir) < 0 ||
            (service = start_service()) < 0 || new_proc(kernel_argv, &proc, &err) < 0) {
                tap_diag("set-up failed: %s", err.msg[0] ? err.msg : strerror(errno));
                return 1;
        }
        RUN(first_cell_starts_it_and_state_persists);
        RUN(connection_file_names_the_sandbox_dir);
        RUN(last_expression_is_text_plain);
        RUN(error_returns_the_traceback_and_the_kernel_lives);
        RUN(timeout_interrupts_and_variables_stay);
        RUN(interrupt_mode_message_sends_interrupt_request);
        RUN(death_is_reported_and_the_next_cell_restarts);
        RUN(a_cell_ignoring_interrupts_is_killed_and_restarted);
        if (have_matplotlib)
                RUN(a_figure_is_an_image_png);
        else
                tap_skip("a_figure_is_an_image_png", "no matplotlib (Debian: python3-matplotlib)");
        RUN(a_kernel_that_cannot_start_is_an_error_with_its_output);
        RUN(a_kernel_that_never_answers_is_not_ready_within_its_bound);
        RUN(free_kills_the_kernel_and_removes_its_files);
        proc = mcp_kernel_proc_free(proc);
        got_clear();
        if (service > 0) {
                kill(service, SIGTERM);
                int i = 0;
                while (waitpid(service, NULL, WNOHANG) == 0 && i++ < 200)
                        usleep(10000);
                if (i > 200) {
                        kill(service, SIGKILL);
                        waitpid(service, NULL, 0);
                }
        }
        remove_tmp_dir(dir);
        mcp_loop_free(loop);
        return tap_done();
}
