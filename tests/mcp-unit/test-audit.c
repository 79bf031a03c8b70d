/* mcp-adapter/observe/audit.c: hostile strings (newlines, quotes, control characters, invalid
 * UTF-8, a forged field) stay inside their value, one event per line; long values are cut
 * on a character; the time and hash formats; an unopenable path named; reopening after a
 * rename; a full device drops lines and says how many once writes work again. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/lib/tap.h"
#include "observe/audit.h"
#include "oci/json.h"
#include "oci/macros.h"
#include "base/text.h"

static char dir[] = "/tmp/test-mcp-audit-XXXXXX";

static char *
slurp(const char *path, size_t *ret_len)
{
        FILE *f = fopen(path, "re");
        if (!f)
                return NULL;
        char *buf = NULL;
        size_t cap = 0;
        ssize_t n = getdelim(&buf, &cap, '\0', f);
        fclose(f);
        *ret_len = n < 0 ? 0 : (size_t) n;
        if (n < 0) {
                free(buf);
                return strdup("");
        }
        return buf;
}

/* The lines of a file, each parsed; the count, or -1 when a line is not one JSON object. */
static int
parse_lines(const char *path, oci_json_doc **docs, int max)
{
        size_t len;
        _cleanup_free_ char *text = slurp(path, &len);
        if (!text)
                return -1;
        int n = 0;
        for (char *p = text, *nl; p < text + len; p = nl + 1) {
                nl = memchr(p, '\n', len - (size_t) (p - text));
                if (!nl || n == max)
                        return -1;
                msp_err err = { 0 };
                if (oci_json_parse("line", p, (size_t) (nl - p), &docs[n], &err) < 0) {
                        tap_diag("line %d: %s", n + 1, err.msg);
                        return -1;
                }
                if (oci_json_type_of(oci_json_doc_root(docs[n])) != OCI_JSON_OBJECT)
                        return -1;
                n++;
        }
        return n;
}

static const char *
field(oci_json_doc *d, const char *key)
{
        return oci_json_string(oci_json_get(oci_json_doc_root(d), key));
}

TEST(hostile_strings_stay_in_their_value)
{
        static const char *const hostile[] = {
                "plain",
                "two\nlines\r\n",
                "quote \" and backslash \\ and \\\"",
                "\",\"event\":\"forged\",\"x\":\"",
                "controls \x01\x07\x1b[31m\x7f",
                "line separator \xe2\x80\xa8 and paragraph \xe2\x80\xa9",
                "}\n{\"event\":\"run_end\"}",
        };
        char path[128];
        snprintf(path, sizeof path, "%s/hostile.jsonl", dir);
        mcp_audit *a = NULL;
        msp_err err = { 0 };
        ASSERT_OK_ERR(mcp_audit_open(path, &a, &err), err);
        for (size_t i = 0; i < ARRAY_SIZE(hostile); i++) {
                oci_jw *w = mcp_audit_begin(a, "egress");
                mcp_audit_str(w, "host", hostile[i]);
                mcp_audit_str(w, "reason", NULL);
                mcp_audit_end(a, w);
        }
        /* Invalid UTF-8 is repaired, not written raw. */
        oci_jw *w = mcp_audit_begin(a, "egress");
        mcp_audit_str(w, "host", "bad \xff\xfe utf-8 \xc0\xaf");
        mcp_audit_end(a, w);
        ASSERT_EQ_U64(mcp_audit_dropped(a), 0);
        mcp_audit_free(a);

        oci_json_doc *docs[16] = { 0 };
        int n = parse_lines(path, docs, 16);
        ASSERT_EQ_INT(n, (int) ARRAY_SIZE(hostile) + 1);
        for (size_t i = 0; i < ARRAY_SIZE(hostile); i++) {
                tap_check(field(docs[i], "event") && strcmp(field(docs[i], "event"), "egress") == 0 &&
                          field(docs[i], "host") && strcmp(field(docs[i], "host"), hostile[i]) == 0 &&
                          oci_json_type_of(oci_json_get(oci_json_doc_root(docs[i]), "reason")) == OCI_JSON_NULL &&
                          oci_json_len(oci_json_doc_root(docs[i])) == 4,
                          "hostile string %zu is one value of one line", i);
        }
        const char *fixed = field(docs[n - 1], "host");
        tap_check(fixed && mcp_utf8_valid(fixed, strlen(fixed)) && strstr(fixed, "\xef\xbf\xbd"),
                  "invalid UTF-8 becomes U+FFFD");
        for (int i = 0; i < n; i++)
                oci_json_doc_free(docs[i]);

        /* No raw control byte in the file but the newlines ending lines. */
        size_t len;
        _cleanup_free_ char *text = slurp(path, &len);
        size_t newlines = 0;
        bool raw = false;
        for (size_t i = 0; i < len; i++) {
                newlines += text[i] == '\n';
                raw |= (unsigned char) text[i] < 0x20 && text[i] != '\n';
        }
        ASSERT_FALSE(raw);
        ASSERT_EQ_U64(newlines, (uint64_t) n);
}

TEST(long_values_cut_on_a_character)
{
        char path[128];
        snprintf(path, sizeof path, "%s/long.jsonl", dir);
        size_t big = 3 * MCP_AUDIT_STR_MAX;
        _cleanup_free_ char *s = malloc(big + 2);
        ASSERT_NOT_NULL(s);
        s[0] = 'x';     /* the 2-byte characters straddle the limit */
        for (size_t i = 1; i + 1 < big; i += 2)
                memcpy(s + i, "\xc3\xa9", 2);
        s[big - (big % 2 == 0 ? 1 : 0)] = '\0';
        mcp_audit *a = NULL;
        msp_err err = { 0 };
        ASSERT_OK_ERR(mcp_audit_open(path, &a, &err), err);
        oci_jw *w = mcp_audit_begin(a, "run_start");
        mcp_audit_str(w, "language", s);
        mcp_audit_bytes(w, "code", s, strlen(s));
        mcp_audit_end(a, w);
        mcp_audit_free(a);
        oci_json_doc *docs[1] = { 0 };
        ASSERT_EQ_INT(parse_lines(path, docs, 1), 1);
        const char *v = field(docs[0], "language");
        const char *code = field(docs[0], "code");
        tap_check(v && strlen(v) <= MCP_AUDIT_STR_MAX + 3 && strlen(v) > MCP_AUDIT_STR_MAX - 4 &&
                  strcmp(v + strlen(v) - 3, "...") == 0 && mcp_utf8_valid(v, strlen(v)) &&
                  !strstr(v, "\xef\xbf\xbd"),
                  "a value above %d bytes is cut on a character and marked", MCP_AUDIT_STR_MAX);
        tap_check(code && strcmp(code, s) == 0, "--audit-code's code is whole");
        oci_json_doc_free(docs[0]);
}

TEST(time_and_hash)
{
        char t[32], hex[65];
        mcp_rfc3339_ms(0, t);
        ASSERT_STREQ(t, "1970-01-01T00:00:00.000Z");
        mcp_rfc3339_ms(UINT64_C(1795316645) * 1000000 + 999999, t);
        ASSERT_STREQ(t, "2026-11-22T03:04:05.999Z");
        ASSERT_OK(mcp_audit_sha256("abc", 3, hex));
        ASSERT_STREQ(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        ASSERT_OK(mcp_audit_sha256("", 0, hex));
        ASSERT_STREQ(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(unopenable_path_named)
{
        mcp_audit *a = NULL;
        msp_err err = { 0 };
        char path[128];
        snprintf(path, sizeof path, "%s/no/such/dir/audit.jsonl", dir);
        ASSERT_EQ_INT(mcp_audit_open(path, &a, &err), -ENOENT);
        ASSERT_NULL(a);
        tap_check(strstr(err.msg, path) != NULL, "the message names the path: %s", err.msg);
}

TEST(reopen_after_rename)
{
        char path[128], rotated[128];
        snprintf(path, sizeof path, "%s/rot.jsonl", dir);
        snprintf(rotated, sizeof rotated, "%s/rot.jsonl.1", dir);
        mcp_audit *a = NULL;
        msp_err err = { 0 };
        ASSERT_OK_ERR(mcp_audit_open(path, &a, &err), err);
        mcp_audit_end(a, mcp_audit_begin(a, "first"));
        ASSERT_OK(NERRNO(rename(path, rotated)));
        mcp_audit_end(a, mcp_audit_begin(a, "second"));
        ASSERT_OK_ERR(mcp_audit_reopen(a, &err), err);
        mcp_audit_end(a, mcp_audit_begin(a, "third"));
        mcp_audit_free(a);
        oci_json_doc *docs[4] = { 0 };
        ASSERT_EQ_INT(parse_lines(rotated, docs, 4), 2);
        tap_check(strcmp(field(docs[0], "event"), "first") == 0 &&
                  strcmp(field(docs[1], "event"), "second") == 0, "the old file: lines before the reopen");
        oci_json_doc_free(docs[0]);
        oci_json_doc_free(docs[1]);
        ASSERT_EQ_INT(parse_lines(path, docs, 4), 1);
        ASSERT_STREQ(field(docs[0], "event"), "third");
        oci_json_doc_free(docs[0]);
        struct stat st;
        ASSERT_OK(NERRNO(stat(path, &st)));
        ASSERT_EQ_INT((int) (st.st_mode & 07777), 0640);
}

TEST(full_device_drops_and_reports)
{
        char link[128], real[128];
        snprintf(link, sizeof link, "%s/full.jsonl", dir);
        snprintf(real, sizeof real, "%s/after.jsonl", dir);
        if (access("/dev/full", W_OK) < 0) {
                tap_skip("full_device_drops_and_reports", "no writable /dev/full");
                return;
        }
        ASSERT_OK(NERRNO(symlink("/dev/full", link)));
        mcp_audit *a = NULL;
        msp_err err = { 0 };
        ASSERT_OK_ERR(mcp_audit_open(link, &a, &err), err);
        mcp_audit_end(a, mcp_audit_begin(a, "lost1"));
        mcp_audit_end(a, mcp_audit_begin(a, "lost2"));
        ASSERT_EQ_U64(mcp_audit_dropped(a), 2);
        /* The disk has room again (here: the path points at a file). */
        ASSERT_OK(NERRNO(unlink(link)));
        ASSERT_OK(NERRNO(symlink(real, link)));
        ASSERT_OK_ERR(mcp_audit_reopen(a, &err), err);
        mcp_audit_end(a, mcp_audit_begin(a, "kept"));
        ASSERT_EQ_U64(mcp_audit_dropped(a), 2);
        mcp_audit_free(a);
        oci_json_doc *docs[4] = { 0 };
        ASSERT_EQ_INT(parse_lines(real, docs, 4), 2);
        ASSERT_STREQ(field(docs[0], "event"), "audit_dropped");
        ASSERT_STREQ(oci_json_number_text(oci_json_get(oci_json_doc_root(docs[0]), "lines")), "2");
        ASSERT_STREQ(field(docs[1], "event"), "kept");
        oci_json_doc_free(docs[0]);
        oci_json_doc_free(docs[1]);
}

int
main(void)
{
        if (!mkdtemp(dir)) {
                tap_diag("mkdtemp: %s", strerror(errno));
                return 1;
        }
        RUN(hostile_strings_stay_in_their_value);
        RUN(long_values_cut_on_a_character);
        RUN(time_and_hash);
        RUN(unopenable_path_named);
        RUN(reopen_after_rename);
        RUN(full_device_drops_and_reports);
        char cmd[160];
        snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
        if (system(cmd) != 0)
                tap_diag("could not remove %s", dir);
        return tap_done();
}
