/* The typed reader's path (pushed and popped as it descends), the description of an
 * offending value and the reader's error messages: "<name>: <path>: <problem>", quoting
 * the value (truncated). Segments and quoting come from json-quote.c. */
#include "oci/json.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ---- the reader's path and described values ---- */

void
oci_jr_init(oci_jr *r, const char *name, oci_arena *arena, msp_err *err)
{
        r->name = name;
        r->arena = arena;
        r->err = err;
        r->user = NULL;
        r->path_len = 0;
        r->path[0] = '\0';
}

size_t
oci_jr_push_key(oci_jr *r, const char *key)
{
        size_t mark = r->path_len;
        oci_json_path_append_key(r->path, sizeof r->path, &r->path_len, key);
        return mark;
}

size_t
oci_jr_push_index(oci_jr *r, size_t i)
{
        size_t mark = r->path_len;
        oci_json_path_append_index(r->path, sizeof r->path, &r->path_len, i);
        return mark;
}

void
oci_jr_pop(oci_jr *r, size_t mark)
{
        r->path_len = mark;
        r->path[mark] = '\0';
}

void
oci_json_describe(const oci_json *v, char *buf, size_t size)
{
        switch (oci_json_type_of(v)) {
        case OCI_JSON_STRING:
                oci_json_quote(oci_json_string(v), buf, size);
                return;
        case OCI_JSON_NUMBER: {
                const char *t = oci_json_number_text(v);
                if (strlen(t) > OCI_JR_VALUE_MAX)
                        snprintf(buf, size, "%.*s...", (int) OCI_JR_VALUE_MAX, t);
                else
                        snprintf(buf, size, "%s", t);
                return;
        }
        case OCI_JSON_BOOL:
                snprintf(buf, size, "%s", oci_json_bool(v) ? "true" : "false");
                return;
        case OCI_JSON_OBJECT:
                snprintf(buf, size, "an object");
                return;
        case OCI_JSON_ARRAY:
                snprintf(buf, size, "an array");
                return;
        case OCI_JSON_NULL:
        default:
                snprintf(buf, size, "null");
                return;
        }
}

/* ---- errors ---- */

int
oci_jr_fail(oci_jr *r, int errnum, const char *fmt, ...)
{
        char msg[MSP_ERR_MSG_MAX];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        if (r->path_len)
                return msp_err_set(r->err, errnum, "%s: %s: %s", r->name, r->path, msg);
        return msp_err_set(r->err, errnum, "%s: %s", r->name, msg);
}

int
oci_jr_expected(oci_jr *r, const oci_json *v, const char *what)
{
        char got[OCI_JR_VALUE_MAX * 2 + 16];
        oci_json_describe(v, got, sizeof got);
        return oci_jr_fail(r, EINVAL, "expected %s, got %s", what, got);
}

int
oci_jr_oom(oci_jr *r)
{
        return msp_err_set(r->err, ENOMEM, "%s: out of memory", r->name);
}

int
oci_jr_missing(oci_jr *r, const char *key)
{
        size_t mark = oci_jr_push_key(r, key);
        int ret = oci_jr_fail(r, EINVAL, "required property missing");
        oci_jr_pop(r, mark);
        return ret;
}

