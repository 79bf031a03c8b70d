/* Capability sets with libcap. */
#include <errno.h>

#include "process.h"

int
rt_caps_apply(const oci_capabilities *caps, bool has_caps, msp_err *err)
{
        (void) caps;
        (void) has_caps;
        return msp_err_set(err, ENOSYS, "capabilities: not implemented yet");
}
