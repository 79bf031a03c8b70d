/* The kernel client (kernel-client.h): the connection file, the five sockets watched by the loop,
 * the requests and the matching of replies to them by their parent's msg_id. */
#include "kernel/kernel-client.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "base/base.h"
#include "kernel/kernel-cell.h"
#include "kernel/kernel-wire.h"
#include "observe/observe.h"
#include "oci/oci.h"

enum { SHELL, IOPUB, STDIN, CONTROL, HB, N_SOCKETS };
/* The port numbers of the connection file: with transport ipc the kernel binds
 * "<ip>-<port>", so they only name the socket files. */
static const int socket_port[N_SOCKETS] = { 1, 2, 3, 4, 5 };
static const char *const socket_name[N_SOCKETS] = { "shell", "iopub", "stdin", "control", "hb" };
static const char *const port_key[N_SOCKETS] = { "shell_port", "iopub_port", "stdin_port",
                                                 "control_port", "hb_port" };
#define READY_RETRY_USEC 20000
#define READY_RETRIES_MAX 1500u         /* 30 s of kernel_info_request */
#define PING "ping"
#define DRAIN_BATCH 256u              /* messages per loop round */

struct mcp_kernel {
        mcp_loop *loop;
        mcp_logger *lg;
        mcp_kernel_fn fn;
        void *data;
        void *ctx;
        void *sock[N_SOCKETS];
        int fd[N_SOCKETS];              /* ZMQ_FD, watched; -1 when not */
        char *kernel_dir;               /* the sockets' directory as the kernel sees it */
        int dir_fd;                     /* O_PATH: the same directory, as msp-mcp sees it */
        char *endpoint_dir;             /* what the endpoints name it by: /proc/self/fd/N
                                         * of dir_fd */
        char *conn_file, *kernel_conn_file;     /* its kernel.json: host view, kernel's view */
        char key[KERNEL_KEY_LEN + 1];
        char session[KERNEL_ID_LEN + 1];
        mcp_timer *drain_timer, *retry_timer;
        char info_id[KERNEL_ID_LEN + 1];
        unsigned info_tries;
        bool info_replied, iopub_seen, ready;
        char exec_id[KERNEL_ID_LEN + 1];
        bool busy, conn_written;
        mcp_kernel_cell cell;
        mcp_kernel_stats stats;
};

static char *
socket_path(const char *dir, int i)
{
        char *p = NULL;
        if (asprintf(&p, "%s/kernel-%d", dir, socket_port[i]) < 0)
                return NULL;
        return p;
}

/* "dir/name" malloc'd, or NULL (asprintf leaves its pointer undefined on failure). */
static char *
path_in(const char *dir, const char *name)
{
        char *p = NULL;
        return asprintf(&p, "%s/%s", dir, name) < 0 ? NULL : p;
}

static int
write_connection_file(mcp_kernel *k, msp_err *err)
{
        _cleanup_jw_ oci_jw *w = oci_jw_new(true);
        if (!w)
                return msp_err_set(err, ENOMEM, "kernel: out of memory");
        _cleanup_free_ char *ip = NULL;
        if (asprintf(&ip, "%s/kernel", k->kernel_dir) < 0)
                return msp_err_set(err, ENOMEM, "kernel: out of memory");
        oci_jw_begin_object(w);
        oci_jw_kv_string(w, "transport", "ipc");
        oci_jw_kv_string(w, "ip", ip);
        for (int i = 0; i < N_SOCKETS; i++)
                oci_jw_kv_int64(w, port_key[i], socket_port[i]);
        oci_jw_kv_string(w, "key", k->key);
        oci_jw_kv_string(w, "signature_scheme", "hmac-sha256");
        oci_jw_kv_string(w, "kernel_name", "");
        oci_jw_end_object(w);
        _cleanup_free_ char *json = NULL;
        size_t len;
        int r = oci_jw_finish(w, &json, &len, err);
        if (r < 0)
                return r;
        /* The key is what lets a process speak to the kernel: 0600, or 0640 in the
         * directory's group when that is not ours (the sandbox's, whose programs run as
         * another uid of that group and must read it). */
        struct stat st;
        if (fstat(k->dir_fd, &st) < 0)
                return msp_err_sys(err, errno, "kernel: %s", k->conn_file);
        bool group = st.st_gid != getegid();
        r = mcp_write_new_at(k->dir_fd, "kernel.json", json, len, group ? 0640 : 0600, err);
        if (r < 0)
                return r;
        k->conn_written = true;
        if (group && (fchownat(k->dir_fd, "kernel.json", (uid_t) -1, st.st_gid,
                               AT_SYMLINK_NOFOLLOW) < 0 ||
                      fchmodat(k->dir_fd, "kernel.json", 0640, 0) < 0))
                return msp_err_sys(err, errno, "kernel: %s: group %u", k->conn_file,
                                   (unsigned) st.st_gid);
        return 0;
}

static int
open_socket(mcp_kernel *k, int i, msp_err *err)
{
        static const int type[N_SOCKETS] = { ZMQ_DEALER, ZMQ_SUB, ZMQ_DEALER, ZMQ_DEALER, ZMQ_REQ };
        void *s = zmq_socket(k->ctx, type[i]);
        if (!s)
                return msp_err_sys(err, errno, "kernel: %s socket", socket_name[i]);
        k->sock[i] = s;
        int linger = 0, ivl = 10;
        int64_t max = MCP_KERNEL_PART_MAX;
        /* linger 0: closing never waits for a dead kernel; the reconnect interval is short
         * because the kernel binds only once it started; libzmq drops a peer whose message
         * part is over the bound before we ever see it. */
        if (zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof linger) < 0 ||
            zmq_setsockopt(s, ZMQ_RECONNECT_IVL, &ivl, sizeof ivl) < 0 ||
            zmq_setsockopt(s, ZMQ_MAXMSGSIZE, &max, sizeof max) < 0 ||
            (i == IOPUB && zmq_setsockopt(s, ZMQ_SUBSCRIBE, "", 0) < 0))
                return msp_err_sys(err, errno, "kernel: %s options", socket_name[i]);
        _cleanup_free_ char *path = socket_path(k->endpoint_dir, i);
        _cleanup_free_ char *endpoint = NULL;
        if (!path || asprintf(&endpoint, "ipc://%s", path) < 0)
                return msp_err_set(err, ENOMEM, "kernel: out of memory");
        if (zmq_connect(s, endpoint) < 0)
                return msp_err_sys(err, errno, "kernel: connect %s", socket_name[i]);
        return 0;
}

static void
emit(mcp_kernel *k, mcp_kernel_event ev, int *ret)
{
        if (*ret >= 0 && k->fn)
                *ret = k->fn(k, ev, k->data);
}

static int send_kernel_info(mcp_kernel *k, msp_err *err);

static int
retry_kernel_info(mcp_loop *loop, void *data)
{
        (void) loop;
        mcp_kernel *k = data;
        k->retry_timer = NULL;
        msp_err err = { 0 };
        if (send_kernel_info(k, &err) < 0)
                mcp_log(k->lg, MCP_LOG_WARNING, "%s", err.msg);
        return 0;
}

static void
ready_check(mcp_kernel *k, int *ret)
{
        if (k->ready || !k->info_replied)
                return;
        if (k->iopub_seen) {
                k->ready = true;
                emit(k, MCP_KERNEL_READY, ret);
                return;
        }
        /* The reply came but iopub said nothing yet: its subscription may not have reached
         * the kernel; ask again, so that the next status shows it. */
        if (!k->retry_timer && k->info_tries < READY_RETRIES_MAX) {
                k->info_replied = false;
                if (mcp_loop_add_timer(k->loop, READY_RETRY_USEC, retry_kernel_info, k,
                                       &k->retry_timer) < 0)
                        k->retry_timer = NULL;
        }
}

static void
cell_done_check(mcp_kernel *k, int *ret)
{
        if (k->busy && k->cell.got_reply && k->cell.got_idle) {
                k->busy = false;
                emit(k, MCP_KERNEL_CELL_DONE, ret);
        }
}

static void
handle(mcp_kernel *k, int i, const kernel_msg *m, int *ret)
{
        const char *t = m->msg_type, *pid = m->parent_id;
        bool ours_info = k->info_id[0] && strcmp(pid, k->info_id) == 0;
        bool ours_exec = k->exec_id[0] && strcmp(pid, k->exec_id) == 0;
        if (i == IOPUB) {
                if (strcmp(t, "status") == 0 && (ours_info || ours_exec))
                        k->iopub_seen = true;
                if (ours_exec && k->busy) {
                        kernel_cell_iopub(&k->cell, m);
                        cell_done_check(k, ret);
                } else if (!ours_info && !ours_exec) {
                        k->stats.unrelated++;
                }
                ready_check(k, ret);
                return;
        }
        if (strcmp(t, "kernel_info_reply") == 0 && ours_info) {
                k->info_replied = true;
                ready_check(k, ret);
        } else if (strcmp(t, "execute_reply") == 0 && ours_exec && k->busy) {
                kernel_cell_reply(&k->cell, m);
                cell_done_check(k, ret);
        } else if (strcmp(t, "interrupt_reply") == 0) {
                emit(k, MCP_KERNEL_INTERRUPT_REPLY, ret);
        } else if (strcmp(t, "shutdown_reply") == 0) {
                emit(k, MCP_KERNEL_SHUTDOWN_REPLY, ret);
        } else {
                k->stats.unrelated++;
        }
}

/* The heartbeat is an echo of raw bytes, not a signed message. */
static void
drain_hb(mcp_kernel *k, int *ret)
{
        char buf[16];
        for (;;) {
                int n = zmq_recv(k->sock[HB], buf, sizeof buf, ZMQ_DONTWAIT);
                if (n < 0)
                        return;
                if (n == (int) strlen(PING) && memcmp(buf, PING, n) == 0)
                        emit(k, MCP_KERNEL_HEARTBEAT, ret);
                else
                        k->stats.refused++;
        }
}

static bool
readable(void *sock)
{
        int events = 0;
        size_t len = sizeof events;
        return zmq_getsockopt(sock, ZMQ_EVENTS, &events, &len) == 0 && (events & ZMQ_POLLIN);
}

/* Everything queued on every socket: ZMQ_FD signals an edge only, and a send or receive
 * on one socket may consume it, so stopping early could leave a message unseen. */
static void schedule_drain(mcp_kernel *k);

static int
drain(mcp_kernel *k)
{
        int ret = 0;
        unsigned taken = 0;
        bool again = true;
        while (again && ret >= 0) {
                again = false;
                for (int i = 0; i < N_SOCKETS && ret >= 0; i++) {
                        if (!readable(k->sock[i]))
                                continue;
                        /* A kernel that floods must not hold the loop: the rest waits for
                         * the next round. */
                        if (++taken > DRAIN_BATCH) {
                                schedule_drain(k);
                                return ret;
                        }
                        again = true;
                        if (i == HB) {
                                drain_hb(k, &ret);
                                continue;
                        }
                        kernel_msg m;
                        msp_err err = { 0 };
                        int r = kernel_wire_recv(k->sock[i], k->key, &m, &err);
                        if (r == -EBADMSG) {
                                /* The first one is news; a kernel sending more must not
                                 * flood the log. */
                                mcp_log(k->lg, k->stats.refused++ ? MCP_LOG_DEBUG : MCP_LOG_WARNING,
                                        "kernel: refused a message on %s: %s", socket_name[i],
                                        err.msg);
                                continue;
                        }
                        if (r <= 0) {
                                if (r < 0)
                                        mcp_log(k->lg, MCP_LOG_WARNING, "%s", err.msg);
                                continue;
                        }
                        k->stats.accepted++;
                        handle(k, i, &m, &ret);
                        kernel_msg_clear(&m);
                }
        }
        return ret;
}

static int
on_fd(mcp_loop *loop, int fd, uint32_t events, void *data)
{
        (void) loop, (void) fd, (void) events;
        return drain(data);
}

static int
on_drain_timer(mcp_loop *loop, void *data)
{
        (void) loop;
        mcp_kernel *k = data;
        k->drain_timer = NULL;
        return drain(k);
}

/* After a send: the next loop turn drains, since the send may have taken the edge. */
static void
schedule_drain(mcp_kernel *k)
{
        if (!k->drain_timer && mcp_loop_add_timer(k->loop, 0, on_drain_timer, k, &k->drain_timer) < 0)
                k->drain_timer = NULL;
}

static int
header_json(mcp_kernel *k, const char *msg_type, char id[KERNEL_ID_LEN + 1], char **ret,
            msp_err *err)
{
        int r = kernel_random_hex(id, KERNEL_ID_LEN / 2, err);
        if (r < 0)
                return r;
        uint64_t now = mcp_wallclock_usec();
        time_t sec = (time_t) (now / 1000000);
        struct tm tm;
        char date[64];
        gmtime_r(&sec, &tm);
        snprintf(date, sizeof date, "%04d-%02d-%02dT%02d:%02d:%02d.%06uZ", tm.tm_year + 1900,
                 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                 (unsigned) (now % 1000000));
        _cleanup_jw_ oci_jw *w = oci_jw_new(false);
        if (!w)
                return msp_err_set(err, ENOMEM, "kernel: out of memory");
        oci_jw_begin_object(w);
        oci_jw_kv_string(w, "msg_id", id);
        oci_jw_kv_string(w, "session", k->session);
        oci_jw_kv_string(w, "username", "msp");
        oci_jw_kv_string(w, "date", date);
        oci_jw_kv_string(w, "msg_type", msg_type);
        oci_jw_kv_string(w, "version", "5.3");
        oci_jw_end_object(w);
        return oci_jw_finish(w, ret, NULL, err);
}

static int
request(mcp_kernel *k, int sock, const char *msg_type, const char *content,
        char id[KERNEL_ID_LEN + 1], msp_err *err)
{
        _cleanup_free_ char *header = NULL;
        int r = header_json(k, msg_type, id, &header, err);
        if (r < 0)
                return r;
        r = kernel_wire_send(k->sock[sock], k->key, header, content, err);
        schedule_drain(k);
        return r;
}

static int
send_kernel_info(mcp_kernel *k, msp_err *err)
{
        k->info_tries++;
        return request(k, SHELL, "kernel_info_request", "{}", k->info_id, err);
}

int
mcp_kernel_new(mcp_loop *loop, const char *dir, const char *kernel_dir, mcp_logger *lg,
               mcp_kernel_fn fn, void *data, mcp_kernel **ret, msp_err *err)
{
        if (!kernel_dir)
                kernel_dir = dir;
        if (strlen(kernel_dir) > MCP_KERNEL_DIR_MAX)
                return msp_err_set(err, ENAMETOOLONG, "kernel: %s: too long for unix sockets",
                                   kernel_dir);
        mcp_kernel *k = calloc(1, sizeof *k);
        if (!k)
                return msp_err_set(err, ENOMEM, "kernel: out of memory");
        k->loop = loop;
        k->lg = lg;
        k->fn = fn;
        k->data = data;
        for (int i = 0; i < N_SOCKETS; i++)
                k->fd[i] = -1;
        int r = -ENOMEM;
        /* O_NOFOLLOW: a session's kernel dir is writable by its sandbox, whose symlink
         * there must not make this write the key into a host directory. */
        k->dir_fd = open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (k->dir_fd < 0) {
                r = msp_err_sys(err, errno, "kernel: %s", dir);
                goto fail;
        }
        /* connect() follows the magic link of an O_PATH directory fd: the endpoints name
         * the directory opened here, always (a path would be looked up again at every
         * reconnect, after the sandbox may have put a symlink in its place; and a host
         * directory too deep for sun_path is reached too; the kernel's view is bounded
         * above). */
        char fd_dir[32];
        snprintf(fd_dir, sizeof fd_dir, "/proc/self/fd/%d", k->dir_fd);
        k->endpoint_dir = strdup(fd_dir);
        k->kernel_dir = strdup(kernel_dir);
        k->conn_file = path_in(dir, "kernel.json");
        k->kernel_conn_file = path_in(kernel_dir, "kernel.json");
        if (!k->endpoint_dir || !k->kernel_dir || !k->conn_file || !k->kernel_conn_file) {
                msp_err_set(err, ENOMEM, "kernel: out of memory");
                goto fail;
        }
        if ((r = kernel_random_hex(k->key, KERNEL_KEY_LEN / 2, err)) < 0 ||
            (r = kernel_random_hex(k->session, KERNEL_ID_LEN / 2, err)) < 0 ||
            (r = write_connection_file(k, err)) < 0)
                goto fail;
        k->ctx = zmq_ctx_new();
        if (!k->ctx) {
                r = msp_err_sys(err, errno, "kernel: zmq context");
                goto fail;
        }
        /* One I/O thread (libzmq's default, said here): the client adds none of its own. */
        zmq_ctx_set(k->ctx, ZMQ_IO_THREADS, 1);
        for (int i = 0; i < N_SOCKETS; i++) {
                if ((r = open_socket(k, i, err)) < 0)
                        goto fail;
                size_t len = sizeof k->fd[i];
                int fd;
                if (zmq_getsockopt(k->sock[i], ZMQ_FD, &fd, &len) < 0) {
                        r = msp_err_sys(err, errno, "kernel: %s ZMQ_FD", socket_name[i]);
                        goto fail;
                }
                r = mcp_loop_add_io(loop, fd, EPOLLIN | EPOLLET, on_fd, k);
                if (r < 0) {
                        msp_err_sys(err, -r, "kernel: watch %s", socket_name[i]);
                        goto fail;
                }
                k->fd[i] = fd;
        }
        *ret = k;
        return 0;
fail:
        mcp_kernel_free(k);
        return r;
}

mcp_kernel *
mcp_kernel_free(mcp_kernel *k)
{
        if (!k)
                return NULL;
        mcp_timer_cancel(k->loop, k->drain_timer);
        mcp_timer_cancel(k->loop, k->retry_timer);
        for (int i = 0; i < N_SOCKETS; i++) {
                if (k->fd[i] >= 0)
                        mcp_loop_del_io(k->loop, k->fd[i]);
                if (k->sock[i])
                        zmq_close(k->sock[i]);
        }
        if (k->ctx)
                zmq_ctx_term(k->ctx);
        /* The kernel removes its socket files when it exits cleanly; a killed one leaves
         * them behind. The connection file is removed only once it was written (a failed
         * new must not remove another client's). */
        if (k->dir_fd >= 0) {
                for (int i = 0; i < N_SOCKETS; i++) {
                        char name[32];
                        snprintf(name, sizeof name, "kernel-%d", socket_port[i]);
                        (void) unlinkat(k->dir_fd, name, 0);
                }
                if (k->conn_written)
                        (void) unlinkat(k->dir_fd, "kernel.json", 0);
                close(k->dir_fd);
        }
        kernel_cell_clear(&k->cell);
        free(k->conn_file);
        free(k->kernel_conn_file);
        free(k->kernel_dir);
        free(k->endpoint_dir);
        free(k);
        return NULL;
}

const char *
mcp_kernel_connection_file(const mcp_kernel *k)
{
        return k->conn_file;
}

const char *
mcp_kernel_connection_file_in_kernel(const mcp_kernel *k)
{
        return k->kernel_conn_file;
}

bool
mcp_kernel_ready(const mcp_kernel *k)
{
        return k->ready;
}

bool
mcp_kernel_busy(const mcp_kernel *k)
{
        return k->busy;
}

mcp_kernel_stats
mcp_kernel_get_stats(const mcp_kernel *k)
{
        return k->stats;
}

const mcp_kernel_cell *
mcp_kernel_last_cell(const mcp_kernel *k)
{
        return &k->cell;
}

void
mcp_kernel_take_cell(mcp_kernel *k, mcp_kernel_cell *to)
{
        *to = k->cell;
        k->cell = (mcp_kernel_cell){ 0 };
        k->busy = false;
}

int
mcp_kernel_wait_ready(mcp_kernel *k, msp_err *err)
{
        k->ready = k->info_replied = k->iopub_seen = false;
        k->info_tries = 0;
        return send_kernel_info(k, err);
}

int
mcp_kernel_execute(mcp_kernel *k, const char *code, msp_err *err)
{
        if (k->busy)
                return msp_err_set(err, EBUSY, "kernel: a cell is running");
        if (strlen(code) > MCP_KERNEL_CODE_MAX)
                return msp_err_set(err, E2BIG, "kernel: code over %u bytes", MCP_KERNEL_CODE_MAX);
        _cleanup_jw_ oci_jw *w = oci_jw_new(false);
        if (!w)
                return msp_err_set(err, ENOMEM, "kernel: out of memory");
        oci_jw_begin_object(w);
        oci_jw_key(w, "code");
        mcp_jw_text(w, code);
        oci_jw_kv_bool(w, "silent", false);
        oci_jw_kv_bool(w, "store_history", true);
        oci_jw_key(w, "user_expressions");
        oci_jw_begin_object(w);
        oci_jw_end_object(w);
        /* No input_request: a cell that reads stdin gets an error instead of waiting. */
        oci_jw_kv_bool(w, "allow_stdin", false);
        /* false: after an error ipykernel would abort what reaches it within the next
         * loop turn, the next cell of a busy host among it; there is never a queue to
         * abort, since one cell runs at a time. */
        oci_jw_kv_bool(w, "stop_on_error", false);
        oci_jw_end_object(w);
        _cleanup_free_ char *content = NULL;
        int r = oci_jw_finish(w, &content, NULL, err);
        if (r < 0)
                return r;
        kernel_cell_clear(&k->cell);
        r = request(k, SHELL, "execute_request", content, k->exec_id, err);
        if (r < 0)
                return r;
        k->busy = true;
        return 0;
}

int
mcp_kernel_interrupt(mcp_kernel *k, msp_err *err)
{
        char id[KERNEL_ID_LEN + 1];
        return request(k, CONTROL, "interrupt_request", "{}", id, err);
}

int
mcp_kernel_shutdown(mcp_kernel *k, msp_err *err)
{
        char id[KERNEL_ID_LEN + 1];
        return request(k, CONTROL, "shutdown_request", "{\"restart\":false}", id, err);
}

int
mcp_kernel_ping(mcp_kernel *k, msp_err *err)
{
        if (zmq_send(k->sock[HB], PING, strlen(PING), ZMQ_DONTWAIT) < 0)
                return msp_err_sys(err, errno, "kernel: heartbeat");
        schedule_drain(k);
        return 0;
}
