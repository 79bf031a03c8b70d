/* The deep merge of oci/json-merge.h: objects merge key by key, anything else (arrays
 * included) replaces what came before, numbers keep their exact integer value, null is
 * a value like any other, and the kept key is taken from the base only. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "oci/json-merge.h"
#include "oci/json.h"
#include "tests/lib/tap.h"

#define MAX_DOCS (OCI_JSON_MERGE_MAX + 2)

typedef struct merge_case {
        const char *base;               /* NULL: no base */
        const char *ov[MAX_DOCS];       /* NULL-terminated */
        const char *keep_key;
} merge_case;

static void
free_docs(oci_json_doc **docs, size_t n)
{
        for (size_t i = 0; i < n; i++)
                oci_json_doc_free(docs[i]);
}

/* The merged document as text, or NULL with err set (err->errnum from the merge). */
static char *
merge(const merge_case *c, msp_err *err)
{
        oci_json_doc *docs[MAX_DOCS + 1] = { NULL };
        const oci_json *ov[MAX_DOCS];
        const oci_json *base = NULL;
        size_t n_docs = 0, n = 0;
        char *out = NULL;

        if (c->base) {
                if (oci_json_parse("base", c->base, strlen(c->base), &docs[n_docs], err) < 0)
                        return NULL;
                base = oci_json_doc_root(docs[n_docs++]);
        }
        for (; n < MAX_DOCS && c->ov[n]; n++) {
                if (oci_json_parse("overlay", c->ov[n], strlen(c->ov[n]), &docs[n_docs], err) < 0) {
                        free_docs(docs, n_docs);
                        return NULL;
                }
                ov[n] = oci_json_doc_root(docs[n_docs++]);
        }
        _cleanup_jw_ oci_jw *w = oci_jw_new(false);
        if (w && oci_json_merge(w, "test", base, ov, n, c->keep_key, err) == 0)
                oci_jw_finish(w, &out, NULL, err);
        free_docs(docs, n_docs);
        return out;
}

static void
check_merge(const char *what, merge_case c, const char *want)
{
        msp_err err = { 0 };
        _cleanup_free_ char *got = merge(&c, &err);
        if (!tap_check(got && strcmp(got, want) == 0, "%s", what))
                tap_diag("want %s\ngot  %s%s", want, got ? got : "(error) ", got ? "" : err.msg);
}

TEST(merge_objects)
{
        check_merge("nested objects merge key by key",
                    (merge_case){ "{\"a\":{\"x\":1,\"y\":{\"p\":1,\"q\":2}},\"b\":true}",
                                  { "{\"a\":{\"y\":{\"q\":3,\"r\":4},\"z\":5}}" } },
                    "{\"a\":{\"x\":1,\"y\":{\"p\":1,\"q\":3,\"r\":4},\"z\":5},\"b\":true}");
        check_merge("later overlays win",
                    (merge_case){ "{\"a\":1}", { "{\"a\":2,\"b\":2}", "{\"a\":3}" } },
                    "{\"a\":3,\"b\":2}");
        check_merge("base keys first, then overlay keys in the order first seen",
                    (merge_case){ "{\"m\":1}", { "{\"z\":1,\"a\":1}", "{\"b\":1,\"z\":2}" } },
                    "{\"m\":1,\"z\":2,\"a\":1,\"b\":1}");
        check_merge("no base: the overlays merged",
                    (merge_case){ NULL, { "{\"a\":{\"x\":1}}", "{\"a\":{\"y\":2}}" } },
                    "{\"a\":{\"x\":1,\"y\":2}}");
        check_merge("no overlay: the base copied",
                    (merge_case){ "{\"s\":\"t\\\"/\",\"l\":[1,{\"k\":null}],\"f\":false}", { NULL } },
                    "{\"s\":\"t\\\"/\",\"l\":[1,{\"k\":null}],\"f\":false}");
        check_merge("empty object overlay changes nothing",
                    (merge_case){ "{\"a\":{\"b\":1}}", { "{}", "{\"a\":{}}" } },
                    "{\"a\":{\"b\":1}}");
}

TEST(merge_replaces)
{
        check_merge("arrays are replaced, not merged",
                    (merge_case){ "{\"a\":[1,2,3],\"b\":[{\"x\":1}]}",
                                  { "{\"a\":[9],\"b\":[{\"y\":2}]}" } },
                    "{\"a\":[9],\"b\":[{\"y\":2}]}");
        check_merge("an empty array replaces too",
                    (merge_case){ "{\"a\":[1]}", { "{\"a\":[]}" } }, "{\"a\":[]}");
        check_merge("a scalar replaces an object",
                    (merge_case){ "{\"a\":{\"x\":1}}", { "{\"a\":\"s\"}" } }, "{\"a\":\"s\"}");
        check_merge("an object replaces a scalar",
                    (merge_case){ "{\"a\":7}", { "{\"a\":{\"x\":1}}" } }, "{\"a\":{\"x\":1}}");
        check_merge("a non-object overlay replaces the base and earlier overlays",
                    (merge_case){ "{\"a\":{\"x\":1}}", { "{\"a\":{\"y\":2}}", "{\"a\":[0]}",
                                                          "{\"a\":{\"z\":3}}" } },
                    "{\"a\":{\"z\":3}}");
        check_merge("a top-level array overlay replaces the base",
                    (merge_case){ "{\"a\":1}", { "[1,2]" } }, "[1,2]");
}

TEST(merge_null)
{
        check_merge("a null overlay value sets null (it does not delete the key)",
                    (merge_case){ "{\"a\":{\"x\":1},\"b\":2}", { "{\"a\":null}" } },
                    "{\"a\":null,\"b\":2}");
        check_merge("an object overlay over a null base",
                    (merge_case){ "{\"a\":null}", { "{\"a\":{\"x\":1}}" } }, "{\"a\":{\"x\":1}}");
        check_merge("null values are kept as they are",
                    (merge_case){ "{\"a\":null}", { "{\"b\":null}" } }, "{\"a\":null,\"b\":null}");
        check_merge("no base and no overlay: null", (merge_case){ NULL, { NULL } }, "null");
        check_merge("a null document overlay replaces the base",
                    (merge_case){ "{\"a\":1}", { "null" } }, "null");
}

TEST(merge_numbers)
{
        check_merge("integers are kept exactly",
                    (merge_case){ "{\"max\":18446744073709551615,\"min\":-9223372036854775808,"
                                  "\"big\":9007199254740993,\"zero\":0,\"neg\":-1}",
                                  { "{\"o\":9223372036854775807}" } },
                    "{\"max\":18446744073709551615,\"min\":-9223372036854775808,"
                    "\"big\":9007199254740993,\"zero\":0,\"neg\":-1,\"o\":9223372036854775807}");
        check_merge("-0 is written as 0", (merge_case){ "[-0]", { NULL } }, "[0]");

        static const char *const not_integers[] = {
                "{\"a\":1.5}", "{\"a\":1e3}", "{\"a\":18446744073709551616}",
                "{\"a\":-9223372036854775809}",
        };
        for (size_t i = 0; i < sizeof not_integers / sizeof *not_integers; i++) {
                msp_err err = { 0 };
                merge_case c = { not_integers[i], { NULL }, NULL };
                _cleanup_free_ char *got = merge(&c, &err);
                if (!tap_check(!got && err.errnum == EINVAL && strstr(err.msg, "test: number '") &&
                                       strstr(err.msg, "is not an integer"),
                               "refused: %s", not_integers[i]))
                        tap_diag("got %s / %s", got ? got : "(null)", err.msg);
        }
        /* An overlay that replaces a non-integer leaves nothing to refuse. */
        check_merge("a replaced non-integer is not looked at",
                    (merge_case){ "{\"a\":1.5}", { "{\"a\":2}" } }, "{\"a\":2}");
}

TEST(merge_keep_key)
{
        check_merge("the kept key comes from the base only",
                    (merge_case){ "{\"devices\":[{\"allow\":false}],\"cpu\":{\"shares\":2}}",
                                  { "{\"devices\":[],\"cpu\":{\"shares\":5}}" }, "devices" },
                    "{\"devices\":[{\"allow\":false}],\"cpu\":{\"shares\":5}}");
        check_merge("the kept key is not added from an overlay",
                    (merge_case){ "{\"cpu\":{}}", { "{\"devices\":[{\"allow\":true}]}" }, "devices" },
                    "{\"cpu\":{}}");
        check_merge("the kept key applies at the top level only",
                    (merge_case){ "{\"a\":{\"devices\":1}}", { "{\"a\":{\"devices\":2}}" }, "devices" },
                    "{\"a\":{\"devices\":2}}");
}

TEST(merge_too_many_overlays)
{
        const char *one = "{}";
        merge_case c = { one, { NULL }, NULL };
        for (size_t i = 0; i < OCI_JSON_MERGE_MAX + 1; i++)
                c.ov[i] = one;
        msp_err err = { 0 };
        _cleanup_free_ char *got = merge(&c, &err);
        ASSERT_NULL(got);
        ASSERT_EQ_INT(err.errnum, EINVAL);
}

TEST(copy_value)
{
        msp_err err = { 0 };
        oci_json_doc *doc = NULL;
        const char *text = "{\"a\":[1,-2,{\"b\":\"\\u00e9\"}],\"n\":null}";
        ASSERT_OK_ERR(oci_json_parse("doc", text, strlen(text), &doc, &err), err);
        _cleanup_jw_ oci_jw *w = oci_jw_new(false);
        _cleanup_free_ char *out = NULL;
        ASSERT_OK_ERR(oci_json_copy(w, "copy", oci_json_doc_root(doc), &err), err);
        ASSERT_OK_ERR(oci_jw_finish(w, &out, NULL, &err), err);
        oci_json_doc_free(doc);
        ASSERT_STREQ(out, "{\"a\":[1,-2,{\"b\":\"\xc3\xa9\"}],\"n\":null}");
}

int
main(void)
{
        RUN(merge_objects);
        RUN(merge_replaces);
        RUN(merge_null);
        RUN(merge_numbers);
        RUN(merge_keep_key);
        RUN(merge_too_many_overlays);
        RUN(copy_value);
        return tap_done();
}
