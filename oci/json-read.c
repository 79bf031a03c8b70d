/* The typed reader: converts JSON nodes into C values with exact range checks.
 * Integers are converted from the number's raw text, never through a double. */
#include "oci/json.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- value level ---- */

int
oci_jr_val_cstr(oci_jr *r, const oci_json *v, const char **ret)
{
        const char *s = oci_json_string(v);
        if (!s)
                return oci_jr_expected(r, v, "a string");
        *ret = s;
        return 0;
}

int
oci_jr_val_str(oci_jr *r, const oci_json *v, char **ret)
{
        const char *s;
        int ret_code = oci_jr_val_cstr(r, v, &s);
        if (ret_code < 0)
                return ret_code;
        char *copy = oci_arena_strdup(r->arena, s);
        if (!copy)
                return oci_jr_oom(r);
        *ret = copy;
        return 0;
}

/* Splits a JSON number's text into sign and magnitude. Returns -EINVAL when it is not an
 * integer (fraction or exponent), -ERANGE when the magnitude exceeds 64 bits. */
static int
parse_integer_text(const char *t, bool *ret_neg, uint64_t *ret_mag)
{
        bool neg = *t == '-';
        const char *digits = t + neg;
        if (!isdigit((unsigned char) *digits))
                return -EINVAL;
        for (const char *p = digits; *p; p++)
                if (!isdigit((unsigned char) *p))
                        return -EINVAL;
        errno = 0;
        char *end;
        unsigned long long mag = strtoull(digits, &end, 10);
        if (errno == ERANGE || *end)
                return -ERANGE;
        *ret_neg = neg;
        *ret_mag = mag;
        return 0;
}

int
oci_jr_val_uint(oci_jr *r, const oci_json *v, uint64_t max, uint64_t *ret)
{
        const char *t = oci_json_number_text(v);
        if (!t)
                return oci_jr_expected(r, v, "an integer");
        bool neg = false;
        uint64_t mag = 0;
        int k = parse_integer_text(t, &neg, &mag);
        if (k == -EINVAL)
                return oci_jr_expected(r, v, "an integer");
        if (k == 0 && neg)
                return oci_jr_expected(r, v, "a non-negative integer");
        if (k < 0 || mag > max) {
                char what[64];
                snprintf(what, sizeof what, "an integer from 0 to %" PRIu64, max);
                return oci_jr_expected(r, v, what);
        }
        *ret = mag;
        return 0;
}

int
oci_jr_val_int(oci_jr *r, const oci_json *v, int64_t min, int64_t max, int64_t *ret)
{
        const char *t = oci_json_number_text(v);
        if (!t)
                return oci_jr_expected(r, v, "an integer");
        bool neg = false;
        uint64_t mag = 0;
        int k = parse_integer_text(t, &neg, &mag);
        if (k == -EINVAL)
                return oci_jr_expected(r, v, "an integer");
        int64_t val = 0;
        bool ok = k == 0;
        if (ok && neg) {
                ok = mag <= (uint64_t) INT64_MAX + 1;
                val = mag == (uint64_t) INT64_MAX + 1 ? INT64_MIN : -(int64_t) mag;
        } else if (ok) {
                ok = mag <= (uint64_t) INT64_MAX;
                val = (int64_t) mag;
        }
        if (!ok || val < min || val > max) {
                char what[96];
                snprintf(what, sizeof what, "an integer from %" PRId64 " to %" PRId64, min, max);
                return oci_jr_expected(r, v, what);
        }
        *ret = val;
        return 0;
}

int
oci_jr_val_bool(oci_jr *r, const oci_json *v, bool *ret)
{
        if (oci_json_type_of(v) != OCI_JSON_BOOL)
                return oci_jr_expected(r, v, "a boolean");
        *ret = oci_json_bool(v);
        return 0;
}

int
oci_jr_val_u32(oci_jr *r, const oci_json *v, uint32_t *ret)
{
        uint64_t x;
        int k = oci_jr_val_uint(r, v, UINT32_MAX, &x);
        if (k < 0)
                return k;
        *ret = (uint32_t) x;
        return 0;
}

static int
expect_type(oci_jr *r, const oci_json *v, oci_json_type t)
{
        if (oci_json_type_of(v) == t)
                return 0;
        return oci_jr_expected(r, v, t == OCI_JSON_OBJECT ? "an object" : "an array");
}

int
oci_jr_val_strv(oci_jr *r, const oci_json *v, oci_strv *ret)
{
        int k = expect_type(r, v, OCI_JSON_ARRAY);
        if (k < 0)
                return k;
        size_t n = oci_json_len(v);
        char **list = oci_arena_calloc(r->arena, n + 1, sizeof *list);
        if (!list)
                return oci_jr_oom(r);
        for (size_t i = 0; i < n; i++) {
                size_t mark = oci_jr_push_index(r, i);
                k = oci_jr_val_str(r, oci_json_value_at(v, i), &list[i]);
                oci_jr_pop(r, mark);
                if (k < 0)
                        return k;
        }
        ret->v = list;
        ret->n = n;
        return 0;
}

int
oci_jr_val_map(oci_jr *r, const oci_json *v, oci_map *ret)
{
        int k = expect_type(r, v, OCI_JSON_OBJECT);
        if (k < 0)
                return k;
        size_t n = oci_json_len(v);
        oci_kv *kv = oci_arena_calloc(r->arena, n, sizeof *kv);
        if (!kv)
                return oci_jr_oom(r);
        for (size_t i = 0; i < n; i++) {
                const char *key = oci_json_key_at(v, i);
                size_t mark = oci_jr_push_key(r, key);
                k = oci_jr_val_str(r, oci_json_value_at(v, i), &kv[i].value);
                oci_jr_pop(r, mark);
                if (k < 0)
                        return k;
                kv[i].key = oci_arena_strdup(r->arena, key);
                if (!kv[i].key)
                        return oci_jr_oom(r);
        }
        ret->v = kv;
        ret->n = n;
        return 0;
}

static int
id_mapping(oci_jr *r, const oci_json *v, oci_id_mapping *m)
{
        static const oci_jr_field fields[] = {
                OCI_JR_FR(oci_id_mapping, "containerID", OCI_JR_U32, container_id),
                OCI_JR_FR(oci_id_mapping, "hostID", OCI_JR_U32, host_id),
                OCI_JR_FR(oci_id_mapping, "size", OCI_JR_U32, size),
        };
        int k = expect_type(r, v, OCI_JSON_OBJECT);
        if (k < 0)
                return k;
        return oci_jr_fields(r, v, m, fields, ARRAY_SIZE(fields));
}

int
oci_jr_val_id_mappings(oci_jr *r, const oci_json *v, oci_id_mapping **ret, size_t *ret_n)
{
        int k = expect_type(r, v, OCI_JSON_ARRAY);
        if (k < 0)
                return k;
        size_t n = oci_json_len(v);
        oci_id_mapping *m = oci_arena_calloc(r->arena, n, sizeof *m);
        if (!m)
                return oci_jr_oom(r);
        for (size_t i = 0; i < n; i++) {
                size_t mark = oci_jr_push_index(r, i);
                k = id_mapping(r, oci_json_value_at(v, i), &m[i]);
                oci_jr_pop(r, mark);
                if (k < 0)
                        return k;
        }
        *ret = m;
        *ret_n = n;
        return 0;
}

/* ---- member level ---- */

/* The member, or NULL when absent or null (JSON null means "not set", as in Go). */
static const oci_json *
member(const oci_json *obj, const char *key)
{
        const oci_json *v = oci_json_get(obj, key);
        if (v && oci_json_type_of(v) == OCI_JSON_NULL)
                return NULL;
        return v;
}

typedef int (*val_fn)(oci_jr *r, const oci_json *v, void *out);

static int
member_read(oci_jr *r, const oci_json *obj, const char *key, val_fn fn, void *out)
{
        const oci_json *v = member(obj, key);
        if (!v)
                return 0;
        size_t mark = oci_jr_push_key(r, key);
        int k = fn(r, v, out);
        oci_jr_pop(r, mark);
        return k < 0 ? k : 1;
}

static int
rd_str(oci_jr *r, const oci_json *v, void *out)
{
        return oci_jr_val_str(r, v, out);
}

static int
rd_bool(oci_jr *r, const oci_json *v, void *out)
{
        return oci_jr_val_bool(r, v, out);
}

static int
rd_u64(oci_jr *r, const oci_json *v, void *out)
{
        return oci_jr_val_uint(r, v, UINT64_MAX, out);
}

static int
rd_i64(oci_jr *r, const oci_json *v, void *out)
{
        return oci_jr_val_int(r, v, INT64_MIN, INT64_MAX, out);
}

static int
rd_u32(oci_jr *r, const oci_json *v, void *out)
{
        return oci_jr_val_u32(r, v, out);
}

static int
rd_i32(oci_jr *r, const oci_json *v, void *out)
{
        int64_t x;
        int k = oci_jr_val_int(r, v, INT32_MIN, INT32_MAX, &x);
        if (k >= 0)
                *(int32_t *) out = (int32_t) x;
        return k;
}

static int
rd_u16(oci_jr *r, const oci_json *v, void *out)
{
        uint64_t x;
        int k = oci_jr_val_uint(r, v, UINT16_MAX, &x);
        if (k >= 0)
                *(uint16_t *) out = (uint16_t) x;
        return k;
}

static int
rd_strv(oci_jr *r, const oci_json *v, void *out)
{
        return oci_jr_val_strv(r, v, out);
}

static int
rd_map(oci_jr *r, const oci_json *v, void *out)
{
        return oci_jr_val_map(r, v, out);
}

int
oci_jr_str(oci_jr *r, const oci_json *obj, const char *key, char **ret)
{
        return member_read(r, obj, key, rd_str, ret);
}

int
oci_jr_bool(oci_jr *r, const oci_json *obj, const char *key, bool *ret)
{
        return member_read(r, obj, key, rd_bool, ret);
}

int
oci_jr_u64(oci_jr *r, const oci_json *obj, const char *key, uint64_t *ret)
{
        return member_read(r, obj, key, rd_u64, ret);
}

int
oci_jr_i64(oci_jr *r, const oci_json *obj, const char *key, int64_t *ret)
{
        return member_read(r, obj, key, rd_i64, ret);
}

int
oci_jr_u32(oci_jr *r, const oci_json *obj, const char *key, uint32_t *ret)
{
        return member_read(r, obj, key, rd_u32, ret);
}

int
oci_jr_i32(oci_jr *r, const oci_json *obj, const char *key, int32_t *ret)
{
        return member_read(r, obj, key, rd_i32, ret);
}

int
oci_jr_u16(oci_jr *r, const oci_json *obj, const char *key, uint16_t *ret)
{
        return member_read(r, obj, key, rd_u16, ret);
}

int
oci_jr_strv(oci_jr *r, const oci_json *obj, const char *key, oci_strv *ret)
{
        return member_read(r, obj, key, rd_strv, ret);
}

int
oci_jr_map(oci_jr *r, const oci_json *obj, const char *key, oci_map *ret)
{
        return member_read(r, obj, key, rd_map, ret);
}

static int
typed_member(oci_jr *r, const oci_json *obj, const char *key, oci_json_type t,
             const oci_json **ret)
{
        const oci_json *v = member(obj, key);
        if (!v)
                return 0;
        size_t mark = oci_jr_push_key(r, key);
        int k = expect_type(r, v, t);
        oci_jr_pop(r, mark);
        if (k < 0)
                return k;
        *ret = v;
        return 1;
}

int
oci_jr_object(oci_jr *r, const oci_json *obj, const char *key, const oci_json **ret)
{
        return typed_member(r, obj, key, OCI_JSON_OBJECT, ret);
}

int
oci_jr_array(oci_jr *r, const oci_json *obj, const char *key, const oci_json **ret)
{
        return typed_member(r, obj, key, OCI_JSON_ARRAY, ret);
}

int
oci_jr_require(oci_jr *r, int got, const char *key)
{
        if (got < 0)
                return got;
        if (got == 0)
                return oci_jr_missing(r, key);
        return 1;
}

static const val_fn field_readers[] = {
        [OCI_JR_STR] = rd_str,
        [OCI_JR_BOOL] = rd_bool,
        [OCI_JR_U64] = rd_u64,
        [OCI_JR_I64] = rd_i64,
        [OCI_JR_U32] = rd_u32,
        [OCI_JR_I32] = rd_i32,
        [OCI_JR_U16] = rd_u16,
        [OCI_JR_STRV] = rd_strv,
        [OCI_JR_MAP] = rd_map,
};

int
oci_jr_fields(oci_jr *r, const oci_json *obj, void *base, const oci_jr_field *fields,
              size_t n_fields)
{
        for (size_t i = 0; i < n_fields; i++) {
                const oci_jr_field *f = &fields[i];
                int k = member_read(r, obj, f->key, field_readers[f->kind],
                                    (char *) base + f->offset);
                if (f->required)
                        k = oci_jr_require(r, k, f->key);
                if (k < 0)
                        return k;
                if (k > 0 && f->has_offset != SIZE_MAX)
                        *(bool *) ((char *) base + f->has_offset) = true;
        }
        return 0;
}

static int
name_bit(oci_jr *r, const oci_json *v, const oci_jr_names *names, uint64_t *bits)
{
        const char *name;
        int k = oci_jr_val_cstr(r, v, &name);
        if (k < 0)
                return k;
        char q[OCI_JR_VALUE_MAX * 2 + 16];
        oci_json_quote(name, q, sizeof q);
        int bit = names->lookup(name);
        if (bit < 0 || bit > 63)
                return oci_jr_fail(r, EINVAL, "unknown %s %s", names->what, q);
        uint64_t b = UINT64_C(1) << bit;
        if (names->allowed_what && !(names->allowed & b))
                return oci_jr_fail(r, EINVAL, "%s is not in %s", q, names->allowed_what);
        *bits |= b;
        return 0;
}

int
oci_jr_bits(oci_jr *r, const oci_json *obj, const char *key, const oci_jr_names *names,
            uint64_t *ret)
{
        const oci_json *arr;
        int k = oci_jr_array(r, obj, key, &arr);
        if (k <= 0)
                return k;
        uint64_t bits = 0;
        size_t mark = oci_jr_push_key(r, key);
        for (size_t i = 0; i < oci_json_len(arr) && k >= 0; i++) {
                size_t m2 = oci_jr_push_index(r, i);
                k = name_bit(r, oci_json_value_at(arr, i), names, &bits);
                oci_jr_pop(r, m2);
        }
        oci_jr_pop(r, mark);
        if (k < 0)
                return k;
        *ret = bits;
        return 1;
}

typedef struct int_range {
        int64_t min, max;
        uint64_t umax;
} int_range;

static int
rd_int_range(oci_jr *r, const oci_json *v, void *out)
{
        const int_range *range = r->user;
        return oci_jr_val_int(r, v, range->min, range->max, out);
}

static int
rd_uint_range(oci_jr *r, const oci_json *v, void *out)
{
        const int_range *range = r->user;
        return oci_jr_val_uint(r, v, range->umax, out);
}

int
oci_jr_int_range(oci_jr *r, const oci_json *obj, const char *key, int64_t min, int64_t max,
                 int64_t *ret)
{
        int_range range = { .min = min, .max = max };
        void *saved = r->user;
        r->user = &range;
        int k = member_read(r, obj, key, rd_int_range, ret);
        r->user = saved;
        return k;
}

int
oci_jr_uint_range(oci_jr *r, const oci_json *obj, const char *key, uint64_t max,
                  uint64_t *ret)
{
        int_range range = { .umax = max };
        void *saved = r->user;
        r->user = &range;
        int k = member_read(r, obj, key, rd_uint_range, ret);
        r->user = saved;
        return k;
}

int
oci_jr_objects(oci_jr *r, const oci_json *obj, const char *key, size_t elem_size,
               oci_jr_elem_fn fn, void **ret, size_t *ret_n)
{
        const oci_json *arr;
        int k = oci_jr_array(r, obj, key, &arr);
        if (k <= 0)
                return k;
        size_t n = oci_json_len(arr);
        char *elems = oci_arena_calloc(r->arena, n, elem_size);
        if (!elems)
                return oci_jr_oom(r);
        size_t mark = oci_jr_push_key(r, key);
        for (size_t i = 0; i < n && k >= 0; i++) {
                size_t m2 = oci_jr_push_index(r, i);
                const oci_json *v = oci_json_value_at(arr, i);
                k = expect_type(r, v, OCI_JSON_OBJECT);
                if (k >= 0)
                        k = fn(r, v, elems + i * elem_size);
                oci_jr_pop(r, m2);
        }
        oci_jr_pop(r, mark);
        if (k < 0)
                return k;
        *ret = elems;
        *ret_n = n;
        return 1;
}

int
oci_jr_members(oci_jr *r, const oci_json *obj, const char *key, size_t elem_size,
               oci_jr_member_fn fn, void **ret, size_t *ret_n)
{
        const oci_json *o;
        int k = oci_jr_object(r, obj, key, &o);
        if (k <= 0)
                return k;
        size_t n = oci_json_len(o);
        char *elems = oci_arena_calloc(r->arena, n, elem_size);
        if (!elems)
                return oci_jr_oom(r);
        size_t mark = oci_jr_push_key(r, key);
        for (size_t i = 0; i < n && k >= 0; i++) {
                const char *name = oci_json_key_at(o, i);
                size_t m2 = oci_jr_push_key(r, name);
                k = fn(r, name, oci_json_value_at(o, i), elems + i * elem_size);
                oci_jr_pop(r, m2);
        }
        oci_jr_pop(r, mark);
        if (k < 0)
                return k;
        *ret = elems;
        *ret_n = n;
        return 1;
}

int
oci_jr_abs_path(oci_jr *r, const oci_json *obj, const char *key, char **ret)
{
        char *s = NULL;
        int k = oci_jr_str(r, obj, key, &s);
        if (k <= 0)
                return k;
        if (s[0] != '/') {
                size_t mark = oci_jr_push_key(r, key);
                char q[OCI_JR_VALUE_MAX * 2 + 16];
                oci_json_quote(s, q, sizeof q);
                k = oci_jr_fail(r, EINVAL, "expected an absolute path, got %s", q);
                oci_jr_pop(r, mark);
                return k;
        }
        *ret = s;
        return 1;
}

/* A required string member looked up in a name table; *ret gets lookup()'s value. */
int
oci_jr_named(oci_jr *r, const oci_json *obj, const char *key, int (*lookup)(const char *),
             const char *what, int *ret)
{
        const oci_json *t = oci_json_get(obj, key);
        if (!t || oci_json_type_of(t) == OCI_JSON_NULL)
                return oci_jr_missing(r, key);
        size_t mark = oci_jr_push_key(r, key);
        const char *name;
        int k = oci_jr_val_cstr(r, t, &name);
        if (k >= 0) {
                *ret = lookup(name);
                if (*ret < 0) {
                        char q[OCI_JR_VALUE_MAX * 2 + 16];
                        oci_json_quote(name, q, sizeof q);
                        k = oci_jr_fail(r, EINVAL, "unknown %s %s", what, q);
                }
        }
        oci_jr_pop(r, mark);
        return k;
}
