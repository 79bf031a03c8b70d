/* User-mode networking of network sessions' sandboxes. Owner: usernet.c.
 *
 * A sandbox with network keeps its own network namespace (never the host's). slirp4netns
 * gives it a tap device and a user-mode TCP/IP stack whose sockets live in the host's
 * namespace: outbound connections work, nothing listens on the host for the sandbox (no port
 * forwarding), and host loopback stays unreachable (--disable-host-loopback).
 *
 * The runtime creates the namespace; a createRuntime hook attaches the helper (the runtime
 * runs msp-sandbox-hook, hook-main.c, with MCP_USERNET_HOOK_ARG once the namespaces exist
 * and before the process starts; usernet-hook.c), so that the network is up when the
 * sandbox's code runs, with msp and runc alike. The hook leaves slirp4netns running detached; its --exit-fd is a FIFO
 * in the run's bundle for which msp-mcp holds the only writer: slirp4netns exits when the
 * run ends or msp-mcp dies, whichever comes first. */
#pragma once

#include <stdbool.h>

#include "oci/oci.h"
#include "sandbox/hook-args.h"

#define MCP_USERNET_HELPER "slirp4netns"
/* In the run's bundle dir: the exit FIFO, and the helper's stdout and stderr (the runtime
 * reads the hook's output until it closes, so the detached helper must not inherit it). */
#define MCP_USERNET_EXIT_FIFO "usernet.exit"
#define MCP_USERNET_HELPER_LOG "usernet.log"

/* true when `path` names an executable file. */
bool mcp_usernet_usable(const char *path);

/* 0 when `path` (the configured helper, NULL: none found) is usable; -ENOTSUP naming it and
 * the package otherwise: network sessions are refused without it. */
int mcp_usernet_check(const char *path, msp_err *err);

/* The exit FIFO in the bundle dir `bfd`; *ret is its writer (O_CLOEXEC), the run's to close. */
int mcp_usernet_prepare(int bfd, int *ret, msp_err *err);
