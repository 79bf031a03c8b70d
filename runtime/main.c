/* msp: an OCI runtime. Global options come before the command, as with runc and crun:
 *   msp [--root DIR] [--log PATH] [--log-format text|json] [--debug] [--systemd-cgroup]
 *       [--cgroup-manager cgroupfs|systemd|disabled] [--rootless[=true|false]] COMMAND ... */
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "lib/rt.h"
#include "oci/oci.h"

extern char **environ;

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
                        cmd_usage_all(stdout);
                        return 0;
                default:
                        cmd_usage_all(stderr);
                        return 1;
                }
        }
        (void) rootless_set;
        if (optind >= argc) {
                cmd_usage_all(stderr);
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
                if (optind + 1 < argc && strcmp(argv[optind + 1], "--man") == 0) {
                        cmd_man(stdout);
                        return 0;
                }
                const rt_command *hc = optind + 1 < argc ? cmd_find(argv[optind + 1]) : NULL;
                if (hc)
                        cmd_usage(hc, false);
                else
                        cmd_usage_all(stdout);
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
