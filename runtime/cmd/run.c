/* run = create + start + wait + delete. The init is our child, so we reap it; signals
 * we receive are forwarded to it. With process.terminal and no --console-socket, msp
 * takes the pty master itself and copies between it and its own stdio, as runc does;
 * without a terminal, those of its fds 0-2 that are terminals reach the process through
 * the stdio relay (relay.h). */
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "lib/rt.h"

/* A socketpair stands in for --console-socket; the master arrives before create
 * returns (the init sends it before it reports ready). */
static int
take_terminal(const rt_ctx *ctx, int sock, rt_ttyproxy *tty)
{
        msp_err err = { 0 };
        int master = -1;

        if (rt_console_recv_master(sock, &master, &err) < 0 ||
            rt_ttyproxy_begin(tty, master, &err) < 0) {
                rt_ttyproxy_done(tty);
                return cmd_fail(ctx, &err);
        }
        return 0;
}

int
cmd_run(rt_ctx *ctx, int argc, char **argv)
{
        rt_create_opts o = { 0 };
        _cleanup_container_ rt_container *c = NULL;
        _cleanup_close_ int sigfd = -1, tty_sock = -1, tty_peer = -1;
        rt_ttyproxy tty = { .master = -1 };
        rt_stdio_relay relay_fds;
        _cleanup_(rt_stdio_relay_donep) rt_stdio_relay *relay = NULL;
        bool use_tty = false;
        msp_err err = { 0 };
        bool detach = false, keep = false;
        int status;

        if (cmd_parse_create_opts(ctx, "run", argc, argv, &o, &detach, &keep) < 0)
                return 1;
        o.start_at_ready = true;
        if (!detach && !o.console_socket) {
                int sv[2];
                if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
                        rt_log_error(ctx, "socketpair: %m");
                        return 1;
                }
                tty_sock = sv[0];
                tty_peer = sv[1];
                o.has_console_fd = true;
                o.console_fd = tty_peer;
                if (rt_stdio_relay_open(&relay_fds, &err) < 0)
                        return cmd_fail(ctx, &err);
                relay = &relay_fds;
                o.stdio = relay->child;
        }
        /* Block before create so no signal is lost; the init unblocks its own mask. */
        if (!detach) {
                sigfd = cmd_block_forwarded_signals(ctx);
                if (sigfd < 0)
                        return 1;
        }
        if (rt_container_create(ctx, &o, &c, &err) < 0)
                return cmd_fail(ctx, &err);
        if (tty_sock >= 0 && c->spec && c->spec->process && c->spec->process->terminal) {
                rt_stdio_relay_done(TAKE_PTR(relay));   /* the pty is the process's stdio */
                close(TAKE_FD(tty_peer));
                if (take_terminal(ctx, tty_sock, &tty) != 0) {
                        (void) rt_container_delete(ctx, c, true, &err);
                        return 1;
                }
                use_tty = true;
        }
        if (relay)
                rt_stdio_relay_started(relay);
        if (rt_container_start(ctx, c, &err) < 0) {
                msp_err derr = { 0 };
                (void) rt_container_delete(ctx, c, true, &derr);
                rt_ttyproxy_done(&tty);
                return cmd_fail(ctx, &err);
        }
        if (detach)
                return 0;
        /* Release the lock while the container runs so that state/kill work. The parsed
         * config is kept for delete (poststop hooks): it is what create wrote to the
         * state directory, so it need not be read and parsed again. */
        pid_t pid = c->state->pid;
        int pidfd = TAKE_FD(c->pidfd);
        _cleanup_spec_ oci_spec *spec = TAKE_PTR(c->spec);
        char id[1100];
        snprintf(id, sizeof id, "%s", c->id);
        c = rt_container_free(c);

        status = cmd_wait_forwarding(ctx, pid, pidfd, sigfd, use_tty ? &tty : NULL, relay);
        close(pidfd);
        rt_ttyproxy_done(&tty);
        rt_stdio_relay_done(TAKE_PTR(relay));
        if (!keep) {
                int r = rt_container_load(ctx, id, true, &c, &err);
                if (r >= 0) {
                        if (!c->spec)
                                c->spec = TAKE_PTR(spec);
                        r = rt_container_delete(ctx, c, true, &err);
                }
                if (r < 0)
                        rt_log_warning(ctx, "%s", err.msg);
        }
        return status;
}
