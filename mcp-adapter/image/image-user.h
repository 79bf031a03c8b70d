/* An image's User ("name", "uid", "name:group", "uid:gid") resolved to the ids its runs
 * have inside the sandbox, in the image's own /etc/passwd and /etc/group read beneath its
 * unpacked rootfs (never the host's). As Docker and runc resolve it: a numeric uid needs
 * no entry (its gid is the entry's when there is one, else 0); a name must have one; a
 * group, when given, replaces the user's. Owner: image-user.c. */
#pragma once

#include "oci/oci.h"

/* rootfs_fd: the unpacked rootfs (a directory fd); user: the config's User, not empty. */
int mcp_image_user_resolve(int rootfs_fd, const char *user, unsigned *ret_uid,
                           unsigned *ret_gid, msp_err *err);
