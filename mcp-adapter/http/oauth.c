/* OAuth access tokens (see oauth.h). A token is a JWS in compact form (RFC 7515): the
 * header chooses a key of the JWKS, the signature over "header.payload" is verified with
 * GnuTLS (already linked for TLS), then the claims are checked. Only the public-key
 * algorithms of RFC 7518 that a JWKS key's kind allows are accepted: none and the HMAC
 * ones never (a public key is no secret). The JWKS keys are imported once, when the file
 * is read, not per request. */
#include "http/oauth.h"

#include <errno.h>
#include <stdarg.h>
#include <gnutls/abstract.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "http/https-get.h"
#include "oci/oci.h"
#include "base/base.h"

#define JWKS_MAX (1024 * 1024)
#define JWKS_KEYS_MAX 64
#define KID_MAX 128
#define TOKEN_MAX 16384
#define RSA_BITS_MIN 2048
#define FETCH_TIMEOUT_MS 10000       /* an https:// --oauth-jwks, at start and on SIGHUP */
#define LEEWAY_S 30                     /* clock skew allowed for exp and nbf */
#define WELL_KNOWN "/.well-known/oauth-protected-resource"

/* The JWS algorithms accepted (RFC 7518 §3.1), by index. */
enum { RS256, RS384, RS512, ES256, ES384, ES512, ALGS };
#define ALG(a) (1u << (a))

static const struct {
        const char *name;
        gnutls_sign_algorithm_t sign;
        size_t ec_len;                  /* ES*: bytes of r and of s in the signature; RS*: 0 */
} algs[ALGS] = {
        [RS256] = { "RS256", GNUTLS_SIGN_RSA_SHA256, 0 },
        [RS384] = { "RS384", GNUTLS_SIGN_RSA_SHA384, 0 },
        [RS512] = { "RS512", GNUTLS_SIGN_RSA_SHA512, 0 },
        [ES256] = { "ES256", GNUTLS_SIGN_ECDSA_SHA256, 32 },
        [ES384] = { "ES384", GNUTLS_SIGN_ECDSA_SHA384, 48 },
        [ES512] = { "ES512", GNUTLS_SIGN_ECDSA_SHA512, 66 },
};

/* The index of an alg name (case-sensitive, RFC 7515 §4.1.1), ALGS for any other. */
static unsigned
alg_index(const char *name)
{
        unsigned a = 0;
        while (a < ALGS && (!name || strcmp(algs[a].name, name) != 0))
                a++;
        return a;
}

typedef struct jwk {
        char kid[KID_MAX + 1];          /* "" when the key has none */
        unsigned algs;                  /* ALG() bits of what it verifies */
        gnutls_pubkey_t pk;
} jwk;

struct mcp_oauth {
        char *issuer, *resource, *claim;
        jwk *keys;
        size_t n_keys;
        char *metadata_url;
        char *metadata_path;            /* WELL_KNOWN followed by the resource's path */
        char *metadata;
        size_t metadata_len;
};

/* ---- base64url (RFC 7515 §2: no padding) ---- */

static int
b64url_decode(const char *s, size_t len, unsigned char **ret, size_t *ret_len)
{
        if (len % 4 == 1 || strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") < len)
                return -EINVAL;
        _cleanup_free_ char *b = malloc(len + 4);
        if (!b)
                return -ENOMEM;
        size_t n = 0;
        for (size_t i = 0; i < len; i++)
                b[n++] = s[i] == '-' ? '+' : s[i] == '_' ? '/' : s[i];
        while (n % 4)
                b[n++] = '=';
        return mcp_base64_decode(b, n, ret, ret_len);
}

/* ---- the JWKS file ---- */

static const char *
member(const oci_json *o, const char *key)
{
        const oci_json *v = oci_json_get(o, key);
        return v ? oci_json_string(v) : NULL;
}

static int
import_rsa(gnutls_pubkey_t pk, const oci_json *k, const char *what, msp_err *err)
{
        _cleanup_free_ unsigned char *n = NULL, *e = NULL;
        size_t nlen = 0, elen = 0;
        const char *ns = member(k, "n"), *es = member(k, "e");
        if (!ns || !es || b64url_decode(ns, strlen(ns), &n, &nlen) < 0 ||
            b64url_decode(es, strlen(es), &e, &elen) < 0)
                return msp_err_set(err, EINVAL, "%s: an RSA key needs \"n\" and \"e\" in base64url", what);
        gnutls_datum_t dn = { n, (unsigned) nlen }, de = { e, (unsigned) elen };
        unsigned bits = 0;
        if (gnutls_pubkey_import_rsa_raw(pk, &dn, &de) < 0)
                return msp_err_set(err, EINVAL, "%s: not a valid RSA public key", what);
        (void) gnutls_pubkey_get_pk_algorithm(pk, &bits);
        if (bits < RSA_BITS_MIN)
                return msp_err_set(err, EINVAL, "%s: a %u-bit RSA key (at least %d bits)", what, bits,
                                   RSA_BITS_MIN);
        return 0;
}

static int
import_ec(gnutls_pubkey_t pk, const oci_json *k, gnutls_ecc_curve_t curve, size_t coord,
          const char *what, msp_err *err)
{
        _cleanup_free_ unsigned char *x = NULL, *y = NULL;
        size_t xlen = 0, ylen = 0;
        const char *xs = member(k, "x"), *ys = member(k, "y");
        if (!xs || !ys || b64url_decode(xs, strlen(xs), &x, &xlen) < 0 ||
            b64url_decode(ys, strlen(ys), &y, &ylen) < 0 || xlen != coord || ylen != coord)
                return msp_err_set(err, EINVAL, "%s: an EC key needs \"x\" and \"y\" of %zu bytes in base64url",
                                   what, coord);
        gnutls_datum_t dx = { x, (unsigned) xlen }, dy = { y, (unsigned) ylen };
        if (gnutls_pubkey_import_ecc_raw(pk, curve, &dx, &dy) < 0 ||
            gnutls_pubkey_verify_params(pk) < 0)
                return msp_err_set(err, EINVAL, "%s: not a point of its curve", what);
        return 0;
}

/* One member of "keys": 1 and *out when it is a signing key of a kind tokens may use, 0
 * for one that is skipped (encryption keys, other kinds), < 0 for a broken one. */
static int
parse_key(const oci_json *k, const char *what, jwk *out, msp_err *err)
{
        static const struct {
                const char *kty, *crv;
                gnutls_ecc_curve_t curve;
                size_t coord;
                unsigned algs;
        } kinds[] = {
                { "RSA", NULL, 0, 0, ALG(RS256) | ALG(RS384) | ALG(RS512) },
                { "EC", "P-256", GNUTLS_ECC_CURVE_SECP256R1, 32, ALG(ES256) },
                { "EC", "P-384", GNUTLS_ECC_CURVE_SECP384R1, 48, ALG(ES384) },
                { "EC", "P-521", GNUTLS_ECC_CURVE_SECP521R1, 66, ALG(ES512) },
        };
        const char *kty = member(k, "kty"), *crv = member(k, "crv"), *use = member(k, "use");
        const char *alg = member(k, "alg"), *kid = member(k, "kid");
        if (!kty)
                return msp_err_set(err, EINVAL, "%s: no \"kty\"", what);
        if (use && strcmp(use, "sig") != 0)
                return 0;
        size_t i = 0;
        while (i < ARRAY_SIZE(kinds) &&
               (strcmp(kinds[i].kty, kty) != 0 || (kinds[i].crv && (!crv || strcmp(kinds[i].crv, crv) != 0))))
                i++;
        if (i == ARRAY_SIZE(kinds))
                return 0;
        *out = (jwk) { .algs = kinds[i].algs };
        if (alg) {
                /* A key bound to one algorithm verifies only that one. */
                unsigned a = alg_index(alg);
                if (a == ALGS || !(out->algs & ALG(a)))
                        return 0;
                out->algs = ALG(a);
        }
        if (kid && (strlen(kid) > KID_MAX || !*kid))
                return msp_err_set(err, EINVAL, "%s: \"kid\" must be 1 to %d characters", what, KID_MAX);
        snprintf(out->kid, sizeof out->kid, "%s", kid ? kid : "");

        gnutls_pubkey_t pk;
        if (gnutls_pubkey_init(&pk) < 0)
                return msp_err_set(err, ENOMEM, "out of memory");
        int r = kinds[i].crv ? import_ec(pk, k, kinds[i].curve, kinds[i].coord, what, err)
                             : import_rsa(pk, k, what, err);
        if (r < 0) {
                gnutls_pubkey_deinit(pk);
                return r;
        }
        out->pk = pk;
        return 1;
}

static bool
jwks_url(const mcp_config *cfg)
{
        return strncmp(cfg->oauth_jwks, "https://", 8) == 0;
}

/* The JWKS document: the file, or the answer to GET of an https:// URL. */
static int
read_jwks(const mcp_config *cfg, char **ret, size_t *ret_len, msp_err *err)
{
        const char *src = cfg->oauth_jwks;
        bool url = jwks_url(cfg);
        if (strncmp(src, "http://", 7) == 0)
                return msp_err_set(err, EINVAL, "--oauth-jwks %s: keys fetched over plain HTTP could be anyone's: use https:// or a file",
                                   src);
        if (cfg->oauth_jwks_ca && !url)
                return msp_err_set(err, EINVAL, "--oauth-jwks-ca goes with an https:// --oauth-jwks, not %s", src);
        if (url) {
                int r = mcp_https_get(src, cfg->oauth_jwks_ca, JWKS_MAX, FETCH_TIMEOUT_MS, ret, ret_len, err);
                return r < 0 ? msp_err_prefix(err, "--oauth-jwks") : 0;
        }
        _cleanup_fclose_ FILE *f = fopen(src, "re");
        if (!f)
                return msp_err_sys(err, errno, "--oauth-jwks %s", src);
        _cleanup_free_ char *buf = malloc(JWKS_MAX + 1);
        if (!buf)
                return msp_err_set(err, ENOMEM, "out of memory");
        size_t n = fread(buf, 1, JWKS_MAX + 1, f);
        if (ferror(f) || n > JWKS_MAX)
                return msp_err_set(err, EINVAL, "--oauth-jwks %s: expected a JSON file of at most 1 MiB", src);
        buf[n] = '\0';
        *ret = TAKE_PTR(buf);
        *ret_len = n;
        return 0;
}

/* The keys of the JWKS document buf (n bytes). */
static int
parse_jwks(mcp_oauth *o, const mcp_config *cfg, const char *buf, size_t n, msp_err *err)
{
        const char *path = cfg->oauth_jwks;
        int r;
        _cleanup_json_doc_ oci_json_doc *doc = NULL;
        msp_err jerr = { 0 };
        if (oci_json_parse_limits("--oauth-jwks", buf, n, JWKS_MAX, JWKS_MAX, &doc, &jerr) < 0)
                return msp_err_set(err, EINVAL, "%s: %s", path, jerr.msg);
        const oci_json *keys = oci_json_get(oci_json_doc_root(doc), "keys");
        if (!keys || oci_json_type_of(keys) != OCI_JSON_ARRAY)
                return msp_err_set(err, EINVAL, "--oauth-jwks %s: expected a JWKS, an object with a \"keys\" array",
                                   path);
        size_t count = oci_json_len(keys);
        if (count > JWKS_KEYS_MAX)
                return msp_err_set(err, EINVAL, "--oauth-jwks %s: %zu keys (at most %d)", path, count,
                                   JWKS_KEYS_MAX);
        o->keys = calloc(count ? count : 1, sizeof *o->keys);
        if (!o->keys)
                return msp_err_set(err, ENOMEM, "out of memory");
        for (size_t i = 0; i < count; i++) {
                const oci_json *k = oci_json_value_at(keys, i);
                const char *kid = member(k, "kid");
                char what[512];
                snprintf(what, sizeof what, "--oauth-jwks %.200s: keys[%zu]%s%.128s%s", path, i,
                         kid ? " (kid " : "", kid ? kid : "", kid ? ")" : "");
                if (oci_json_type_of(k) != OCI_JSON_OBJECT)
                        return msp_err_set(err, EINVAL, "%s: expected an object", what);
                r = parse_key(k, what, &o->keys[o->n_keys], err);
                if (r < 0)
                        return r;
                o->n_keys += (size_t) r;
        }
        if (o->n_keys == 0)
                return msp_err_set(err, EINVAL, "--oauth-jwks %s: no signing key of a kind msp-mcp verifies (RSA of at least %d bits, EC P-256, P-384 or P-521)",
                                   path, RSA_BITS_MIN);
        return 0;
}

/* ---- the flags and the metadata ---- */

/* An absolute http(s) URL that can be quoted in a header: no fragment, no query, no
 * quote, space or control character. *ret_path: where its path starts. */
static int
check_url(const char *flag, const char *url, const char **ret_path, msp_err *err)
{
        const char *host = strncmp(url, "https://", 8) == 0 ? url + 8
                           : strncmp(url, "http://", 7) == 0 ? url + 7
                                                              : NULL;
        bool clean = true;
        for (const char *p = url; *p; p++)
                clean &= *p > 0x20 && *p < 0x7f && *p != '"' && *p != '\\' && *p != '#' && *p != '?';
        if (!host || !clean || strlen(url) > 1024 || host[0] == '/' || host[0] == '\0')
                return msp_err_set(err, EINVAL, "%s %.200s: expected an http:// or https:// URL with a host and without query, fragment, quotes or spaces",
                                   flag, url);
        *ret_path = host + strcspn(host, "/");
        return 0;
}

static int
build_metadata(mcp_oauth *o, const char *path, msp_err *err)
{
        size_t origin = (size_t) (path - o->resource);
        /* RFC 9728 §3.1: the well-known suffix goes between the host and the path. */
        const char *suffix = strcmp(path, "/") == 0 ? "" : path;
        if (asprintf(&o->metadata_url, "%.*s%s%s", (int) origin, o->resource, WELL_KNOWN, suffix) < 0 ||
            asprintf(&o->metadata_path, "%s%s", WELL_KNOWN, suffix) < 0) {
                o->metadata_url = o->metadata_path = NULL;
                return msp_err_set(err, ENOMEM, "out of memory");
        }
        const char *servers[] = { o->issuer, NULL };
        const char *methods[] = { "header", NULL };
        _cleanup_jw_ oci_jw *w = oci_jw_new(false);
        if (!w)
                return msp_err_set(err, ENOMEM, "out of memory");
        oci_jw_begin_object(w);
        oci_jw_kv_string(w, "resource", o->resource);
        oci_jw_kv_strlist(w, "authorization_servers", servers);
        oci_jw_kv_strlist(w, "bearer_methods_supported", methods);
        oci_jw_kv_string(w, "resource_name", "msp-mcp");
        oci_jw_end_object(w);
        return oci_jw_finish(w, &o->metadata, &o->metadata_len, err);
}

/* Everything but the keys: the flags checked, the metadata built. */
static int
oauth_new(const mcp_config *cfg, mcp_oauth **ret, msp_err *err)
{
        const char *missing = !cfg->oauth_issuer ? "--oauth-issuer URL"
                              : !cfg->oauth_jwks ? "--oauth-jwks FILE"
                              : !cfg->resource   ? "--resource URL"
                                                 : NULL;
        if (missing)
                return msp_err_set(err, EINVAL, "OAuth needs --oauth-issuer, --oauth-jwks and --resource together: %s is missing",
                                   missing);
        const char *path, *ipath;
        int r = check_url("--resource", cfg->resource, &path, err);
        if (r == 0)
                r = check_url("--oauth-issuer", cfg->oauth_issuer, &ipath, err);
        if (r < 0)
                return r;
        const char *claim = cfg->oauth_tenant_claim;
        if (!claim || !*claim || strlen(claim) > 64)
                return msp_err_set(err, EINVAL, "--oauth-tenant-claim \"%.80s\": expected a claim name of 1 to 64 characters",
                                   claim ? claim : "");
        _cleanup_oauth_ mcp_oauth *o = calloc(1, sizeof *o);
        if (!o)
                return msp_err_set(err, ENOMEM, "out of memory");
        o->issuer = strdup(cfg->oauth_issuer);
        o->resource = strdup(cfg->resource);
        o->claim = strdup(claim);
        if (!o->issuer || !o->resource || !o->claim)
                return msp_err_set(err, ENOMEM, "out of memory");
        r = build_metadata(o, o->resource + (path - cfg->resource), err);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(o);
        return 0;
}

/* The whole mode: the flags checked first (no fetch for a bad one), then the keys of the
 * JWKS document buf, or of the one read_jwks() reads when buf is NULL. */
static int
oauth_build(const mcp_config *cfg, const char *buf, size_t n, mcp_oauth **ret, msp_err *err)
{
        _cleanup_oauth_ mcp_oauth *o = NULL;
        _cleanup_free_ char *text = NULL;
        int r = oauth_new(cfg, &o, err);
        if (r == 0 && !buf && (r = read_jwks(cfg, &text, &n, err)) == 0)
                buf = text;
        if (r == 0)
                r = parse_jwks(o, cfg, buf, n, err);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(o);
        return 0;
}

int
mcp_oauth_load(const mcp_config *cfg, mcp_oauth **ret, msp_err *err)
{
        *ret = NULL;
        if (!cfg->oauth_issuer && !cfg->oauth_jwks && !cfg->resource)
                return 0;
        return oauth_build(cfg, NULL, 0, ret, err);
}

struct mcp_oauth_reload {
        const mcp_config *cfg;
        mcp_https_fetch *fetch;
        mcp_oauth_reloaded_fn done;
        void *data;
};

static void
on_jwks_fetched(char *body, size_t len, const msp_err *ferr, void *data)
{
        mcp_oauth_reload *rl = data;
        mcp_oauth *o = NULL;
        msp_err err = { 0 };
        if (body) {
                (void) oauth_build(rl->cfg, body, len, &o, &err);
        } else {
                err = *ferr;
                msp_err_prefix(&err, "--oauth-jwks");
        }
        free(body);
        mcp_oauth_reloaded_fn done = rl->done;
        void *d = rl->data;
        free(rl);
        done(o, o ? NULL : &err, d);
}

void
mcp_oauth_reload_start(mcp_loop *loop, const mcp_config *cfg, mcp_oauth_reloaded_fn done,
                       void *data, mcp_oauth_reload **ret)
{
        *ret = NULL;
        mcp_oauth *o = NULL;
        msp_err err = { 0 };
        mcp_oauth_reload *rl = jwks_url(cfg) ? calloc(1, sizeof *rl) : NULL;
        if (!jwks_url(cfg)) {
                (void) mcp_oauth_load(cfg, &o, &err);
                done(o, o ? NULL : &err, data);
                return;
        }
        if (!rl) {
                msp_err_set(&err, ENOMEM, "out of memory");
                done(NULL, &err, data);
                return;
        }
        *rl = (mcp_oauth_reload) { .cfg = cfg, .done = done, .data = data };
        if (mcp_https_fetch_start(loop, cfg->oauth_jwks, cfg->oauth_jwks_ca, JWKS_MAX, FETCH_TIMEOUT_MS,
                                  on_jwks_fetched, rl, &rl->fetch, &err) < 0) {
                free(rl);
                done(NULL, &err, data);
                return;
        }
        *ret = rl;
}

void
mcp_oauth_reload_cancel(mcp_oauth_reload *rl)
{
        if (!rl)
                return;
        mcp_https_fetch_cancel(rl->fetch);
        free(rl);
}

mcp_oauth *
mcp_oauth_free(mcp_oauth *o)
{
        if (!o)
                return NULL;
        for (size_t i = 0; i < o->n_keys; i++)
                gnutls_pubkey_deinit(o->keys[i].pk);
        free(o->keys);
        free(o->issuer);
        free(o->resource);
        free(o->claim);
        free(o->metadata_url);
        free(o->metadata_path);
        free(o->metadata);
        free(o);
        return NULL;
}

size_t
mcp_oauth_key_count(const mcp_oauth *o)
{
        return o ? o->n_keys : 0;
}

const char *
mcp_oauth_metadata_url(const mcp_oauth *o)
{
        return o->metadata_url;
}

bool
mcp_oauth_metadata_path(const mcp_oauth *o, const char *path)
{
        return strcmp(path, WELL_KNOWN) == 0 || strcmp(path, o->metadata_path) == 0;
}

const char *
mcp_oauth_metadata(const mcp_oauth *o, size_t *ret_len)
{
        *ret_len = o->metadata_len;
        return o->metadata;
}

/* ---- tokens ---- */

/* A base64url segment of JSON: its document. */
static int
decode_json(const char *seg, size_t len, oci_json_doc **ret)
{
        _cleanup_free_ unsigned char *raw = NULL;
        size_t n = 0;
        if (b64url_decode(seg, len, &raw, &n) < 0)
                return -EINVAL;
        msp_err err = { 0 };
        int r = oci_json_parse_limits("token", (const char *) raw, n, TOKEN_MAX, TOKEN_MAX, ret, &err);
        if (r == 0 && oci_json_type_of(oci_json_doc_root(*ret)) != OCI_JSON_OBJECT) {
                *ret = oci_json_doc_free(*ret);
                r = -EINVAL;
        }
        return r;
}

/* RFC 7515 §4.1.9: typ is a media type, compared case-insensitively, "application/"
 * left out or not. A JWT (RFC 7519) or an access token (RFC 9068), or no typ at all. */
static bool
typ_accepted(const char *typ)
{
        if (strncasecmp(typ, "application/", 12) == 0)
                typ += 12;
        return strcasecmp(typ, "JWT") == 0 || strcasecmp(typ, "at+jwt") == 0;
}

/* The key the header names (kid), or the only key for its algorithm; its alg in *ret_alg. */
static const jwk *
select_key(const mcp_oauth *o, const oci_json *head, unsigned *ret_alg, msp_err *err)
{
        const char *alg = member(head, "alg"), *kid = member(head, "kid"), *typ = member(head, "typ");
        unsigned a = alg_index(alg);
        if (oci_json_get(head, "crit")) {
                msp_err_set(err, EACCES, "the token's header has \"crit\" extensions");
                return NULL;
        }
        if (oci_json_get(head, "typ") && (!typ || !typ_accepted(typ))) {
                msp_err_set(err, EACCES, "typ %.32s is not accepted (JWT or at+jwt)", typ ? typ : "(not a string)");
                return NULL;
        }
        if (a == ALGS) {
                msp_err_set(err, EACCES, "alg %.16s is not accepted", alg ? alg : "(none given)");
                return NULL;
        }
        const jwk *found = NULL;
        size_t matches = 0;
        for (size_t i = 0; i < o->n_keys; i++) {
                const jwk *k = &o->keys[i];
                if (!(k->algs & ALG(a)) || (kid && strcmp(k->kid, kid) != 0))
                        continue;
                found = found ? found : k;
                matches++;
        }
        if (!found)
                msp_err_set(err, EACCES, kid ? "no %s key with the token's kid" : "no %s key", alg);
        else if (!kid && matches > 1)
                msp_err_set(err, EACCES, "the token names no kid and %zu keys could verify it", matches);
        *ret_alg = a;
        return found && (kid || matches == 1) ? found : NULL;
}

/* A JWS ECDSA signature is r||s, each of the curve's size (RFC 7518 §3.4); GnuTLS takes
 * the DER SEQUENCE of two INTEGERs. A DER signature (a signer's mistake) is refused by its
 * length. */
static int
ecdsa_der(const char *alg, const unsigned char *sig, size_t len, size_t half, gnutls_datum_t *ret,
          msp_err *err)
{
        if (len != 2 * half)
                return msp_err_set(err, EACCES, "the %s signature is %zu bytes, not r||s of %zu", alg, len,
                                   2 * half);
        size_t rz = 0, sz = 0;
        while (rz < half - 1 && sig[rz] == 0)
                rz++;
        while (sz < half - 1 && sig[half + sz] == 0)
                sz++;
        gnutls_datum_t r = { (unsigned char *) sig + rz, (unsigned) (half - rz) };
        gnutls_datum_t s = { (unsigned char *) sig + half + sz, (unsigned) (half - sz) };
        if (gnutls_encode_rs_value(ret, &r, &s) < 0)
                return msp_err_set(err, ENOMEM, "out of memory");
        return 0;
}

/* The signature (base64url sig, sig_len bytes) of the signing input (RFC 7515 §5.2). */
static int
verify_signature(const jwk *key, unsigned alg, const char *input, size_t input_len, const char *sig,
                 size_t sig_len, msp_err *err)
{
        _cleanup_free_ unsigned char *raw = NULL;
        size_t n = 0;
        if (b64url_decode(sig, sig_len, &raw, &n) < 0)
                return msp_err_set(err, EACCES, "the token's signature is not base64url");
        if (n == 0)
                return msp_err_set(err, EACCES, "the token has no signature");
        gnutls_datum_t data = { (unsigned char *) input, (unsigned) input_len };
        gnutls_datum_t signature = { raw, (unsigned) n }, der = { 0 };
        if (algs[alg].ec_len) {
                int r = ecdsa_der(algs[alg].name, raw, n, algs[alg].ec_len, &der, err);
                if (r < 0)
                        return r;
                signature = der;
        }
        int r = gnutls_pubkey_verify_data2(key->pk, algs[alg].sign, 0, &data, &signature);
        gnutls_free(der.data);
        return r < 0 ? msp_err_set(err, EACCES, "the signature does not verify") : 0;
}

/* A NumericDate claim (seconds, a fraction allowed): false when present and not a number. */
static bool
numeric_date(const oci_json *claims, const char *name, double *ret, bool *present)
{
        const oci_json *v = oci_json_get(claims, name);
        *present = v != NULL;
        const char *t = v ? oci_json_number_text(v) : NULL;
        if (!v)
                return true;
        if (!t)
                return false;
        *ret = strtod(t, NULL);
        return true;
}

static bool
audience_has(const oci_json *aud, const char *resource)
{
        const char *s = oci_json_string(aud);
        if (s)
                return strcmp(s, resource) == 0;
        for (size_t i = 0; oci_json_type_of(aud) == OCI_JSON_ARRAY && i < oci_json_len(aud); i++) {
                s = oci_json_string(oci_json_value_at(aud, i));
                if (s && strcmp(s, resource) == 0)
                        return true;
        }
        return false;
}

static int
check_claims(const mcp_oauth *o, const oci_json *c, char tenant[MCP_TENANT_MAX + 1], msp_err *err)
{
        const char *iss = member(c, "iss");
        if (!iss || strcmp(iss, o->issuer) != 0)
                return msp_err_set(err, EACCES, "iss is not --oauth-issuer");
        const oci_json *aud = oci_json_get(c, "aud");
        if (!aud || !audience_has(aud, o->resource))
                return msp_err_set(err, EACCES, "aud does not name --resource");
        double exp = 0, nbf = 0, now = (double) time(NULL);
        bool has_exp, has_nbf;
        if (!numeric_date(c, "exp", &exp, &has_exp) || !has_exp)
                return msp_err_set(err, EACCES, "exp is missing or not a number");
        if (now > exp + LEEWAY_S)
                return msp_err_set(err, EACCES, "the token expired %.0f s ago", now - exp);
        if (!numeric_date(c, "nbf", &nbf, &has_nbf))
                return msp_err_set(err, EACCES, "nbf is not a number");
        if (has_nbf && now + LEEWAY_S < nbf)
                return msp_err_set(err, EACCES, "the token is not valid before %.0f s from now", nbf - now);
        const char *t = member(c, o->claim);
        if (!t || !mcp_tenant_valid(t))
                return msp_err_set(err, EACCES, "claim %s is missing or not a tenant name (1 to %d of A-Z a-z 0-9 . _ -)",
                              o->claim, MCP_TENANT_MAX);
        snprintf(tenant, MCP_TENANT_MAX + 1, "%s", t);
        return 0;
}

int
mcp_oauth_verify(const mcp_oauth *o, const char *token, size_t len, char tenant[MCP_TENANT_MAX + 1],
                 msp_err *err)
{
        const char *dot1 = memchr(token, '.', len);
        const char *dot2 = dot1 ? memchr(dot1 + 1, '.', len - (size_t) (dot1 + 1 - token)) : NULL;
        if (len > TOKEN_MAX || !dot2 || memchr(dot2 + 1, '.', len - (size_t) (dot2 + 1 - token)))
                return msp_err_set(err, EACCES, "not a JWT (three base64url parts)");
        _cleanup_json_doc_ oci_json_doc *head = NULL;
        if (decode_json(token, (size_t) (dot1 - token), &head) < 0)
                return msp_err_set(err, EACCES, "the token's header is not base64url JSON");
        unsigned alg;
        const jwk *key = select_key(o, oci_json_doc_root(head), &alg, err);
        if (!key)
                return -EACCES;
        int r = verify_signature(key, alg, token, (size_t) (dot2 - token), dot2 + 1,
                                 len - (size_t) (dot2 + 1 - token), err);
        if (r < 0)
                return r;
        _cleanup_json_doc_ oci_json_doc *claims = NULL;
        if (decode_json(dot1 + 1, (size_t) (dot2 - dot1 - 1), &claims) < 0)
                return msp_err_set(err, EACCES, "the claims are not base64url JSON of an object");
        return check_claims(o, oci_json_doc_root(claims), tenant, err);
}
