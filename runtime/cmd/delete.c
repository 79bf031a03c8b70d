#include <fcntl.h>
#include <getopt.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "lib/rt.h"

/* A directory without state.json is what a create killed before its first write leaves
 * behind: `delete --force` removes it (as runc does). */
static int
remove_incomplete_dir(const rt_ctx *ctx, const char *id, msp_err *err)
{
        _cleanup_close_ int rootfd = -1;
        int r = rt_state_root_open(ctx, false, &rootfd, err);

        if (r < 0)
                return r;
        return rt_statedir_remove_incomplete(rootfd, id, true, err);
}

int
cmd_delete(rt_ctx *ctx, int argc, char **argv)
{
        static const struct option opts[] = {
                { "force", no_argument, NULL, 'f' },
                {},
        };
        _cleanup_container_ rt_container *c = NULL;
        msp_err err = { 0 };
        bool force = false;
        const char *id;
        int opt, r;

        while ((opt = getopt_long(argc, argv, "f", opts, NULL)) != -1) {
                if (opt != 'f')
                        return cmd_usage_error(ctx, "delete", "invalid option");
                force = true;
        }
        if (cmd_one_id(ctx, "delete", argc, argv, optind, &id) < 0)
                return 1;
        r = rt_container_load(ctx, id, true, &c, &err);
        if (r < 0 && force) {
                msp_err e2 = { 0 };
                if (r == -ENOENT && strstr(err.msg, "does not exist"))
                        return 0;
                if (rt_id_validate(id, NULL) == 0 && remove_incomplete_dir(ctx, id, &e2) == 0)
                        return 0;
        }
        if (r < 0 || rt_container_delete(ctx, c, force, &err) < 0)
                return cmd_fail(ctx, &err);
        return 0;
}
