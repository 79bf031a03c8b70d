/* libFuzzer target for the egress proxy's request heads (mcp-adapter/egress/proxy-http.c) and the
 * policy decision taken on what they name (proxy-policy.c). Beyond the sanitizers it checks
 * what the proxy relies on: an accepted head lies within the input and names a host and a
 * port; a CONNECT forwards nothing; a plain request's forwarded head is one line ending in
 * CRLF per header, has exactly one Host line (the URL's, right after the request line), no
 * hop-by-hop header and ends with Connection: close; a refusal is an HTTP status whose
 * error response stays one header block whatever the reason says; and a host the
 * allowlist "allowed.test" and "*.wild.test" lets through is one of those names.
 * Built only with clang (tests/meson.build); run with tests/fuzz/run-fuzz.sh. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "egress/proxy-http.h"
#include "egress/proxy-policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static mcp_egress_policy policy;

static void
check_policy_init(void)
{
        msp_err err = { 0 };
        if (policy.n == 0 && (mcp_egress_policy_add(&policy, "allowed.test", &err) < 0 ||
                              mcp_egress_policy_add(&policy, "*.wild.test:8080", &err) < 0))
                abort();
}

/* The host the policy allowed is allowed.test or below wild.test, in any case, with at
 * most one trailing dot. */
static void
check_allowed_host(const char *host)
{
        size_t n = strlen(host);
        if (n > 0 && host[n - 1] == '.')
                n--;
        if (n == 12 && strncasecmp(host, "allowed.test", 12) == 0)
                return;
        if (n > 10 && strncasecmp(host + n - 10, ".wild.test", 10) == 0)
                return;
        abort();
}

static bool
line_is(const char *line, size_t n, const char *name)
{
        size_t k = strlen(name);
        return n > k && line[k] == ':' && strncasecmp(line, name, k) == 0;
}

static void
check_forward(const mcp_proxy_request *r)
{
        const char *f = r->forward;
        static const char tail[] = "Connection: close\r\n\r\n";
        if (!f || strlen(f) != r->forward_len || r->forward_len < sizeof tail - 1 ||
            strcmp(f + r->forward_len - (sizeof tail - 1), tail) != 0)
                abort();
        size_t hosts = 0, i = 0;
        for (const char *line = f; *line; i++) {
                const char *lf = strchr(line, '\n');
                if (!lf || lf == line || lf[-1] != '\r' || memchr(line, '\n', (size_t) (lf - line)))
                        abort();
                size_t n = (size_t) (lf - line) - 1;
                if (n == 0)
                        break;
                if (line_is(line, n, "host")) {
                        if (i != 1)
                                abort();
                        hosts++;
                }
                if (line_is(line, n, "proxy-connection") || line_is(line, n, "proxy-authorization") ||
                    line_is(line, n, "keep-alive") ||
                    (line_is(line, n, "connection") && strncmp(line, "Connection: close", n) != 0))
                        abort();
                line = lf + 1;
        }
        if (hosts != 1)
                abort();
}

static void
check_refusal(int status, const char *why)
{
        if (status < 400 || status > 599 || !why || !*why)
                abort();
        size_t n = 0;
        char *resp = mcp_proxy_error_response(status, why, &n);
        if (!resp)
                return;
        /* The first empty line is the end of the head, and the body has no other line. */
        const char *end = strstr(resp, "\r\n\r\n");
        if (!end || strlen(resp) != n || strchr(end + 4, '\n') != resp + n - 1)
                abort();
        free(resp);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        check_policy_init();
        mcp_proxy_request r = { 0 };
        const char *why = NULL;
        int s = mcp_proxy_parse_head((const char *) data, size, &r, &why);
        if (s == -EAGAIN)
                return 0;
        if (s != 0) {
                if (r.forward)
                        abort();
                check_refusal(s, why);
                return 0;
        }
        if (r.head_len == 0 || r.head_len > size || !r.host[0] || r.port == 0 ||
            strlen(r.host) >= sizeof r.host)
                abort();
        if (r.connect ? r.forward != NULL : (check_forward(&r), false))
                abort();
        if (mcp_egress_allows(&policy, r.host, r.port))
                check_allowed_host(r.host);
        free(r.forward);
        return 0;
}
