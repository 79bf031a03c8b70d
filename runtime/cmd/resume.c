/* resume ID: thaw a paused container (podman unpause). */
#include "cmd/cmd.h"

int
cmd_resume(rt_ctx *ctx, int argc, char **argv)
{
        _cleanup_container_ rt_container *c = NULL;
        msp_err err = { 0 };
        const char *id;

        if (cmd_one_id(ctx, "resume", argc, argv, 1, &id) < 0)
                return 1;
        if (rt_container_load(ctx, id, true, &c, &err) < 0 || rt_container_resume(ctx, c, &err) < 0)
                return cmd_fail(ctx, &err);
        return 0;
}
