/* mcp-adapter/egress/proxy-policy.c and proxy-http.c: egress patterns (forms, refusals, matching,
 * narrowing a server's list), the refused address ranges, and the proxy's request heads
 * (CONNECT, absolute http:// URLs rewritten to origin form, refused forms). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>

#include "tests/lib/tap.h"
#include "oci/macros.h"
#include "egress/proxy-http.h"
#include "egress/proxy-policy.h"

static void
policy_of(mcp_egress_policy *p, const char *const *patterns)
{
        msp_err err = { 0 };
        for (size_t i = 0; patterns[i]; i++)
                if (mcp_egress_policy_add(p, patterns[i], &err) < 0)
                        tap_diag("%s", err.msg);
}

TEST(patterns_refused)
{
        static const char *const bad[] = {
                "", ":443", "pypi.org:", "pypi.org:0", "pypi.org:65536", "pypi.org:80x",
                "*", "*.", "**.org", "a.*.org", "py pi.org", "pypi..org", "-pypi.org",
                "pypi-.org", "127.1", "2130706433", "0x7f.0.0.1", "user@pypi.org", "[pypi.org]",
                "[::1", "[::1]x", "pypi.org/simple", "http://pypi.org",
        };
        for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
                mcp_egress_policy p = { 0 };
                msp_err err = { 0 };
                int r = mcp_egress_policy_add(&p, bad[i], &err);
                tap_check(r == -EINVAL && p.n == 0 && strstr(err.msg, "network pattern"),
                          "pattern '%s' refused: %s", bad[i], err.msg);
                mcp_egress_policy_done(&p);
        }
}

TEST(matching)
{
        mcp_egress_policy p = { 0 };
        policy_of(&p, (const char *const[]){ "PyPI.org", "*.pythonhosted.org:443",
                                             "192.0.2.7:8080", "[2001:db8::1]", "host.test.:81",
                                             NULL });
        ASSERT_EQ_INT(p.n, 5);
        static const struct { const char *host; uint16_t port; bool ok; } c[] = {
                { "pypi.org", 80, true },       { "pypi.org", 443, true },
                { "PYPI.ORG.", 443, true },     { "pypi.org", 8080, false },
                { "www.pypi.org", 443, false }, { "files.pythonhosted.org", 443, true },
                { "a.b.pythonhosted.org", 443, true },
                { "pythonhosted.org", 443, false },             /* the suffix itself: no */
                { "files.pythonhosted.org", 80, false },
                { "evilpythonhosted.org", 443, false },
                { "192.0.2.7", 8080, true },    { "192.0.2.7", 443, false },
                { "2001:db8::1", 443, true },   { "[2001:db8:0::1]", 80, true },
                { "2001:db8::2", 443, false },  { "host.test", 81, true },
                { "127.0.0.1", 80, false },     { "127.1", 80, false },
                { "pypi.org:80", 80, false },   { "", 80, false },
                { "pypi.org..", 443, false },   { "pypi%2eorg", 443, false },
                { "pyp\xc3\xad.org", 443, false }, { "2001:db8::1%eth0", 443, false },
                { "[2001:db8::1]x", 443, false }, { "pypi.org\\", 443, false },
        };
        for (size_t i = 0; i < ARRAY_SIZE(c); i++)
                tap_check(mcp_egress_allows(&p, c[i].host, c[i].port) == c[i].ok, "%s:%u %s",
                          c[i].host, c[i].port, c[i].ok ? "allowed" : "refused");
        mcp_egress_policy_done(&p);
}

TEST(wildcard_never_matches_literal)
{
        mcp_egress_policy p = { 0 };
        msp_err err = { 0 };
        ASSERT_OK_ERR(mcp_egress_policy_add(&p, "*.example", &err), err);
        ASSERT_FALSE(mcp_egress_allows(&p, "127.0.0.1", 80));
        ASSERT_TRUE(mcp_egress_allows(&p, "a.example", 80));
        mcp_egress_policy_done(&p);
}

TEST(narrowing)
{
        mcp_egress_policy max = { 0 };
        policy_of(&max, (const char *const[]){ "pypi.org", "*.pythonhosted.org:443",
                                               "*.npmjs.org", "10.0.0.5:3128", NULL });
        static const struct { const char *pattern; bool ok; } c[] = {
                { "pypi.org", true },                   { "pypi.org:443", true },
                { "pypi.org:8443", false },             { "*.pypi.org", false },
                { "files.pythonhosted.org:443", true },
                { "files.pythonhosted.org", false },    /* asks for 80 too */
                { "*.pythonhosted.org:443", true },     { "*.a.pythonhosted.org:443", true },
                { "*.pythonhosted.org", false },        { "registry.npmjs.org", true },
                { "*.org", false },                     { "npmjs.org", false },
                { "10.0.0.5:3128", true },              { "10.0.0.5", false },
                { "example.com", false },
        };
        for (size_t i = 0; i < ARRAY_SIZE(c); i++) {
                mcp_egress_policy n = { 0 };
                msp_err err = { 0 };
                policy_of(&n, (const char *const[]){ c[i].pattern, NULL });
                int r = mcp_egress_narrows(&max, &n, &err);
                tap_check(c[i].ok ? r == 0 : r == -EPERM && strstr(err.msg, c[i].pattern),
                          "'%s' %s: %s", c[i].pattern, c[i].ok ? "within" : "beyond", err.msg);
                mcp_egress_policy_done(&n);
        }
        mcp_egress_policy_done(&max);
}

static const char *
refusal_of(const char *text)
{
        struct sockaddr_storage ss = { 0 };
        struct sockaddr_in *v4 = (struct sockaddr_in *) &ss;
        struct sockaddr_in6 *v6 = (struct sockaddr_in6 *) &ss;
        if (inet_pton(AF_INET, text, &v4->sin_addr) == 1)
                v4->sin_family = AF_INET;
        else if (inet_pton(AF_INET6, text, &v6->sin6_addr) == 1)
                v6->sin6_family = AF_INET6;
        return mcp_egress_addr_refusal((struct sockaddr *) &ss);
}

TEST(address_ranges)
{
        static const struct { const char *addr, *why; } c[] = {
                { "127.0.0.1", "loopback" },    { "127.255.0.9", "loopback" },
                { "10.1.2.3", "private" },      { "172.16.0.1", "private" },
                { "172.31.255.255", "private" }, { "172.32.0.1", NULL },
                { "192.168.1.1", "private" },   { "100.64.0.1", "private" },
                { "169.254.169.254", "metadata" }, { "169.254.1.1", "link-local" },
                { "224.0.0.1", "multicast" },   { "255.255.255.255", "reserved" },
                { "0.0.0.0", "unspecified" },   { "8.8.8.8", NULL },
                { "151.101.0.223", NULL },      { "::1", "loopback" },
                { "::", "unspecified" },        { "::ffff:127.0.0.1", "loopback" },
                { "::ffff:10.0.0.1", "private" }, { "64:ff9b::a9fe:a9fe", "metadata" },
                { "fd00:ec2::254", "metadata" }, { "fd12::1", "private" },
                { "fe80::1", "link-local" },    { "ff02::1", "multicast" },
                { "2a04:4e42::223", NULL },     { "64:ff9b:1::a00:1", "private" },
                /* the IANA special-purpose registries' blocks that are not globally
                 * reachable, and the ones inside them that are */
                { "192.0.2.1", "documentation" }, { "198.51.100.7", "documentation" },
                { "203.0.113.255", "documentation" }, { "203.0.114.1", NULL },
                { "192.88.99.1", "reserved" },  { "192.31.196.1", NULL },
                { "::ffff:192.0.2.1", "documentation" }, { "64:ff9b::c633:6407", "documentation" },
                { "2001:db8::1", "documentation" }, { "2001:db8:ffff::1", "documentation" },
                { "3fff::1", "documentation" }, { "3fff:fff::1", "documentation" },
                { "3fff:1000::1", NULL },       { "2001::1", "reserved" },
                { "2001:2::1", "reserved" },    { "2001:10::1", "reserved" },
                { "2001:1ff::1", "reserved" },  { "2001:1::1", NULL },
                { "2001:1::4", "reserved" },    { "2001:3::1", NULL },
                { "2001:4:112::1", NULL },      { "2001:4:113::1", "reserved" },
                { "2001:20::1", NULL },         { "2001:3f::1", NULL },
                { "2001:200::1", NULL },        { "2002:c000:201::1", "reserved" },
                { "100::1", "reserved" },       { "5f00::1", "reserved" },
                { "4000::1", "reserved" },      { "1fff::1", "reserved" },
        };
        for (size_t i = 0; i < ARRAY_SIZE(c); i++) {
                const char *why = refusal_of(c[i].addr);
                tap_check(c[i].why ? why && strcmp(why, c[i].why) == 0 : !why, "%s: %s",
                          c[i].addr, why ? why : "public");
        }
}

TEST(head_connect)
{
        static const char req[] = "CONNECT files.pythonhosted.org:443 HTTP/1.1\r\n"
                                  "Host: files.pythonhosted.org:443\r\n\r\nTLS";
        mcp_proxy_request r;
        const char *why = NULL;
        ASSERT_EQ_INT(mcp_proxy_parse_head(req, sizeof req - 1, &r, &why), 0);
        ASSERT_TRUE(r.connect);
        ASSERT_STREQ(r.host, "files.pythonhosted.org");
        ASSERT_EQ_INT(r.port, 443);
        ASSERT_EQ_INT(r.head_len, sizeof req - 1 - 3);
        ASSERT_NULL(r.forward);
        static const char v6[] = "CONNECT [2001:db8::1]:8443 HTTP/1.0\n\n";
        ASSERT_EQ_INT(mcp_proxy_parse_head(v6, sizeof v6 - 1, &r, &why), 0);
        ASSERT_STREQ(r.host, "2001:db8::1");
        ASSERT_EQ_INT(r.port, 8443);
}

TEST(head_absolute_url)
{
        static const char req[] = "GET http://pypi.org/simple/demo/?x=1 HTTP/1.1\r\n"
                                  "Host: pypi.org\r\nProxy-Connection: keep-alive\r\n"
                                  "Connection: keep-alive\r\nProxy-Authorization: Basic eA==\r\n"
                                  "Accept: */*\r\n\r\n";
        mcp_proxy_request r;
        const char *why = NULL;
        ASSERT_EQ_INT(mcp_proxy_parse_head(req, sizeof req - 1, &r, &why), 0);
        _cleanup_free_ char *fwd = r.forward;
        ASSERT_FALSE(r.connect);
        ASSERT_STREQ(r.host, "pypi.org");
        ASSERT_EQ_INT(r.port, 80);
        ASSERT_EQ_INT(r.forward_len, strlen(fwd));
        ASSERT_STREQ(fwd, "GET /simple/demo/?x=1 HTTP/1.1\r\nHost: pypi.org\r\n"
                          "Accept: */*\r\nConnection: close\r\n\r\n");

        /* No Host header, a port, no path: Host added, path "/". */
        static const char bare[] = "HEAD http://Example.test:8080 HTTP/1.0\r\n\r\n";
        ASSERT_EQ_INT(mcp_proxy_parse_head(bare, sizeof bare - 1, &r, &why), 0);
        _cleanup_free_ char *fwd2 = r.forward;
        ASSERT_STREQ(r.host, "Example.test");
        ASSERT_EQ_INT(r.port, 8080);
        ASSERT_STREQ(fwd2, "HEAD / HTTP/1.0\r\nHost: Example.test:8080\r\nConnection: close\r\n\r\n");
}

/* The connection goes to the URL's host, so the upstream hears that host too: a client's own
 * Host lines (another name on the same front end, or two of them) are dropped (RFC 9112
 * 3.2.2). */
TEST(head_host_from_url)
{
        static const char req[] = "GET http://pypi.org/simple/ HTTP/1.1\r\n"
                                  "Host: evil.test\r\nAccept: */*\r\nhOsT: pypi.org\r\n\r\n";
        mcp_proxy_request r;
        const char *why = NULL;
        ASSERT_EQ_INT(mcp_proxy_parse_head(req, sizeof req - 1, &r, &why), 0);
        _cleanup_free_ char *fwd = r.forward;
        ASSERT_STREQ(r.host, "pypi.org");
        ASSERT_STREQ(fwd, "GET /simple/ HTTP/1.1\r\nHost: pypi.org\r\nAccept: */*\r\n"
                          "Connection: close\r\n\r\n");
}

/* Header names are RFC 9110 tokens: digits and "!#$%&'*+.^`|~" are in them. */
TEST(head_header_names)
{
        static const char req[] = "PUT http://s3.test/b/k HTTP/1.1\r\nContent-MD5: a\r\n"
                                  "X-Amz-Content-Sha256: b\r\nX.Y|z~1: c\r\n\r\n";
        mcp_proxy_request r;
        const char *why = NULL;
        ASSERT_EQ_INT(mcp_proxy_parse_head(req, sizeof req - 1, &r, &why), 0);
        _cleanup_free_ char *fwd = r.forward;
        ASSERT_STREQ(fwd, "PUT /b/k HTTP/1.1\r\nHost: s3.test\r\nContent-MD5: a\r\n"
                          "X-Amz-Content-Sha256: b\r\nX.Y|z~1: c\r\nConnection: close\r\n\r\n");
}

TEST(head_refused)
{
        static const struct { const char *req; int status; } c[] = {
                { "GET /simple/ HTTP/1.1\r\nHost: pypi.org\r\n\r\n", 400 },
                { "GET https://pypi.org/ HTTP/1.1\r\n\r\n", 405 },
                { "GET ftp://pypi.org/ HTTP/1.1\r\n\r\n", 400 },
                { "GET http://user@pypi.org/ HTTP/1.1\r\n\r\n", 400 },
                { "GET http://pypi.org\\@evil.test/ HTTP/1.1\r\n\r\n", 400 },
                { "GET http://pypi.org:80@evil.test/ HTTP/1.1\r\n\r\n", 400 },
                { "GET http://pypi.org:/ HTTP/1.1\r\n\r\n", 400 },
                { "CONNECT [pypi.org:443 HTTP/1.1\r\n\r\n", 400 },
                { "GET http://pypi.org:99999/ HTTP/1.1\r\n\r\n", 400 },
                { "CONNECT pypi.org HTTP/1.1\r\n\r\n", 400 },
                { "CONNECT pypi.org:443 HTTP/2\r\n\r\n", 505 },
                { "GET http://pypi.org/ HTTP/1.1\r\n folded\r\n\r\n", 400 },
                { "GET http://pypi.org/ HTTP/1.1\r\nno colon\r\n\r\n", 400 },
                { "G@T http://pypi.org/ HTTP/1.1\r\n\r\n", 400 },
                { "GET  http://pypi.org/ HTTP/1.1\r\n\r\n", 400 },
                /* control bytes an upstream may read as a line end, or that hide one */
                { "GET http://pypi.org/\rHost: evil.test HTTP/1.1\r\n\r\n", 400 },
                { "GET http://pypi.org/\x01 HTTP/1.1\r\n\r\n", 400 },
                { "GET http://pypi.org/ HTTP/1.1\r\nX: a\rHost: evil.test\r\n\r\n", 400 },
                { "GET http://pypi.org/ HTTP/1.1\r\nX: a\x7f\r\n\r\n", 400 },
                { "CONNECT pypi.org:443\r HTTP/1.1\r\n\r\n", 400 },
        };
        for (size_t i = 0; i < ARRAY_SIZE(c); i++) {
                mcp_proxy_request r = { 0 };
                const char *why = NULL;
                int s = mcp_proxy_parse_head(c[i].req, strlen(c[i].req), &r, &why);
                tap_check(s == c[i].status && why && !r.forward, "refused head %zu -> %d (%s)", i,
                          s, why ? why : "");
                free(r.forward);
        }
}

/* A NUL ends a C string: in the URL it would cut the host short and be forwarded. */
TEST(head_nul_refused)
{
        static const char url[] = "GET http://pypi.org\0.evil.test/ HTTP/1.1\r\n\r\n";
        static const char hdr[] = "GET http://pypi.org/ HTTP/1.1\r\nX: a\0b\r\n\r\n";
        mcp_proxy_request r = { 0 };
        const char *why = NULL;
        ASSERT_EQ_INT(mcp_proxy_parse_head(url, sizeof url - 1, &r, &why), 400);
        ASSERT_NULL(r.forward);
        ASSERT_EQ_INT(mcp_proxy_parse_head(hdr, sizeof hdr - 1, &r, &why), 400);
        ASSERT_NULL(r.forward);
}

/* Every bare-LF line is forwarded one byte longer (CRLF): a head of nothing but short
 * lines grows by a third, and the forwarded head must still fit. */
TEST(head_bare_lf_lines_grow)
{
        static const char start[] = "GET http://a.test/ HTTP/1.1\n";
        size_t n = MCP_PROXY_HEAD_MAX - 1;
        _cleanup_free_ char *req = malloc(n);
        ASSERT_NOT_NULL(req);
        memcpy(req, start, sizeof start - 1);
        size_t pos = sizeof start - 1;
        for (; pos + 3 + 1 <= n; pos += 3)
                memcpy(req + pos, "a:\n", 3);
        req[pos++] = '\n';
        mcp_proxy_request r = { 0 };
        const char *why = NULL;
        ASSERT_EQ_INT(mcp_proxy_parse_head(req, pos, &r, &why), 0);
        _cleanup_free_ char *fwd = r.forward;
        size_t lines = (pos - sizeof start) / 3;
        ASSERT_EQ_INT(r.forward_len, strlen("GET / HTTP/1.1\r\nHost: a.test\r\n") + 4 * lines +
                                     strlen("Connection: close\r\n\r\n"));
        ASSERT_EQ_INT(strlen(fwd), r.forward_len);
}

TEST(head_incomplete_and_too_large)
{
        mcp_proxy_request r;
        const char *why = NULL;
        static const char part[] = "CONNECT pypi.org:443 HTTP/1.1\r\nHost: x\r\n";
        ASSERT_EQ_INT(mcp_proxy_parse_head(part, sizeof part - 1, &r, &why), -EAGAIN);
        _cleanup_free_ char *big = malloc(MCP_PROXY_HEAD_MAX + 10);
        ASSERT_NOT_NULL(big);
        memset(big, 'a', MCP_PROXY_HEAD_MAX + 10);
        memcpy(big, "GET http://a.test/ HTTP/1.1\r\nX: ", 32);
        ASSERT_EQ_INT(mcp_proxy_parse_head(big, MCP_PROXY_HEAD_MAX + 10, &r, &why), 431);
}

TEST(error_response)
{
        size_t n = 0;
        _cleanup_free_ char *s = mcp_proxy_error_response(403, "evil.test:443 is not in the "
                                                          "allowlist\r\nX-Injected: 1", &n);
        ASSERT_NOT_NULL(s);
        ASSERT_EQ_INT(n, strlen(s));
        ASSERT_TRUE(strncmp(s, "HTTP/1.1 403 Forbidden\r\n", 24) == 0);
        ASSERT_NULL(strstr(s, "\r\nX-Injected"));
        ASSERT_NOT_NULL(strstr(s, "X-Msp-Egress: evil.test:443 is not in the allowlist??X-"));
        const char *body = strstr(s, "\r\n\r\n") + 4;
        const char *cl = strstr(s, "Content-Length: ") + 16;
        ASSERT_EQ_INT(strtoul(cl, NULL, 10), strlen(body));
}

int
main(void)
{
        RUN(patterns_refused);
        RUN(matching);
        RUN(wildcard_never_matches_literal);
        RUN(narrowing);
        RUN(address_ranges);
        RUN(head_connect);
        RUN(head_absolute_url);
        RUN(head_host_from_url);
        RUN(head_header_names);
        RUN(head_refused);
        RUN(head_nul_refused);
        RUN(head_bare_lf_lines_grow);
        RUN(head_incomplete_and_too_large);
        RUN(error_response);
        return tap_done();
}
