/* The D-Bus wire format (little endian only: msp's hosts and their managers are) and a
 * unix socket connection, after the D-Bus specification: every value aligned to its
 * size (8 for structs, dict entries and the body), padding bytes zero, strings with a
 * u32 length and a nul, signatures with a byte length, arrays with a u32 length that
 * excludes the padding before the first element; a header of 16 fixed bytes and an array
 * of (code, variant) fields, padded to 8 before the body. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "lib/cgroup/dbus.h"
#include "oci/oci.h"

#define ARRAY_MAX (64u << 20)   /* the specification's limit on an array's length */

enum { F_PATH = 1, F_IFACE, F_MEMBER, F_ERROR, F_REPLY, F_DEST, F_SENDER, F_SIG, F_FDS };

/* --- writing --- */

void
rt_dbus_w_init(rt_dbus_w *w)
{
        w->len = 0;
        w->bad = false;
}

bool
rt_dbus_w_ok(const rt_dbus_w *w)
{
        return !w->bad;
}

static void
w_pad(rt_dbus_w *w, size_t align)
{
        while (!w->bad && w->len % align) {
                if (w->len >= sizeof w->buf)
                        w->bad = true;
                else
                        w->buf[w->len++] = 0;
        }
}

static void
w_put(rt_dbus_w *w, const void *p, size_t n)
{
        if (w->bad || n > sizeof w->buf - w->len) {
                w->bad = true;
                return;
        }
        memcpy(w->buf + w->len, p, n);
        w->len += n;
}

static void
w_le32(uint8_t *p, uint32_t v)
{
        for (int i = 0; i < 4; i++)
                p[i] = (uint8_t) (v >> (8 * i));
}

void
rt_dbus_w_byte(rt_dbus_w *w, uint8_t v)
{
        w_put(w, &v, 1);
}

void
rt_dbus_w_u32(rt_dbus_w *w, uint32_t v)
{
        uint8_t b[4];

        w_pad(w, 4);
        w_le32(b, v);
        w_put(w, b, 4);
}

void
rt_dbus_w_bool(rt_dbus_w *w, bool v)
{
        rt_dbus_w_u32(w, v ? 1 : 0);
}

void
rt_dbus_w_u64(rt_dbus_w *w, uint64_t v)
{
        uint8_t b[8];

        w_pad(w, 8);
        for (int i = 0; i < 8; i++)
                b[i] = (uint8_t) (v >> (8 * i));
        w_put(w, b, 8);
}

void
rt_dbus_w_str(rt_dbus_w *w, char type, const char *s)
{
        size_t n = strlen(s);

        if (type == 'g') {
                if (n > 255)
                        w->bad = true;
                rt_dbus_w_byte(w, (uint8_t) n);
        } else if (type == 's' || type == 'o') {
                if (n > UINT32_MAX - 1)
                        w->bad = true;
                rt_dbus_w_u32(w, (uint32_t) n);
        } else {
                w->bad = true;
        }
        w_put(w, s, n + 1);
}

size_t
rt_dbus_w_array_begin(rt_dbus_w *w, size_t elem_align)
{
        size_t at;

        rt_dbus_w_u32(w, 0);
        at = w->len;
        w_pad(w, elem_align);
        /* the handle: where the length is, and (high bits) where the elements start */
        return (at - 4) | (w->len << 20);
}

void
rt_dbus_w_array_end(rt_dbus_w *w, size_t handle)
{
        size_t at = handle & ((1u << 20) - 1), start = handle >> 20;

        if (w->bad)
                return;
        if (at + 4 > w->len || start > w->len || w->len - start > ARRAY_MAX) {
                w->bad = true;
                return;
        }
        w_le32(w->buf + at, (uint32_t) (w->len - start));
}

void
rt_dbus_w_struct(rt_dbus_w *w)
{
        w_pad(w, 8);
}

void
rt_dbus_w_variant(rt_dbus_w *w, const char *sig)
{
        rt_dbus_w_str(w, 'g', sig);
}

static void
w_field(rt_dbus_w *w, uint8_t code, char type, const char *s)
{
        char sig[2] = { type, '\0' };

        rt_dbus_w_struct(w);
        rt_dbus_w_byte(w, code);
        rt_dbus_w_variant(w, sig);
        rt_dbus_w_str(w, type, s);
}

int
rt_dbus_build_call(rt_dbus_w *out, uint32_t serial, const char *dest, const char *path,
                   const char *iface, const char *member, const char *sig,
                   const rt_dbus_w *body)
{
        size_t fields;

        if (!rt_dbus_w_ok(body) || serial == 0)
                return -EINVAL;
        rt_dbus_w_init(out);
        w_put(out, "l", 1);
        rt_dbus_w_byte(out, RT_DBUS_CALL);
        rt_dbus_w_byte(out, 0);
        rt_dbus_w_byte(out, 1);
        rt_dbus_w_u32(out, (uint32_t) body->len);
        rt_dbus_w_u32(out, serial);
        fields = rt_dbus_w_array_begin(out, 8);
        w_field(out, F_PATH, 'o', path);
        if (iface)
                w_field(out, F_IFACE, 's', iface);
        w_field(out, F_MEMBER, 's', member);
        if (dest)
                w_field(out, F_DEST, 's', dest);
        if (*sig)
                w_field(out, F_SIG, 'g', sig);
        rt_dbus_w_array_end(out, fields);
        w_pad(out, 8);
        w_put(out, body->buf, body->len);
        return out->bad ? -EMSGSIZE : 0;
}

/* --- reading --- */

void
rt_dbus_r_init(rt_dbus_r *r, const uint8_t *buf, size_t len)
{
        r->buf = buf;
        r->len = len;
        r->pos = 0;
}

static uint32_t
le32(const uint8_t *p)
{
        return (uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16 | (uint32_t) p[3] << 24;
}

static int
r_pad(rt_dbus_r *r, size_t align)
{
        while (r->pos % align) {
                if (r->pos >= r->len || r->buf[r->pos] != 0)
                        return -EBADMSG;
                r->pos++;
        }
        return 0;
}

static int
r_need(const rt_dbus_r *r, size_t n)
{
        return n <= r->len - r->pos ? 0 : -EBADMSG;
}

int
rt_dbus_r_u32(rt_dbus_r *r, uint32_t *v)
{
        int e = r_pad(r, 4);

        if (e < 0 || (e = r_need(r, 4)) < 0)
                return e;
        *v = le32(r->buf + r->pos);
        r->pos += 4;
        return 0;
}

int
rt_dbus_r_bool(rt_dbus_r *r, bool *v)
{
        uint32_t u;
        int e = rt_dbus_r_u32(r, &u);

        if (e < 0)
                return e;
        if (u > 1)
                return -EBADMSG;
        *v = u;
        return 0;
}

int
rt_dbus_r_str(rt_dbus_r *r, char type, const char **v)
{
        uint32_t n;
        int e;

        if (type == 'g') {
                if ((e = r_need(r, 1)) < 0)
                        return e;
                n = r->buf[r->pos++];
        } else if (type == 's' || type == 'o') {
                if ((e = rt_dbus_r_u32(r, &n)) < 0)
                        return e;
        } else {
                return -EINVAL;
        }
        if (n >= r->len - r->pos || r->buf[r->pos + n] != '\0' || memchr(r->buf + r->pos, '\0', n))
                return -EBADMSG;
        *v = (const char *) r->buf + r->pos;
        r->pos += (size_t) n + 1;
        return 0;
}

static size_t
type_align(char t)
{
        switch (t) {
        case 'y': case 'g': case 'v':
                return 1;
        case 'n': case 'q':
                return 2;
        case 'b': case 'i': case 'u': case 's': case 'o': case 'a': case 'h':
                return 4;
        case 'x': case 't': case 'd': case '(': case '{':
                return 8;
        default:
                return 0;
        }
}

/* Past one single complete type of a signature; NULL when it is not one. */
static const char *
sig_next(const char *sig, int depth)
{
        char t = *sig;

        if (!type_align(t) || depth > 64)
                return NULL;
        if (t == 'a')
                return sig_next(sig + 1, depth + 1);
        if (t == '(' || t == '{') {
                char close = t == '(' ? ')' : '}';
                sig++;
                if (*sig == close)
                        return NULL;
                while (*sig != close) {
                        if (!(sig = sig_next(sig, depth + 1)))
                                return NULL;
                }
                return sig + 1;
        }
        return sig + 1;
}

/* Depth bounds the recursion (the specification allows 32 levels each of arrays and
 * structs). */
static int
r_skip(rt_dbus_r *r, const char **sig, int depth)
{
        char t = **sig;
        size_t align = type_align(t);
        const char *s, *after = sig_next(*sig, depth);
        uint32_t n;
        int e;

        if (!after)
                return -EBADMSG;
        switch (t) {
        case 's': case 'o': case 'g':
                e = rt_dbus_r_str(r, t, &s);
                break;
        case 'b': {
                bool b;
                e = rt_dbus_r_bool(r, &b);
                break;
        }
        case 'v': {
                const char *inner;
                if ((e = rt_dbus_r_str(r, 'g', &inner)) < 0)
                        return e;
                if ((e = r_skip(r, &inner, depth + 1)) < 0)
                        return e;
                e = *inner ? -EBADMSG : 0;      /* a single complete type */
                break;
        }
        case 'a': {
                size_t end;
                if ((e = rt_dbus_r_u32(r, &n)) < 0)
                        return e;
                if (n > ARRAY_MAX || (e = r_pad(r, type_align((*sig)[1]))) < 0 || (e = r_need(r, n)) < 0)
                        return e < 0 ? e : -EBADMSG;
                end = r->pos + n;
                while (r->pos < end) {
                        const char *each = *sig + 1;
                        if ((e = r_skip(r, &each, depth + 1)) < 0)
                                return e;
                }
                e = r->pos == end ? 0 : -EBADMSG;
                break;
        }
        case '(': case '{': {
                const char *m = *sig + 1;
                if ((e = r_pad(r, 8)) < 0)
                        return e;
                while (m < after - 1)
                        if ((e = r_skip(r, &m, depth + 1)) < 0)
                                return e;
                break;
        }
        default:
                if ((e = r_pad(r, align)) < 0 || (e = r_need(r, align)) < 0)
                        return e;
                r->pos += align;
        }
        if (e == 0)
                *sig = after;
        return e;
}

int
rt_dbus_r_skip(rt_dbus_r *r, const char **sig)
{
        return r_skip(r, sig, 0);
}

/* The whole length from the fixed header (16 bytes at buf): 0, or -EBADMSG /
 * -EPROTONOSUPPORT. The specification's limit on a message is 128 MiB. */
static int
msg_total(const uint8_t *buf, uint64_t *total)
{
        uint64_t fields, body;

        if (buf[0] != 'l')
                return buf[0] == 'B' ? -EPROTONOSUPPORT : -EBADMSG;
        if (buf[3] != 1)
                return -EBADMSG;
        body = le32(buf + 4);
        fields = le32(buf + 12);
        if (fields > ARRAY_MAX || body > (128u << 20))
                return -EBADMSG;
        *total = 16 + ((fields + 7) & ~(uint64_t) 7) + body;
        return *total > (128u << 20) ? -EBADMSG : 0;
}

long
rt_dbus_msg_size(const uint8_t *buf, size_t len)
{
        uint64_t total;
        int e;

        if (len < 16)
                return 0;
        if ((e = msg_total(buf, &total)) < 0)
                return e;
        return total > RT_DBUS_MSG_MAX ? -EMSGSIZE : (long) total;
}

/* One header field: its variant's signature must be the one the specification gives the
 * code; unknown codes are skipped as the specification requires. */
static int
r_field(rt_dbus_r *r, rt_dbus_msg *m)
{
        static const char want[] = { [F_PATH] = 'o', [F_IFACE] = 's', [F_MEMBER] = 's',
                                     [F_ERROR] = 's', [F_REPLY] = 'u', [F_DEST] = 's',
                                     [F_SENDER] = 's', [F_SIG] = 'g', [F_FDS] = 'u' };
        const char *sig, **slot = NULL;
        uint8_t code;
        int e;

        if ((e = r_pad(r, 8)) < 0 || (e = r_need(r, 1)) < 0)
                return e;
        code = r->buf[r->pos++];
        if ((e = rt_dbus_r_str(r, 'g', &sig)) < 0)
                return e;
        if (code == 0)
                return -EBADMSG;
        if (code >= sizeof want) {
                if ((e = r_skip(r, &sig, 1)) < 0)
                        return e;
                return *sig ? -EBADMSG : 0;
        }
        if (sig[0] != want[code] || sig[1] != '\0')
                return -EBADMSG;
        switch (code) {
        case F_PATH: slot = &m->path; break;
        case F_IFACE: slot = &m->iface; break;
        case F_MEMBER: slot = &m->member; break;
        case F_ERROR: slot = &m->error_name; break;
        case F_DEST: { const char *d; return rt_dbus_r_str(r, 's', &d); }
        case F_SENDER: slot = &m->sender; break;
        case F_SIG: slot = &m->sig; break;
        case F_REPLY: return rt_dbus_r_u32(r, &m->reply_serial);
        default: { uint32_t fds; return rt_dbus_r_u32(r, &fds); }
        }
        return rt_dbus_r_str(r, want[code], slot);
}

int
rt_dbus_parse(const uint8_t *buf, size_t len, rt_dbus_msg *m)
{
        long size = rt_dbus_msg_size(buf, len);
        uint32_t fields_len;
        rt_dbus_r r;
        size_t end;
        int e;

        if (size <= 0)
                return size < 0 ? (int) size : -EBADMSG;
        if ((size_t) size != len)
                return -EBADMSG;
        memset(m, 0, sizeof *m);
        m->type = buf[1];
        m->flags = buf[2];
        m->serial = le32(buf + 8);
        m->sig = "";
        if (m->type < RT_DBUS_CALL || m->type > RT_DBUS_SIGNAL || m->serial == 0)
                return -EBADMSG;
        rt_dbus_r_init(&r, buf, len);
        r.pos = 12;
        if ((e = rt_dbus_r_u32(&r, &fields_len)) < 0)
                return e;
        end = r.pos + fields_len;
        while (r.pos < end)
                if ((e = r_field(&r, m)) < 0)
                        return e;
        if (r.pos != end || (e = r_pad(&r, 8)) < 0)
                return -EBADMSG;
        m->body = buf + r.pos;
        m->body_len = len - r.pos;
        if (m->body_len != le32(buf + 4))
                return -EBADMSG;
        /* what each type requires */
        if ((m->type == RT_DBUS_CALL && (!m->path || !m->member)) ||
            (m->type == RT_DBUS_SIGNAL && (!m->path || !m->iface || !m->member)) ||
            (m->type == RT_DBUS_ERROR && (!m->error_name || !m->reply_serial)) ||
            (m->type == RT_DBUS_RETURN && !m->reply_serial))
                return -EBADMSG;
        if (!*m->sig && m->body_len)
                return -EBADMSG;
        if (*m->sig) {          /* the body holds exactly its signature's values */
                const char *s = m->sig;
                rt_dbus_r_init(&r, m->body, m->body_len);
                while (*s)
                        if ((e = r_skip(&r, &s, 0)) < 0)
                                return e;
                if (r.pos != r.len)
                        return -EBADMSG;
        }
        return 0;
}

/* --- the connection --- */

long long
rt_dbus_deadline(int timeout_ms)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (long long) ts.tv_sec * 1000 + ts.tv_nsec / 1000000 + timeout_ms;
}

/* Wait for events on the socket until the deadline: 0, or -ETIMEDOUT / -errno. */
static int
wait_fd(int fd, short events, long long deadline)
{
        for (;;) {
                struct pollfd p = { .fd = fd, .events = events };
                long long left = deadline - rt_dbus_deadline(0);
                int n;

                if (left <= 0)
                        return -ETIMEDOUT;
                n = poll(&p, 1, left > 60000 ? 60000 : (int) left);
                if (n < 0 && errno != EINTR)
                        return -errno;
                if (n > 0)
                        return 0;
        }
}

static int
send_all(int fd, const void *p, size_t n, long long deadline)
{
        const uint8_t *b = p;

        while (n) {
                ssize_t k = send(fd, b, n, MSG_NOSIGNAL | MSG_DONTWAIT);
                if (k < 0 && (errno == EAGAIN || errno == EINTR)) {
                        int e = wait_fd(fd, POLLOUT, deadline);
                        if (e < 0)
                                return e;
                        continue;
                }
                if (k < 0)
                        return -errno;
                b += k;
                n -= (size_t) k;
        }
        return 0;
}

/* More bytes into c->in: 0, -ECONNRESET at end of stream, -ETIMEDOUT, -EMSGSIZE. */
static int
fill(rt_dbus *c, long long deadline)
{
        for (;;) {
                ssize_t k;

                if (c->in_len == sizeof c->in)
                        return -EMSGSIZE;
                k = recv(c->fd, c->in + c->in_len, sizeof c->in - c->in_len, MSG_DONTWAIT);
                if (k > 0) {
                        c->in_len += (size_t) k;
                        return 0;
                }
                if (k == 0)
                        return -ECONNRESET;
                if (errno != EAGAIN && errno != EINTR)
                        return -errno;
                k = wait_fd(c->fd, POLLIN, deadline);
                if (k < 0)
                        return (int) k;
        }
}

/* The uid the server sees (SO_PEERCRED): euid, mapped out of a user namespace one level
 * deep (rootless podman runs the runtime as root of the user's namespace). */
static uid_t
outer_uid(void)
{
        uid_t euid = geteuid();
        unsigned long in, out, count;
        FILE *f = fopen("/proc/self/uid_map", "re");

        if (!f)
                return euid;
        while (fscanf(f, "%lu %lu %lu", &in, &out, &count) == 3) {
                if (euid >= in && euid - in < count) {
                        fclose(f);
                        return (uid_t) (out + (euid - in));
                }
        }
        fclose(f);
        return euid;
}

/* The SASL exchange: a nul byte, AUTH EXTERNAL with the uid in hex of its decimal
 * digits, the server's "OK <guid>", BEGIN. */
static int
authenticate(rt_dbus *c, long long deadline, msp_err *err)
{
        char uid[16], cmd[64], *nl;
        size_t n = 0;
        int e;

        snprintf(uid, sizeof uid, "%u", (unsigned) outer_uid());
        n = (size_t) snprintf(cmd, sizeof cmd, "%cAUTH EXTERNAL ", '\0');
        for (const char *p = uid; *p; p++)
                n += (size_t) snprintf(cmd + n, sizeof cmd - n, "%02x", (unsigned char) *p);
        n += (size_t) snprintf(cmd + n, sizeof cmd - n, "\r\n");
        if ((e = send_all(c->fd, cmd, n, deadline)) < 0)
                return msp_err_sys(err, -e, "D-Bus AUTH EXTERNAL");
        while (!(nl = memchr(c->in, '\n', c->in_len)))
                if ((e = fill(c, deadline)) < 0)
                        return msp_err_sys(err, -e, "D-Bus authentication reply");
        if (c->in_len < 3 || memcmp(c->in, "OK ", 3) != 0) {
                int len = (int) (nl - (char *) c->in);
                return msp_err_set(err, EACCES, "D-Bus authentication refused: '%.*s'",
                                   len > 0 && c->in[len - 1] == '\r' ? len - 1 : len, c->in);
        }
        /* nothing of the binary protocol may come before BEGIN */
        if ((size_t) (nl + 1 - (char *) c->in) != c->in_len)
                return msp_err_set(err, EPROTO, "D-Bus: data after the authentication reply");
        c->in_len = 0;
        if ((e = send_all(c->fd, "BEGIN\r\n", 7, deadline)) < 0)
                return msp_err_sys(err, -e, "D-Bus BEGIN");
        return 0;
}

uint32_t
rt_dbus_next_serial(rt_dbus *c)
{
        if (++c->serial == 0)
                c->serial = 1;
        return c->serial;
}

int
rt_dbus_send(rt_dbus *c, const rt_dbus_w *msg, int timeout_ms, msp_err *err)
{
        int e = send_all(c->fd, msg->buf, msg->len, rt_dbus_deadline(timeout_ms));

        return e < 0 ? msp_err_sys(err, -e, "D-Bus send") : 0;
}

int
rt_dbus_recv(rt_dbus *c, long long deadline, rt_dbus_msg *m, msp_err *err)
{
        long size;
        int e;

        /* drop the message returned last */
        memmove(c->in, c->in + c->in_used, c->in_len - c->in_used);
        c->in_len -= c->in_used;
        c->in_used = 0;
        for (;;) {
                /* a message too large for the buffer (no reply msp waits for is one, a
                 * broadcast may be): dropped as its bytes arrive */
                if (c->skip) {
                        size_t n = c->skip < c->in_len ? (size_t) c->skip : c->in_len;
                        memmove(c->in, c->in + n, c->in_len - n);
                        c->in_len -= n;
                        c->skip -= n;
                        if (c->skip && (e = fill(c, deadline)) < 0)
                                return msp_err_sys(err, -e, "D-Bus receive");
                        continue;
                }
                size = rt_dbus_msg_size(c->in, c->in_len);
                if (size == -EMSGSIZE) {
                        uint64_t total = 0;
                        (void) msg_total(c->in, &total);
                        c->skip = total;
                        continue;
                }
                if (size < 0)
                        return msp_err_set(err, (int) -size, "D-Bus: a message that cannot be one (%s)",
                                           strerror((int) -size));
                if (size > 0 && c->in_len >= (size_t) size)
                        break;
                if ((e = fill(c, deadline)) < 0)
                        return msp_err_sys(err, -e, "D-Bus receive");
        }
        if ((e = rt_dbus_parse(c->in, (size_t) size, m)) < 0)
                return msp_err_set(err, -e, "D-Bus: a malformed message");
        c->in_used = (size_t) size;
        return 0;
}

void
rt_dbus_close(rt_dbus *c)
{
        if (c->fd >= 0)
                close(c->fd);
        c->fd = -1;
}

/* Hello: a bus gives the connection its unique name and answers nothing else before. */
static int
hello(rt_dbus *c, long long deadline, msp_err *err)
{
        rt_dbus_w body, msg;
        rt_dbus_msg m;
        uint32_t serial = rt_dbus_next_serial(c);
        int e;

        rt_dbus_w_init(&body);
        if ((e = rt_dbus_build_call(&msg, serial, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                    "org.freedesktop.DBus", "Hello", "", &body)) < 0)
                return msp_err_sys(err, -e, "D-Bus Hello");
        if ((e = send_all(c->fd, msg.buf, msg.len, deadline)) < 0)
                return msp_err_sys(err, -e, "D-Bus Hello");
        for (;;) {
                if ((e = rt_dbus_recv(c, deadline, &m, err)) < 0)
                        return msp_err_prefix(err, "D-Bus Hello");
                if (m.reply_serial != serial || m.type == RT_DBUS_SIGNAL)
                        continue;
                if (m.type == RT_DBUS_ERROR)
                        return msp_err_set(err, EPROTO, "D-Bus Hello: %s", m.error_name);
                return 0;
        }
}

int
rt_dbus_open(rt_dbus *c, const char *socket_path, bool bus, int timeout_ms, msp_err *err)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        long long deadline = rt_dbus_deadline(timeout_ms);
        int e;

        c->fd = -1;
        c->serial = 0;
        c->in_len = c->in_used = 0;
        c->skip = 0;
        if (strlen(socket_path) >= sizeof sa.sun_path)
                return msp_err_set(err, ENAMETOOLONG, "D-Bus socket '%s': path too long", socket_path);
        strcpy(sa.sun_path, socket_path);
        c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (c->fd < 0)
                return msp_err_sys(err, errno, "D-Bus socket");
        if (connect(c->fd, (struct sockaddr *) &sa, sizeof sa) < 0) {
                e = msp_err_sys(err, errno, "connect '%s'", socket_path);
                rt_dbus_close(c);
                return e;
        }
        if ((e = authenticate(c, deadline, err)) < 0 || (bus && (e = hello(c, deadline, err)) < 0)) {
                msp_err_prefix(err, "'%s'", socket_path);
                rt_dbus_close(c);
                return e;
        }
        return 0;
}
