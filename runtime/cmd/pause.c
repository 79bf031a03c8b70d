/* pause ID: freeze every process of the container (podman pause); state then reports
 * "paused". */
#include "cmd/cmd.h"

int
cmd_pause(rt_ctx *ctx, int argc, char **argv)
{
        _cleanup_container_ rt_container *c = NULL;
        msp_err err = { 0 };
        const char *id;

        if (cmd_one_id(ctx, "pause", argc, argv, 1, &id) < 0)
                return 1;
        if (rt_container_load(ctx, id, true, &c, &err) < 0 || rt_container_pause(ctx, c, &err) < 0)
                return cmd_fail(ctx, &err);
        return 0;
}
