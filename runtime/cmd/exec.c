/* exec: run one more process in a live container. The process is --process FILE (as
 * podman/conmon write it, used as is) or ARGS over a copy of the config's process, with
 * the flags overriding (--apparmor and --process-label over --process FILE too; its
 * LSM labels are the config's unless given). --detach writes --pid-file and returns;
 * otherwise msp waits, forwards signals (and proxies a terminal, or relays those of its
 * fds 0-2 that are terminals: relay.h) and exits with the process's status.
 *
 * Exit status as runc-exec(8): 1 for a command line that does not parse (an unknown
 * option, no container ID, a count that is not a number), 255 when msp fails after that
 * (no such container, paused, bad --user or --env, a binary that cannot be executed, a
 * pid file that cannot be written), else the process's own status. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "lib/rt.h"

#define MAX_LIST 256
#define EXEC_FAILED 255         /* runc-exec(8): msp itself failed */

typedef struct exec_flags {
        const char *process_file;
        const char *pid_file;
        const char *cwd;
        const char *user;
        const char *apparmor;           /* --apparmor: overrides process.apparmorProfile */
        const char *process_label;      /* --process-label: process.selinuxLabel */
        const char *env[MAX_LIST];
        size_t n_env;
        char *cgroups[MAX_LIST];                /* --cgroup, in order */
        size_t n_cgroups;
        uint32_t gids[MAX_LIST];
        size_t n_gids;
        bool has_gids;
        uint64_t caps;
        bool tty, detach, nnp;
        rt_exec_opts o;
} exec_flags;

/* Decimal, no sign, no spaces, below 2^32-1 (which is -1, "no id"). */
static int
parse_id(const char *s, uint32_t *ret)
{
        unsigned long long v = 0;

        if (!*s || strlen(s) > 10)
                return -EINVAL;
        for (const char *p = s; *p; p++) {
                if (*p < '0' || *p > '9')
                        return -EINVAL;
                v = v * 10 + (unsigned) (*p - '0');
        }
        if (v >= UINT32_MAX)
                return -ERANGE;
        *ret = (uint32_t) v;
        return 0;
}

/* --user: "uid" or "uid:gid", numeric only (CVE-2026-30892: nothing else is guessed,
 * and names are not looked up: they would need the container's /etc/passwd). */
static int
parse_user(const rt_ctx *ctx, const char *s, oci_user *u)
{
        char buf[64];
        char *colon;
        uint32_t uid, gid = u->gid;

        if (strlen(s) >= sizeof buf)
                return cmd_usage_error(ctx, "exec", "--user '%.40s...': expected UID[:GID]", s), -1;
        snprintf(buf, sizeof buf, "%s", s);
        colon = strchr(buf, ':');
        if (colon)
                *colon = '\0';
        if (parse_id(buf, &uid) < 0 || (colon && parse_id(colon + 1, &gid) < 0))
                return cmd_usage_error(ctx, "exec", "--user '%s': expected a numeric UID[:GID] "
                                       "(user and group names are not resolved)", s), -1;
        u->uid = uid;
        u->gid = gid;
        return 0;
}

static int
parse_cap(const char *s, uint64_t *mask)
{
        char buf[64];
        int cap;

        if (strncasecmp(s, "CAP_", 4) == 0)
                snprintf(buf, sizeof buf, "%s", s);
        else
                snprintf(buf, sizeof buf, "CAP_%s", s);
        for (char *p = buf; *p; p++)
                if (*p >= 'a' && *p <= 'z')
                        *p = (char) (*p - 'a' + 'A');
        cap = oci_cap_from_name(buf);
        if (cap < 0 || cap >= 64)
                return -EINVAL;
        *mask |= 1ull << cap;
        return 0;
}

/* The index of the container ID in argv; or -1 with *status the exit status (0 after
 * --help). */
static int
parse_flags(const rt_ctx *ctx, int argc, char **argv, exec_flags *f, int *status)
{
        static const struct option opts[] = {
                { "process", required_argument, NULL, 'p' },
                { "pid-file", required_argument, NULL, 'P' },
                { "console-socket", required_argument, NULL, 's' },
                { "tty", no_argument, NULL, 't' },
                { "detach", no_argument, NULL, 'd' },
                { "cwd", required_argument, NULL, 'w' },
                { "env", required_argument, NULL, 'e' },
                { "user", required_argument, NULL, 'u' },
                { "additional-gids", required_argument, NULL, 'g' },
                { "cap", required_argument, NULL, 'c' },
                { "no-new-privs", no_argument, NULL, 'n' },
                { "preserve-fds", required_argument, NULL, 'F' },
                { "cgroup", required_argument, NULL, 'C' },
                { "ignore-paused", no_argument, NULL, 'I' },
                { "apparmor", required_argument, NULL, 'A' },
                { "process-label", required_argument, NULL, 'L' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        int c;

        /* '+': the options end at the container ID; the command follows it. */
        *status = 1;
        while ((c = getopt_long(argc, argv, "+p:tde:u:g:c:h", opts, NULL)) != -1) {
                switch (c) {
                case 'h':
                        cmd_usage(cmd_find("exec"), false);
                        *status = 0;
                        return -1;
                case 'p': f->process_file = optarg; break;
                case 'P': f->pid_file = optarg; break;
                case 's': f->o.console_socket = optarg; break;
                case 't': f->tty = true; break;
                case 'd': f->detach = true; break;
                case 'w': f->cwd = optarg; break;
                case 'n': f->nnp = true; break;
                case 'C':
                        if (f->n_cgroups >= MAX_LIST)
                                return cmd_usage_error(ctx, "exec", "too many --cgroup"), -1;
                        f->cgroups[f->n_cgroups++] = optarg;
                        f->o.sub_cgroups = f->cgroups;
                        f->o.n_sub_cgroups = f->n_cgroups;
                        break;
                case 'I': f->o.ignore_paused = true; break;
                case 'A': f->apparmor = optarg; break;
                case 'L': f->process_label = optarg; break;
                case 'e':
                        if (!strchr(optarg, '=') || optarg[0] == '=') {
                                *status = EXEC_FAILED;
                                return cmd_usage_error(ctx, "exec", "--env '%s': expected KEY=VALUE",
                                                       optarg), -1;
                        }
                        if (f->n_env >= MAX_LIST)
                                return cmd_usage_error(ctx, "exec", "too many --env"), -1;
                        f->env[f->n_env++] = optarg;
                        break;
                case 'u': f->user = optarg; break;
                case 'g':
                        if (f->n_gids >= MAX_LIST)
                                return cmd_usage_error(ctx, "exec", "too many --additional-gids"), -1;
                        if (parse_id(optarg, &f->gids[f->n_gids]) < 0)
                                return cmd_usage_error(ctx, "exec", "--additional-gids '%s': expected "
                                                       "a numeric GID", optarg), -1;
                        f->n_gids++;
                        f->has_gids = true;
                        break;
                case 'c':
                        if (parse_cap(optarg, &f->caps) < 0) {
                                *status = EXEC_FAILED;
                                return cmd_usage_error(ctx, "exec", "--cap '%s': unknown capability",
                                                       optarg), -1;
                        }
                        break;
                case 'F':
                        if (cmd_parse_fd_count(optarg, &f->o.preserve_fds) < 0)
                                return cmd_usage_error(ctx, "exec", "--preserve-fds: expected a "
                                                       "count, got '%s'", optarg), -1;
                        break;
                default:
                        return cmd_usage_error(ctx, "exec", "invalid option"), -1;
                }
        }
        if (optind >= argc)
                return cmd_usage_error(ctx, "exec", "a container ID is required"), -1;
        *status = EXEC_FAILED;
        if (f->process_file && optind + 1 < argc)
                return cmd_usage_error(ctx, "exec", "--process and a command are exclusive"), -1;
        if (!f->process_file && optind + 1 >= argc)
                return cmd_usage_error(ctx, "exec", "a command (or --process FILE) is required"), -1;
        return optind;
}

/* The env with each --env replacing the entry of the same key or appended. */
static char **
merge_env(const oci_strv *base, const exec_flags *f)
{
        size_t n = base->n, k = 0;
        char **v = calloc(n + f->n_env + 1, sizeof *v);

        if (!v)
                return NULL;
        for (size_t i = 0; i < n; i++)
                v[k++] = base->v[i];
        for (size_t i = 0; i < f->n_env; i++) {
                size_t klen = (size_t) (strchr(f->env[i], '=') - f->env[i]) + 1;
                size_t j;
                for (j = 0; j < k; j++)
                        if (strncmp(v[j], f->env[i], klen) == 0)
                                break;
                v[j] = (char *) f->env[i];
                if (j == k)
                        k++;
        }
        v[k] = NULL;
        return v;
}

static int
read_process(const rt_ctx *ctx, const char *path, oci_spec **ret)
{
        _cleanup_free_ char *data = NULL;
        size_t len;
        msp_err err = { 0 };

        if (rt_read_file_at(AT_FDCWD, path, false, 4 << 20, &data, &len, &err) < 0 ||
            oci_process_parse_data(path, data, len, ret, &err) < 0)
                return cmd_fail(ctx, &err), -1;
        return 0;
}

static int
exec_failed(const rt_ctx *ctx, const msp_err *err)
{
        cmd_fail(ctx, err);
        return EXEC_FAILED;
}

/* SIGKILL the started process and wait (bounded) until it is gone: reaped when it is our
 * child, else until its pidfd reports the exit. */
static void
kill_and_reap(int pidfd)
{
        struct pollfd p = { .fd = pidfd, .events = POLLIN };
        siginfo_t si;

        if (syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0) < 0)
                return;
        while (poll(&p, 1, 5000) < 0 && errno == EINTR)
                ;
        (void) waitid(P_PIDFD, (id_t) pidfd, &si, WEXITED | WNOHANG);
}

int
cmd_exec(rt_ctx *ctx, int argc, char **argv)
{
        exec_flags f = { .o = { .console_fd = -1 } };
        _cleanup_container_ rt_container *c = NULL;
        _cleanup_spec_ oci_spec *pspec = NULL;
        _cleanup_free_ char **env = NULL;
        _cleanup_close_ int sigfd = -1, tty_sock = -1, tty_peer = -1;
        rt_ttyproxy tty = { .master = -1 };
        rt_stdio_relay relay_fds;
        _cleanup_(rt_stdio_relay_donep) rt_stdio_relay *relay = NULL;
        oci_process proc = { 0 };
        msp_err err = { 0 };
        pid_t pid;
        int pidfd = -1, idx, status;

        idx = parse_flags(ctx, argc, argv, &f, &status);
        if (idx < 0)
                return status;
        if (rt_container_load(ctx, argv[idx], false, &c, &err) < 0)
                return exec_failed(ctx, &err);
        /* Before the process file is read (it may be a pipe) and before any change: may
         * re-execute msp from its sealed copy. */
        if (rt_selfexe_confirm_pid(c->state->pid, c->state->pid_start_time, &err) < 0)
                return exec_failed(ctx, &err);
        if (rt_container_load_config(c, &err) < 0)
                return exec_failed(ctx, &err);
        if (f.process_file && read_process(ctx, f.process_file, &pspec) < 0)
                return EXEC_FAILED;
        if (pspec) {
                proc = *pspec->process;
        } else {
                if (c->spec && c->spec->process)
                        proc = *c->spec->process;
                else
                        proc.cwd = (char *) "/";
                proc.args.v = argv + idx + 1;
                proc.args.n = (size_t) (argc - idx - 1);
                proc.terminal = f.tty;
                proc.has_console_size = false;
                env = merge_env(&proc.env, &f);
                if (!env) {
                        rt_log_error(ctx, "out of memory");
                        return EXEC_FAILED;
                }
                proc.env.v = env;
                for (proc.env.n = 0; env[proc.env.n]; proc.env.n++)
                        ;
                if (f.cwd)
                        proc.cwd = (char *) f.cwd;
                if (f.user && parse_user(ctx, f.user, &proc.user) < 0)
                        return EXEC_FAILED;
                if (f.has_gids) {
                        proc.user.additional_gids = f.gids;
                        proc.user.n_additional_gids = f.n_gids;
                }
                if (f.caps) {
                        proc.has_capabilities = true;
                        proc.capabilities.bounding |= f.caps;
                        proc.capabilities.effective |= f.caps;
                        proc.capabilities.permitted |= f.caps;
                        proc.capabilities.inheritable |= f.caps;
                        proc.capabilities.ambient |= f.caps;
                }
                if (f.nnp)
                        proc.no_new_privileges = true;
        }
        /* runc's flags; unlike runc they also apply over --process FILE (a confinement
         * asked for is never silently ignored). */
        if (f.apparmor)
                proc.apparmor_profile = (char *) f.apparmor;
        if (f.process_label)
                proc.selinux_label = (char *) f.process_label;
        f.o.proc = &proc;
        if (proc.terminal && f.detach && !f.o.console_socket)
                return cmd_usage_error(ctx, "exec", "a terminal with --detach needs --console-socket"),
                       EXEC_FAILED;
        if (proc.terminal && !f.detach && !f.o.console_socket) {
                int sv[2];
                if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
                        rt_log_error(ctx, "socketpair: %m");
                        return EXEC_FAILED;
                }
                tty_sock = sv[0];
                tty_peer = sv[1];
                f.o.console_fd = tty_peer;
        }
        if (!f.detach) {
                sigfd = cmd_block_forwarded_signals(ctx);
                if (sigfd < 0)
                        return EXEC_FAILED;
        }
        if (!f.detach && !proc.terminal) {
                if (rt_stdio_relay_open(&relay_fds, &err) < 0)
                        return exec_failed(ctx, &err);
                relay = &relay_fds;
                f.o.stdio = relay->child;
        }
        if (rt_exec_spawn(ctx, c, &f.o, &pid, &pidfd, &err) < 0)
                return exec_failed(ctx, &err);
        c = rt_container_free(c);       /* the lock: state/kill work meanwhile */
        if (relay)
                rt_stdio_relay_started(relay);
        if (f.pid_file && rt_write_pid_file(f.pid_file, pid, &err) < 0) {
                /* Nobody would know the pid of a process left running: as runc, end it. */
                kill_and_reap(pidfd);
                close(pidfd);
                return exec_failed(ctx, &err);
        }
        if (f.detach) {
                close(pidfd);
                return 0;
        }
        bool use_tty = false;
        if (tty_sock >= 0) {
                int master = -1;
                close(TAKE_FD(tty_peer));
                if (rt_console_recv_master(tty_sock, &master, &err) < 0 ||
                    rt_ttyproxy_begin(&tty, master, &err) < 0) {
                        rt_ttyproxy_done(&tty);
                        rt_log_error(ctx, "%s", err.msg);
                } else {
                        use_tty = true;
                }
        }
        status = cmd_wait_forwarding(ctx, pid, pidfd, sigfd, use_tty ? &tty : NULL, relay);
        close(pidfd);
        rt_ttyproxy_done(&tty);
        return status;
}
