/* A minimal D-Bus client: the wire format (little endian) for the few messages msp sends
 * to a systemd manager, parsing of what comes back with every length checked, and a unix
 * socket connection with SASL EXTERNAL and bounded waits. No library: msp links
 * statically and libsystemd has no static archive on Debian. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "oci/oci.h"

/* Large enough for StartTransientUnit with its properties and for the manager's replies
 * and signals; a longer message is refused (-EMSGSIZE), never truncated. */
#define RT_DBUS_MSG_MAX 16384

enum { RT_DBUS_CALL = 1, RT_DBUS_RETURN = 2, RT_DBUS_ERROR = 3, RT_DBUS_SIGNAL = 4 };

/* A writer over a fixed buffer. Offsets are relative to buf, which a message places at an
 * 8-aligned position, so alignment inside it holds in the message. Any overflow or misuse
 * sets bad and later calls do nothing; rt_dbus_w_ok tells. */
typedef struct rt_dbus_w {
        uint8_t buf[RT_DBUS_MSG_MAX];
        size_t len;
        bool bad;
} rt_dbus_w;

void rt_dbus_w_init(rt_dbus_w *w);
bool rt_dbus_w_ok(const rt_dbus_w *w);
void rt_dbus_w_byte(rt_dbus_w *w, uint8_t v);                  /* y */
void rt_dbus_w_bool(rt_dbus_w *w, bool v);                     /* b */
void rt_dbus_w_u32(rt_dbus_w *w, uint32_t v);                  /* u */
void rt_dbus_w_u64(rt_dbus_w *w, uint64_t v);                  /* t */
void rt_dbus_w_str(rt_dbus_w *w, char type, const char *s);    /* s, o (length u32) or g (length y) */
/* An array: begin returns the handle end needs; elem_align is the alignment of the
 * element type (8 for structs and dict entries). */
size_t rt_dbus_w_array_begin(rt_dbus_w *w, size_t elem_align);
void rt_dbus_w_array_end(rt_dbus_w *w, size_t handle);
void rt_dbus_w_struct(rt_dbus_w *w);                           /* the 8-alignment of ( or { */
void rt_dbus_w_variant(rt_dbus_w *w, const char *sig);         /* v: its signature; the value follows */

/* A method call: destination may be NULL (a peer-to-peer connection); sig is the body's
 * signature ("" for none). The message goes into out, built from body. */
int rt_dbus_build_call(rt_dbus_w *out, uint32_t serial, const char *dest, const char *path,
                       const char *iface, const char *member, const char *sig,
                       const rt_dbus_w *body);

/* A parsed message: pointers into the buffer it was parsed from. */
typedef struct rt_dbus_msg {
        uint8_t type, flags;
        uint32_t serial, reply_serial;
        const char *path, *iface, *member, *error_name, *sender, *sig;
        const uint8_t *body;
        size_t body_len;
} rt_dbus_msg;

/* The length of the message that starts at buf, from its fixed 16-byte header: 0 while
 * fewer than 16 bytes are there, -EBADMSG when it cannot be one, -EMSGSIZE when it is
 * longer than RT_DBUS_MSG_MAX. */
long rt_dbus_msg_size(const uint8_t *buf, size_t len);
/* Parse exactly one message of len bytes. 0 or -EBADMSG (-EPROTONOSUPPORT for big endian). */
int rt_dbus_parse(const uint8_t *buf, size_t len, rt_dbus_msg *m);

/* A reader over a body, positions relative to the body (which starts 8-aligned). Every
 * read checks type, bounds, alignment padding (zero) and termination: -EBADMSG. */
typedef struct rt_dbus_r {
        const uint8_t *buf;
        size_t len, pos;
} rt_dbus_r;

void rt_dbus_r_init(rt_dbus_r *r, const uint8_t *buf, size_t len);
int rt_dbus_r_u32(rt_dbus_r *r, uint32_t *v);
int rt_dbus_r_bool(rt_dbus_r *r, bool *v);
int rt_dbus_r_str(rt_dbus_r *r, char type, const char **v);    /* s, o or g */
/* Skip one complete value of the single complete type at *sig; *sig moves past it. */
int rt_dbus_r_skip(rt_dbus_r *r, const char **sig);

/* A connection to a bus (Hello sent) or to a peer (a manager's private socket). */
typedef struct rt_dbus {
        int fd;
        uint32_t serial;
        uint8_t in[RT_DBUS_MSG_MAX];
        size_t in_len, in_used;         /* bytes read; bytes of the message last returned */
        uint64_t skip;                  /* bytes left of a message too large to keep */
} rt_dbus;

#define RT_DBUS_INIT { .fd = -1 }

int rt_dbus_open(rt_dbus *c, const char *socket_path, bool bus, int timeout_ms, msp_err *err);
void rt_dbus_close(rt_dbus *c);
/* Send a built message (its serial from rt_dbus_next_serial). */
uint32_t rt_dbus_next_serial(rt_dbus *c);
int rt_dbus_send(rt_dbus *c, const rt_dbus_w *msg, int timeout_ms, msp_err *err);
/* The next message, valid until the next call; waits at most until the deadline (a
 * CLOCK_MONOTONIC time in ms from rt_dbus_deadline). -ETIMEDOUT when it passes. */
long long rt_dbus_deadline(int timeout_ms);
int rt_dbus_recv(rt_dbus *c, long long deadline, rt_dbus_msg *m, msp_err *err);
