#include "rootfs.h"

#include <errno.h>

int
rt_rootfs_setup_child(const rt_rootfs_params *p, int *ret_rootfd, msp_err *err)
{
        (void) p; (void) ret_rootfd;
        return msp_err_set(err, ENOSYS, "rootfs: not implemented");
}

int
rt_rootfs_mount_console_child(int rootfd, int pty_slave_fd, msp_err *err)
{
        (void) rootfd; (void) pty_slave_fd;
        return msp_err_set(err, ENOSYS, "console: not implemented");
}

int
rt_rootfs_pivot_child(int rootfd, bool no_pivot, msp_err *err)
{
        (void) rootfd; (void) no_pivot;
        return msp_err_set(err, ENOSYS, "pivot_root: not implemented");
}

int
rt_rootfs_finalize_child(const rt_rootfs_params *p, msp_err *err)
{
        (void) p;
        return msp_err_set(err, ENOSYS, "rootfs finalize: not implemented");
}
