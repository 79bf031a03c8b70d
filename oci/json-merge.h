/* A deep merge of JSON documents written through the writer (json-merge.c): a base
 * value and overlays over it, later overlays winning. The runtime's update uses it to
 * fold new resource limits into a container's config copy. */
#pragma once

#include <stddef.h>

#include "oci/err.h"
#include "oci/json.h"

#define OCI_JSON_MERGE_MAX 8            /* overlays in one merge */

/* Writes to w the merge of base (NULL: absent) with ov[0..n):
 *  - objects merge key by key: base's keys first in its order, then the keys only the
 *    overlays have, in the order they first appear;
 *  - any other overlay value (array, string, number, bool, null) replaces whatever came
 *    before it, base and earlier overlays alike; arrays are replaced whole, never merged;
 *  - an object overlay over a non-object base replaces that base;
 *  - no base and no overlay writes null.
 * At the top level only, the member keep_key (NULL: none) is copied from base as it is,
 * the overlays' value for it ignored. Numbers must be integers (every number of an OCI
 * config is) and are written with their exact value; anything else fails with EINVAL.
 * `name` prefixes every message. */
int oci_json_merge(oci_jw *w, const char *name, const oci_json *base, const oci_json *const *ov,
                   size_t n, const char *keep_key, msp_err *err);
/* Writes v as it is (the merge with no overlay). */
int oci_json_copy(oci_jw *w, const char *name, const oci_json *v, msp_err *err);
