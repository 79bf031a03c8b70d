/* An image blob checked as it streams: every byte a reader uses goes through sha256 and
 * is counted on its way in, and the end compares both with the blob's descriptor. What is
 * checked is therefore exactly what was used, however the file changes under the reader.
 * msp-mcp checks the JSON blobs with it (image-layout.c), msp-mcp-unpack the layers
 * (image-unpack.c). Owner: blob-check.c. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "oci/oci.h"

typedef struct mcp_blob_check {
        void *hash;                     /* the sha256 state (GnuTLS's), owned */
        const char *digest;             /* "sha256:<64 hex>", borrowed */
        uint64_t size;                  /* what the descriptor names */
        uint64_t seen;                  /* bytes fed so far */
} mcp_blob_check;

/* "sha256:" and 64 lowercase hex digits: the only algorithm read. */
bool mcp_blob_digest_valid(const char *digest);
/* -EINVAL (err naming it) for a digest mcp_blob_digest_valid refuses. */
int mcp_blob_check_begin(mcp_blob_check *c, const char *digest, uint64_t size, msp_err *err);
/* -EFBIG once more bytes came than the descriptor names (the blob grew while read). */
int mcp_blob_check_feed(mcp_blob_check *c, const void *data, size_t n, msp_err *err);
/* 0 when the bytes fed are exactly the blob: its size and sha256; err names the blob
 * otherwise. Ends the check either way. */
int mcp_blob_check_end(mcp_blob_check *c, msp_err *err);
/* Abandon a check that is not ended (NULL-safe on an ended one). */
void mcp_blob_check_done(mcp_blob_check *c);
