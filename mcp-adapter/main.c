/* msp-mcp: the MCP server that runs agents' code in a fresh msp sandbox per call.
 *
 * main() parses the configuration, checks that the host can enforce the default policy,
 * and serves JSON-RPC on stdin/stdout (or Streamable HTTP with --listen: http.c) from one
 * event loop until EOF or SIGTERM/SIGINT; both (and SIGHUP, which with --listen reloads the
 * bearer tokens and with --audit-log FILE reopens that file instead) end with every run
 * killed and cleaned up and exit status 0. With
 * --listen the first SIGTERM drains first: open requests finish within --drain-timeout. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "observe/observe.h"
#include "config.h"
#include "engine/engine.h"
#include "langcache.h"
#include "base/base.h"
#include "http/http.h"
#include "image/image.h"
#include "host/host.h"
#include "mcp/mcp.h"

#ifndef MSP_VERSION
#define MSP_VERSION "unknown"
#endif

typedef struct signals {
        mcp_logger *lg;
        mcp_http *http;                 /* --listen: SIGHUP reloads its tokens */
        mcp_audit *audit;               /* --audit-log: SIGHUP reopens it (log rotation) */
        bool audit_file;
        bool draining;
} signals;

static void
drained(void *data)
{
        mcp_loop_exit(data, 0);
}

static int
on_signal(mcp_loop *loop, int fd, uint32_t events _unused_, void *data)
{
        signals *sg = data;
        struct signalfd_siginfo si;
        if (read(fd, &si, sizeof si) != (ssize_t) sizeof si)
                return 0;
        if (si.ssi_signo == SIGHUP && (sg->http || sg->audit_file)) {
                msp_err err = { 0 };
                if (mcp_audit_reopen(sg->audit, &err) < 0)
                        mcp_log(sg->lg, MCP_LOG_ERROR, "%s", err.msg);
                if (sg->http)
                        mcp_http_reload(sg->http);
                return 0;
        }
        /* The first SIGTERM drains the HTTP transport; a second one stops at once. */
        if (si.ssi_signo == SIGTERM && sg->http && !sg->draining) {
                sg->draining = true;
                mcp_log(sg->lg, MCP_LOG_INFO, "signal %u: draining", si.ssi_signo);
                mcp_http_drain(sg->http, drained, loop);
                return 0;
        }
        mcp_log(sg->lg, MCP_LOG_INFO, "signal %u: stopping", si.ssi_signo);
        mcp_loop_exit(loop, 0);
        return 0;
}

/* The protocol stream gets private fds; fds 0 and 1 become /dev/null and stderr so that
 * nothing else (a child, a stray printf) can read requests or write into the stream. */
static int
take_stdio(int *ret_in, int *ret_out)
{
        int in = fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3);
        int out = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
        if (in < 0 || out < 0)
                return -errno;
        int null = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (null < 0 || dup2(null, STDIN_FILENO) < 0)
                return -errno;
        if (dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
                return -errno;
        close(null);
        *ret_in = in;
        *ret_out = out;
        return 0;
}

/* Every --image unpacked (or found in the cache) before the engine mounts the rootfs
 * views; images[i] backs cfg->rootfs[i] and lives as long as cfg. */
static int
prepare_images(mcp_config *cfg, mcp_logger *lg, mcp_image_rootfs *images, msp_err *fail)
{
        mcp_image_opts o = { .cache_dir = cfg->image_cache, .max_bytes = cfg->image_max_bytes,
                             .podman = "podman", .unpack_helper = cfg->unpack_path };
        /* The sandboxes' ids: settled as root; run by a user, what its namespace will map. */
        unsigned ids = MCP_SANDBOX_ID_COUNT;
        if (geteuid() != 0) {
                mcp_rootless rl;
                mcp_rootless_probe(&rl);
                ids = mcp_rootless_id_count(&rl);
        }
        for (size_t i = 0; i < cfg->n_rootfs; i++) {
                mcp_rootfs *rf = &cfg->rootfs[i];
                if (!rf->image)
                        continue;
                msp_err err = { 0 };
                if (mcp_image_prepare(&o, rf->image, &images[i], &err) < 0)
                        return msp_err_set(fail, EINVAL, "--image %s: %s", rf->name, err.msg);
                rf->path = images[i].rootfs;
                rf->env = (const char *const *) images[i].defaults.env;
                rf->workdir = images[i].defaults.workdir;
                rf->read_dirs = (const char *const *) images[i].top_dirs;
                rf->read_files = (const char *const *) images[i].top_files;
                rf->has_user = images[i].has_user;
                rf->user = (mcp_run_ids) { images[i].uid, images[i].gid };
                if (rf->has_user && (images[i].uid >= ids || images[i].gid >= ids))
                        return msp_err_set(fail, ERANGE, "--image %s: User \"%s\" is %u:%u, outside "
                                           "the sandboxes' %u ids (0..%u)", rf->name,
                                           images[i].defaults.user, images[i].uid,
                                           images[i].gid, ids, ids - 1);
                mcp_log(lg, MCP_LOG_INFO, "image %s: %s %s (%s)", rf->name,
                        images[i].unpacked ? "unpacked into" : "cached at", rf->path,
                        images[i].digest);
        }
        return 0;
}

static int serve_with_fds(mcp_config *cfg, mcp_logger *lg, mcp_image_rootfs *images, int in,
                          int out, msp_err *fail);

/* Everything that can fail before the server is up fills *fail (printed once by main,
 * and on stdio also answered to the client: answer_startup_failure). */
static int
serve(mcp_config *cfg, mcp_logger *lg, mcp_image_rootfs *images, int in, int out,
      msp_err *fail)
{
        /* Before anything takes fds: the soft limit raised, the split decided
         * (config-fds.c). */
        mcp_fds fds;
        if (mcp_config_fds_init(cfg, &fds, fail) < 0)
                return 1;
        cfg->fds = &fds;
        if (fds.limit != fds.started_with)
                mcp_log(lg, MCP_LOG_INFO, "RLIMIT_NOFILE raised from %u to %u", fds.started_with,
                        fds.limit);
        int status = serve_with_fds(cfg, lg, images, in, out, fail);
        cfg->fds = NULL;
        mcp_fds_done(&fds);
        return status;
}

/* The signals that stop the server: serve_with_fds takes them through a signalfd,
 * answer_startup_failure unblocks them (one ends it at once). SIGHUP on stdio: the
 * terminal went away, the same clean stop. */
static sigset_t
stop_signals(void)
{
        sigset_t mask;
        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGHUP);
        return mask;
}

static int
serve_with_fds(mcp_config *cfg, mcp_logger *lg, mcp_image_rootfs *images, int in, int out,
               msp_err *fail)
{
        msp_err err = { 0 };
        int r;

        /* Its files first: a bad one fails at once. Served once the engine is up. */
        _cleanup_(mcp_http_freep) mcp_http *http = NULL;
        if (cfg->listen && mcp_http_new(cfg, &http, fail) < 0)
                return 1;
        /* Before the host checks: a path that cannot be opened fails at once. */
        _cleanup_(mcp_audit_freep) mcp_audit *audit = NULL;
        if (cfg->audit_log && mcp_audit_open(cfg->audit_log, &audit, fail) < 0)
                return 1;
        lg->audit = audit;
        /* Without an output: the requirements only, no language programs (--check's). */
        r = mcp_check_host(cfg, NULL, &err);
        if (r < 0) {
                if (!cfg->weak_policy) {
                        msp_err_set(fail, -r, "this host cannot enforce the default sandbox "
                                    "policy: %s; run 'msp-mcp --check' for every requirement, "
                                    "or start with --allow-weak-policy to run with a weaker "
                                    "policy", err.msg);
                        return 1;
                }
                mcp_log(lg, MCP_LOG_WARNING, "--allow-weak-policy: running although %s", err.msg);
        }
        /* After the check, which as root settles the sandboxes' host ids: the images' owners
         * are shifted to them. */
        if (prepare_images(cfg, lg, images, fail) < 0)
                return 1;

        sigset_t mask = stop_signals();
        if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
                return msp_err_sys(fail, errno, "blocking signals"), 1;
        _cleanup_close_ int sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
        if (sfd < 0)
                return msp_err_sys(fail, errno, "signalfd"), 1;

        /* With the signals blocked (one that comes meanwhile stops the server cleanly after)
         * and stdio taken (the probing child writes nothing into the stream). */
        /* The host's languages, detected once: the cache's keys name them, the engine lists
         * them. */
        _cleanup_free_ mcp_host *host = malloc(sizeof *host);
        if (!host)
                return msp_err_set(fail, ENOMEM, "out of memory"), 1;
        if (mcp_host_detect(host, fail) < 0)
                return 1;
        mcp_lang_verdicts verdicts;
        char cache[4200];
        mcp_langcache_path(cache, sizeof cache);
        if (mcp_langcache_verdicts(cfg, host, cache, &verdicts, &err) < 0)
                mcp_log(lg, MCP_LOG_WARNING, "languages listed untried: %s", err.msg);
        else if (verdicts.n_probed)
                mcp_log(lg, MCP_LOG_INFO, "languages: %zu programs run in the sandbox, verdicts "
                        "kept in %s%s%s", verdicts.n_probed, cache[0] ? cache : "(nowhere)",
                        verdicts.note[0] ? "; " : "", verdicts.note);

        _cleanup_loop_ mcp_loop *loop = NULL;
        signals sg = { .lg = lg, .audit = audit,
                       .audit_file = cfg->audit_log && strcmp(cfg->audit_log, "-") != 0 };
        r = mcp_loop_new(&loop);
        if (r < 0 || mcp_loop_add_io(loop, sfd, EPOLLIN, on_signal, &sg) < 0)
                return msp_err_set(fail, r < 0 ? -r : EINVAL, "event loop: %s",
                                   strerror(r < 0 ? -r : EINVAL)), 1;
        mcp_engine *engine = NULL;
        r = mcp_engine_new(loop, cfg, host, &engine, fail);
        if (r < 0) {
                if (!fail->msg[0])
                        msp_err_set(fail, -r, "%s", strerror(-r));
                return 1;
        }
        for (size_t i = 0; i < verdicts.n_broken; i++)
                mcp_engine_language_drop(engine, verdicts.broken[i], verdicts.why[i]);
        /* One transport: --listen serves HTTP, otherwise stdio. */
        mcp_server *srv = NULL;
        if (http)
                r = mcp_http_start(http, loop, engine, lg, &err);
        else
                r = mcp_server_new(loop, cfg, engine, lg, in, out, &srv);
        if (r < 0) {
                msp_err_set(fail, EIO, "%s", http ? err.msg : "serving stdio");
                http = mcp_http_free(http);
                mcp_engine_free(engine);
                return 1;
        }
        sg.http = http;
        const char *off, *why;
        for (size_t i = 0; (off = mcp_engine_language_off(engine, i, &why)); i++)
                mcp_log(lg, MCP_LOG_WARNING, "language %s not listed: %s", off, why);
        mcp_log(lg, MCP_LOG_INFO, "msp-mcp %s ready (runtime %s)", MSP_VERSION, cfg->runtime_path);
        r = mcp_loop_run(loop);
        if (r < 0)
                mcp_log(lg, MCP_LOG_ERROR, "event loop: %s", strerror(-r));
        /* Calls first (their runs are cancelled, no responses), then the engine removes
         * every container, bundle and fresh workspace. */
        mcp_server_free(srv);
        http = mcp_http_free(http);
        mcp_engine_free(engine);
        mcp_loop_del_io(loop, sfd);
        return r < 0 ? 1 : 0;
}

typedef struct failed_start {
        mcp_loop *loop;
        char message[sizeof ((msp_err *) 0)->msg + 32];
} failed_start;

static void
failed_on_msg(mcp_rpc *rpc, mcp_rpc_msg *msg, void *data)
{
        failed_start *f = data;
        if (msg->method && msg->id.kind != MCP_ID_NONE)
                (void) mcp_rpc_send_error(rpc, &msg->id, MCP_RPC_INTERNAL_ERROR, f->message);
        mcp_rpc_msg_clear(msg);
}

static void
failed_on_eof(mcp_rpc *rpc, void *data)
{
        (void) rpc;
        mcp_loop_exit(((failed_start *) data)->loop, 0);
}

/* On stdio a server that exits at start leaves the client with "connection closed":
 * instead, every request up to EOF (initialize first) is answered with why, as a JSON-RPC
 * error the client shows its user. The exit status stays 1. */
static void
answer_startup_failure(int in, int out, const char *why)
{
        failed_start f;
        snprintf(f.message, sizeof f.message, "msp-mcp cannot start: %s", why);
        sigset_t mask = stop_signals();
        (void) sigprocmask(SIG_UNBLOCK, &mask, NULL);
        _cleanup_loop_ mcp_loop *loop = NULL;
        if (mcp_loop_new(&loop) < 0)
                return;
        f.loop = loop;
        mcp_rpc *rpc = NULL;
        if (mcp_rpc_new(loop, in, out, 1u << 20, failed_on_msg, failed_on_eof, &f, &rpc) < 0)
                return;
        (void) mcp_loop_run(loop);
        mcp_rpc_free(rpc);
}

/* serve(), its failure printed once; on stdio also answered to the client. */
static int
serve_or_explain(mcp_config *cfg, mcp_logger *lg, mcp_image_rootfs *images)
{
        msp_err fail = { 0 };
        _cleanup_close_ int in = -1, out = -1;
        int status = 1;
        if (take_stdio(&in, &out) < 0)
                msp_err_sys(&fail, errno, "taking stdio");
        else if (!images)
                msp_err_set(&fail, ENOMEM, "out of memory");
        else
                status = serve(cfg, lg, images, in, out, &fail);
        /* (a failure after start, of the event loop, is logged where it happened) */
        if (status == 0 || !fail.msg[0])
                return status;
        mcp_log_stderr("%s", fail.msg);
        if (!cfg->listen && in >= 0)
                answer_startup_failure(in, out, fail.msg);
        return status;
}

int
main(int argc, char **argv)
{
        /* A client that goes away must not kill us mid-cleanup: EPIPE is handled. */
        signal(SIGPIPE, SIG_IGN);
        /* msp-mcp is never socket-activated: the runtimes would take fds 3.. as LISTEN_FDS
         * and pass them, our status pipe on fd 3 included, to the program. */
        (void) unsetenv("LISTEN_FDS");
        (void) unsetenv("LISTEN_PID");
        (void) unsetenv("LISTEN_FDNAMES");
        /* A parent that closed one of fds 0-2: none may stay free, or the next file
         * opened would receive requests, replies or log lines. */
        for (int fd = 0; fd <= 2; fd++)
                if (fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
                        int n = open("/dev/null", O_RDWR);
                        if (n >= 0 && n != fd) {
                                (void) dup2(n, fd);
                                close(n);
                        }
                }

        mcp_config cfg;
        mcp_config_action action;
        msp_err err = { 0 };
        int r = mcp_config_load(&cfg, argc, argv, &action, &err);
        if (r < 0) {
                mcp_log_stderr("%s", err.msg);
                mcp_config_done(&cfg);
                return 2;
        }
        int status = 0;
        switch (action) {
        case MCP_ACTION_HELP:
                mcp_config_help(stdout);
                break;
        case MCP_ACTION_VERSION:
                printf("msp-mcp version %s\n", MSP_VERSION);
                break;
        case MCP_ACTION_MAN:
                mcp_config_man(stdout);
                break;
        case MCP_ACTION_CHECK:
                r = mcp_check_host(&cfg, stdout, &err);
                mcp_config_fds_check(&cfg, stdout);
                mcp_http_check(&cfg, stdout);
                mcp_audit_check(cfg.audit_log, stdout);
                if (r < 0)
                        printf("the default policy cannot be enforced: %s\n", err.msg);
                status = r < 0 ? 1 : 0;
                break;
        case MCP_ACTION_SERVE:
        default: {
                mcp_logger lg = { .client_level = MCP_LOG_INFO };
                int level = mcp_level_from_name(cfg.log_level);
                lg.stderr_level = level < 0 ? MCP_LOG_INFO : (mcp_level) level;
                mcp_image_rootfs *images = calloc(cfg.n_rootfs, sizeof(*images));
                status = serve_or_explain(&cfg, &lg, images);
                for (size_t i = 0; images && i < cfg.n_rootfs; i++)
                        mcp_image_rootfs_done(&images[i]);
                free(images);
                break;
        }
        }
        fflush(stdout);
        mcp_config_done(&cfg);
        return status;
}
