/* msp: an OCI runtime. Global options come before the command, as with runc and crun:
 *   msp [--root DIR] [--log PATH] [--log-format text|json] [--debug] [--systemd-cgroup]
 *       [--cgroup-manager cgroupfs|systemd|disabled] [--rootless[=true|false]] COMMAND ... */
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "log.h"
#include "rootless.h"
#include "selfexe.h"
#include "spec.h"

extern char **environ;

static int cmd_unsupported(rt_ctx *ctx, int argc, char **argv);

static const rt_command commands[] = {
        { "create", cmd_create, "create a container (the process waits for start)",
          "[--bundle DIR] [--config FILE] [--pid-file FILE] [--console-socket PATH] "
          "[--preserve-fds N] [--no-pivot] [--no-new-keyring] ID" },
        { "start", cmd_start, "start the process of a created container", "ID" },
        { "state", cmd_state, "print the state of a container as JSON", "ID" },
        { "kill", cmd_kill, "send a signal to the container process (default TERM; 0 only "
          "checks that it runs)", "[--all] ID [SIGNAL]" },
        { "delete", cmd_delete, "delete a container and everything create made",
          "[--force] ID" },
        { "run", cmd_run, "create and start a container, wait for it and delete it",
          "[--bundle DIR] [--config FILE] [--pid-file FILE] [--console-socket PATH] "
          "[--preserve-fds N] [--no-pivot] [--no-new-keyring] [--detach] [--keep] ID" },
        { "pause", cmd_pause, "freeze every process of a running container", "ID" },
        { "resume", cmd_resume, "thaw a paused container", "ID" },
        { "update", cmd_update, "change the resource limits of a live container (sizes: 64k, "
          "512m, 1.5g; -1 is unlimited)",
          "[--resources FILE|-] [--memory N] [--memory-reservation N] [--memory-swap N] "
          "[--pids-limit N] [--cpu-shares N] [--cpu-quota N] [--cpu-period N] [--cpu-burst N] "
          "[--cpu-rt-period N] [--cpu-rt-runtime N] [--cpu-idle 0|1] [--cpuset-cpus S] "
          "[--cpuset-mems S] [--blkio-weight N] ID" },
        { "ps", cmd_ps, "list the processes in a container's cgroup (PS_OPTIONS: run ps(1) "
          "with them and keep the container's rows)", "[--format table|json] ID [PS_OPTIONS...]",
          .options_end_at_id = true },
        { "events", cmd_events, "print resource usage statistics as JSON",
          "[--stats] [--interval DURATION] ID" },
        { "exec", cmd_exec, "run one more process in a live container",
          "[--process FILE] [--detach] [--pid-file FILE] [--console-socket PATH] [--tty] "
          "[--cwd DIR] [--env KEY=VALUE]... [--user UID[:GID]] [--additional-gids GID]... "
          "[--cap CAP]... [--no-new-privs] [--preserve-fds N] [--cgroup SUBPATH] "
          "[--ignore-paused] [--apparmor PROFILE] [--process-label LABEL] "
          "ID [COMMAND [ARG...]]", .options_end_at_id = true },
        { "list", cmd_list, "list containers", "[--format table|json] [--quiet]" },
        { "spec", cmd_spec, "write a default config.json", "[--rootless] [--bundle DIR]" },
        { "features", cmd_features, "print what this runtime supports as JSON", "" },
        { "checkpoint", cmd_unsupported, "not supported: msp cannot checkpoint containers",
          "ID" },
        { "restore", cmd_unsupported, "not supported: msp cannot restore containers", "ID" },
};

/* checkpoint and restore: their --help exits 0 as runc's does; running them fails. */
static int
cmd_unsupported(rt_ctx *ctx, int argc, char **argv)
{
        (void) argc;
        rt_log_error(ctx, "%s: not supported: msp cannot checkpoint or restore containers",
                     argv[0]);
        return 1;
}

const rt_command *
cmd_find(const char *name)
{
        for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
                if (strcmp(commands[i].name, name) == 0)
                        return &commands[i];
        return NULL;
}

void
cmd_usage(const rt_command *c, bool to_stderr)
{
        fprintf(to_stderr ? stderr : stdout, "Usage: msp [global options] %s %s\n  %s\n", c->name,
                c->usage, c->summary);
}

int
cmd_usage_error(const rt_ctx *ctx, const char *cmd, const char *fmt, ...)
{
        char msg[1024];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        rt_log_error(ctx, "%s: %s", cmd, msg);
        const rt_command *c = cmd_find(cmd);
        if (c)
                cmd_usage(c, true);
        return 1;
}

int
cmd_fail(const rt_ctx *ctx, const msp_err *err)
{
        rt_log_error(ctx, "%s", err->msg[0] ? err->msg : "unknown error");
        return 1;
}

bool
cmd_wants_help(const char *name, int argc, char **argv)
{
        for (int i = 1; i < argc; i++) {
                if (strcmp(argv[i], "--") == 0)
                        break;
                if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
                        cmd_usage(cmd_find(name), false);
                        return true;
                }
        }
        return false;
}

int
cmd_print(const rt_ctx *ctx, const char *json, size_t len)
{
        if (fwrite(json, 1, len, stdout) != len || fputc('\n', stdout) == EOF ||
            fflush(stdout) != 0) {
                rt_log_error(ctx, "write to stdout failed");
                return 1;
        }
        return 0;
}

static void
usage_all(FILE *f)
{
        fprintf(f, "Usage: msp [global options] COMMAND [options] [ID]\n\n"
                   "msp is an OCI runtime: it runs containers from OCI bundles.\n\n"
                   "Commands:\n");
        for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
                fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
        fprintf(f, "  %-10s %s\n", "help", "show help for a command");
        fprintf(f, "\nGlobal options:\n"
                   "  --root DIR              state directory (default /run/msp, rootless "
                   "$XDG_RUNTIME_DIR/msp)\n"
                   "  --log PATH              log file (errors, warnings, debug)\n"
                   "  --log-format text|json  log format (json: one object a line)\n"
                   "  --debug                 debug logging\n"
                   "  --systemd-cgroup        cgroupsPath is slice:prefix:name\n"
                   "  --cgroup-manager M      cgroupfs, systemd or disabled\n"
                   "  --rootless[=BOOL]       rootless mode (default: detected)\n"
                   "  --version, --help\n");
}

/* The state root when --root is not given: $XDG_RUNTIME_DIR/msp for a rootless caller
 * (runc's rule), /run/msp otherwise. A user without XDG_RUNTIME_DIR gets none (NULL,
 * *ret_none set): the commands that need one say so, naming --root; a shared fallback
 * such as /tmp would be a path other users could take first. */
static char *
default_root(bool rootless, bool *ret_none)
{
        const char *xdg = getenv("XDG_RUNTIME_DIR");
        char *r = NULL;

        *ret_none = false;
        if (rootless && xdg && *xdg) {
                if (asprintf(&r, "%s/msp", xdg) < 0)
                        return NULL;
                return r;
        }
        if (rootless && geteuid() != 0) {
                *ret_none = true;
                return NULL;
        }
        return strdup("/run/msp");
}

static int
parse_bool(const char *s, bool *ret)
{
        if (!s || strcmp(s, "true") == 0 || strcmp(s, "1") == 0) {
                *ret = true;
                return 0;
        }
        if (strcmp(s, "false") == 0 || strcmp(s, "0") == 0) {
                *ret = false;
                return 0;
        }
        if (strcmp(s, "auto") == 0) {
                *ret = rt_rootless_detect();
                return 0;
        }
        return -EINVAL;
}

int
main(int argc, char **argv)
{
        static const struct option opts[] = {
                { "root", required_argument, NULL, 'r' },
                { "log", required_argument, NULL, 'l' },
                { "log-format", required_argument, NULL, 'f' },
                { "log-level", required_argument, NULL, 'L' },
                { "debug", no_argument, NULL, 'd' },
                { "systemd-cgroup", no_argument, NULL, 's' },
                { "cgroup-manager", required_argument, NULL, 'c' },
                { "rootless", optional_argument, NULL, 'R' },
                { "version", no_argument, NULL, 'v' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        rt_ctx ctx = { .log_fd = -1, .argv0 = argv[0] };
        _cleanup_free_ char *root = NULL;
        const char *root_arg = NULL;
        bool rootless_set = false;
        int c;

        /* First, before any fd is opened: create and run go on from a sealed copy of
         * the binary (CVE-2019-5736). Returns only if no copy is needed or it failed. */
        if (rt_selfexe_ensure(argc, argv, environ) < 0)
                return 1;
        ctx.rootless = rt_rootless_detect();
        ctx.caller_euid = geteuid();
        ctx.caller_egid = getegid();
        ctx.setgroups_denied = ctx.rootless && rt_rootless_setgroups_denied();
        while ((c = getopt_long(argc, argv, "+hv", opts, NULL)) != -1) {
                switch (c) {
                case 'r': root_arg = optarg; break;
                case 'l':
                        if (ctx.log_fd >= 0)
                                close(ctx.log_fd);
                        ctx.log_fd = open(optarg, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
                        if (ctx.log_fd < 0) {
                                fprintf(stderr, "msp: open log file '%s': %m\n", optarg);
                                return 1;
                        }
                        break;
                case 'f':
                        if (strcmp(optarg, "json") == 0)
                                ctx.log_format = RT_LOG_JSON;
                        else if (strcmp(optarg, "text") == 0)
                                ctx.log_format = RT_LOG_TEXT;
                        else {
                                fprintf(stderr, "msp: --log-format: expected text or json, got '%s'\n", optarg);
                                return 1;
                        }
                        break;
                case 'L':
                        ctx.debug = strcmp(optarg, "debug") == 0;
                        break;
                case 'd': ctx.debug = true; break;
                case 's':
                        ctx.systemd_cgroup = true;
                        ctx.cgroup_manager = RT_CGROUP_SYSTEMD;
                        break;
                case 'c':
                        if (strcmp(optarg, "cgroupfs") == 0)
                                ctx.cgroup_manager = RT_CGROUP_CGROUPFS;
                        else if (strcmp(optarg, "systemd") == 0) {
                                ctx.cgroup_manager = RT_CGROUP_SYSTEMD;
                                ctx.systemd_cgroup = true;
                        } else if (strcmp(optarg, "disabled") == 0)
                                ctx.cgroup_manager = RT_CGROUP_DISABLED;
                        else {
                                fprintf(stderr, "msp: --cgroup-manager: expected cgroupfs, systemd or "
                                                "disabled, got '%s'\n", optarg);
                                return 1;
                        }
                        break;
                case 'R':
                        if (parse_bool(optarg, &ctx.rootless) < 0) {
                                fprintf(stderr, "msp: --rootless: expected true, false or auto, got '%s'\n",
                                        optarg);
                                return 1;
                        }
                        rootless_set = true;
                        break;
                case 'v':
                        printf("msp version %s\nspec: %s\n", MSP_VERSION, OCI_VERSION_MAX);
                        return 0;
                case 'h':
                        usage_all(stdout);
                        return 0;
                default:
                        usage_all(stderr);
                        return 1;
                }
        }
        (void) rootless_set;
        if (optind >= argc) {
                usage_all(stderr);
                return 1;
        }
        bool no_root = false;
        root = root_arg ? strdup(root_arg) : default_root(ctx.rootless, &no_root);
        if (!root && !no_root) {
                fprintf(stderr, "msp: out of memory\n");
                return 1;
        }
        ctx.state_root = root;

        const char *name = argv[optind];
        if (strcmp(name, "help") == 0) {
                const rt_command *hc = optind + 1 < argc ? cmd_find(argv[optind + 1]) : NULL;
                if (hc)
                        cmd_usage(hc, false);
                else
                        usage_all(stdout);
                return 0;
        }
        const rt_command *cmd = cmd_find(name);
        if (!cmd) {
                rt_log_error(&ctx, "unknown command '%s' (see msp --help)", name);
                return 1;
        }
        int sub_argc = argc - optind;
        char **sub_argv = argv + optind;
        if (!cmd->options_end_at_id && cmd_wants_help(name, sub_argc, sub_argv))
                return 0;
        optind = 0;     /* 0 fully re-initialises getopt for the command's flags */
        return cmd->run(&ctx, sub_argc, sub_argv);
}
