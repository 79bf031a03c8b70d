#include "devices.h"

#include <errno.h>

int
rt_devices_create(int rootfd, const oci_linux *lnx, bool in_userns, msp_err *err)
{
        (void) rootfd; (void) lnx; (void) in_userns;
        return msp_err_set(err, ENOSYS, "devices: not implemented");
}

int
rt_devices_links(int rootfd, msp_err *err)
{
        (void) rootfd;
        return msp_err_set(err, ENOSYS, "devices: not implemented");
}
