/* start ID: let the process of a created container run (its init waits for this). */
#include "cmd/cmd.h"

int
cmd_start(rt_ctx *ctx, int argc, char **argv)
{
        return cmd_on_container(ctx, "start", argc, argv, rt_container_start);
}
