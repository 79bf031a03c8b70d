/* OCI hooks. */
#include <errno.h>

#include "hooks.h"

int
rt_hooks_run(const oci_hook_list *hooks, const char *kind, const char *state_json, msp_err *err)
{
        (void) state_json;
        if (!hooks || hooks->n == 0)
                return 0;
        return msp_err_set(err, ENOSYS, "%s hooks: not implemented yet", kind);
}
