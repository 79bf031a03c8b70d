/* Internal to oci/ (and the JSON face for msp-mcp): the JSON layer and the parser's
 * shared internals. The files depend one way, lowest first:
 *
 * 0. Paths and quoting (json-quote.c, json-quote.h): path segments and quoted values for
 *    messages; plain strings, no documents. Included here for every user.
 *    Pre-parse scan (json-scan.c, json-scan.h): the byte-level limits; uses 0 only.
 * 1. Document model (json.c): the only code in msp that knows the JSON library (yajl).
 *    Parsing enforces OCI_CONFIG_MAX_BYTES, OCI_MAX_DEPTH, OCI_MAX_ARRAY and
 *    OCI_MAX_STRING, rejects comments, NUL bytes (raw or \u0000) and duplicate keys.
 *    Numbers are exposed as their raw text only. Uses the scan and 0.
 * 2. Writer (json.c): compact or pretty (tab-indented) output, '/' never escaped.
 * 3. Typed reader (json-path.c: its path and messages; json-read.c: the accessors):
 *    path-tracking accessors that convert and check values and produce
 *    "<name>: <path>: <problem>" errors. Uses only the API of 0 and 1.
 * 4. Parser sections shared by the spec-parse*.c files.
 *
 * Swapping the JSON library means rewriting json.c only. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "oci/arena.h"
#include "oci/err.h"
#include "oci/json-quote.h"
#include "oci/spec.h"

/* ---- 1. document model ---- */

typedef enum oci_json_type {
        OCI_JSON_NULL,
        OCI_JSON_BOOL,
        OCI_JSON_NUMBER,
        OCI_JSON_STRING,
        OCI_JSON_OBJECT,
        OCI_JSON_ARRAY,
} oci_json_type;

typedef struct oci_json oci_json;               /* a node, owned by its document */
typedef struct oci_json_doc oci_json_doc;

/* `name` prefixes every message. E2BIG for limits, EINVAL for bad JSON. */
int oci_json_parse(const char *name, const char *data, size_t len, oci_json_doc **ret_doc,
                   msp_err *err);
/* The same with other size limits (msp-mcp's JSON-RPC messages); depth and container
 * sizes keep the limits above. */
int oci_json_parse_limits(const char *name, const char *data, size_t len, size_t max_bytes,
                          size_t max_string, oci_json_doc **ret_doc, msp_err *err);
oci_json_doc *oci_json_doc_free(oci_json_doc *doc);
const oci_json *oci_json_doc_root(const oci_json_doc *doc);

oci_json_type oci_json_type_of(const oci_json *v);
/* Members of an object or elements of an array; 0 for scalars. */
size_t oci_json_len(const oci_json *v);
const char *oci_json_key_at(const oci_json *obj, size_t i);
/* Member value of an object or element of an array. */
const oci_json *oci_json_value_at(const oci_json *v, size_t i);
/* NULL when obj is not an object or has no such key. */
const oci_json *oci_json_get(const oci_json *obj, const char *key);
/* NULL unless the node has that type. */
const char *oci_json_string(const oci_json *v);
const char *oci_json_number_text(const oci_json *v);
bool oci_json_bool(const oci_json *v);

/* ---- 2. writer ---- */

typedef struct oci_jw oci_jw;

oci_jw *oci_jw_new(bool pretty);
oci_jw *oci_jw_free(oci_jw *w);
/* Errors are sticky and reported by oci_jw_finish(). */
void oci_jw_begin_object(oci_jw *w);
void oci_jw_end_object(oci_jw *w);
void oci_jw_begin_array(oci_jw *w);
void oci_jw_end_array(oci_jw *w);
void oci_jw_key(oci_jw *w, const char *key);
void oci_jw_string(oci_jw *w, const char *s);           /* NULL writes null */
void oci_jw_int64(oci_jw *w, int64_t v);
void oci_jw_uint64(oci_jw *w, uint64_t v);
void oci_jw_bool(oci_jw *w, bool v);
void oci_jw_null(oci_jw *w);
/* Conveniences: key + value. */
void oci_jw_kv_string(oci_jw *w, const char *key, const char *s);
void oci_jw_kv_int64(oci_jw *w, const char *key, int64_t v);
void oci_jw_kv_uint64(oci_jw *w, const char *key, uint64_t v);
void oci_jw_kv_bool(oci_jw *w, const char *key, bool v);
/* A NULL-terminated list as an array; a NULL list writes nothing (not even the key). */
void oci_jw_kv_strlist(oci_jw *w, const char *key, const char *const *list);
/* The document: malloc'd, NUL-terminated, no trailing newline. */
int oci_jw_finish(oci_jw *w, char **ret_json, size_t *ret_len, msp_err *err);

static inline void
oci_jw_freep(oci_jw **w)
{
        if (*w)
                oci_jw_free(*w);
}
#define _cleanup_jw_ _cleanup_(oci_jw_freep)

static inline void
oci_json_doc_freep(oci_json_doc **d)
{
        if (*d)
                oci_json_doc_free(*d);
}
#define _cleanup_json_doc_ _cleanup_(oci_json_doc_freep)

/* ---- 3. typed reader ---- */

typedef struct oci_jr {
        const char *name;               /* message prefix, e.g. "config.json" */
        oci_arena *arena;               /* receives every string and array */
        msp_err *err;
        void *user;                     /* context for element callbacks */
        size_t path_len;
        char path[OCI_JR_PATH_MAX];     /* "process.args[2]" */
} oci_jr;

void oci_jr_init(oci_jr *r, const char *name, oci_arena *arena, msp_err *err);
/* Push a path segment; returns the mark to pass to oci_jr_pop(). */
size_t oci_jr_push_key(oci_jr *r, const char *key);
size_t oci_jr_push_index(oci_jr *r, size_t i);
void oci_jr_pop(oci_jr *r, size_t mark);
/* A value for a message: "\"64m\"", "5", "true", "an object"... truncated (strings
 * quoted by oci_json_quote()). */
void oci_json_describe(const oci_json *v, char *buf, size_t size);

/* "<name>: <path>: <message>"; returns -errnum. */
int oci_jr_fail(oci_jr *r, int errnum, const char *fmt, ...) _printf_(3, 4);
/* "... expected <what>, got <value>" */
int oci_jr_expected(oci_jr *r, const oci_json *v, const char *what);
int oci_jr_oom(oci_jr *r);
/* "<path>.<key>: required property missing" */
int oci_jr_missing(oci_jr *r, const char *key);

/* Value level: the path of v is already pushed. */
int oci_jr_val_str(oci_jr *r, const oci_json *v, char **ret);          /* arena copy */
int oci_jr_val_cstr(oci_jr *r, const oci_json *v, const char **ret);   /* borrowed */
int oci_jr_val_uint(oci_jr *r, const oci_json *v, uint64_t max, uint64_t *ret);
int oci_jr_val_int(oci_jr *r, const oci_json *v, int64_t min, int64_t max, int64_t *ret);
int oci_jr_val_bool(oci_jr *r, const oci_json *v, bool *ret);
int oci_jr_val_u32(oci_jr *r, const oci_json *v, uint32_t *ret);
int oci_jr_val_strv(oci_jr *r, const oci_json *v, oci_strv *ret);
int oci_jr_val_map(oci_jr *r, const oci_json *v, oci_map *ret);
int oci_jr_val_id_mappings(oci_jr *r, const oci_json *v, oci_id_mapping **ret, size_t *ret_n);

/* Member level: 0 when the key is absent or null (ret untouched), 1 when set, < 0 on
 * error. The key is pushed on the path while the value is checked. */
int oci_jr_str(oci_jr *r, const oci_json *obj, const char *key, char **ret);
int oci_jr_bool(oci_jr *r, const oci_json *obj, const char *key, bool *ret);
int oci_jr_u64(oci_jr *r, const oci_json *obj, const char *key, uint64_t *ret);
int oci_jr_i64(oci_jr *r, const oci_json *obj, const char *key, int64_t *ret);
int oci_jr_u32(oci_jr *r, const oci_json *obj, const char *key, uint32_t *ret);
int oci_jr_i32(oci_jr *r, const oci_json *obj, const char *key, int32_t *ret);
int oci_jr_u16(oci_jr *r, const oci_json *obj, const char *key, uint16_t *ret);
int oci_jr_strv(oci_jr *r, const oci_json *obj, const char *key, oci_strv *ret);
int oci_jr_map(oci_jr *r, const oci_json *obj, const char *key, oci_map *ret);
/* Type-checked container members. */
int oci_jr_object(oci_jr *r, const oci_json *obj, const char *key, const oci_json **ret);
int oci_jr_array(oci_jr *r, const oci_json *obj, const char *key, const oci_json **ret);
/* The member must be present (and not null); fails with oci_jr_missing() otherwise. */
int oci_jr_require(oci_jr *r, int got, const char *key);

/* Table-driven scalar members: offsets into a struct, optional has_* flag. */
typedef enum oci_jr_kind {
        OCI_JR_STR,
        OCI_JR_BOOL,
        OCI_JR_U64,
        OCI_JR_I64,
        OCI_JR_U32,
        OCI_JR_I32,
        OCI_JR_U16,
        OCI_JR_STRV,
        OCI_JR_MAP,
} oci_jr_kind;

typedef struct oci_jr_field {
        const char *key;
        oci_jr_kind kind;
        size_t offset;
        size_t has_offset;              /* SIZE_MAX: none */
        bool required;
} oci_jr_field;

#define OCI_JR_F(type, key, kind, member) \
        { key, kind, offsetof(type, member), SIZE_MAX, false }
#define OCI_JR_FH(type, key, kind, member, has) \
        { key, kind, offsetof(type, member), offsetof(type, has), false }
#define OCI_JR_FR(type, key, kind, member) \
        { key, kind, offsetof(type, member), SIZE_MAX, true }

int oci_jr_fields(oci_jr *r, const oci_json *obj, void *base, const oci_jr_field *fields,
                  size_t n_fields);

/* An array of objects: allocates n elements of elem_size in the arena and calls fn for
 * each (index pushed on the path). 0 when absent, 1 when set, < 0 on error. */
typedef int (*oci_jr_elem_fn)(oci_jr *r, const oci_json *v, void *elem);
int oci_jr_objects(oci_jr *r, const oci_json *obj, const char *key, size_t elem_size,
                   oci_jr_elem_fn fn, void **ret, size_t *ret_n);
/* The same for the members of an object (a map): fn gets each key (already pushed on
 * the path) and its value, whatever its type. */
typedef int (*oci_jr_member_fn)(oci_jr *r, const char *key, const oci_json *v, void *elem);
int oci_jr_members(oci_jr *r, const oci_json *obj, const char *key, size_t elem_size,
                   oci_jr_member_fn fn, void **ret, size_t *ret_n);
/* A string member that must be an absolute path (starts with '/'). */
int oci_jr_abs_path(oci_jr *r, const oci_json *obj, const char *key, char **ret);

/* Integer members with a range; messages say "expected an integer from MIN to MAX". */
int oci_jr_int_range(oci_jr *r, const oci_json *obj, const char *key, int64_t min, int64_t max,
                     int64_t *ret);
int oci_jr_uint_range(oci_jr *r, const oci_json *obj, const char *key, uint64_t max,
                      uint64_t *ret);

/* Bits from a list of names: lookup(name) returns a bit index or < 0. */
typedef struct oci_jr_names {
        int (*lookup)(const char *name);
        const char *what;               /* "unknown <what> \"x\"" */
        uint64_t allowed;               /* with allowed_what: names outside it are refused */
        const char *allowed_what;       /* "\"x\" is not in <allowed_what>" */
} oci_jr_names;

int oci_jr_bits(oci_jr *r, const oci_json *obj, const char *key, const oci_jr_names *names,
                uint64_t *ret);
/* A required string member looked up in a name table: *ret = lookup(name), which must
 * be >= 0 ("unknown <what> \"x\"" otherwise). */
int oci_jr_named(oci_jr *r, const oci_json *obj, const char *key, int (*lookup)(const char *),
                 const char *what, int *ret);

/* ---- 4. parser sections (spec-parse*.c) ---- */

int oci_parse_process(oci_jr *r, const oci_json *v, oci_process **ret);
int oci_parse_landlock(oci_jr *r, const oci_json *v, oci_landlock **ret);
int oci_parse_linux(oci_jr *r, const oci_json *v, oci_linux **ret);
int oci_parse_seccomp(oci_jr *r, const oci_json *v, oci_seccomp **ret);
int oci_parse_resources(oci_jr *r, const oci_json *v, oci_resources **ret);

/* Internal name lookups (names.c), beyond the public tables in spec.h. */
int oci_ns_type_from_name(const char *name);
int oci_seccomp_action_from_name(const char *name);
int oci_seccomp_op_from_name(const char *name);
int oci_seccomp_flag_from_name(const char *name);       /* bit index */
int oci_sched_policy_from_name(const char *name);
int oci_sched_flag_from_name(const char *name);         /* bit index */
int oci_ioprio_class_from_name(const char *name);
int oci_propagation_from_name(const char *name, unsigned long *ret_flags);
int oci_landlock_fs_right_from_name(const char *name);  /* bit index */
int oci_landlock_net_right_from_name(const char *name);
int oci_landlock_scope_from_name(const char *name);
bool oci_memory_policy_mode_valid(const char *name);
bool oci_memory_policy_flag_valid(const char *name);
