/* resume ID: thaw a paused container (podman unpause). */
#include "cmd/cmd.h"

int
cmd_resume(rt_ctx *ctx, int argc, char **argv)
{
        return cmd_on_container(ctx, "resume", argc, argv, rt_container_resume);
}
