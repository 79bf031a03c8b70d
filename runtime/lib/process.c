/* rlimits, ioPriority, scheduler and personality of the container process. */
#include <errno.h>

#include "process.h"

int
rt_rlimits_apply(const oci_rlimit *rl, size_t n, msp_err *err)
{
        (void) rl;
        (void) n;
        return msp_err_set(err, ENOSYS, "rlimits: not implemented yet");
}

int
rt_process_sched_apply(const oci_process *p, const oci_personality *pers, msp_err *err)
{
        (void) p;
        (void) pers;
        return msp_err_set(err, ENOSYS, "scheduler: not implemented yet");
}
