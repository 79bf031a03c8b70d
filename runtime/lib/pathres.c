#include "pathres.h"

#include <errno.h>

int
rt_open_in_root(int rootfd, const char *path, int flags, msp_err *err)
{
        (void) rootfd; (void) flags;
        return msp_err_set(err, ENOSYS, "open '%s' in rootfs: not implemented", path);
}

int
rt_mkpath_in_root(int rootfd, const char *path, bool dir, msp_err *err)
{
        (void) rootfd; (void) dir;
        return msp_err_set(err, ENOSYS, "mkpath '%s' in rootfs: not implemented", path);
}
