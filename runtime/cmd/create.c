/* create [OPTION...] ID: make a container whose process waits for start; and the flags
 * create shares with run. */
#include <getopt.h>

#include "cmd/cmd.h"
#include "lib/rt.h"

int
cmd_parse_create_opts(const rt_ctx *ctx, const char *cmd, int argc, char **argv,
                      rt_create_opts *o, bool *detach, bool *keep)
{
        static const struct option opts[] = {
                { "bundle", required_argument, NULL, 'b' },
                { "config", required_argument, NULL, 'C' },
                { "pid-file", required_argument, NULL, 'p' },
                { "console-socket", required_argument, NULL, 's' },
                { "preserve-fds", required_argument, NULL, 'P' },
                { "no-pivot", no_argument, NULL, 'n' },
                { "no-new-keyring", no_argument, NULL, 'k' },
                { "detach", no_argument, NULL, 'd' },
                { "keep", no_argument, NULL, 'K' },
                { "no-subreaper", no_argument, NULL, 'S' },
                {},
        };
        bool is_run = detach != NULL;
        int c;

        while ((c = getopt_long(argc, argv, is_run ? "b:dC:" : "b:C:", opts, NULL)) != -1) {
                switch (c) {
                case 'b': o->bundle = optarg; break;
                case 'C': o->config_path = optarg; break;
                case 'p': o->pid_file = optarg; break;
                case 's': o->console_socket = optarg; break;
                case 'P':
                        if (cmd_parse_fd_count(optarg, &o->preserve_fds) < 0)
                                return cmd_usage_error(ctx, cmd, "--preserve-fds: expected a count, got '%s'",
                                                       optarg), -1;
                        break;
                case 'n': o->no_pivot = true; break;
                case 'k': o->no_new_keyring = true; break;
                case 'S': break;        /* accepted for runc compatibility */
                case 'd':
                case 'K':
                        if (!is_run)
                                return cmd_usage_error(ctx, cmd, "unknown option '%s'", argv[optind - 1]), -1;
                        if (c == 'd')
                                *detach = true;
                        else
                                *keep = true;
                        break;
                default:
                        return cmd_usage_error(ctx, cmd, "invalid option"), -1;
                }
        }
        const char *id;
        if (cmd_one_id(ctx, cmd, argc, argv, optind, &id) < 0)
                return -1;
        o->id = id;
        return optind;
}

int
cmd_create(rt_ctx *ctx, int argc, char **argv)
{
        rt_create_opts o = { 0 };
        _cleanup_container_ rt_container *c = NULL;
        msp_err err = { 0 };

        if (cmd_parse_create_opts(ctx, "create", argc, argv, &o, NULL, NULL) < 0)
                return 1;
        if (rt_container_create(ctx, &o, &c, &err) < 0)
                return cmd_fail(ctx, &err);
        return 0;
}
