/* Egress policy of a sandbox: which host:port its HTTP proxy may reach. Owner:
 * proxy-policy.c. Pure functions: no I/O, no resolution.
 *
 * A pattern is `HOST[:PORT]`: HOST is an exact name (`pypi.org`), `*.SUFFIX` (any name
 * below SUFFIX, not SUFFIX itself), or an IP literal (`192.0.2.7`, `[2001:db8::1]`) that
 * matches only that literal; names never match an address and wildcards never match a
 * literal. Without PORT a pattern allows 80 and 443. Names compare case-insensitively, one
 * trailing dot ignored. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "oci/oci.h"

#define MCP_EGRESS_HOST_MAX 253

typedef struct mcp_egress_rule {
        char host[MCP_EGRESS_HOST_MAX + 1];     /* lower case; a wildcard keeps ".SUFFIX" */
        bool wildcard;
        bool literal;                           /* an IP literal, in inet_ntop's form */
        uint16_t port;                          /* 0: 80 and 443 */
        char *text;                             /* the pattern as given, for messages */
} mcp_egress_rule;

typedef struct mcp_egress_policy {
        mcp_egress_rule *rules;
        size_t n;
} mcp_egress_policy;

/* Adds one pattern; -EINVAL naming it when it is not one of the forms above. */
int mcp_egress_policy_add(mcp_egress_policy *p, const char *pattern, msp_err *err);
void mcp_egress_policy_done(mcp_egress_policy *p);

/* `host` as a request names it (a name, an IPv4 literal, or an IPv6 literal with or
 * without brackets). */
bool mcp_egress_allows(const mcp_egress_policy *p, const char *host, uint16_t port);

/* 0 when every pattern of `narrow` allows only what `max` allows; -EPERM naming the first
 * pattern that asks for more. */
int mcp_egress_narrows(const mcp_egress_policy *max, const mcp_egress_policy *narrow,
                       msp_err *err);

/* Why the proxy must not connect to a resolved address: "loopback", "private",
 * "link-local", "multicast", "metadata", "unspecified", "documentation", "reserved"; NULL
 * when it is a public unicast address (globally reachable in the IANA special-purpose
 * registries; for IPv6 within 2000::/3). IPv4-mapped and NAT64 IPv6 addresses are judged by the IPv4
 * address they carry. */
const char *mcp_egress_addr_refusal(const struct sockaddr *sa);
