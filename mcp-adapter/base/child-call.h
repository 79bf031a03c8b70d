/* One function run in a forked child, for a step whose side effects must not reach
 * msp-mcp itself (a user namespace entered, a probe engine's namespaces): its result and
 * error come back over a pipe. Only before msp-mcp has threads. Owner: child-call.c. */
#pragma once

#include <stddef.h>

#include "oci/oci.h"

/* fn(data, out, err) in a child; out (out_len bytes, may be 0) is copied back when fn
 * returns >= 0. fn's -errno and message come back as they are. */
int mcp_child_call(int (*fn)(void *data, void *out, msp_err *err), void *data, void *out,
                   size_t out_len, msp_err *err);

/* First step of a forked helper that outlives the fork's caller (the resolver, an HTTPS
 * fetch): it dies with parent (-1 when parent is already gone), its signals are unblocked,
 * fd becomes its fd 3, fds 0 and 1 /dev/null, and every other fd of msp-mcp's but stderr is
 * closed (client connections, the listener), so nothing of the server's stays open in it. */
int mcp_child_keep_only(int fd, pid_t parent);
