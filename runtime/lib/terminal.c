/* Terminals and the console socket. */
#include <errno.h>

#include "terminal.h"

int
rt_console_socket_connect(const char *path, msp_err *err)
{
        (void) path;
        return msp_err_set(err, ENOSYS, "console socket: not implemented yet");
}

int
rt_pty_open_child(int rootfd, unsigned rows, unsigned cols, int *ret_master, int *ret_slave,
                  msp_err *err)
{
        (void) rootfd;
        (void) rows;
        (void) cols;
        (void) ret_master;
        (void) ret_slave;
        return msp_err_set(err, ENOSYS, "pty: not implemented yet");
}

int
rt_console_send_master(int sockfd, int master, msp_err *err)
{
        (void) sockfd;
        (void) master;
        return msp_err_set(err, ENOSYS, "console socket: not implemented yet");
}

int
rt_pty_make_stdio_child(int slave, msp_err *err)
{
        (void) slave;
        return msp_err_set(err, ENOSYS, "pty: not implemented yet");
}
