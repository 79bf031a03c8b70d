/* The egress proxy of one sandbox run: an HTTP forward proxy (CONNECT tunnels and absolute
 * http:// requests, no TLS interception) served by msp-mcp's event loop on the TCP listener
 * the sandbox's init hands over (egress-listener.h). Owner: proxy.c.
 *
 * Each request is checked against the run's policy (proxy-policy.h), its name resolved by
 * msp-mcp's resolver helper (resolver.h: the system resolver, so /etc/hosts counts,
 * without blocking the loop) or taken from a pin (--resolve HOST=ADDR), and every resolved address
 * that is loopback, private, link-local, multicast or a metadata address is refused unless
 * it came from a pin. Per run: at most max_conns requests let through to resolution and
 * connect (whether or not they get connected) and max_bytes relayed
 * (both directions together); a connection idle for idle_ms (resolution and connect
 * included) is closed; each fd comes from the run's share of the fd budget, and a client
 * connection that finds it spent is closed at once (the first of a row is logged as a
 * decision), a request whose upstream finds it spent gets a 503. A refusal is an HTTP error response whose body and X-Msp-Egress
 * header say why. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "oci/oci.h"
#include "base/base.h"
#include "egress/proxy-policy.h"
#include "egress/resolver.h"

typedef struct mcp_proxy_pin {
        char host[MCP_EGRESS_HOST_MAX + 1];     /* lower case */
        struct sockaddr_storage addr;           /* port 0 */
        socklen_t len;
} mcp_proxy_pin;

/* "HOST=ADDR" (ADDR an IPv4 or IPv6 literal, brackets optional); -EINVAL naming it. */
int mcp_proxy_pin_parse(const char *spec, mcp_proxy_pin *ret, msp_err *err);

typedef struct mcp_proxy_conf {
        const mcp_egress_policy *policy;        /* outlives the proxy */
        const mcp_proxy_pin *pins;
        size_t n_pins;
        mcp_resolver *resolver;                 /* outlives the proxy; NULL: names other
                                                 * than pins do not resolve */
        unsigned max_conns;
        uint64_t max_bytes;
        uint64_t idle_ms;
        struct mcp_fds *fds;                    /* the fd accountant (fd-budget.h): every
                                                 * client and upstream fd is taken from it;
                                                 * NULL: no budget */
        const char *tenant;                     /* whose budget the run's fds count in */
} mcp_proxy_conf;

typedef enum mcp_proxy_event {
        MCP_PROXY_ALLOWED,      /* connected to host:port (reason: the address) */
        MCP_PROXY_DENIED,       /* refused (reason says why) */
        MCP_PROXY_FAILED,       /* allowed, but the host could not be reached (reason: the
                                 * name did not resolve, the connect was refused or timed out) */
        MCP_PROXY_CLOSED,       /* an allowed connection ended (bytes relayed; reason: a limit
                                 * or error that ended it, or NULL) */
} mcp_proxy_event;

/* up: bytes sent toward the host (a plain http:// request's forwarded head included),
 * down: bytes received from it. */
typedef void (*mcp_proxy_event_fn)(mcp_proxy_event ev, const char *host, uint16_t port,
                                   const char *reason, uint64_t up, uint64_t down, void *data);

typedef struct mcp_proxy mcp_proxy;

/* Takes the first connection to the listening unix socket `handover_fd` (taken: closed
 * once that connection came, or by mcp_proxy_free), receives the listener that connection
 * sends (egress_listener_recv) and serves it; a connection that sends anything else leaves
 * the run without a proxy. fn may be NULL. */
int mcp_proxy_new(mcp_loop *loop, int handover_fd, const mcp_proxy_conf *conf,
                  mcp_proxy_event_fn fn, void *data, mcp_proxy **ret, msp_err *err);
/* Closes every connection (their events emitted; their lookups cancelled) and
 * accepts no more; the denied and failed lists and the byte count stay. */
void mcp_proxy_shutdown(mcp_proxy *p);
/* mcp_proxy_shutdown(), then frees. */
mcp_proxy *mcp_proxy_free(mcp_proxy *p);

/* Distinct "host:port" of refused requests, oldest first (at most MCP_PROXY_DENIED_MAX). */
#define MCP_PROXY_DENIED_MAX 32
size_t mcp_proxy_denied(const mcp_proxy *p, const char *const **ret);
/* Distinct "host:port: reason" of requests that got no answer from their host: not
 * resolved, refused after resolution (a private address), not connected, or closed before
 * any byte came back; oldest first, at most MCP_PROXY_DENIED_MAX. */
size_t mcp_proxy_failed(const mcp_proxy *p, const char *const **ret);
uint64_t mcp_proxy_bytes(const mcp_proxy *p);
