/* The D-Bus wire format of runtime/lib/cgroup/dbus.c against byte strings worked out by
 * hand from the specification's rules, malformed messages refused, and the SASL exchange
 * and Hello against a peer on a real unix socket. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/cgroup/dbus.h"

#include "tests/lib/tap.h"

/* A body "su" ("ab", 7): the u32 length, the bytes and nul, one byte to align the u32. */
static void
test_body_alignment(void)
{
        static const uint8_t want[] = { 2, 0, 0, 0, 'a', 'b', 0, 0, 7, 0, 0, 0 };
        rt_dbus_w w;

        rt_dbus_w_init(&w);
        rt_dbus_w_str(&w, 's', "ab");
        rt_dbus_w_u32(&w, 7);
        CHECK(rt_dbus_w_ok(&w));
        CHECK(w.len == sizeof want && memcmp(w.buf, want, sizeof want) == 0);
}

/* An array of (sv) after a byte: the length excludes the padding before the first element. */
static void
test_array_of_structs(void)
{
        rt_dbus_w w;
        size_t a;

        rt_dbus_w_init(&w);
        rt_dbus_w_byte(&w, 9);
        a = rt_dbus_w_array_begin(&w, 8);
        rt_dbus_w_struct(&w);
        rt_dbus_w_str(&w, 's', "A");            /* 8: len 1, 12: 'A' 0 */
        rt_dbus_w_variant(&w, "t");              /* 14: 1 't' 0 */
        rt_dbus_w_u64(&w, 0x0102030405060708u);  /* 17 -> 24: the u64 */
        rt_dbus_w_array_end(&w, a);
        CHECK(rt_dbus_w_ok(&w));
        static const uint8_t bytes[] = {
                9, 0, 0, 0, 24, 0, 0, 0,
                1, 0, 0, 0, 'A', 0, 1, 't', 0, 0, 0, 0, 0, 0, 0, 0,
                8, 7, 6, 5, 4, 3, 2, 1,
        };
        CHECK(w.len == sizeof bytes && memcmp(w.buf, bytes, sizeof bytes) == 0);
        /* and it reads back as a(sv) */
        rt_dbus_r r;
        const char *sig = "ya(sv)";
        rt_dbus_r_init(&r, w.buf, w.len);
        CHECK(rt_dbus_r_skip(&r, &sig) == 0 && rt_dbus_r_skip(&r, &sig) == 0);
        CHECK(*sig == '\0' && r.pos == w.len);
}

/* Method call, serial 1, path "/", member "M": fields PATH and MEMBER, each a struct
 * aligned to 8, and the header padded to 8. */
static const uint8_t call_bytes[] = {
        'l', 1, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 26, 0, 0, 0,
        1, 1, 'o', 0, 1, 0, 0, 0, '/', 0, 0, 0, 0, 0, 0, 0,
        3, 1, 's', 0, 1, 0, 0, 0, 'M', 0, 0, 0, 0, 0, 0, 0,
};

static void
test_build_call(void)
{
        rt_dbus_w body, msg;
        rt_dbus_msg m;

        rt_dbus_w_init(&body);
        CHECK(rt_dbus_build_call(&msg, 1, NULL, "/", NULL, "M", "", &body) == 0);
        CHECK(msg.len == sizeof call_bytes && memcmp(msg.buf, call_bytes, sizeof call_bytes) == 0);
        CHECK(rt_dbus_parse(msg.buf, msg.len, &m) == 0);
        CHECK(m.type == RT_DBUS_CALL && m.serial == 1 && strcmp(m.path, "/") == 0 &&
              strcmp(m.member, "M") == 0 && !m.iface && m.body_len == 0);
}

/* An error reply to serial 1: ERROR_NAME "E", REPLY_SERIAL 1, SIGNATURE "s", body "m". */
static const uint8_t error_bytes[] = {
        'l', 3, 1, 1, 6, 0, 0, 0, 5, 0, 0, 0, 31, 0, 0, 0,
        4, 1, 's', 0, 1, 0, 0, 0, 'E', 0, 0, 0, 0, 0, 0, 0,
        5, 1, 'u', 0, 1, 0, 0, 0,
        8, 1, 'g', 0, 1, 's', 0, 0,
        1, 0, 0, 0, 'm', 0,
};

static int
parse_changed(size_t at, uint8_t v, size_t len)
{
        uint8_t b[sizeof error_bytes];
        rt_dbus_msg m;

        memcpy(b, error_bytes, sizeof b);
        if (at < sizeof b)
                b[at] = v;
        return rt_dbus_parse(b, len, &m);
}

static void
test_parse_error_reply(void)
{
        rt_dbus_msg m;
        rt_dbus_r r;
        const char *text;

        CHECK(rt_dbus_msg_size(error_bytes, 15) == 0);
        CHECK(rt_dbus_msg_size(error_bytes, 16) == (long) sizeof error_bytes);
        CHECK(rt_dbus_parse(error_bytes, sizeof error_bytes, &m) == 0);
        CHECK(m.type == RT_DBUS_ERROR && m.serial == 5 && m.reply_serial == 1);
        CHECK(strcmp(m.error_name, "E") == 0 && strcmp(m.sig, "s") == 0);
        rt_dbus_r_init(&r, m.body, m.body_len);
        CHECK(rt_dbus_r_str(&r, 's', &text) == 0 && strcmp(text, "m") == 0);
}

static void
test_parse_malformed(void)
{
        size_t n = sizeof error_bytes;

        CHECK(parse_changed(n, 0, n - 1) == -EBADMSG);          /* truncated */
        CHECK(parse_changed(4, 7, n) == -EBADMSG);              /* body length too long */
        CHECK(parse_changed(12, 32, n) == -EBADMSG);            /* fields length too long */
        CHECK(parse_changed(12, 30, n) == -EBADMSG);            /* ... too short */
        CHECK(parse_changed(30, 0xff, n) == -EBADMSG);          /* padding not zero */
        CHECK(parse_changed(45, 'u', n) == -EBADMSG);           /* body is not its signature */
        CHECK(parse_changed(34, 's', n) == -EBADMSG);           /* REPLY_SERIAL not a u */
        CHECK(parse_changed(53, 'x', n) == -EBADMSG);           /* string without its nul */
        CHECK(parse_changed(48, 9, n) == -EBADMSG);             /* string length past the end */
        CHECK(parse_changed(1, 9, n) == -EBADMSG);              /* no such message type */
        CHECK(parse_changed(8, 0, n) == -EBADMSG);              /* serial 0 */
        CHECK(parse_changed(36, 0, n) == -EBADMSG);             /* error reply to serial 0 */
        CHECK(parse_changed(0, 'B', n) == -EPROTONOSUPPORT);    /* big endian */
        CHECK(parse_changed(0, 'x', n) == -EBADMSG);
        CHECK(parse_changed(3, 2, n) == -EBADMSG);              /* protocol version */
        /* an array whose length is not a whole number of its elements */
        rt_dbus_r r;
        static const uint8_t arr[] = { 6, 0, 0, 0, 1, 0, 0, 0, 2, 0 };
        const char *sig = "au";
        rt_dbus_r_init(&r, arr, sizeof arr);
        CHECK(rt_dbus_r_skip(&r, &sig) == -EBADMSG);
        sig = "a";
        rt_dbus_r_init(&r, arr, sizeof arr);
        CHECK(rt_dbus_r_skip(&r, &sig) == -EBADMSG);
        sig = "()";
        CHECK(rt_dbus_r_skip(&r, &sig) == -EBADMSG);
}

/* A peer on a unix socket: it must see the nul byte, AUTH EXTERNAL with the uid's digits
 * in hex and, after OK, BEGIN and a Hello call; it answers Hello. */
/* A signal too large for the client's buffer, which it must drop. */
static void
send_big_signal(int s)
{
        static uint8_t big[40000];
        rt_dbus_w h;
        size_t f, n = 20000;

        rt_dbus_w_init(&h);
        rt_dbus_w_byte(&h, 'l');
        rt_dbus_w_byte(&h, RT_DBUS_SIGNAL);
        rt_dbus_w_byte(&h, 0);
        rt_dbus_w_byte(&h, 1);
        rt_dbus_w_u32(&h, (uint32_t) (4 + n + 1));
        rt_dbus_w_u32(&h, 1);
        f = rt_dbus_w_array_begin(&h, 8);
        rt_dbus_w_struct(&h);
        rt_dbus_w_byte(&h, 1);
        rt_dbus_w_variant(&h, "o");
        rt_dbus_w_str(&h, 'o', "/");
        rt_dbus_w_struct(&h);
        rt_dbus_w_byte(&h, 2);
        rt_dbus_w_variant(&h, "s");
        rt_dbus_w_str(&h, 's', "a.b");
        rt_dbus_w_struct(&h);
        rt_dbus_w_byte(&h, 3);
        rt_dbus_w_variant(&h, "s");
        rt_dbus_w_str(&h, 's', "S");
        rt_dbus_w_struct(&h);
        rt_dbus_w_byte(&h, 8);
        rt_dbus_w_variant(&h, "g");
        rt_dbus_w_str(&h, 'g', "s");
        rt_dbus_w_array_end(&h, f);
        rt_dbus_w_struct(&h);
        rt_dbus_w_u32(&h, (uint32_t) n);
        CHECK(rt_dbus_w_ok(&h));
        memcpy(big, h.buf, h.len);
        memset(big + h.len, 'x', n);
        big[h.len + n] = '\0';
        CHECK(rt_dbus_msg_size(big, h.len + n + 1) == -EMSGSIZE);
        size_t left = h.len + n + 1;
        for (uint8_t *p = big; left; ) {
                ssize_t k = write(s, p, left);
                CHECK(k > 0);
                p += k;
                left -= (size_t) k;
        }
}

/* The client: in a user namespace (userns) it is uid 1000 there, 0 outside, and must
 * authenticate as 0, the uid the server sees. */
static void
auth_and_hello(bool userns)
{
        char dir[] = "/tmp/msp-dbus-XXXXXX", path[64];
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int ls, s;
        msp_err e;

        alarm(30);      /* a client that never comes must not hang the test */
        CHECK(mkdtemp(dir));
        snprintf(path, sizeof path, "%s/bus", dir);
        snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
        ls = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        CHECK(ls >= 0 && bind(ls, (struct sockaddr *) &sa, sizeof sa) == 0 && listen(ls, 1) == 0);
        pid_t pid = fork();
        CHECK(pid >= 0);
        if (pid == 0) {
                rt_dbus c = RT_DBUS_INIT;
                if (userns) {
                        unsigned outer = (unsigned) geteuid();
                        CHECK(unshare(CLONE_NEWUSER) == 0);
                        int fd = open("/proc/self/uid_map", O_WRONLY | O_CLOEXEC);
                        CHECK(fd >= 0);
                        char map[32];
                        int len = snprintf(map, sizeof map, "1000 %u 1\n", outer);
                        CHECK(write(fd, map, (size_t) len) == len);
                        close(fd);
                        CHECK(geteuid() == 1000);
                }
                int r = rt_dbus_open(&c, path, true, 5000, &e);
                if (r < 0)
                        printf("# open: %s\n", e.msg);
                _exit(r < 0);
        }
        s = accept4(ls, NULL, NULL, SOCK_CLOEXEC);
        CHECK(s >= 0);
        char want[64], got[256];
        int n = snprintf(want + 1, sizeof want - 1, "AUTH EXTERNAL ") + 1;
        want[0] = '\0';
        char uid[16];
        snprintf(uid, sizeof uid, "%u", (unsigned) geteuid());
        for (char *p = uid; *p; p++)
                n += snprintf(want + n, sizeof want - (size_t) n, "%02x", (unsigned char) *p);
        n += snprintf(want + n, sizeof want - (size_t) n, "\r\n");
        size_t have = 0;
        while (have < (size_t) n) {
                ssize_t k = read(s, got + have, (size_t) n - have);
                CHECK(k > 0);
                have += (size_t) k;
        }
        CHECK(memcmp(got, want, (size_t) n) == 0);
        const char ok[] = "OK 0123456789abcdef0123456789abcdef\r\n";
        CHECK(write(s, ok, sizeof ok - 1) == (ssize_t) sizeof ok - 1);
        /* BEGIN, then the Hello message */
        have = 0;
        long size = 0;
        while (size == 0 || have < 7 + (size_t) size) {
                ssize_t k = read(s, got + have, sizeof got - have);
                CHECK(k > 0);
                have += (size_t) k;
                if (have >= 7 + 16)
                        size = rt_dbus_msg_size((uint8_t *) got + 7, have - 7);
                CHECK(size >= 0);
        }
        CHECK(memcmp(got, "BEGIN\r\n", 7) == 0);
        rt_dbus_msg m;
        CHECK(rt_dbus_parse((uint8_t *) got + 7, (size_t) size, &m) == 0);
        CHECK(strcmp(m.member, "Hello") == 0 && strcmp(m.iface, "org.freedesktop.DBus") == 0);
        send_big_signal(s);
        /* the reply: a return with REPLY_SERIAL and SIGNATURE "s", body the unique name */
        rt_dbus_w reply;
        size_t f;
        rt_dbus_w_init(&reply);
        rt_dbus_w_byte(&reply, 'l');
        rt_dbus_w_byte(&reply, RT_DBUS_RETURN);
        rt_dbus_w_byte(&reply, 0);
        rt_dbus_w_byte(&reply, 1);
        rt_dbus_w_u32(&reply, 9);               /* u32 4, ":1.7", nul */
        rt_dbus_w_u32(&reply, 1);
        f = rt_dbus_w_array_begin(&reply, 8);
        rt_dbus_w_struct(&reply);
        rt_dbus_w_byte(&reply, 5);
        rt_dbus_w_variant(&reply, "u");
        rt_dbus_w_u32(&reply, m.serial);
        rt_dbus_w_struct(&reply);
        rt_dbus_w_byte(&reply, 8);
        rt_dbus_w_variant(&reply, "g");
        rt_dbus_w_str(&reply, 'g', "s");
        rt_dbus_w_array_end(&reply, f);
        rt_dbus_w_struct(&reply);
        rt_dbus_w_str(&reply, 's', ":1.7");
        CHECK(rt_dbus_w_ok(&reply) && rt_dbus_parse(reply.buf, reply.len, &m) == 0);
        CHECK(write(s, reply.buf, reply.len) == (ssize_t) reply.len);
        int st;
        CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
        close(s);
        close(ls);
        unlink(path);
        rmdir(dir);
}

static void
test_auth_and_hello(void)
{
        auth_and_hello(false);
}

static void
test_auth_in_userns(void)
{
        auth_and_hello(true);
}

int
main(void)
{
        static const tap_fork_test t[] = {
                { "body alignment", test_body_alignment },
                { "array of structs", test_array_of_structs },
                { "build a call", test_build_call },
                { "parse an error reply", test_parse_error_reply },
                { "malformed messages refused", test_parse_malformed },
                { "auth and hello, a too large signal dropped", test_auth_and_hello },
                { "auth as the uid outside a user namespace", test_auth_in_userns },
        };
        return tap_run_table(t, ARRAY_SIZE(t));
}
