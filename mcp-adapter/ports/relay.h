/* A bidirectional byte pump between two connected, non-blocking stream sockets on the
 * loop's thread. Owner: relay.c.
 *
 * What holds: at most MCP_RELAY_BUF bytes are held each way (a side that does not read
 * stops the other side being read); one side's end of file becomes shutdown(SHUT_WR) of
 * the other once what came before it is delivered (half-close); the relay ends when both
 * ways have ended, on an error of either side, or when nothing moved for idle_usec; it
 * then closes both sockets and says so once, with the bytes moved each way. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "base/base.h"

#define MCP_RELAY_BUF (64u * 1024)

typedef struct mcp_relay mcp_relay;

/* result: 0 both ways ended, -ETIMEDOUT idle, else the -errno of the failed side. Called
 * once, after both sockets are closed; the relay is freed when it returns. */
typedef void (*mcp_relay_done_fn)(void *data, int result, uint64_t a_to_b, uint64_t b_to_a);

/* Starts relaying between a and b, which it owns from now on (closed on every path, an
 * error of this call included). pending[0..pending_len) are bytes for b that were read
 * from a already (at most MCP_RELAY_BUF; -E2BIG else). */
int mcp_relay_new(mcp_loop *loop, int a, int b, const void *pending, size_t pending_len,
                  uint64_t idle_usec, mcp_relay_done_fn done, void *data, mcp_relay **ret);
/* Ends it now: both sockets closed, done not called. */
void mcp_relay_free(mcp_relay *r);
