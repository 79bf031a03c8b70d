/* The JSON layer: the only file in msp that includes yajl.
 *
 * yajl_tree is used as is, with guards around it:
 *  - before parsing, oci_json_prescan() (json-scan.c) bounds depth and container sizes
 *    and refuses NUL bytes and comments;
 *  - after parsing, a walk enforces OCI_MAX_STRING, refuses duplicate keys, reports a
 *    string with an escaped NUL by its path (string tokens are counted in document
 *    order, which is the order of the tree) and re-checks OCI_MAX_ARRAY. */
#include "oci/json.h"
#include "oci/json-scan.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#define YV(v) ((const struct yajl_val_s *) (const void *) (v))
#define OJ(v) ((const oci_json *) (const void *) (v))

struct oci_json_doc {
        yajl_val root;
};

/* ---- post-parse checks ---- */

typedef struct walk_ctx {
        const char *name;
        msp_err *err;
        size_t strings;                 /* string tokens seen so far */
        size_t nul_string;
        size_t max_string;
        size_t path_len;
        char path[OCI_JR_PATH_MAX];
} walk_ctx;

static const char *
walk_path(const walk_ctx *w)
{
        return w->path_len ? w->path : "(top level)";
}

static int
walk_string(walk_ctx *w, const char *s, const char *what)
{
        w->strings++;
        if (w->strings == w->nul_string) {
                char q[OCI_JR_VALUE_MAX + 16];
                oci_json_quote(s, q, sizeof q);
                return msp_err_set(w->err, EINVAL, "%s: %s: %s %s contains a NUL byte", w->name,
                                   walk_path(w), what, q);
        }
        size_t n = strlen(s);
        if (n > w->max_string)
                return msp_err_set(w->err, E2BIG, "%s: %s: %s is too long (%zu bytes, limit %zu)",
                                   w->name, walk_path(w), what, n, w->max_string);
        return 0;
}

static int
cmp_strp(const void *a, const void *b)
{
        return strcmp(*(const char *const *) a, *(const char *const *) b);
}

/* Sets *ret_dup to a key that occurs twice, or NULL. */
static int
find_duplicate_key(const char **keys, size_t n, const char **ret_dup)
{
        *ret_dup = NULL;
        if (n <= 16) {
                for (size_t i = 1; i < n; i++)
                        for (size_t j = 0; j < i; j++)
                                if (strcmp(keys[i], keys[j]) == 0) {
                                        *ret_dup = keys[i];
                                        return 0;
                                }
                return 0;
        }
        _cleanup_free_ const char **sorted = malloc(n * sizeof *sorted);
        if (!sorted)
                return -ENOMEM;
        memcpy(sorted, keys, n * sizeof *sorted);
        qsort(sorted, n, sizeof *sorted, cmp_strp);
        for (size_t i = 1; i < n; i++)
                if (strcmp(sorted[i], sorted[i - 1]) == 0) {
                        *ret_dup = sorted[i];
                        return 0;
                }
        return 0;
}

static int walk_value(walk_ctx *w, const struct yajl_val_s *v);

static int
walk_object(walk_ctx *w, const struct yajl_val_s *v)
{
        size_t n = v->u.object.len;
        if (n > OCI_MAX_ARRAY)
                return msp_err_set(w->err, E2BIG, "%s: %s: object has too many members (%zu, limit %u)",
                                   w->name, walk_path(w), n, OCI_MAX_ARRAY);
        for (size_t i = 0; i < n; i++) {
                const char *key = v->u.object.keys[i];
                int r = walk_string(w, key, "key");
                if (r < 0)
                        return r;
                size_t mark = w->path_len;
                oci_json_path_append_key(w->path, sizeof w->path, &w->path_len, key);
                r = walk_value(w, v->u.object.values[i]);
                w->path_len = mark;
                w->path[mark] = '\0';
                if (r < 0)
                        return r;
        }
        const char *dup;
        if (find_duplicate_key(v->u.object.keys, n, &dup) < 0)
                return msp_err_set(w->err, ENOMEM, "%s: out of memory", w->name);
        if (dup) {
                char q[OCI_JR_VALUE_MAX + 16];
                oci_json_quote(dup, q, sizeof q);
                return msp_err_set(w->err, EINVAL, "%s: %s: duplicate key %s", w->name,
                                   walk_path(w), q);
        }
        return 0;
}

static int
walk_array(walk_ctx *w, const struct yajl_val_s *v)
{
        size_t n = v->u.array.len;
        if (n > OCI_MAX_ARRAY)
                return msp_err_set(w->err, E2BIG, "%s: %s: array has too many elements (%zu, limit %u)",
                                   w->name, walk_path(w), n, OCI_MAX_ARRAY);
        for (size_t i = 0; i < n; i++) {
                size_t mark = w->path_len;
                oci_json_path_append_index(w->path, sizeof w->path, &w->path_len, i);
                int r = walk_value(w, v->u.array.values[i]);
                w->path_len = mark;
                w->path[mark] = '\0';
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Recursion is bounded by the pre-scan's depth limit. */
static int
walk_value(walk_ctx *w, const struct yajl_val_s *v)
{
        switch (v->type) {
        case yajl_t_object:
                return walk_object(w, v);
        case yajl_t_array:
                return walk_array(w, v);
        case yajl_t_string:
                return walk_string(w, v->u.string, "string");
        case yajl_t_number:
        case yajl_t_true:
        case yajl_t_false:
        case yajl_t_null:
        case yajl_t_any:
        default:
                return 0;
        }
}

/* ---- parse ---- */

/* yajl's message is several lines (message, context, caret); keep the first. */
static void
first_line(char *s)
{
        size_t n = strcspn(s, "\n");
        while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '.'))
                n--;
        s[n] = '\0';
}

int
oci_json_parse(const char *name, const char *data, size_t len, oci_json_doc **ret_doc,
               msp_err *err)
{
        return oci_json_parse_limits(name, data, len, OCI_CONFIG_MAX_BYTES, OCI_MAX_STRING,
                                     ret_doc, err);
}

int
oci_json_parse_limits(const char *name, const char *data, size_t len, size_t max_bytes,
                      size_t max_string, oci_json_doc **ret_doc, msp_err *err)
{
        if (len > max_bytes)
                return msp_err_set(err, E2BIG, "%s: too large (%zu bytes, limit %zu)", name, len,
                                   max_bytes);
        size_t nul_string = 0;
        int r = oci_json_prescan(name, data, len, &nul_string, err);
        if (r < 0)
                return r;

        _cleanup_free_ char *text = malloc(len + 1);
        if (!text)
                return msp_err_set(err, ENOMEM, "%s: out of memory", name);
        memcpy(text, data, len);
        text[len] = '\0';

        char ebuf[256] = "";
        yajl_val root = yajl_tree_parse(text, ebuf, sizeof ebuf);
        if (!root) {
                first_line(ebuf);
                if (strstr(ebuf, "out of memory"))
                        return msp_err_set(err, ENOMEM, "%s: out of memory", name);
                return msp_err_set(err, EINVAL, "%s: invalid JSON: %s", name,
                                   ebuf[0] ? ebuf : "parse error");
        }

        oci_json_doc *doc = calloc(1, sizeof *doc);
        if (!doc) {
                yajl_tree_free(root);
                return msp_err_set(err, ENOMEM, "%s: out of memory", name);
        }
        doc->root = root;

        walk_ctx w = { .name = name, .err = err, .nul_string = nul_string,
                       .max_string = max_string };
        r = walk_value(&w, root);
        if (r < 0) {
                oci_json_doc_free(doc);
                return r;
        }
        *ret_doc = doc;
        return 0;
}

oci_json_doc *
oci_json_doc_free(oci_json_doc *doc)
{
        if (doc) {
                yajl_tree_free(doc->root);
                free(doc);
        }
        return NULL;
}

const oci_json *
oci_json_doc_root(const oci_json_doc *doc)
{
        return OJ(doc->root);
}

/* ---- accessors ---- */

oci_json_type
oci_json_type_of(const oci_json *v)
{
        switch (YV(v)->type) {
        case yajl_t_string:
                return OCI_JSON_STRING;
        case yajl_t_number:
                return OCI_JSON_NUMBER;
        case yajl_t_object:
                return OCI_JSON_OBJECT;
        case yajl_t_array:
                return OCI_JSON_ARRAY;
        case yajl_t_true:
        case yajl_t_false:
                return OCI_JSON_BOOL;
        case yajl_t_null:
        case yajl_t_any:
        default:
                return OCI_JSON_NULL;
        }
}

size_t
oci_json_len(const oci_json *v)
{
        const struct yajl_val_s *y = YV(v);
        if (y->type == yajl_t_object)
                return y->u.object.len;
        if (y->type == yajl_t_array)
                return y->u.array.len;
        return 0;
}

const char *
oci_json_key_at(const oci_json *obj, size_t i)
{
        const struct yajl_val_s *y = YV(obj);
        if (y->type != yajl_t_object || i >= y->u.object.len)
                return NULL;
        return y->u.object.keys[i];
}

const oci_json *
oci_json_value_at(const oci_json *v, size_t i)
{
        const struct yajl_val_s *y = YV(v);
        if (y->type == yajl_t_object && i < y->u.object.len)
                return OJ(y->u.object.values[i]);
        if (y->type == yajl_t_array && i < y->u.array.len)
                return OJ(y->u.array.values[i]);
        return NULL;
}

const oci_json *
oci_json_get(const oci_json *obj, const char *key)
{
        const struct yajl_val_s *y = YV(obj);
        if (!y || y->type != yajl_t_object)
                return NULL;
        for (size_t i = 0; i < y->u.object.len; i++)
                if (strcmp(y->u.object.keys[i], key) == 0)
                        return OJ(y->u.object.values[i]);
        return NULL;
}

const char *
oci_json_string(const oci_json *v)
{
        const struct yajl_val_s *y = YV(v);
        return y->type == yajl_t_string ? y->u.string : NULL;
}

const char *
oci_json_number_text(const oci_json *v)
{
        const struct yajl_val_s *y = YV(v);
        return y->type == yajl_t_number ? y->u.number.r : NULL;
}

bool
oci_json_bool(const oci_json *v)
{
        return YV(v)->type == yajl_t_true;
}

/* ---- writer ---- */

struct oci_jw {
        yajl_gen gen;
        yajl_gen_status status;         /* first failure */
};

oci_jw *
oci_jw_new(bool pretty)
{
        oci_jw *w = calloc(1, sizeof *w);
        if (!w)
                return NULL;
        w->gen = yajl_gen_alloc(NULL);
        if (!w->gen) {
                free(w);
                return NULL;
        }
        yajl_gen_config(w->gen, yajl_gen_validate_utf8, 1);
        yajl_gen_config(w->gen, yajl_gen_escape_solidus, 0);
        if (pretty) {
                yajl_gen_config(w->gen, yajl_gen_beautify, 1);
                yajl_gen_config(w->gen, yajl_gen_indent_string, "\t");
        }
        return w;
}

oci_jw *
oci_jw_free(oci_jw *w)
{
        if (w) {
                yajl_gen_free(w->gen);
                free(w);
        }
        return NULL;
}

static void
jw_track(oci_jw *w, yajl_gen_status s)
{
        if (s != yajl_gen_status_ok && w->status == yajl_gen_status_ok)
                w->status = s;
}

void
oci_jw_begin_object(oci_jw *w)
{
        jw_track(w, yajl_gen_map_open(w->gen));
}

void
oci_jw_end_object(oci_jw *w)
{
        jw_track(w, yajl_gen_map_close(w->gen));
}

void
oci_jw_begin_array(oci_jw *w)
{
        jw_track(w, yajl_gen_array_open(w->gen));
}

void
oci_jw_end_array(oci_jw *w)
{
        jw_track(w, yajl_gen_array_close(w->gen));
}

void
oci_jw_key(oci_jw *w, const char *key)
{
        jw_track(w, yajl_gen_string(w->gen, (const unsigned char *) key, strlen(key)));
}

void
oci_jw_string(oci_jw *w, const char *s)
{
        if (!s) {
                oci_jw_null(w);
                return;
        }
        jw_track(w, yajl_gen_string(w->gen, (const unsigned char *) s, strlen(s)));
}

void
oci_jw_int64(oci_jw *w, int64_t v)
{
        char buf[32];
        int n = snprintf(buf, sizeof buf, "%" PRId64, v);
        jw_track(w, yajl_gen_number(w->gen, buf, (size_t) n));
}

void
oci_jw_uint64(oci_jw *w, uint64_t v)
{
        char buf[32];
        int n = snprintf(buf, sizeof buf, "%" PRIu64, v);
        jw_track(w, yajl_gen_number(w->gen, buf, (size_t) n));
}

void
oci_jw_bool(oci_jw *w, bool v)
{
        jw_track(w, yajl_gen_bool(w->gen, v));
}

void
oci_jw_null(oci_jw *w)
{
        jw_track(w, yajl_gen_null(w->gen));
}

void
oci_jw_kv_string(oci_jw *w, const char *key, const char *s)
{
        oci_jw_key(w, key);
        oci_jw_string(w, s);
}

void
oci_jw_kv_int64(oci_jw *w, const char *key, int64_t v)
{
        oci_jw_key(w, key);
        oci_jw_int64(w, v);
}

void
oci_jw_kv_uint64(oci_jw *w, const char *key, uint64_t v)
{
        oci_jw_key(w, key);
        oci_jw_uint64(w, v);
}

void
oci_jw_kv_bool(oci_jw *w, const char *key, bool v)
{
        oci_jw_key(w, key);
        oci_jw_bool(w, v);
}

void
oci_jw_kv_strlist(oci_jw *w, const char *key, const char *const *list)
{
        if (!list)
                return;
        oci_jw_key(w, key);
        oci_jw_begin_array(w);
        for (; *list; list++)
                oci_jw_string(w, *list);
        oci_jw_end_array(w);
}

static const char *
jw_status_text(yajl_gen_status s)
{
        switch (s) {
        case yajl_gen_keys_must_be_strings:
                return "object key is not a string";
        case yajl_max_depth_exceeded:
                return "nesting too deep";
        case yajl_gen_in_error_state:
        case yajl_gen_generation_complete:
                return "value after the end of the document";
        case yajl_gen_invalid_number:
                return "invalid number";
        case yajl_gen_invalid_string:
                return "string is not valid UTF-8";
        case yajl_gen_no_buf:
        case yajl_gen_status_ok:
        default:
                return "generator error";
        }
}

int
oci_jw_finish(oci_jw *w, char **ret_json, size_t *ret_len, msp_err *err)
{
        if (w->status != yajl_gen_status_ok)
                return msp_err_set(err, EINVAL, "writing JSON: %s", jw_status_text(w->status));
        const unsigned char *buf;
        size_t len;
        if (yajl_gen_get_buf(w->gen, &buf, &len) != yajl_gen_status_ok)
                return msp_err_set(err, EINVAL, "writing JSON: generator error");
        while (len > 0 && buf[len - 1] == '\n')
                len--;
        char *out = malloc(len + 1);
        if (!out)
                return msp_err_set(err, ENOMEM, "writing JSON: out of memory");
        memcpy(out, buf, len);
        out[len] = '\0';
        *ret_json = out;
        if (ret_len)
                *ret_len = len;
        return 0;
}
