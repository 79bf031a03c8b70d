/* The deep merge of json-merge.h: a walk over the base and the overlays that writes the
 * result through the writer, so that no merged tree is ever built. Uses only the
 * document model and the writer of json.h. */
#include "oci/json-merge.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static int json_merge(oci_jw *w, const char *name, const oci_json *base,
                      const oci_json *const *ov, size_t n, const char *keep_key, msp_err *err);

static int
json_copy_number(oci_jw *w, const char *name, const oci_json *v, msp_err *err)
{
        const char *t = oci_json_number_text(v);
        char *end;

        errno = 0;
        if (t[0] == '-') {
                long long x = strtoll(t, &end, 10);
                if (!*end && !errno) {
                        oci_jw_int64(w, x);
                        return 0;
                }
        } else {
                unsigned long long x = strtoull(t, &end, 10);
                if (!*end && !errno) {
                        oci_jw_uint64(w, x);
                        return 0;
                }
        }
        return msp_err_set(err, EINVAL, "%s: number '%s' is not an integer", name, t);
}

/* The values the overlays have for key, in order. */
static size_t
overlay_values(const oci_json *const *ov, size_t n, const char *key, const oci_json **out)
{
        size_t k = 0;

        for (size_t i = 0; i < n; i++) {
                const oci_json *v = oci_json_type_of(ov[i]) == OCI_JSON_OBJECT ? oci_json_get(ov[i], key)
                                                                                : NULL;
                if (v)
                        out[k++] = v;
        }
        return k;
}

static bool
key_seen(const oci_json *const *objs, size_t n, const char *key)
{
        for (size_t i = 0; i < n; i++)
                if (oci_json_type_of(objs[i]) == OCI_JSON_OBJECT && oci_json_get(objs[i], key))
                        return true;
        return false;
}

static int
json_merge_key(oci_jw *w, const char *name, const char *key, const oci_json *base,
               const oci_json *const *ov, size_t n, msp_err *err)
{
        const oci_json *sub[OCI_JSON_MERGE_MAX];
        size_t k = overlay_values(ov, n, key, sub);

        oci_jw_key(w, key);
        return json_merge(w, name, base ? oci_json_get(base, key) : NULL, sub, k, NULL, err);
}

static bool
is_kept(const char *keep_key, const char *key)
{
        return keep_key && strcmp(key, keep_key) == 0;
}

static int
json_merge(oci_jw *w, const char *name, const oci_json *base, const oci_json *const *ov, size_t n,
           const char *keep_key, msp_err *err)
{
        int r;

        /* A non-object overlay replaces everything before it. */
        for (size_t i = n; i > 0; i--)
                if (oci_json_type_of(ov[i - 1]) != OCI_JSON_OBJECT) {
                        base = ov[i - 1];
                        ov += i;
                        n -= i;
                        break;
                }
        if (base && oci_json_type_of(base) != OCI_JSON_OBJECT && n > 0)
                base = NULL;
        if (!base && n == 0) {
                oci_jw_null(w);
                return 0;
        }
        if (!base || oci_json_type_of(base) == OCI_JSON_OBJECT) {
                oci_jw_begin_object(w);
                for (size_t i = 0; base && i < oci_json_len(base); i++) {
                        const char *key = oci_json_key_at(base, i);
                        if (is_kept(keep_key, key)) {
                                oci_jw_key(w, key);
                                r = json_merge(w, name, oci_json_value_at(base, i), NULL, 0, NULL, err);
                        } else {
                                r = json_merge_key(w, name, key, base, ov, n, err);
                        }
                        if (r < 0)
                                return r;
                }
                for (size_t j = 0; j < n; j++)
                        for (size_t i = 0; i < oci_json_len(ov[j]); i++) {
                                const char *key = oci_json_key_at(ov[j], i);
                                if ((base && oci_json_get(base, key)) || key_seen(ov, j, key) ||
                                    is_kept(keep_key, key))
                                        continue;
                                r = json_merge_key(w, name, key, NULL, ov, n, err);
                                if (r < 0)
                                        return r;
                        }
                oci_jw_end_object(w);
                return 0;
        }
        switch (oci_json_type_of(base)) {
        case OCI_JSON_NULL: oci_jw_null(w); return 0;
        case OCI_JSON_BOOL: oci_jw_bool(w, oci_json_bool(base)); return 0;
        case OCI_JSON_NUMBER: return json_copy_number(w, name, base, err);
        case OCI_JSON_STRING: oci_jw_string(w, oci_json_string(base)); return 0;
        case OCI_JSON_ARRAY:
                oci_jw_begin_array(w);
                for (size_t i = 0; i < oci_json_len(base); i++) {
                        r = json_merge(w, name, oci_json_value_at(base, i), NULL, 0, NULL, err);
                        if (r < 0)
                                return r;
                }
                oci_jw_end_array(w);
                return 0;
        case OCI_JSON_OBJECT: break;
        }
        return msp_err_set(err, EINVAL, "%s: unexpected JSON value", name);
}

int
oci_json_merge(oci_jw *w, const char *name, const oci_json *base, const oci_json *const *ov,
               size_t n, const char *keep_key, msp_err *err)
{
        if (n > OCI_JSON_MERGE_MAX)
                return msp_err_set(err, EINVAL, "%s: %zu overlays to merge (limit %d)", name, n,
                                   OCI_JSON_MERGE_MAX);
        return json_merge(w, name, base, ov, n, keep_key, err);
}

int
oci_json_copy(oci_jw *w, const char *name, const oci_json *v, msp_err *err)
{
        return json_merge(w, name, v, NULL, 0, NULL, err);
}
