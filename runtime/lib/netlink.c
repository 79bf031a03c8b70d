/* rtnetlink through libmnl. */
#include <errno.h>

#include "netlink.h"

int
rt_netlink_loopback_up(msp_err *err)
{
        return msp_err_set(err, ENOSYS, "loopback: not implemented yet");
}
