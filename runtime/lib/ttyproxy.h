/* `msp run` with process.terminal and no --console-socket: like runc, msp receives the
 * pty master itself and copies between it and its own stdio until the process exits,
 * with the caller's terminal in raw mode and window-size changes passed on. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>
#include <termios.h>

#include "oci/oci.h"

/* Receive a pty master sent with SCM_RIGHTS on a connected socket. */
int rt_console_recv_master(int sockfd, int *ret_master, msp_err *err);

typedef struct rt_ttyproxy {
        int master;                     /* owned */
        bool raw;                       /* the caller's stdin was put in raw mode */
        struct termios *saved;          /* owned; restored by rt_ttyproxy_done */
} rt_ttyproxy;

/* Raw mode on stdin when it is a terminal, and the initial window size. */
int rt_ttyproxy_begin(rt_ttyproxy *p, int master, msp_err *err);
/* Copy what is readable now; returns 0, or -EPIPE once the master is closed (the
 * container side hung up) and everything was copied out. */
int rt_ttyproxy_pump_in(rt_ttyproxy *p);
int rt_ttyproxy_pump_out(rt_ttyproxy *p);
void rt_ttyproxy_resize(rt_ttyproxy *p);
void rt_ttyproxy_done(rt_ttyproxy *p);
