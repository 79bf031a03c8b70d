/* Landlock from process.landlock (skeleton; filled in by the Landlock work of issue 4). */
#include <errno.h>

#include "landlock.h"

int
rt_landlock_abi(void)
{
        return 0;
}

int
rt_landlock_prepare(const oci_landlock *l, rt_landlock **ret, char *dropped,
                    size_t dropped_sz, msp_err *err)
{
        (void) l;
        (void) ret;
        (void) dropped;
        (void) dropped_sz;
        return msp_err_set(err, ENOSYS, "landlock: not implemented yet");
}

int
rt_landlock_apply(rt_landlock *l, msp_err *err)
{
        (void) l;
        return msp_err_set(err, ENOSYS, "landlock: not implemented yet");
}

rt_landlock *
rt_landlock_free(rt_landlock *l)
{
        (void) l;
        return NULL;
}
