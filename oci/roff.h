/* Text for the manual pages msp(8) and msp-mcp(1), which both programs print from their
 * own option tables: one escaping rule for roff. */
#pragma once

#include <stdio.h>

/* s as roff text: a leading '.' or '\'' would start a request, '\' an escape, and '-' is
 * written '\-' (a hyphen-minus, as options need). */
void oci_roff_text(FILE *out, const char *s);
