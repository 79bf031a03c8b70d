/* mcp-adapter/base/text.c: RFC 4648 vectors, refused base64, UTF-8 repair of every invalid
 * class (stray continuation, overlong, surrogate, beyond U+10FFFF, truncated, NUL), the
 * character-safe tail cut, RFC 3339. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "tests/lib/tap.h"
#include "observe/log.h"
#include "oci/macros.h"
#include "base/text.h"

TEST(base64_vectors)
{
        static const char *const v[][2] = {
                { "", "" }, { "f", "Zg==" }, { "fo", "Zm8=" }, { "foo", "Zm9v" },
                { "foob", "Zm9vYg==" }, { "fooba", "Zm9vYmE=" }, { "foobar", "Zm9vYmFy" },
                { "\xff\xfe\x00", "//4A" },
        };
        for (size_t i = 0; i < ARRAY_SIZE(v); i++) {
                size_t len = i == ARRAY_SIZE(v) - 1 ? 3 : strlen(v[i][0]);
                _cleanup_free_ char *enc = mcp_base64_encode(v[i][0], len, NULL);
                _cleanup_free_ unsigned char *dec = NULL;
                size_t n = 0;
                int r = mcp_base64_decode(v[i][1], strlen(v[i][1]), &dec, &n);
                tap_check(enc && strcmp(enc, v[i][1]) == 0 && r == 0 && n == len &&
                          memcmp(dec, v[i][0], len) == 0, "base64 \"%s\"", v[i][1]);
        }
}

TEST(base64_refused)
{
        static const char *const bad[] = { "Zg=", "Zg", "Z===", "Zm9v\n", "Zm 9", "Zm9v!A==",
                                           "=Zm9", "Zg==Zg==", "Zm-_" };
        for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
                unsigned char *dec = NULL;
                size_t n;
                int r = mcp_base64_decode(bad[i], strlen(bad[i]), &dec, &n);
                tap_check(r == -EINVAL && !dec, "bad base64 %zu refused", i);
                free(dec);
        }
}

TEST(utf8_repair)
{
        static const struct { const char *in; size_t len; const char *out; } c[] = {
                { "plain", 5, "plain" },
                { "h\xc3\xa9", 3, "h\xc3\xa9" },
                { "\xf0\x9f\x98\x80", 4, "\xf0\x9f\x98\x80" },
                { "a\x80z", 3, "a\xef\xbf\xbdz" },                      /* stray continuation */
                { "\xc0\xaf", 2, "\xef\xbf\xbd\xef\xbf\xbd" },          /* overlong '/' */
                { "\xe0\x80\xaf", 3, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" }, /* overlong */
                { "\xed\xa0\x80", 3, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" }, /* surrogate */
                { "\xf4\x90\x80\x80", 4, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" },
                { "x\xe2\x82", 3, "x\xef\xbf\xbd\xef\xbf\xbd" },        /* truncated */
                { "a\0b", 3, "a\xef\xbf\xbd" "b" },                     /* NUL */
        };
        for (size_t i = 0; i < ARRAY_SIZE(c); i++) {
                size_t n = 0;
                _cleanup_free_ char *out = mcp_utf8_sanitize(c[i].in, c[i].len, &n);
                bool valid_in = mcp_utf8_valid(c[i].in, c[i].len);
                tap_check(out && n == strlen(c[i].out) && strcmp(out, c[i].out) == 0 &&
                          mcp_utf8_valid(out, n) && valid_in == (strcmp(c[i].in, c[i].out) == 0 && c[i].len == n),
                          "utf8 case %zu", i);
        }
}

TEST(tail_cut_on_a_character)
{
        const char *s = "ab\xc3\xa9\xc3\xa9";       /* a b é é: 6 bytes */
        ASSERT_EQ_INT(mcp_utf8_tail_start(s, 6, 10), 6);
        ASSERT_EQ_INT(mcp_utf8_tail_start(s, 6, 4), 4);
        ASSERT_EQ_INT(mcp_utf8_tail_start(s, 6, 3), 2);  /* not the half of the first é */
        ASSERT_EQ_INT(mcp_utf8_tail_start(s, 6, 1), 0);
}

/* The escaped cost: 1 a plain byte, 2 for '"' and '\n', 6 for a control byte, once; 4, 3
 * and 7 twice; never a cut inside a character. */
TEST(json_fit_counts_escapes)
{
        size_t cost;
        ASSERT_EQ_U64(mcp_json_fit("abc", 3, 100, 1, 0, &cost), 3);
        ASSERT_EQ_U64(cost, 3);
        ASSERT_EQ_U64(mcp_json_fit("\x01\x01", 2, 100, 1, 1, &cost), 2);
        ASSERT_EQ_U64(cost, 26);
        ASSERT_EQ_U64(mcp_json_fit("\"\n", 2, 100, 2, 1, &cost), 2);
        ASSERT_EQ_U64(cost, 2 * 2 + 4 + 2 * 2 + 3);
        ASSERT_EQ_U64(mcp_json_fit("\x01\x01\x01", 3, 13, 1, 0, &cost), 2);
        ASSERT_EQ_U64(cost, 12);
        /* "aé" is 3 bytes: a budget of 2 keeps only "a" */
        ASSERT_EQ_U64(mcp_json_fit("a\xc3\xa9", 3, 2, 1, 0, &cost), 1);
        ASSERT_EQ_U64(cost, 1);
}

/* Every byte that could forge a log line or reach a terminal as a control comes out as
 * an escape; printable text (UTF-8 included) is unchanged; a backslash is doubled. */
TEST(escape_for_logs)
{
        static const char *const v[][2] = {
                { "plain été ✓", "plain été ✓" },
                { "a\nmsp-mcp: error: forged", "a\\nmsp-mcp: error: forged" },
                { "\x1b[31mred\x1b[0m", "\\e[31mred\\e[0m" },
                { "cr\rtab\tbell\adel\x7f", "cr\\rtab\\tbell\\x07del\\x7f" },
                { "back\\slash", "back\\\\slash" },
                { "bad \xff\xc3 utf8", "bad \\xff\\xc3 utf8" },
                { "overlong \xc0\xaf", "overlong \\xc0\\xaf" },
                { "c1 \xc2\x9b" "31m", "c1 \\u009b31m" },
                { "ls \xe2\x80\xa8 rlo \xe2\x80\xae isolate \xe2\x81\xa6", "ls \\u2028 rlo \\u202e isolate \\u2066" },
        };
        for (size_t i = 0; i < ARRAY_SIZE(v); i++) {
                char out[256];
                size_t n = mcp_text_escape(v[i][0], strlen(v[i][0]), out, sizeof out);
                tap_check(strcmp(out, v[i][1]) == 0 && n == strlen(out), "escape %zu: \"%s\"", i, out);
        }
        /* A NUL inside the length is escaped too; an escape that does not fit is left out whole. */
        char out[8];
        mcp_text_escape("a\0b", 3, out, sizeof out);
        ASSERT_STREQ(out, "a\\x00b");
        ASSERT_EQ_U64(mcp_text_escape("abc\n", 4, out, 5), 3);
        ASSERT_STREQ(out, "abc");
}

/* mcp_log and mcp_log_stderr write one line per message, whatever the arguments hold. */
TEST(log_lines_are_escaped)
{
        FILE *tmp = tmpfile();
        ASSERT_TRUE(tmp != NULL);
        fflush(stderr);
        int saved = dup(STDERR_FILENO);
        ASSERT_TRUE(saved >= 0 && dup2(fileno(tmp), STDERR_FILENO) == STDERR_FILENO);
        mcp_logger lg = { .stderr_level = MCP_LOG_DEBUG };
        mcp_log(&lg, MCP_LOG_NOTICE, "typ %s refused", "x\nmsp-mcp: error: forged\x1b[31m");
        mcp_log_stderr("%s", "y\r\n\x1b]0;title\x07");
        fflush(stderr);
        ASSERT_TRUE(dup2(saved, STDERR_FILENO) == STDERR_FILENO);
        close(saved);
        char buf[512] = "";
        rewind(tmp);
        size_t n = fread(buf, 1, sizeof buf - 1, tmp);
        fclose(tmp);
        buf[n] = '\0';
        ASSERT_STREQ(buf, "msp-mcp: notice: typ x\\nmsp-mcp: error: forged\\e[31m refused\n"
                          "msp-mcp: y\\r\\n\\e]0;title\\x07\n");
}

TEST(rfc3339)
{
        char buf[32];
        mcp_rfc3339(0, buf);
        ASSERT_STREQ(buf, "1970-01-01T00:00:00Z");
        mcp_rfc3339(UINT64_C(1795316645) * 1000000 + 999999, buf);
        ASSERT_STREQ(buf, "2026-11-22T03:04:05Z");
}

int
main(void)
{
        RUN(base64_vectors);
        RUN(base64_refused);
        RUN(utf8_repair);
        RUN(tail_cut_on_a_character);
        RUN(json_fit_counts_escapes);
        RUN(escape_for_logs);
        RUN(log_lines_are_escaped);
        RUN(rfc3339);
        return tap_done();
}
