/* rtnetlink: bring loopback up in a new network namespace. */
#pragma once

#include "oci/oci.h"

int rt_netlink_loopback_up(msp_err *err);
