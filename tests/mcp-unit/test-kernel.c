/* kernel/: the Jupyter kernel client against a real ipykernel started on the host, driven
 * by msp-mcp's loop with bounded waits; and the refusal of badly signed replies, sent by a
 * socket the test binds in place of a kernel. Skips (with the reason) without ipykernel. */
#include <errno.h>
#include <fcntl.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zmq.h>

#include "base/base.h"
#include "kernel/kernel.h"
#include "oci/oci.h"
#include "lib/loop-deadline.h"
#include "lib/tap.h"

#define PYTHON "/usr/bin/python3"
#define SEC 1000000ull

static mcp_loop *loop;
static mcp_kernel *kern;
static pid_t kernel_pid = -1;
static char dir[] = "/tmp/msp-kernel-XXXXXX";
static bool have_ipykernel, have_matplotlib;
static const char *skip_why;

/* The event a test waits for: the callback ends the loop when it comes. */
static struct {
        mcp_kernel_event want;
        bool hit;
        unsigned count[8];
} waiter;

static int
on_event(mcp_kernel *k, mcp_kernel_event ev, void *data)
{
        (void) k, (void) data;
        waiter.count[ev]++;
        if (ev == waiter.want) {
                waiter.hit = true;
                mcp_loop_exit(loop, 0);
        }
        return 0;
}

static void
expect(mcp_kernel_event ev)
{
        waiter.want = ev;
        waiter.hit = false;
}

static bool
wait_hit(uint64_t usec)
{
        if (!waiter.hit)
                (void) test_loop_run_within(loop, usec);
        return waiter.hit;
}

/* A temporary directory "/tmp/NAME" and everything in it. */
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

static bool
python_has(const char *module)
{
        char cmd[256];
        snprintf(cmd, sizeof cmd, PYTHON " -c 'import %s' >/dev/null 2>&1", module);
        return system(cmd) == 0;
}

static const char *
in_dir(const char *name)
{
        static char path[256];
        snprintf(path, sizeof path, "%s/%s", dir, name);
        return path;
}

/* The kernel in a session of its own: ipykernel's interrupt_request signals its process
 * group, which must not be the test's. */
static pid_t
start_kernel(const char *conn_file)
{
        pid_t pid = fork();
        if (pid != 0)
                return pid;
        setsid();
        int fd = open(in_dir("kernel.log"), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd >= 0) {
                dup2(fd, 1);
                dup2(fd, 2);
        }
        setenv("HOME", dir, 1);
        setenv("IPYTHONDIR", in_dir("ipython"), 1);
        setenv("MPLCONFIGDIR", in_dir("mpl"), 1);
        setenv("JUPYTER_RUNTIME_DIR", in_dir("runtime"), 1);
        execl(PYTHON, "python3", "-m", "ipykernel_launcher", "-f", conn_file, (char *) NULL);
        _exit(127);
}

static bool
run_cell(const char *code, uint64_t usec)
{
        msp_err err = { 0 };
        expect(MCP_KERNEL_CELL_DONE);
        if (mcp_kernel_execute(kern, code, &err) < 0) {
                tap_diag("execute: %s", err.msg);
                return false;
        }
        return wait_hit(usec);
}

#define NEED_KERNEL()                                                   \
        do {                                                            \
                if (!kern || !mcp_kernel_ready(kern)) {                 \
                        TAP_FAIL_("no ready kernel");                   \
                        return;                                         \
                }                                                       \
        } while (0)

TEST(connection_file_is_ipc_and_signed)
{
        char buf[4096];
        int fd = open(mcp_kernel_connection_file(kern), O_RDONLY | O_CLOEXEC);
        ASSERT_TRUE(fd >= 0);
        struct stat st;
        ASSERT_OK(fstat(fd, &st));
        ASSERT_EQ_INT(st.st_mode & 0777, 0600);
        ssize_t n = read(fd, buf, sizeof buf);
        close(fd);
        ASSERT_TRUE(n > 0);
        msp_err err = { 0 };
        _cleanup_json_doc_ oci_json_doc *doc = NULL;
        ASSERT_OK_ERR(oci_json_parse("kernel.json", buf, (size_t) n, &doc, &err), err);
        const oci_json *root = oci_json_doc_root(doc);
        ASSERT_STREQ(oci_json_string(oci_json_get(root, "transport")), "ipc");
        ASSERT_STREQ(oci_json_string(oci_json_get(root, "signature_scheme")), "hmac-sha256");
        const char *key = oci_json_string(oci_json_get(root, "key"));
        ASSERT_NOT_NULL(key);
        ASSERT_EQ_INT(strlen(key), 64);
}

TEST(kernel_info_makes_it_ready)
{
        msp_err err = { 0 };
        expect(MCP_KERNEL_READY);
        ASSERT_OK_ERR(mcp_kernel_wait_ready(kern, &err), err);
        ASSERT_TRUE(wait_hit(60 * SEC));
        ASSERT_TRUE(mcp_kernel_ready(kern));
}

TEST(state_persists_across_cells)
{
        NEED_KERNEL();
        ASSERT_TRUE(run_cell("x = 41", 20 * SEC));
        ASSERT_STREQ(mcp_kernel_last_cell(kern)->status, "ok");
        ASSERT_NULL(mcp_kernel_last_cell(kern)->result.data);
        ASSERT_TRUE(run_cell("x + 1", 20 * SEC));
        const mcp_kernel_cell *c = mcp_kernel_last_cell(kern);
        ASSERT_STREQ(c->status, "ok");
        ASSERT_STREQ(c->result.data, "42");
        ASSERT_TRUE(c->execution_count >= 2);
}

TEST(print_is_stdout)
{
        NEED_KERNEL();
        ASSERT_TRUE(run_cell("print('hi')", 20 * SEC));
        const mcp_kernel_cell *c = mcp_kernel_last_cell(kern);
        ASSERT_STREQ(c->out.data, "hi\n");
        ASSERT_NULL(c->err.data);
        ASSERT_NULL(c->result.data);
}

TEST(error_has_traceback_and_kernel_lives)
{
        NEED_KERNEL();
        ASSERT_TRUE(run_cell("1/0", 20 * SEC));
        const mcp_kernel_cell *c = mcp_kernel_last_cell(kern);
        ASSERT_STREQ(c->status, "error");
        ASSERT_STREQ(c->ename.data, "ZeroDivisionError");
        ASSERT_NOT_NULL(c->evalue.data);
        ASSERT_NOT_NULL(c->traceback.data);
        ASSERT_NOT_NULL(strstr(c->traceback.data, "ZeroDivisionError"));
        ASSERT_TRUE(run_cell("x", 20 * SEC));
        ASSERT_STREQ(mcp_kernel_last_cell(kern)->result.data, "41");
}

TEST(figure_is_display_data_png)
{
        NEED_KERNEL();
        ASSERT_TRUE(run_cell("%matplotlib inline\n"
                             "import matplotlib.pyplot as plt\n"
                             "plt.plot([1, 2, 3])\n"
                             "plt.show()", 60 * SEC));
        const mcp_kernel_cell *c = mcp_kernel_last_cell(kern);
        ASSERT_STREQ(c->status, "ok");
        ASSERT_TRUE(c->n_images >= 1);
        ASSERT_STREQ(c->images[0].mime, "image/png");
        /* base64 of the PNG signature \x89PNG */
        ASSERT_TRUE(strncmp(c->images[0].data.data, "iVBOR", 5) == 0);
}

TEST(interrupt_ends_a_sleep)
{
        NEED_KERNEL();
        msp_err err = { 0 };
        expect(MCP_KERNEL_CELL_DONE);
        ASSERT_OK_ERR(mcp_kernel_execute(kern, "import time; time.sleep(60)", &err), err);
        ASSERT_FALSE(wait_hit(SEC / 2));        /* running */
        ASSERT_TRUE(mcp_kernel_busy(kern));
        uint64_t t0 = mcp_now_usec();
        ASSERT_OK_ERR(mcp_kernel_interrupt(kern, &err), err);
        ASSERT_TRUE(wait_hit(10 * SEC));
        uint64_t took = mcp_now_usec() - t0;
        tap_diag("interrupt took %" PRIu64 " ms", took / 1000);
        ASSERT_TRUE(took < 10 * SEC);
        const mcp_kernel_cell *c = mcp_kernel_last_cell(kern);
        ASSERT_STREQ(c->ename.data, "KeyboardInterrupt");
        ASSERT_TRUE(waiter.count[MCP_KERNEL_INTERRUPT_REPLY] >= 1);
        expect(MCP_KERNEL_HEARTBEAT);
        ASSERT_OK_ERR(mcp_kernel_ping(kern, &err), err);
        ASSERT_TRUE(wait_hit(5 * SEC));
        ASSERT_TRUE(run_cell("x", 20 * SEC));
        ASSERT_STREQ(mcp_kernel_last_cell(kern)->result.data, "41");
}

TEST(accepts_nothing_from_the_kernel_unverified)
{
        /* Every message so far verified: none was refused from the real kernel. */
        mcp_kernel_stats s = mcp_kernel_get_stats(kern);
        ASSERT_TRUE(s.accepted > 0);
        ASSERT_EQ_U64(s.refused, 0);
}

/* ---- a fake kernel: a ROUTER the test binds on the client's shell socket ---- */

static void
hmac_hex(const char *key, char *const part[4], const size_t len[4], char out[65])
{
        size_t total = len[0] + len[1] + len[2] + len[3];
        char *all = malloc(total + 1);
        size_t off = 0;
        for (int i = 0; i < 4; i++) {
                memcpy(all + off, part[i], len[i]);
                off += len[i];
        }
        unsigned char d[32];
        gnutls_hmac_fast(GNUTLS_MAC_SHA256, key, strlen(key), all, total, d);
        free(all);
        for (int i = 0; i < 32; i++)
                snprintf(out + 2 * i, 3, "%02x", d[i]);
}

static void
reply(void *router, const void *ident, size_t ident_len, const char *sign_key,
      const char *parent, size_t parent_len, bool unsigned_)
{
        char header[] = "{\"msg_id\":\"r1\",\"msg_type\":\"kernel_info_reply\",\"session\":\"s\","
                        "\"username\":\"k\",\"version\":\"5.3\"}";
        char meta[] = "{}", content[] = "{\"status\":\"ok\"}";
        char *part[4] = { header, (char *) parent, meta, content };
        size_t len[4] = { strlen(header), parent_len, 2, strlen(content) };
        char sig[65];
        hmac_hex(sign_key, part, len, sig);
        zmq_send(router, ident, ident_len, ZMQ_SNDMORE);
        zmq_send(router, "<IDS|MSG>", 9, ZMQ_SNDMORE);
        zmq_send(router, sig, unsigned_ ? 0 : 64, ZMQ_SNDMORE);
        for (int i = 0; i < 4; i++)
                zmq_send(router, part[i], len[i], i < 3 ? ZMQ_SNDMORE : 0);
}

static bool
run_until_stats(mcp_kernel *k, uint64_t accepted, uint64_t refused, uint64_t usec)
{
        uint64_t end = mcp_now_usec() + usec;
        while (mcp_now_usec() < end) {
                mcp_kernel_stats s = mcp_kernel_get_stats(k);
                if (s.accepted >= accepted && s.refused >= refused)
                        return true;
                (void) test_loop_run_within(loop, 20000);
        }
        return false;
}

TEST(badly_signed_reply_is_refused)
{
        char fdir[] = "/tmp/msp-kfake-XXXXXX";
        ASSERT_NOT_NULL(mkdtemp(fdir));
        msp_err err = { 0 };
        mcp_kernel *k = NULL;
        ASSERT_OK_ERR(mcp_kernel_new(loop, fdir, NULL, NULL, NULL, NULL, &k, &err), err);
        char buf[4096];
        int fd = open(mcp_kernel_connection_file(k), O_RDONLY | O_CLOEXEC);
        ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf) : -1;
        if (fd >= 0)
                close(fd);
        _cleanup_json_doc_ oci_json_doc *doc = NULL;
        ASSERT_TRUE(n > 0);
        ASSERT_OK_ERR(oci_json_parse("kernel.json", buf, (size_t) n, &doc, &err), err);
        const char *key = oci_json_string(oci_json_get(oci_json_doc_root(doc), "key"));
        const char *ip = oci_json_string(oci_json_get(oci_json_doc_root(doc), "ip"));
        ASSERT_NOT_NULL(key);
        ASSERT_NOT_NULL(ip);

        void *ctx = zmq_ctx_new();
        void *router = zmq_socket(ctx, ZMQ_ROUTER);
        int linger = 0, timeout = 5000;
        zmq_setsockopt(router, ZMQ_LINGER, &linger, sizeof linger);
        zmq_setsockopt(router, ZMQ_RCVTIMEO, &timeout, sizeof timeout);
        char endpoint[256];
        snprintf(endpoint, sizeof endpoint, "ipc://%s-1", ip);
        bool ok = zmq_bind(router, endpoint) == 0;

        /* The client's kernel_info_request, received whole: [identity, delimiter, sig,
         * header, parent, metadata, content]. */
        zmq_msg_t part[7];
        int got = 0;
        if (ok && mcp_kernel_wait_ready(k, &err) == 0) {
                for (bool more = true; more && got < 7; got++) {
                        zmq_msg_init(&part[got]);
                        if (zmq_msg_recv(&part[got], router, 0) < 0) {
                                zmq_msg_close(&part[got]);
                                break;
                        }
                        more = zmq_msg_more(&part[got]);
                }
        }
        bool received = got == 7;
        if (received) {
                const void *id = zmq_msg_data(&part[0]);
                size_t id_len = zmq_msg_size(&part[0]);
                const char *parent = zmq_msg_data(&part[3]);
                size_t parent_len = zmq_msg_size(&part[3]);
                char wrong[65];
                memcpy(wrong, key, 65);
                wrong[0] = wrong[0] == 'a' ? 'b' : 'a';
                reply(router, id, id_len, wrong, parent, parent_len, false);
                tap_check(run_until_stats(k, 0, 1, 5 * SEC), "a reply signed with another key is refused");
                reply(router, id, id_len, key, parent, parent_len, true);
                tap_check(run_until_stats(k, 0, 2, 5 * SEC), "an unsigned reply is refused");
                tap_check(mcp_kernel_get_stats(k).accepted == 0, "nothing was accepted");
                reply(router, id, id_len, key, parent, parent_len, false);
                tap_check(run_until_stats(k, 1, 2, 5 * SEC), "the same reply signed with the key is accepted");
                tap_check(!mcp_kernel_ready(k), "not ready without iopub");
        }
        for (int i = 0; i < got; i++)
                zmq_msg_close(&part[i]);
        mcp_kernel_free(k);
        zmq_close(router);
        zmq_ctx_term(ctx);
        remove_tmp_dir(fdir);
        ASSERT_TRUE(ok);
        ASSERT_TRUE(received);
}

/* A directory of another group (the sandbox's): the connection file is that group's,
 * 0640, so that a kernel running as another uid of the group can read it. */
TEST(connection_file_takes_the_directorys_group)
{
        if (geteuid() != 0) {
                tap_skip("connection_file_takes_the_directorys_group", "needs root (chown)");
                return;
        }
        char gdir[] = "/tmp/msp-kgroup-XXXXXX";
        ASSERT_NOT_NULL(mkdtemp(gdir));
        const gid_t gid = 54321;
        msp_err err = { 0 };
        mcp_kernel *k = NULL;
        struct stat st = { 0 };
        int r = chown(gdir, (uid_t) -1, gid);
        if (r == 0)
                r = mcp_kernel_new(loop, gdir, "/.msp/k", NULL, NULL, NULL, &k, &err);
        if (r == 0)
                r = stat(mcp_kernel_connection_file(k), &st);
        bool inside = k && strcmp(mcp_kernel_connection_file_in_kernel(k), "/.msp/k/kernel.json") == 0;
        mcp_kernel_free(k);
        remove_tmp_dir(gdir);
        ASSERT_OK_ERR(r, err);
        ASSERT_EQ_INT(st.st_gid, gid);
        ASSERT_EQ_INT(st.st_mode & 0777, 0640);
        ASSERT_TRUE(inside);
}

static bool
reaped_within(pid_t pid, uint64_t usec)
{
        uint64_t end = mcp_now_usec() + usec;
        do {
                if (waitpid(pid, NULL, WNOHANG) == pid)
                        return true;
                usleep(20000);
        } while (mcp_now_usec() < end);
        return false;
}

TEST(teardown_kills_the_kernel_and_removes_files)
{
        msp_err err = { 0 };
        expect(MCP_KERNEL_SHUTDOWN_REPLY);
        if (mcp_kernel_shutdown(kern, &err) == 0)
                tap_check(wait_hit(10 * SEC), "shutdown_request answered");
        bool exited = reaped_within(kernel_pid, 10 * SEC);
        if (!exited) {
                kill(kernel_pid, SIGKILL);
                exited = reaped_within(kernel_pid, 10 * SEC);
        }
        ASSERT_TRUE(exited);
        kernel_pid = -1;
        char conn[256];
        snprintf(conn, sizeof conn, "%s", mcp_kernel_connection_file(kern));
        kern = mcp_kernel_free(kern);
        ASSERT_TRUE(access(conn, F_OK) < 0 && errno == ENOENT);
        for (int i = 1; i <= 5; i++) {
                char sock[256];
                snprintf(sock, sizeof sock, "%s/kernel-%d", dir, i);
                ASSERT_TRUE(access(sock, F_OK) < 0 && errno == ENOENT);
        }
}

static void
run_or_skip(const char *name, void (*fn)(void), const char *why)
{
        if (why)
                tap_skip(name, why);
        else
                tap_run(name, fn);
}

int
main(void)
{
        signal(SIGPIPE, SIG_IGN);
        msp_err err = { 0 };
        if (mcp_loop_new(&loop) < 0 || !mkdtemp(dir)) {
                tap_diag("set-up failed");
                return 1;
        }
        have_ipykernel = access(PYTHON, X_OK) == 0 && python_has("ipykernel_launcher");
        have_matplotlib = have_ipykernel && python_has("matplotlib");
        if (!have_ipykernel)
                skip_why = "no ipykernel for " PYTHON " (Debian: python3-ipykernel)";
        RUN(badly_signed_reply_is_refused);
        RUN(connection_file_takes_the_directorys_group);
        if (have_ipykernel) {
                if (mcp_kernel_new(loop, dir, NULL, NULL, on_event, NULL, &kern, &err) < 0) {
                        tap_diag("%s", err.msg);
                        skip_why = "no kernel client";
                } else {
                        kernel_pid = start_kernel(mcp_kernel_connection_file(kern));
                }
        }
        run_or_skip("connection_file_is_ipc_and_signed", connection_file_is_ipc_and_signed, skip_why);
        run_or_skip("kernel_info_makes_it_ready", kernel_info_makes_it_ready, skip_why);
        run_or_skip("state_persists_across_cells", state_persists_across_cells, skip_why);
        run_or_skip("print_is_stdout", print_is_stdout, skip_why);
        run_or_skip("error_has_traceback_and_kernel_lives", error_has_traceback_and_kernel_lives, skip_why);
        run_or_skip("figure_is_display_data_png", figure_is_display_data_png,
                    skip_why ? skip_why : have_matplotlib ? NULL : "no matplotlib (Debian: python3-matplotlib)");
        run_or_skip("interrupt_ends_a_sleep", interrupt_ends_a_sleep, skip_why);
        run_or_skip("accepts_nothing_from_the_kernel_unverified", accepts_nothing_from_the_kernel_unverified, skip_why);
        run_or_skip("teardown_kills_the_kernel_and_removes_files", teardown_kills_the_kernel_and_removes_files, skip_why);
        if (kernel_pid > 0) {
                kill(kernel_pid, SIGKILL);
                waitpid(kernel_pid, NULL, 0);
        }
        if (kern)
                mcp_kernel_free(kern);
        if (getenv("MSP_KEEP_KERNEL_DIR") == NULL)
                remove_tmp_dir(dir);
        else
                tap_diag("kept %s", dir);
        mcp_loop_free(loop);
        return tap_done();
}
