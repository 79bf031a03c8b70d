/* The parent <-> init channel during create: a SOCK_SEQPACKET socketpair carrying
 * fixed-size messages, so an error raised inside the container reaches the caller
 * with its full text. EOF means the other side died. */
#pragma once

#include <stdint.h>

#include "oci/oci.h"

typedef enum rt_sync_type {
        RT_SYNC_GO = 1,                 /* parent: maps written (v2/unified cgroup joined) */
        RT_SYNC_RUN_HOOKS,              /* init: run prestart + createRuntime now */
        RT_SYNC_HOOKS_DONE,             /* parent: they succeeded */
        RT_SYNC_READY,                  /* init: parked, waiting for start */
        RT_SYNC_ERROR,                  /* either side: err carries the message */
        RT_SYNC_CGROUP,                 /* parent: the v1 cgroups are ready; fds: their
                                           `tasks` files, err.msg: their names, one per line */
        RT_SYNC_MOUNT_SOURCES,          /* init: open the bind sources; parent: batches of
                                           their fds, err.msg: the mount indexes, "3,5";
                                           an empty batch ends them (mountsrc.h) */
} rt_sync_type;

#define RT_SYNC_MAX_FDS 32

typedef struct rt_sync_msg {
        uint32_t type;
        int32_t value;
        msp_err err;
} rt_sync_msg;

int rt_sync_pair(int fds[2], msp_err *err);
int rt_sync_send(int fd, rt_sync_type type, int32_t value, const msp_err *payload);
/* Receive one message; EOF gives -EPIPE with "the container init exited". */
int rt_sync_recv(int fd, rt_sync_msg *msg, msp_err *err);
/* The text of an RT_SYNC_ERROR message into err; returns its -errno (-EIO when none). */
int rt_sync_error_of(const rt_sync_msg *msg, msp_err *err);
/* Receive and require `type`; an RT_SYNC_ERROR message is copied into err. */
int rt_sync_expect(int fd, rt_sync_type type, rt_sync_msg *msg, msp_err *err);
/* Send a message with `text` in err.msg and n fds (SCM_RIGHTS); 0 or -errno. */
int rt_sync_send_fds(int fd, rt_sync_type type, const char *text, const int *fds, size_t n);
/* rt_sync_expect that also takes up to max fds (close-on-exec) into fds; *ret_n says
 * how many came. Fds beyond max, or with any other message, are closed. */
int rt_sync_expect_fds(int fd, rt_sync_type type, rt_sync_msg *msg, int *fds, size_t max,
                       size_t *ret_n, msp_err *err);
