/* pause ID: freeze every process of the container (podman pause); state then reports
 * "paused". */
#include "cmd/cmd.h"

int
cmd_pause(rt_ctx *ctx, int argc, char **argv)
{
        return cmd_on_container(ctx, "pause", argc, argv, rt_container_pause);
}
