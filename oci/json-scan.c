/* Byte-level checks made before the JSON library parses a document.
 *
 * yajl_tree_parse() takes a C string (a raw NUL byte would silently end the document),
 * always accepts comments, builds every container by growing it one element at a
 * time, and yajl_tree_free() recurses. So before a tree exists this scan refuses raw
 * NUL bytes, comments, nesting deeper than OCI_MAX_DEPTH and containers with more
 * than OCI_MAX_ARRAY members. It tracks keys and indices so that a too-large container
 * is named by its path. It also notes the first string token with an escaped NUL
 * (\u0000), which yajl would truncate; json.c reports it by path after parsing.
 * Syntax is not validated here: yajl does that. */
#include "oci/json-quote.h"
#include "oci/json-scan.h"
#include "oci/spec.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

typedef struct scan_level {
        bool is_object;
        bool expect_key;                /* object: the next string is a key */
        size_t commas;
        const char *key;                /* object: raw text of the current key */
        size_t key_len;
} scan_level;

typedef struct scan {
        const char *name;
        msp_err *err;
        size_t depth;                   /* levels[1..depth] are open */
        scan_level levels[OCI_MAX_DEPTH + 1];
        size_t strings;
        size_t nul_string;
        /* the first container over OCI_MAX_ARRAY, reported when it closes */
        size_t big_depth;
        bool big_is_object;
        char big_path[OCI_JR_PATH_MAX];
} scan;

/* Returns the closing quote of the string that starts after p's opening quote, or NULL
 * when the input ends inside it (yajl reports that). */
static const char *
scan_string(const char *p, const char *end, bool *ret_has_nul)
{
        while (p < end) {
                if (*p == '"')
                        return p;
                if (*p == '\\') {
                        if (end - p >= 6 && memcmp(p + 1, "u0000", 5) == 0)
                                *ret_has_nul = true;
                        p += 2;
                        continue;
                }
                p++;
        }
        return NULL;
}

/* The path of the container open at level d, from the keys and indices above it. */
static void
scan_path(const scan *s, size_t d, char *buf, size_t size)
{
        size_t len = 0;
        buf[0] = '\0';
        for (size_t i = 1; i < d; i++) {
                const scan_level *l = &s->levels[i];
                if (!l->is_object) {
                        oci_json_path_append_index(buf, size, &len, l->commas);
                        continue;
                }
                char key[OCI_JR_VALUE_MAX * 2];
                size_t n = l->key_len < sizeof key - 1 ? l->key_len : sizeof key - 1;
                memcpy(key, l->key ? l->key : "", l->key ? n : 0);
                key[l->key ? n : 0] = '\0';
                oci_json_path_append_key(buf, size, &len, key);
        }
        if (len == 0)
                snprintf(buf, size, "(top level)");
}

static int
scan_open(scan *s, const char *p, const char *data)
{
        if (s->depth >= OCI_MAX_DEPTH)
                return msp_err_set(s->err, E2BIG,
                                   "%s: JSON nested deeper than %u levels (at offset %zu)",
                                   s->name, OCI_MAX_DEPTH, (size_t) (p - data));
        scan_level *l = &s->levels[++s->depth];
        *l = (scan_level){ .is_object = *p == '{', .expect_key = *p == '{' };
        return 0;
}

static int
scan_close(scan *s)
{
        if (s->depth == 0)
                return 0;               /* unbalanced: yajl reports it */
        if (s->big_depth == s->depth) {
                size_t n = s->levels[s->depth].commas + 1;
                return msp_err_set(s->err, E2BIG, "%s: %s: %s has too many %s (%zu, limit %u)",
                                   s->name, s->big_path, s->big_is_object ? "object" : "array",
                                   s->big_is_object ? "members" : "elements", n, OCI_MAX_ARRAY);
        }
        s->depth--;
        return 0;
}

static void
scan_comma(scan *s)
{
        if (s->depth == 0)
                return;
        scan_level *l = &s->levels[s->depth];
        l->commas++;
        l->expect_key = l->is_object;
        if (l->commas == OCI_MAX_ARRAY && s->big_depth == 0) {
                s->big_depth = s->depth;
                s->big_is_object = l->is_object;
                scan_path(s, s->depth, s->big_path, sizeof s->big_path);
        }
}

static void
scan_note_string(scan *s, const char *start, const char *q, bool has_nul)
{
        s->strings++;
        if (has_nul && s->nul_string == 0)
                s->nul_string = s->strings;
        scan_level *l = &s->levels[s->depth];
        if (s->depth > 0 && l->expect_key) {
                l->key = start;
                l->key_len = (size_t) (q - start);
                l->expect_key = false;
        }
}

int
oci_json_prescan(const char *name, const char *data, size_t len, size_t *ret_nul_string,
                 msp_err *err)
{
        const char *nul = memchr(data, '\0', len);
        if (nul)
                return msp_err_set(err, EINVAL, "%s: invalid JSON: NUL byte at offset %zu", name,
                                   (size_t) (nul - data));
        scan s = { .name = name, .err = err };
        const char *end = data + len;
        int r = 0;
        for (const char *p = data; p < end && r >= 0; p++) {
                switch (*p) {
                case '{':
                case '[':
                        r = scan_open(&s, p, data);
                        break;
                case '}':
                case ']':
                        r = scan_close(&s);
                        break;
                case ',':
                        scan_comma(&s);
                        break;
                case '/':
                        r = msp_err_set(err, EINVAL,
                                        "%s: invalid JSON: comments are not allowed (at offset %zu)",
                                        name, (size_t) (p - data));
                        break;
                case '"': {
                        bool has_nul = false;
                        const char *q = scan_string(p + 1, end, &has_nul);
                        if (!q)
                                p = end - 1;    /* unterminated: yajl reports it */
                        else
                                scan_note_string(&s, p + 1, q, has_nul);
                        if (q)
                                p = q;
                        break;
                }
                default:
                        break;
                }
        }
        if (r >= 0 && s.big_depth) {
                /* unterminated big container: report it anyway */
                s.depth = s.big_depth;
                r = scan_close(&s);
        }
        if (r < 0)
                return r;
        *ret_nul_string = s.nul_string;
        return 0;
}
