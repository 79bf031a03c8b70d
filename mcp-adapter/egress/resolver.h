/* Name resolution for the egress proxy without blocking the loop: one long-lived helper
 * process per msp-mcp answers getaddrinfo() (the system resolver: /etc/hosts, nsswitch,
 * the configured DNS, and whatever caching the system has) on a SOCK_SEQPACKET pair, each
 * lookup in a thread of its own so that a slow name does not hold up others. Owner:
 * resolver.c.
 *
 * Why a helper: getaddrinfo blocks, and msp-mcp stays single-threaded (it forks runtimes);
 * a child per lookup cost a fork of msp-mcp each time. The helper is forked once, closes
 * every fd but its socket, runs as nobody (65534) when msp-mcp is root, with no new
 * privileges, and dies with msp-mcp. It only resolves: what the proxy does with the
 * addresses (refusing loopback, private and metadata addresses) is decided in proxy.c on
 * every answer, so a name that changes between lookups (DNS rebinding) is checked again
 * each time. Nothing is cached here. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "oci/oci.h"
#include "base/base.h"

#define MCP_RESOLVER_MAX_ADDRS 8

typedef struct mcp_resolver mcp_resolver;

/* The answer: up to MCP_RESOLVER_MAX_ADDRS addresses (port 0), n == 0 when the name did
 * not resolve or the helper is gone; then `why` says which, in a few words ("name not
 * resolved", "name not resolved: no answer from the DNS server", ...), else NULL. */
typedef void (*mcp_resolved_fn)(const struct sockaddr_storage *addrs, size_t n,
                                const char *why, void *data);

/* The helper starts on the first lookup (and again after it died). */
int mcp_resolver_new(mcp_loop *loop, mcp_resolver **ret, msp_err *err);
/* Kills and reaps the helper; pending lookups get no callback. */
mcp_resolver *mcp_resolver_free(mcp_resolver *r);

/* Looks `host` up; fn is called once from the loop, unless the lookup is cancelled first.
 * *ticket names it for mcp_resolver_cancel. 0 or -errno (no helper: fn is not called). */
int mcp_resolver_ask(mcp_resolver *r, const char *host, mcp_resolved_fn fn, void *data,
                     uint64_t *ticket);
void mcp_resolver_cancel(mcp_resolver *r, uint64_t ticket);

/* The helper's pid, 0 when none runs (tests). */
pid_t mcp_resolver_pid(const mcp_resolver *r);
