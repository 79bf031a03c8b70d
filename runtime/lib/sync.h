/* The parent <-> init channel during create: a SOCK_SEQPACKET socketpair carrying
 * fixed-size messages, so an error raised inside the container reaches the caller
 * with its full text. EOF means the other side died. */
#pragma once

#include <stdint.h>

#include "err.h"

typedef enum rt_sync_type {
        RT_SYNC_GO = 1,                 /* parent: maps written, cgroup joined */
        RT_SYNC_RUN_HOOKS,              /* init: run prestart + createRuntime now */
        RT_SYNC_HOOKS_DONE,             /* parent: they succeeded */
        RT_SYNC_READY,                  /* init: parked, waiting for start */
        RT_SYNC_ERROR,                  /* either side: err carries the message */
} rt_sync_type;

typedef struct rt_sync_msg {
        uint32_t type;
        int32_t value;
        msp_err err;
} rt_sync_msg;

int rt_sync_pair(int fds[2], msp_err *err);
int rt_sync_send(int fd, rt_sync_type type, int32_t value, const msp_err *payload);
/* Receive one message; EOF gives -EPIPE with "the container init exited". */
int rt_sync_recv(int fd, rt_sync_msg *msg, msp_err *err);
/* Receive and require `type`; an RT_SYNC_ERROR message is copied into err. */
int rt_sync_expect(int fd, rt_sync_type type, rt_sync_msg *msg, msp_err *err);
