/* The byte-level checks made before the JSON library sees a document (json-scan.c). */
#pragma once

#include <stddef.h>

#include "oci/err.h"

/* Refuses raw NUL bytes, comments, nesting deeper than OCI_MAX_DEPTH and containers with
 * more than OCI_MAX_ARRAY members (naming their path), so that no tree is ever built for
 * such input. *ret_nul_string is the 1-based ordinal of the first string token that
 * contains \u0000 (0: none). `name` prefixes every message. */
int oci_json_prescan(const char *name, const char *data, size_t len, size_t *ret_nul_string,
                     msp_err *err);
