/* The Jupyter wire format (kernel-wire.h): signing and sending a request, receiving a
 * message whole and refusing it unless its signature verifies. */
#include "kernel/kernel-wire.h"

#include <errno.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <string.h>
#include <sys/random.h>
#include <zmq.h>

#include "oci/oci.h"

#define DELIM "<IDS|MSG>"
/* Routing identities (iopub's topic) before the delimiter, and parts in all. */
#define IDS_MAX 16u
#define PARTS_MAX 32u
#define SIG_HEX 64u

void
kernel_msg_clear(kernel_msg *m)
{
        oci_json_doc_free(m->header);
        oci_json_doc_free(m->parent);
        oci_json_doc_free(m->content);
        *m = (kernel_msg){ 0 };
}

static void
hex(const unsigned char *in, size_t n, char *out)
{
        static const char digits[] = "0123456789abcdef";
        for (size_t i = 0; i < n; i++) {
                out[2 * i] = digits[in[i] >> 4];
                out[2 * i + 1] = digits[in[i] & 15];
        }
        out[2 * n] = '\0';
}

int
kernel_random_hex(char *buf, size_t n, msp_err *err)
{
        unsigned char raw[64];
        if (n > sizeof raw)
                return msp_err_set(err, EINVAL, "kernel: %zu random bytes asked", n);
        if (getrandom(raw, n, 0) != (ssize_t) n)
                return msp_err_sys(err, errno ? errno : EIO, "kernel: getrandom");
        hex(raw, n, buf);
        return 0;
}

/* The signature of the four JSON parts, as hex (SIG_HEX digits and a NUL). */
static int
sign(const char *key, const void *const part[4], const size_t len[4], char out[SIG_HEX + 1],
     msp_err *err)
{
        gnutls_hmac_hd_t h;
        int g = gnutls_hmac_init(&h, GNUTLS_MAC_SHA256, key, strlen(key));
        if (g < 0)
                return msp_err_set(err, EIO, "kernel: HMAC: %s", gnutls_strerror(g));
        for (size_t i = 0; i < 4; i++)
                if (len[i] && gnutls_hmac(h, part[i], len[i]) < 0) {
                        gnutls_hmac_deinit(h, NULL);
                        return msp_err_set(err, EIO, "kernel: HMAC failed");
                }
        unsigned char digest[32];
        gnutls_hmac_deinit(h, digest);
        hex(digest, sizeof digest, out);
        return 0;
}

/* Compares every byte whatever differs first: the time taken says nothing of the key. */
static bool
same_signature(const char *a, const char *b, size_t len)
{
        unsigned char d = 0;
        for (size_t i = 0; i < len; i++)
                d |= (unsigned char) (a[i] ^ b[i]);
        return d == 0;
}

int
kernel_wire_send(void *sock, const char *key, const char *header, const char *content,
                 msp_err *err)
{
        const void *part[4] = { header, "{}", "{}", content };
        size_t len[4] = { strlen(header), 2, 2, strlen(content) };
        char sig[SIG_HEX + 1];
        int r = sign(key, part, len, sig, err);
        if (r < 0)
                return r;
        /* DONTWAIT: a peer that does not read fills the high-water mark; that is -EAGAIN
         * for the caller, never a blocked loop. libzmq sends the parts atomically. */
        if (zmq_send(sock, DELIM, strlen(DELIM), ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0 ||
            zmq_send(sock, sig, SIG_HEX, ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0)
                return msp_err_sys(err, errno, "kernel: send");
        for (size_t i = 0; i < 4; i++)
                if (zmq_send(sock, part[i], len[i], (i < 3 ? ZMQ_SNDMORE : 0) | ZMQ_DONTWAIT) < 0)
                        return msp_err_sys(err, errno, "kernel: send");
        return 0;
}

typedef struct parts {
        zmq_msg_t msg[PARTS_MAX];
        size_t n;
} parts;

static void
parts_close(parts *p)
{
        for (size_t i = 0; i < p->n; i++)
                zmq_msg_close(&p->msg[i]);
        p->n = 0;
}

/* All parts of the next message; those beyond PARTS_MAX (buffers) are read and dropped. */
static int
recv_parts(void *sock, parts *p, msp_err *err)
{
        p->n = 0;
        for (;;) {
                zmq_msg_t m;
                zmq_msg_init(&m);
                if (zmq_msg_recv(&m, sock, ZMQ_DONTWAIT) < 0) {
                        int e = errno;
                        zmq_msg_close(&m);
                        if (e == EAGAIN && p->n == 0)
                                return 0;
                        parts_close(p);
                        return msp_err_sys(err, e, "kernel: receive");
                }
                bool more = zmq_msg_more(&m);
                if (p->n < PARTS_MAX)
                        p->msg[p->n++] = m;
                else
                        zmq_msg_close(&m);
                if (!more)
                        return 1;
        }
}

static const char *
part_data(parts *p, size_t i, size_t *len)
{
        *len = zmq_msg_size(&p->msg[i]);
        return zmq_msg_data(&p->msg[i]);
}

static int
parse_part(parts *p, size_t i, const char *what, oci_json_doc **doc, msp_err *err)
{
        size_t len;
        const char *data = part_data(p, i, &len);
        int r = oci_json_parse_limits(what, data, len, MCP_KERNEL_PART_MAX, MCP_KERNEL_PART_MAX,
                                      doc, err);
        if (r < 0)
                return r;
        if (!kernel_json_is(oci_json_doc_root(*doc), OCI_JSON_OBJECT))
                return msp_err_set(err, EBADMSG, "kernel: %s is not an object", what);
        return 0;
}

static int
verify_and_parse(parts *p, const char *key, kernel_msg *m, msp_err *err)
{
        size_t d = 0, len;
        while (d < p->n && d <= IDS_MAX) {
                const char *data = part_data(p, d, &len);
                if (len == strlen(DELIM) && memcmp(data, DELIM, len) == 0)
                        break;
                d++;
        }
        if (d >= p->n || d > IDS_MAX || p->n < d + 6)
                return msp_err_set(err, EBADMSG, "kernel: not a Jupyter message");
        const void *part[4];
        size_t plen[4];
        for (size_t i = 0; i < 4; i++)
                part[i] = part_data(p, d + 2 + i, &plen[i]);
        char want[SIG_HEX + 1];
        int r = sign(key, part, plen, want, err);
        if (r < 0)
                return r;
        const char *sig = part_data(p, d + 1, &len);
        if (len != SIG_HEX || !same_signature(sig, want, SIG_HEX))
                return msp_err_set(err, EBADMSG, len ? "kernel: bad signature" : "kernel: unsigned message");

        r = parse_part(p, d + 2, "kernel: header", &m->header, err);
        if (r >= 0)
                r = parse_part(p, d + 3, "kernel: parent_header", &m->parent, err);
        if (r >= 0)
                r = parse_part(p, d + 5, "kernel: content", &m->content, err);
        if (r < 0)
                return -EBADMSG;
        m->msg_type = kernel_json_str(oci_json_get(oci_json_doc_root(m->header), "msg_type"));
        if (!m->msg_type)
                return msp_err_set(err, EBADMSG, "kernel: header without msg_type");
        m->parent_id = kernel_json_str(oci_json_get(oci_json_doc_root(m->parent), "msg_id"));
        if (!m->parent_id)
                m->parent_id = "";
        return 0;
}

int
kernel_wire_recv(void *sock, const char *key, kernel_msg *m, msp_err *err)
{
        *m = (kernel_msg){ 0 };
        parts p;
        int r = recv_parts(sock, &p, err);
        if (r <= 0)
                return r;
        r = verify_and_parse(&p, key, m, err);
        parts_close(&p);
        if (r < 0) {
                kernel_msg_clear(m);
                return -EBADMSG;
        }
        return 1;
}
