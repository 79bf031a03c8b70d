/* Private to kernel/: the Jupyter wire format. A message is the multipart
 * [identities..., "<IDS|MSG>", signature, header, parent_header, metadata, content,
 * buffers...]; the signature is the hex HMAC-SHA256 of the four JSON parts under the
 * connection's key. Owner: kernel-wire.c. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "oci/oci.h"

/* A message part (libzmq drops a peer that sends a bigger one). */
#define MCP_KERNEL_PART_MAX (8u * 1024 * 1024)
#define KERNEL_KEY_LEN 64               /* hex of 32 random bytes, the key as written */
#define KERNEL_ID_LEN 32                /* hex of 16 random bytes: msg_id, session */

/* A verified message: its parsed parts. */
typedef struct kernel_msg {
        oci_json_doc *header, *parent, *content;
        const char *msg_type;           /* header.msg_type */
        const char *parent_id;          /* parent_header.msg_id; "" when absent */
} kernel_msg;

void kernel_msg_clear(kernel_msg *m);

/* oci_json's accessors want a node; a kernel may leave any member out. */
static inline const char *
kernel_json_str(const oci_json *v)
{
        return v ? oci_json_string(v) : NULL;
}

static inline const char *
kernel_json_num(const oci_json *v)
{
        return v ? oci_json_number_text(v) : NULL;
}

static inline bool
kernel_json_is(const oci_json *v, oci_json_type t)
{
        return v && oci_json_type_of(v) == t;
}

/* Hex of random bytes: buf gets 2 * n hex digits and a NUL. */
int kernel_random_hex(char *buf, size_t n, msp_err *err);

/* Sends header, an empty parent and metadata, and content, signed with key. */
int kernel_wire_send(void *sock, const char *key, const char *header, const char *content,
                     msp_err *err);
/* 1 and *m filled, 0 when nothing is queued, -EBADMSG for a message refused (unsigned,
 * badly signed, malformed; consumed whole), other -errno. */
int kernel_wire_recv(void *sock, const char *key, kernel_msg *m, msp_err *err);
