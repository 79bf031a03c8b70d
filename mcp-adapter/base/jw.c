/* The JSON writer helpers (jw.h): strings repaired to valid UTF-8 on the way out, and the
 * keyed object opener the schema and result writers use. */
#include "base/jw.h"

#include <string.h>

#include "oci/oci.h"
#include "base/text.h"

void
mcp_jw_text(oci_jw *w, const char *s)
{
        if (!s) {
                oci_jw_null(w);
                return;
        }
        size_t len = strlen(s);
        if (mcp_utf8_valid(s, len)) {
                oci_jw_string(w, s);
                return;
        }
        _cleanup_free_ char *fixed = mcp_utf8_sanitize(s, len, NULL);
        oci_jw_string(w, fixed ? fixed : "");
}

void
mcp_jw_bytes(oci_jw *w, const char *buf, size_t len)
{
        _cleanup_free_ char *fixed = mcp_utf8_sanitize(buf ? buf : "", buf ? len : 0, NULL);
        oci_jw_string(w, fixed ? fixed : "");
}

void
mcp_jw_obj(oci_jw *w, const char *key)
{
        if (key)
                oci_jw_key(w, key);
        oci_jw_begin_object(w);
}
