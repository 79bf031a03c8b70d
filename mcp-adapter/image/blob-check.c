/* sha256 and size of an image blob as it streams (blob-check.h). */
#include "image/blob-check.h"

#include <errno.h>
#include <gnutls/crypto.h>
#include <stdio.h>
#include <string.h>

bool
mcp_blob_digest_valid(const char *d)
{
        if (!d || strncmp(d, "sha256:", 7) != 0 || strlen(d) != 7 + 64)
                return false;
        for (const char *p = d + 7; *p; p++)
                if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
                        return false;
        return true;
}

int
mcp_blob_check_begin(mcp_blob_check *c, const char *digest, uint64_t size, msp_err *err)
{
        gnutls_hash_hd_t h;
        *c = (mcp_blob_check) { .digest = digest, .size = size };
        /* end compares the hex after "sha256:": nothing else may reach it */
        if (!mcp_blob_digest_valid(digest))
                return msp_err_set(err, EINVAL, "digest \"%.80s\": expected sha256:<64 hex "
                                   "digits>", digest ? digest : "(none)");
        if (gnutls_hash_init(&h, GNUTLS_DIG_SHA256) < 0)
                return msp_err_set(err, ENOMEM, "blob %s: sha256 unavailable", digest);
        c->hash = h;
        return 0;
}

int
mcp_blob_check_feed(mcp_blob_check *c, const void *data, size_t n, msp_err *err)
{
        if (n > c->size - c->seen)
                return msp_err_set(err, EFBIG, "blob %s: more than the %ju bytes its descriptor "
                                   "says (it grew while read)", c->digest, (uintmax_t) c->size);
        gnutls_hash(c->hash, data, n);
        c->seen += n;
        return 0;
}

int
mcp_blob_check_end(mcp_blob_check *c, msp_err *err)
{
        uint8_t sum[32];
        gnutls_hash_deinit(c->hash, sum);
        c->hash = NULL;
        if (c->seen != c->size)
                return msp_err_set(err, EINVAL, "blob %s: %ju bytes, its descriptor says %ju",
                                   c->digest, (uintmax_t) c->seen, (uintmax_t) c->size);
        char hex[2 * sizeof sum + 1];
        for (size_t i = 0; i < sizeof sum; i++)
                snprintf(hex + 2 * i, 3, "%02x", sum[i]);
        if (strcmp(hex, c->digest + strlen("sha256:")) != 0)
                return msp_err_set(err, EINVAL,
                                   "blob %s: digest mismatch (the content hashes to sha256:%s): "
                                   "the blob is corrupt or was changed", c->digest, hex);
        return 0;
}

void
mcp_blob_check_done(mcp_blob_check *c)
{
        if (c->hash)
                gnutls_hash_deinit(c->hash, NULL);
        c->hash = NULL;
}
