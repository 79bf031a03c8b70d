#include <stdlib.h>

#include "cmd/cmd.h"

int
cmd_state(rt_ctx *ctx, int argc, char **argv)
{
        _cleanup_container_ rt_container *c = NULL;
        _cleanup_free_ char *json = NULL;
        msp_err err = { 0 };
        const char *id;
        size_t len;

        if (cmd_one_id(ctx, "state", argc, argv, 1, &id) < 0)
                return 1;
        if (rt_container_load(ctx, id, false, &c, &err) < 0 ||
            oci_state_to_json(c->state, OCI_STATE_JSON_PRETTY, &json, &len, &err) < 0)
                return cmd_fail(ctx, &err);
        return cmd_print(ctx, json, len);
}
