/* libFuzzer target for msp-mcp's JSON-RPC decoder (mcp-adapter/jsonrpc.c) and the text
 * helpers its replies go through. Beyond the sanitizers it checks that every input gets
 * either a message or exactly one of the JSON-RPC error codes with a non-empty one-line
 * message, that the error reply serialises to one line of JSON that parses again, and
 * that UTF-8 repair and base64 round trips hold. Built only with clang (tests/meson.build);
 * run with tests/fuzz/run-fuzz.sh. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "jsonrpc.h"
#include "text.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_MESSAGE 65536

static void
check_decode(const char *line, size_t len)
{
        mcp_rpc_msg msg;
        mcp_rpc_error e;
        int r = mcp_rpc_decode(line, len, MAX_MESSAGE, &msg, &e);
        if (r == -ENODATA)
                return;
        if (r == 0) {
                /* A message: a method (request or notification) or a client's response. */
                if (!msg.method && msg.id.kind == MCP_ID_NONE)
                        abort();
                if (msg.params && oci_json_type_of(msg.params) != OCI_JSON_OBJECT)
                        abort();
                mcp_rpc_id copy;
                if (mcp_rpc_id_copy(&copy, &msg.id) < 0 || !mcp_rpc_id_equal(&copy, &msg.id))
                        abort();
                mcp_rpc_id_clear(&copy);
                mcp_rpc_msg_clear(&msg);
                return;
        }
        if (e.code != MCP_RPC_PARSE_ERROR && e.code != MCP_RPC_INVALID_REQUEST &&
            e.code != MCP_RPC_INTERNAL_ERROR)
                abort();
        if (!e.message[0] || strchr(e.message, '\n'))
                abort();
        if (e.code == MCP_RPC_PARSE_ERROR && e.id.kind != MCP_ID_NONE)
                abort();
        /* The reply is one line of JSON (the transport falls back to a fixed message when
         * the text quoted from the input is not UTF-8). */
        char *json = NULL;
        size_t jlen = 0;
        if (mcp_rpc_format_error(&e.id, e.code, e.message, &json, &jlen) < 0 &&
            mcp_rpc_format_error(&e.id, e.code, "invalid message", &json, &jlen) < 0)
                abort();
        if (memchr(json, '\n', jlen))
                abort();
        oci_json_doc *doc = NULL;
        msp_err err = { 0 };
        if (oci_json_parse("reply", json, jlen, &doc, &err) < 0)
                abort();
        oci_json_doc_free(doc);
        free(json);
        mcp_rpc_id_clear(&e.id);
}

static void
check_text(const uint8_t *data, size_t size)
{
        size_t n = 0;
        char *fixed = mcp_utf8_sanitize((const char *) data, size, &n);
        if (!fixed || !mcp_utf8_valid(fixed, n) || memchr(fixed, 0, n) || strlen(fixed) != n)
                abort();
        if (mcp_utf8_valid((const char *) data, size) && !memchr(data, 0, size) &&
            (n != size || memcmp(fixed, data, size) != 0))
                abort();
        free(fixed);

        size_t blen = 0;
        char *b64 = mcp_base64_encode(data, size, &blen);
        unsigned char *back = NULL;
        size_t back_len = 0;
        if (!b64 || mcp_base64_decode(b64, blen, &back, &back_len) < 0 || back_len != size ||
            memcmp(back, data, size) != 0)
                abort();
        free(b64);
        free(back);
        /* Decoding arbitrary text must not crash (most of it is refused). */
        if (mcp_base64_decode((const char *) data, size, &back, &back_len) == 0)
                free(back);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        /* The whole input as one line, and each of its lines as the reader splits them. */
        check_decode((const char *) data, size);
        const char *p = (const char *) data, *end = p + size;
        while (p < end) {
                const char *nl = memchr(p, '\n', (size_t) (end - p));
                size_t len = nl ? (size_t) (nl - p) : (size_t) (end - p);
                if (nl || p != (const char *) data)
                        check_decode(p, len);
                p += len + 1;
        }
        check_text(data, size);
        return 0;
}
