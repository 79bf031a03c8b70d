#include "oci/roff.h"

void
oci_roff_text(FILE *out, const char *s)
{
        if (*s == '.' || *s == '\'')
                fputs("\\&", out);
        for (; *s; s++) {
                if (*s == '\\')
                        fputs("\\e", out);
                else if (*s == '-')
                        fputs("\\-", out);
                else
                        fputc(*s, out);
        }
}
