#include "procfs.h"

#include <errno.h>

int
rt_procfs_open(msp_err *err)
{
        return msp_err_set(err, ENOSYS, "procfs: not implemented");
}

int
rt_procfs_verify_root(int procfd, msp_err *err)
{
        (void) procfd;
        return msp_err_set(err, ENOSYS, "procfs: not implemented");
}

int
rt_procfs_openat(int procfd, const char *path, int flags, msp_err *err)
{
        (void) procfd; (void) flags;
        return msp_err_set(err, ENOSYS, "procfs '%s': not implemented", path);
}

int
rt_procfs_write(int procfd, const char *path, const char *data, msp_err *err)
{
        (void) procfd; (void) data;
        return msp_err_set(err, ENOSYS, "procfs '%s': not implemented", path);
}
