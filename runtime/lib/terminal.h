/* Terminals: the pty is allocated inside the container's devpts, the slave taken with
 * TIOCGPTPEER (never re-opened by name, CVE-2025-52565), the master sent over the
 * console socket with SCM_RIGHTS (runc/conmon protocol). */
#pragma once

#include <stdbool.h>

#include "oci/oci.h"

/* Connect to the console socket (an AF_UNIX SOCK_STREAM path). Done by the parent
 * before clone; the fd is passed to the child. */
int rt_console_socket_connect(const char *path, msp_err *err);
/* Open <rootfs>/dev/pts/ptmx beneath rootfd (verified to be a devpts ptmx), unlock it,
 * set the window size when given (0,0 = leave), and return master and peer slave fds. */
int rt_pty_open_child(int rootfd, unsigned rows, unsigned cols, int *ret_master, int *ret_slave,
                      msp_err *err);
/* Send the master over the connected console socket (one data byte + SCM_RIGHTS). */
int rt_console_send_master(int sockfd, int master, msp_err *err);
/* The first step of every container process (the init's and exec's): a session of its
 * own, without a controlling terminal, as runc's. Code in the container then cannot
 * reach the caller's terminal through /dev/tty (ENXIO), nor push input into a terminal
 * it still holds with TIOCSTI (it is not its controlling terminal: that needs
 * CAP_SYS_ADMIN), and the terminal's signals (Ctrl-C) go to the runtime, which forwards
 * them. Then stdio[i] >= 0 (above 2) becomes fd i and is closed; NULL: none. */
int rt_stdio_enter_child(const int *stdio, msp_err *err);
/* Make the slave the controlling terminal and fds 0,1,2 (TIOCSCTTY, dup3), after
 * rt_stdio_enter_child. slave (> 2) stays owned by the caller, who closes it afterwards. */
int rt_pty_make_stdio_child(int slave, msp_err *err);
