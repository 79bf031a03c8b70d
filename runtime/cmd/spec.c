#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "lib/rt.h"

int
cmd_spec(rt_ctx *ctx, int argc, char **argv)
{
        static const struct option opts[] = {
                { "rootless", no_argument, NULL, 'r' },
                { "bundle", required_argument, NULL, 'b' },
                {},
        };
        _cleanup_free_ char *json = NULL;
        _cleanup_close_ int dirfd = -1, fd = -1;
        const char *bundle = ".";
        msp_err err = { 0 };
        bool rootless = false;
        size_t len;
        int opt;

        while ((opt = getopt_long(argc, argv, "b:", opts, NULL)) != -1) {
                if (opt == 'r')
                        rootless = true;
                else if (opt == 'b')
                        bundle = optarg;
                else
                        return cmd_usage_error(ctx, "spec", "invalid option");
        }
        if (optind < argc)
                return cmd_usage_error(ctx, "spec", "unexpected argument '%s'", argv[optind]);
        if (oci_spec_default_json(rootless, &json, &len, &err) < 0)
                return cmd_fail(ctx, &err);
        dirfd = open(bundle, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dirfd < 0) {
                rt_log_error(ctx, "bundle '%s': %m", bundle);
                return 1;
        }
        fd = openat(dirfd, "config.json", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd < 0) {
                if (errno == EEXIST)
                        rt_log_error(ctx, "'%s/config.json' exists; remove it first", bundle);
                else
                        rt_log_error(ctx, "create '%s/config.json': %m", bundle);
                return 1;
        }
        if (write(fd, json, len) != (ssize_t) len || write(fd, "\n", 1) != 1) {
                rt_log_error(ctx, "write '%s/config.json': %m", bundle);
                return 1;
        }
        return 0;
}
