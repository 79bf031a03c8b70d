/* seccomp from linux.seccomp (skeleton; filled in by the seccomp work of issue 4). */
#include <errno.h>

#include "seccomp.h"

int
rt_seccomp_prepare(const oci_seccomp *s, bool debug, rt_seccomp **ret, msp_err *err)
{
        (void) s;
        (void) debug;
        (void) ret;
        return msp_err_set(err, ENOSYS, "seccomp: not implemented yet");
}

int
rt_seccomp_load(rt_seccomp *f, int *ret_listener, msp_err *err)
{
        (void) f;
        (void) ret_listener;
        return msp_err_set(err, ENOSYS, "seccomp: not implemented yet");
}

int
rt_seccomp_send_listener(const oci_seccomp *s, int listener, const char *state_json,
                         msp_err *err)
{
        (void) s;
        (void) listener;
        (void) state_json;
        return msp_err_set(err, ENOSYS, "seccomp: not implemented yet");
}

rt_seccomp *
rt_seccomp_free(rt_seccomp *f)
{
        (void) f;
        return NULL;
}
