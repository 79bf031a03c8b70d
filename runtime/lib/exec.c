/* Executable lookup and fd hygiene before execve. */
#include <errno.h>

#include "process.h"

int
rt_exec_lookup(const char *file, char *const *env, char *buf, size_t bufsz, msp_err *err)
{
        (void) file;
        (void) env;
        (void) buf;
        (void) bufsz;
        return msp_err_set(err, ENOSYS, "exec lookup: not implemented yet");
}

int
rt_fds_cloexec_from(int first_fd, msp_err *err)
{
        (void) first_fd;
        return msp_err_set(err, ENOSYS, "cloexec: not implemented yet");
}
