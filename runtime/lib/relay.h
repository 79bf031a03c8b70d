/* The stdio of a foreground process without a terminal (`msp run`, `msp exec` without
 * -t). Each of msp's fds 0-2 that is a terminal is replaced for the container process
 * by a pipe, and msp copies between the pipe and its own fd until the process exits and
 * the pipes reach EOF, as runc does: code in the container then holds no fd of the
 * caller's terminal (no TIOCSTI, termios or keystrokes once msp has returned). Other
 * stdio (pipes, files, sockets, /dev/null) is handed over as it is, without a copy.
 * Detached paths (`run -d`, `create`, `exec -d`) hand over their stdio unchanged. */
#pragma once

#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#include "oci/oci.h"

enum { RT_RELAY_LINKS = 3 };

typedef struct rt_relay_link {
        int from, to;                   /* -1: closed; to -1 with from open: discarded */
        bool own_from, own_to;
        size_t len, off;                /* buf[off, len) is still to be written */
        char buf[16384];
} rt_relay_link;

typedef struct rt_stdio_relay {
        int child[3];                   /* the process's fds 0-2 (owned until started);
                                           -1: msp's own fd, handed over as is */
        rt_relay_link link[RT_RELAY_LINKS];     /* stdin -> pipe, pipe -> stdout, stderr */
        bool started;
        struct sigaction old_sigpipe;   /* restored by rt_stdio_relay_done */
} rt_stdio_relay;

/* Whether fd is a terminal for this purpose: isatty, or any character device other
 * than the memory devices (/dev/null, zero, full, random, urandom: major 1). */
bool rt_stdio_is_terminal(int fd);
/* The pipes for the terminals among fds 0-2 (none: nothing to relay); stderr shares
 * stdout's pipe when both are the same terminal, so that their order is kept. */
int rt_stdio_relay_open(rt_stdio_relay *r, msp_err *err);
/* The process has its fds: close our copies of its ends; SIGPIPE is ignored until
 * done (a reader that went away is an error of that write only). */
void rt_stdio_relay_started(rt_stdio_relay *r);
/* The pollfds for the links (RT_RELAY_LINKS entries), and the copying for the events
 * poll() returned in them. */
void rt_stdio_relay_pollfds(const rt_stdio_relay *r, struct pollfd *p);
void rt_stdio_relay_handle(rt_stdio_relay *r, const struct pollfd *p);
/* The process exited: stop reading msp's stdin (its pipe is closed). */
void rt_stdio_relay_input_done(rt_stdio_relay *r);
/* Whether an output link is still open (not every writer has closed its pipe). */
bool rt_stdio_relay_busy(const rt_stdio_relay *r);
/* Close everything and restore SIGPIPE; NULL, or again: nothing. */
void rt_stdio_relay_done(rt_stdio_relay *r);
static inline void
rt_stdio_relay_donep(rt_stdio_relay **r)
{
        rt_stdio_relay_done(*r);
}
