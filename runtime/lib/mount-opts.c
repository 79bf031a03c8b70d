#include "mount-opts.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int
rt_mount_opts_parse(const oci_strv *opts, const char *dest, rt_mount_opts *ret, msp_err *err)
{
        (void) opts;
        memset(ret, 0, sizeof *ret);
        return msp_err_set(err, ENOSYS, "mount '%s': options: not implemented", dest);
}

void
rt_mount_opts_done(rt_mount_opts *o)
{
        free(o->data);
        o->data = NULL;
}

uint64_t
rt_mount_flags_to_attr(unsigned long ms_flags)
{
        (void) ms_flags;
        return 0;
}
