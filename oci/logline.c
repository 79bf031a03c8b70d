#include "oci/logline.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

size_t
oci_utf8_seq_len(const unsigned char *s)
{
        unsigned char c = s[0];
        size_t n;
        unsigned char lo = 0x80, hi = 0xbf;     /* range of the second byte */
        if (c >= 0xc2 && c <= 0xdf)
                n = 2;
        else if (c >= 0xe0 && c <= 0xef)
                n = 3;
        else if (c >= 0xf0 && c <= 0xf4)
                n = 4;
        else
                return 0;
        if (c == 0xe0)
                lo = 0xa0;
        else if (c == 0xed)
                hi = 0x9f;
        else if (c == 0xf0)
                lo = 0x90;
        else if (c == 0xf4)
                hi = 0x8f;
        if (s[1] < lo || s[1] > hi)
                return 0;
        for (size_t i = 2; i < n; i++)
                if (s[i] < 0x80 || s[i] > 0xbf)
                        return 0;
        return n;
}

/* A well-formed multibyte character that still controls the display: C1 (U+0080..009F,
 * 0x9b is CSI), the bidi marks, embeddings, overrides and isolates (U+200E/F,
 * U+202A..202E, U+2066..2069), which reorder a line, and U+2028/2029, which some
 * terminals and viewers break lines at. */
static bool
is_wide_control(const unsigned char *u, size_t n)
{
        if (n == 2)
                return u[0] == 0xc2 && u[1] <= 0x9f;
        if (n != 3 || u[0] != 0xe2)
                return false;
        if (u[1] == 0x80)
                return u[2] == 0x8e || u[2] == 0x8f || (u[2] >= 0xa8 && u[2] <= 0xae);
        return u[1] == 0x81 && u[2] >= 0xa6 && u[2] <= 0xa9;
}

size_t
oci_text_clean(char *s)
{
        unsigned char *u = (unsigned char *) s;
        size_t i = 0, o = 0;

        while (u[i]) {
                size_t n = u[i] < 0x80 ? 1 : oci_utf8_seq_len(u + i);
                if (n == 0 || (n == 1 && (u[i] < 0x20 || u[i] == 0x7f)) ||
                    (n > 1 && is_wide_control(u + i, n))) {
                        u[o++] = '?';
                        i += n ? n : 1;
                        continue;
                }
                memmove(u + o, u + i, n);
                o += n;
                i += n;
        }
        u[o] = '\0';
        return o;
}

int
oci_json_escape(const char *s, char *buf, size_t bufsz)
{
        size_t o = 0;
        int r = 0;

        if (bufsz == 0)
                return -ENOSPC;
        for (const unsigned char *p = (const unsigned char *) s; *p; p++) {
                char tmp[8];
                const char *piece = tmp;
                size_t len;

                switch (*p) {
                case '"': piece = "\\\""; break;
                case '\\': piece = "\\\\"; break;
                case '\n': piece = "\\n"; break;
                case '\r': piece = "\\r"; break;
                case '\t': piece = "\\t"; break;
                default:
                        if (*p < 0x20)
                                snprintf(tmp, sizeof tmp, "\\u%04x", *p);
                        else {
                                tmp[0] = (char) *p;
                                tmp[1] = '\0';
                        }
                }
                len = strlen(piece);
                if (o + len >= bufsz) {
                        r = -ENOSPC;
                        break;
                }
                memcpy(buf + o, piece, len);
                o += len;
        }
        buf[o] = '\0';
        return r < 0 ? r : (int) o;
}

int
oci_log_line_json(const char *level, const char *msg, const char *time, char *buf, size_t bufsz)
{
        char emsg[2048], elevel[32], etime[64];
        int r = oci_json_escape(msg, emsg, sizeof emsg);

        (void) oci_json_escape(level, elevel, sizeof elevel);
        (void) oci_json_escape(time, etime, sizeof etime);
        int n = snprintf(buf, bufsz, "{\"level\":\"%s\",\"msg\":\"%s\",\"time\":\"%s\"}\n", elevel,
                         emsg, etime);
        if (n < 0 || (size_t) n >= bufsz)
                return -ENOSPC;
        return r < 0 ? r : n;
}
