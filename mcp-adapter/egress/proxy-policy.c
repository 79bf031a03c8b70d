/* Egress patterns, their matching and narrowing, and the refused address ranges (see
 * proxy-policy.h). */
#include "egress/proxy-policy.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "oci/oci.h"

static const uint16_t default_ports[] = { 80, 443 };

/* A DNS name as the proxy accepts it: labels of [a-z0-9-] and '_', 1..63 bytes each, not
 * starting or ending with '-'. Lower-cases into out; one trailing dot dropped. */
static bool
name_normalize(const char *in, size_t len, char out[MCP_EGRESS_HOST_MAX + 1])
{
        if (len > 0 && in[len - 1] == '.')
                len--;
        if (len == 0 || len > MCP_EGRESS_HOST_MAX)
                return false;
        size_t label = 0;
        for (size_t i = 0; i < len; i++) {
                char c = in[i];
                if (c >= 'A' && c <= 'Z')
                        c = (char) (c - 'A' + 'a');
                if (c == '.') {
                        if (label == 0 || out[i - 1] == '-')
                                return false;
                        label = 0;
                } else if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
                           (c == '-' && label > 0)) {
                        if (++label > 63)
                                return false;
                } else {
                        return false;
                }
                out[i] = c;
        }
        if (out[len - 1] == '-')
                return false;
        out[len] = '\0';
        return true;
}

/* An IPv4 or IPv6 literal (brackets already stripped) in inet_ntop's form. */
static bool
literal_normalize(const char *in, size_t len, char out[MCP_EGRESS_HOST_MAX + 1])
{
        char buf[INET6_ADDRSTRLEN + 1];
        unsigned char addr[sizeof(struct in6_addr)];
        if (len == 0 || len >= sizeof buf)
                return false;
        memcpy(buf, in, len);
        buf[len] = '\0';
        if (inet_pton(AF_INET, buf, addr) == 1)
                return inet_ntop(AF_INET, addr, out, MCP_EGRESS_HOST_MAX + 1) != NULL;
        if (inet_pton(AF_INET6, buf, addr) == 1)
                return inet_ntop(AF_INET6, addr, out, MCP_EGRESS_HOST_MAX + 1) != NULL;
        return false;
}

/* A name whose last label starts with a digit: inet_aton() may take it as an address
 * ("127.1", "0x7f.1", "2130706433"), and no top-level domain does. Refused as a name so
 * that it never reaches the resolver as one. */
static bool
looks_numeric(const char *name)
{
        const char *last = strrchr(name, '.');
        last = last ? last + 1 : name;
        return last[0] >= '0' && last[0] <= '9';
}

static int
parse_port(const char *s, uint16_t *ret)
{
        if (!*s || strlen(s) > 5)
                return -EINVAL;
        unsigned long v = 0;
        for (const char *c = s; *c; c++) {
                if (*c < '0' || *c > '9')
                        return -EINVAL;
                v = v * 10 + (unsigned long) (*c - '0');
        }
        if (v == 0 || v > 65535)
                return -EINVAL;
        *ret = (uint16_t) v;
        return 0;
}

/* HOST[:PORT] into the rule's host fields and port; `allow_wild`: "*." accepted. */
static int
rule_parse(const char *s, bool allow_wild, mcp_egress_rule *r)
{
        const char *host = s, *port = NULL;
        size_t hlen;
        bool bracketed = false;
        if (s[0] == '[') {
                const char *close = strchr(s, ']');
                if (!close || (close[1] && close[1] != ':'))
                        return -EINVAL;
                host = s + 1;
                hlen = (size_t) (close - host);
                port = close[1] ? close + 2 : NULL;
                bracketed = true;
        } else {
                const char *colon = strchr(s, ':');
                if (colon && strchr(colon + 1, ':'))
                        colon = NULL;   /* a bare IPv6 literal: no port */
                hlen = colon ? (size_t) (colon - s) : strlen(s);
                port = colon ? colon + 1 : NULL;
        }
        r->port = 0;
        if (port && parse_port(port, &r->port) < 0)
                return -EINVAL;
        r->wildcard = r->literal = false;
        if (literal_normalize(host, hlen, r->host)) {
                r->literal = true;
                return 0;
        }
        if (bracketed)
                return -EINVAL;
        if (allow_wild && hlen > 2 && host[0] == '*' && host[1] == '.') {
                char suffix[MCP_EGRESS_HOST_MAX + 1];
                if (!name_normalize(host + 2, hlen - 2, suffix) ||
                    strlen(suffix) >= MCP_EGRESS_HOST_MAX || looks_numeric(suffix))
                        return -EINVAL;
                r->host[0] = '.';
                strcpy(r->host + 1, suffix);
                r->wildcard = true;
                return 0;
        }
        if (!name_normalize(host, hlen, r->host) || looks_numeric(r->host))
                return -EINVAL;
        return 0;
}

int
mcp_egress_policy_add(mcp_egress_policy *p, const char *pattern, msp_err *err)
{
        mcp_egress_rule r = { 0 };
        if (!pattern || strlen(pattern) > MCP_EGRESS_HOST_MAX + 8 || rule_parse(pattern, true, &r) < 0)
                return msp_err_set(err, EINVAL,
                                   "network pattern '%.300s': not HOST, *.SUFFIX or an IP literal, "
                                   "with an optional :PORT (1-65535)",
                                   pattern ? pattern : "");
        mcp_egress_rule *n = realloc(p->rules, (p->n + 1) * sizeof(*n));
        if (!n)
                return msp_err_set(err, ENOMEM, "network pattern: out of memory");
        p->rules = n;
        if (!(r.text = strdup(pattern)))
                return msp_err_set(err, ENOMEM, "network pattern: out of memory");
        p->rules[p->n++] = r;
        return 0;
}

void
mcp_egress_policy_done(mcp_egress_policy *p)
{
        for (size_t i = 0; i < p->n; i++)
                free(p->rules[i].text);
        free(p->rules);
        *p = (mcp_egress_policy) { 0 };
}

static bool
port_matches(const mcp_egress_rule *r, uint16_t port)
{
        if (r->port)
                return r->port == port;
        for (size_t i = 0; i < ARRAY_SIZE(default_ports); i++)
                if (default_ports[i] == port)
                        return true;
        return false;
}

/* Does rule r's host part cover host h (wildcard: any name strictly below the suffix)? */
static bool
host_covers(const mcp_egress_rule *r, const char *h, bool h_wild, bool h_literal)
{
        if (r->literal || h_literal)
                return r->literal && h_literal && strcmp(r->host, h) == 0;
        if (!r->wildcard)
                return !h_wild && strcmp(r->host, h) == 0;
        size_t hl = strlen(h), sl = strlen(r->host);
        /* ".a.b" covers "x.a.b" and the wildcard ".x.a.b", and ".a.b" itself only as a
         * wildcard (the same pattern). */
        if (hl < sl || strcmp(h + hl - sl, r->host) != 0)
                return false;
        return hl > sl || h_wild;
}

bool
mcp_egress_allows(const mcp_egress_policy *p, const char *host, uint16_t port)
{
        mcp_egress_rule q;
        size_t len = strlen(host);
        if (len >= 2 && host[0] == '[' && host[len - 1] == ']') {
                host++;
                len -= 2;
        }
        if (literal_normalize(host, len, q.host))
                q.literal = true;
        else if (name_normalize(host, len, q.host) && !looks_numeric(q.host))
                q.literal = false;
        else
                return false;
        for (size_t i = 0; i < p->n; i++)
                if (port_matches(&p->rules[i], port) &&
                    host_covers(&p->rules[i], q.host, false, q.literal))
                        return true;
        return false;
}

static bool
covered_on(const mcp_egress_policy *max, const mcp_egress_rule *c, uint16_t port)
{
        for (size_t i = 0; i < max->n; i++)
                if (port_matches(&max->rules[i], port) &&
                    host_covers(&max->rules[i], c->host, c->wildcard, c->literal))
                        return true;
        return false;
}

int
mcp_egress_narrows(const mcp_egress_policy *max, const mcp_egress_policy *narrow, msp_err *err)
{
        for (size_t i = 0; i < narrow->n; i++) {
                const mcp_egress_rule *c = &narrow->rules[i];
                bool ok = c->port ? covered_on(max, c, c->port)
                                  : covered_on(max, c, 80) && covered_on(max, c, 443);
                if (!ok)
                        return msp_err_set(err, EPERM,
                                           "network: '%s' is not within this server's "
                                           "--network-allow list",
                                           c->text);
        }
        return 0;
}

/* ---- refused addresses ---- */

static const char *
v4_refusal(uint32_t a)
{
        static const struct { uint32_t net, mask; const char *why; } ranges[] = {
                { 0xa9fea9fe, 0xffffffff, "metadata" },         /* 169.254.169.254 */
                { 0x00000000, 0xff000000, "unspecified" },      /* 0/8 */
                { 0x7f000000, 0xff000000, "loopback" },         /* 127/8 */
                { 0x0a000000, 0xff000000, "private" },          /* 10/8 */
                { 0x64400000, 0xffc00000, "private" },          /* 100.64/10, shared CGNAT */
                { 0xac100000, 0xfff00000, "private" },          /* 172.16/12 */
                { 0xc0a80000, 0xffff0000, "private" },          /* 192.168/16 */
                { 0xc0000000, 0xffffff00, "private" },          /* 192.0.0/24, IETF assignments */
                { 0xc6120000, 0xfffe0000, "private" },          /* 198.18/15, benchmarking */
                { 0xc0000200, 0xffffff00, "documentation" },    /* 192.0.2/24, TEST-NET-1 */
                { 0xc6336400, 0xffffff00, "documentation" },    /* 198.51.100/24, TEST-NET-2 */
                { 0xcb007100, 0xffffff00, "documentation" },    /* 203.0.113/24, TEST-NET-3 */
                { 0xc0586300, 0xffffff00, "reserved" },         /* 192.88.99/24, 6to4 relays (deprecated) */
                { 0xa9fe0000, 0xffff0000, "link-local" },       /* 169.254/16 */
                { 0xe0000000, 0xf0000000, "multicast" },        /* 224/4 */
                { 0xf0000000, 0xf0000000, "reserved" },         /* 240/4 and broadcast */
        };
        for (size_t i = 0; i < ARRAY_SIZE(ranges); i++)
                if ((a & ranges[i].mask) == ranges[i].net)
                        return ranges[i].why;
        return NULL;
}

/* In 2001::/23 (IETF protocol assignments, not globally reachable, Teredo included), the
 * blocks the IANA registry marks globally reachable: anycast services and ORCHIDv2/DETs. */
static bool
v6_ietf_global(const unsigned char *b)
{
        static const struct { unsigned char net[16]; unsigned bits; } global[] = {
                { { 0x20, 0x01, 0x00, 0x01, [15] = 0x01 }, 128 },       /* 2001:1::1, PCP anycast */
                { { 0x20, 0x01, 0x00, 0x01, [15] = 0x02 }, 128 },       /* 2001:1::2, TURN anycast */
                { { 0x20, 0x01, 0x00, 0x01, [15] = 0x03 }, 128 },       /* 2001:1::3, DNS-SD SRP anycast */
                { { 0x20, 0x01, 0x00, 0x03 }, 32 },                     /* 2001:3::/32, AMT */
                { { 0x20, 0x01, 0x00, 0x04, 0x01, 0x12 }, 48 },         /* 2001:4:112::/48, AS112 */
                { { 0x20, 0x01, 0x00, 0x20 }, 28 },                     /* 2001:20::/28, ORCHIDv2 */
                { { 0x20, 0x01, 0x00, 0x30 }, 28 },                     /* 2001:30::/28, DETs */
        };
        for (size_t i = 0; i < ARRAY_SIZE(global); i++) {
                unsigned full = global[i].bits / 8, rest = global[i].bits % 8;
                unsigned char mask = (unsigned char) (0xff00 >> rest);
                if (memcmp(b, global[i].net, full) == 0 &&
                    (!rest || (b[full] & mask) == global[i].net[full]))
                        return true;
        }
        return false;
}

static const char *
v6_refusal(const struct in6_addr *a)
{
        static const unsigned char nat64[12] = { 0x00, 0x64, 0xff, 0x9b };
        static const unsigned char metadata[16] = { 0xfd, 0x00, 0x0e, 0xc2, [14] = 0x02, 0x54 };
        static const unsigned char nat64_local[6] = { 0x00, 0x64, 0xff, 0x9b, 0x00, 0x01 };
        const unsigned char *b = a->s6_addr;
        if (IN6_IS_ADDR_V4MAPPED(a) || memcmp(b, nat64, sizeof nat64) == 0) {
                uint32_t v4;
                memcpy(&v4, b + 12, 4);
                return v4_refusal(ntohl(v4));
        }
        if (memcmp(b, metadata, sizeof metadata) == 0)
                return "metadata";                      /* fd00:ec2::254 */
        if (memcmp(b, nat64_local, sizeof nat64_local) == 0)
                return "private";                       /* 64:ff9b:1::/48, a local NAT64 */
        if (IN6_IS_ADDR_UNSPECIFIED(a))
                return "unspecified";
        if (IN6_IS_ADDR_LOOPBACK(a))
                return "loopback";
        if (IN6_IS_ADDR_V4COMPAT(a))
                return "reserved";
        if ((b[0] & 0xfe) == 0xfc)
                return "private";                       /* fc00::/7 */
        if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80)
                return "link-local";                    /* fe80::/10 */
        if (b[0] == 0xfe && (b[1] & 0xc0) == 0xc0)
                return "private";                       /* fec0::/10, site-local */
        if (b[0] == 0xff)
                return "multicast";
        if (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x0d && b[3] == 0xb8)
                return "documentation";                 /* 2001:db8::/32 */
        if (b[0] == 0x3f && b[1] == 0xff && (b[2] & 0xf0) == 0)
                return "documentation";                 /* 3fff::/20 */
        if (b[0] == 0x20 && b[1] == 0x01 && (b[2] & 0xfe) == 0 && !v6_ietf_global(b))
                return "reserved";                      /* 2001::/23 */
        if (b[0] == 0x20 && b[1] == 0x02)
                return "reserved";                      /* 2002::/16, 6to4 (relays deprecated) */
        /* Global unicast is 2000::/3; the rest is unassigned or special (100::/64 discard,
         * 5f00::/16 SRv6 SIDs). */
        if ((b[0] & 0xe0) != 0x20)
                return "reserved";
        return NULL;
}

const char *
mcp_egress_addr_refusal(const struct sockaddr *sa)
{
        if (sa->sa_family == AF_INET)
                return v4_refusal(ntohl(((const struct sockaddr_in *) sa)->sin_addr.s_addr));
        if (sa->sa_family == AF_INET6)
                return v6_refusal(&((const struct sockaddr_in6 *) sa)->sin6_addr);
        return "reserved";
}
