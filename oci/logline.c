#include "logline.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

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
