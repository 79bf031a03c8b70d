/* Switching to process.user. */
#include <errno.h>

#include "process.h"

int
rt_user_switch(const oci_user *u, bool setgroups_allowed, msp_err *err)
{
        (void) u;
        (void) setgroups_allowed;
        return msp_err_set(err, ENOSYS, "user switch: not implemented yet");
}
