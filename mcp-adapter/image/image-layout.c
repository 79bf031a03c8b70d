/* An OCI image layout read through fds of its directory: index.json, then the manifest
 * (through an image index when the layout holds one), then the config. Every file is
 * opened with openat2(RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS) below the layout and only as
 * a regular file, and each is read once: a JSON blob into memory, hashed as it is copied
 * (the bytes parsed are the bytes that matched the digest); a layer by msp-mcp-unpack,
 * which hashes the stream it unpacks (image-unpack.c). */
#include "image/image-layout.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "image/blob-check.h"
#include "base/base.h"
#include "oci/oci.h"

#define MT_INDEX "application/vnd.oci.image.index.v1+json"
#define MT_DOCKER_LIST "application/vnd.docker.distribution.manifest.list.v2+json"
#define MT_MANIFEST "application/vnd.oci.image.manifest.v1+json"
#define MT_DOCKER_MANIFEST "application/vnd.docker.distribution.manifest.v2+json"
#define REF_NAME "org.opencontainers.image.ref.name"

/* The document model's accessors, for nodes that may be absent (NULL). */
static const char *
jstr(const oci_json *v)
{
        return v ? oci_json_string(v) : NULL;
}

static const char *
jnum(const oci_json *v)
{
        return v ? oci_json_number_text(v) : NULL;
}

static size_t
jlen(const oci_json *v)
{
        return v ? oci_json_len(v) : 0;
}

static bool
is_array(const oci_json *v)
{
        return v && oci_json_type_of(v) == OCI_JSON_ARRAY;
}

static int
open_beneath(int dir_fd, const char *path, int flags)
{
        struct open_how how = { .flags = (uint64_t) flags | O_CLOEXEC,
                                .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS |
                                           RESOLVE_NO_MAGICLINKS };
        return (int) NERRNO(syscall(SYS_openat2, dir_fd, path, &how, sizeof how));
}

static const char *
file_kind(mode_t mode)
{
        return S_ISFIFO(mode) ? "a FIFO" : S_ISCHR(mode) ? "a character device" :
               S_ISBLK(mode) ? "a block device" : S_ISSOCK(mode) ? "a socket" :
               S_ISDIR(mode) ? "a directory" : "of another kind";
}

/* path below the layout, open for reading only when it is a regular file (what names it in
 * messages): a symlink is refused at any component, a FIFO or device is opened without
 * blocking and refused before any read, so nothing the layout's writer made can stall
 * msp-mcp's single thread. Its size now in *ret_size (when not NULL). */
static int
open_regular(int dir_fd, const char *path, const char *what, uint64_t *ret_size, msp_err *err)
{
        _cleanup_close_ int fd = open_beneath(dir_fd, path, O_RDONLY | O_NONBLOCK | O_NOCTTY);
        if (fd == -ENOENT)
                return msp_err_set(err, ENOENT, "%s: missing (no %s in the layout)", what, path);
        if (fd == -ELOOP)
                return msp_err_set(err, ELOOP, "%s: a symlink, or below one (the layout's files "
                                   "are read only as regular files)", what);
        if (fd < 0)
                return msp_err_sys(err, -fd, "%s (%s)", what, path);
        struct stat st;
        if (fstat(fd, &st) < 0)
                return msp_err_sys(err, errno, "%s (%s)", what, path);
        if (!S_ISREG(st.st_mode))
                return msp_err_set(err, EINVAL, "%s: %s, not a regular file", what,
                                   file_kind(st.st_mode));
        if (ret_size)
                *ret_size = (uint64_t) st.st_size;
        return TAKE_FD(fd);
}

static int
open_blob(int dir_fd, const char *digest, uint64_t size, msp_err *err)
{
        if (!mcp_blob_digest_valid(digest))
                return msp_err_set(err, EINVAL, "digest \"%.80s\": expected sha256:<64 hex digits>",
                                   digest ? digest : "(none)");
        char path[96], what[96];
        snprintf(path, sizeof path, "blobs/sha256/%s", digest + 7);
        snprintf(what, sizeof what, "blob %s", digest);
        uint64_t now;
        _cleanup_close_ int fd = open_regular(dir_fd, path, what, &now, err);
        if (fd < 0)
                return fd;
        if (now != size)
                return msp_err_set(err, EINVAL, "blob %s: %ju bytes, its descriptor says %ju",
                                   digest, (uintmax_t) now, (uintmax_t) size);
        return TAKE_FD(fd);
}

/* The blob read once into buf (at most max bytes, NUL-terminated): the bytes copied are
 * the bytes hashed, so what the caller parses is what matched the digest. */
static int
read_verified(int fd, const char *digest, uint64_t size, char *buf, size_t max, msp_err *err)
{
        if (size > max)
                return msp_err_set(err, E2BIG, "blob %s: %ju bytes, more than %zu for JSON",
                                   digest, (uintmax_t) size, max);
        mcp_blob_check c;
        int r = mcp_blob_check_begin(&c, digest, size, err);
        if (r < 0)
                return r;
        size_t total = 0;
        for (;;) {
                /* up to a byte past max: a blob that grew fails the check */
                ssize_t n = read(fd, buf + total, max + 1 - total);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0) {
                        r = msp_err_sys(err, errno, "blob %s: reading", digest);
                        break;
                }
                if (n == 0 || (r = mcp_blob_check_feed(&c, buf + total, (size_t) n, err)) < 0)
                        break;
                total += (size_t) n;
        }
        if (r < 0) {
                mcp_blob_check_done(&c);
                return r;
        }
        if ((r = mcp_blob_check_end(&c, err)) < 0)
                return r;
        buf[total] = '\0';
        return 0;
}

/* A descriptor's digest and size, checked. */
static int
descriptor(const oci_json *d, const char *what, const char **ret_digest, uint64_t *ret_size,
           msp_err *err)
{
        const char *digest = jstr(oci_json_get(d, "digest"));
        const char *size = jnum(oci_json_get(d, "size"));
        if (!mcp_blob_digest_valid(digest))
                return msp_err_set(err, EINVAL, "%s: digest \"%.80s\": expected sha256:<64 hex digits>",
                                   what, digest ? digest : "(none)");
        char *end;
        errno = 0;
        unsigned long long n = size ? strtoull(size, &end, 10) : 0;
        if (!size || errno || *end || *size == '-')
                return msp_err_set(err, EINVAL, "%s %s: size: expected a byte count", what, digest);
        *ret_digest = digest;
        *ret_size = n;
        return 0;
}

/* The JSON blob a descriptor names, verified and parsed. */
static int
read_json_blob(int dir_fd, const oci_json *d, const char *what, char **ret_text,
               size_t *ret_len, oci_json_doc **ret_doc, msp_err *err)
{
        const char *digest;
        uint64_t size;
        int r = descriptor(d, what, &digest, &size, err);
        if (r < 0)
                return r;
        _cleanup_close_ int fd = open_blob(dir_fd, digest, size, err);
        if (fd < 0)
                return msp_err_prefix(err, "%s", what);
        _cleanup_free_ char *buf = malloc(OCI_CONFIG_MAX_BYTES + 1);
        if (!buf)
                return msp_err_set(err, ENOMEM, "out of memory");
        if ((r = read_verified(fd, digest, size, buf, OCI_CONFIG_MAX_BYTES, err)) < 0)
                return msp_err_prefix(err, "%s", what);
        char name[128];
        snprintf(name, sizeof name, "%s %s", what, digest);
        if ((r = oci_json_parse(name, buf, (size_t) size, ret_doc, err)) < 0)
                return r;
        if (ret_len)
                *ret_len = (size_t) size;
        if (ret_text)
                *ret_text = TAKE_PTR(buf);
        return 0;
}

static const char *
machine_arch(void)
{
        struct utsname u;
        if (uname(&u) < 0)
                return "";
        if (strcmp(u.machine, "x86_64") == 0)
                return "amd64";
        if (strcmp(u.machine, "aarch64") == 0)
                return "arm64";
        return strcmp(u.machine, "ppc64le") == 0 ? "ppc64le" :
               strcmp(u.machine, "s390x") == 0 ? "s390x" : "";
}

/* The manifest descriptor of index.json that tag names (or the only one). */
static const oci_json *
choose_in_index(const oci_json *manifests, const char *tag, const char *dir, msp_err *err)
{
        size_t n = jlen(manifests);
        if (!is_array(manifests) || n == 0) {
                msp_err_set(err, EINVAL, "%s/index.json: no manifests", dir);
                return NULL;
        }
        if (!tag) {
                if (n == 1)
                        return oci_json_value_at(manifests, 0);
                msp_err_set(err, EINVAL, "%s: holds %zu images: name one as oci:%s:TAG", dir, n, dir);
                return NULL;
        }
        for (size_t i = 0; i < n; i++) {
                const oci_json *m = oci_json_value_at(manifests, i);
                const char *ref = jstr(oci_json_get(oci_json_get(m, "annotations"),
                                                               REF_NAME));
                if (ref && strcmp(ref, tag) == 0)
                        return m;
        }
        msp_err_set(err, ENOENT, "%s: no image tagged \"%s\" in index.json", dir, tag);
        return NULL;
}

/* The manifest of this machine's platform in an image index. */
static const oci_json *
choose_platform(const oci_json *index, const char *digest, msp_err *err)
{
        const oci_json *manifests = oci_json_get(index, "manifests");
        const char *arch = machine_arch();
        for (size_t i = 0; i < jlen(manifests); i++) {
                const oci_json *m = oci_json_value_at(manifests, i);
                const oci_json *p = oci_json_get(m, "platform");
                const char *os = jstr(oci_json_get(p, "os"));
                const char *a = jstr(oci_json_get(p, "architecture"));
                if (os && a && strcmp(os, "linux") == 0 && strcmp(a, arch) == 0)
                        return m;
        }
        msp_err_set(err, ENOENT, "image index %s: no manifest for linux/%s", digest, arch);
        return NULL;
}

static int
layer_compression(const char *mt, const char *digest, mcp_layer_compression *ret, msp_err *err)
{
        static const struct { const char *suffix; mcp_layer_compression c; } known[] = {
                { "tar", MCP_LAYER_TAR }, { "tar+gzip", MCP_LAYER_GZIP },
                { "tar+zstd", MCP_LAYER_ZSTD },
        };
        if (mt && strcmp(mt, "application/vnd.docker.image.rootfs.diff.tar.gzip") == 0) {
                *ret = MCP_LAYER_GZIP;
                return 0;
        }
        const char *base = "application/vnd.oci.image.layer.";
        if (mt && strncmp(mt, base, strlen(base)) == 0) {
                const char *rest = mt + strlen(base);
                if (strncmp(rest, "nondistributable.", 17) == 0)
                        rest += 17;
                if (strncmp(rest, "v1.", 3) == 0)
                        for (size_t i = 0; i < ARRAY_SIZE(known); i++)
                                if (strcmp(rest + 3, known[i].suffix) == 0) {
                                        *ret = known[i].c;
                                        return 0;
                                }
        }
        return msp_err_set(err, ENOTSUP, "layer %s: media type \"%.100s\" is not a tar layer",
                           digest, mt ? mt : "(none)");
}

static int
read_layers(const oci_json *manifest, mcp_image_layout *l, msp_err *err)
{
        const oci_json *layers = oci_json_get(manifest, "layers");
        size_t n = jlen(layers);
        if (!is_array(layers))
                return msp_err_set(err, EINVAL, "manifest %s: no layers", l->manifest_digest);
        l->layers = calloc(n ? n : 1, sizeof(*l->layers));
        if (!l->layers)
                return msp_err_set(err, ENOMEM, "out of memory");
        for (size_t i = 0; i < n; i++) {
                const oci_json *d = oci_json_value_at(layers, i);
                mcp_image_layer *y = &l->layers[i];
                const char *digest;
                int r = descriptor(d, "layer", &digest, &y->size, err);
                if (r < 0)
                        return msp_err_prefix(err, "manifest %s", l->manifest_digest);
                snprintf(y->digest, sizeof y->digest, "%s", digest);
                if ((r = layer_compression(jstr(oci_json_get(d, "mediaType")), digest,
                                           &y->compression, err)) < 0)
                        return r;
                l->n_layers++;
        }
        return 0;
}

int
mcp_image_layout_open(const char *dir, const char *tag, mcp_image_layout *ret, msp_err *err)
{
        *ret = (mcp_image_layout) { .dir_fd = -1 };
        _cleanup_close_ int dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return msp_err_sys(err, errno, "image layout \"%s\"", dir);
        /* only its presence counts: never opened for reading */
        _cleanup_close_ int marker = open_beneath(dfd, "oci-layout", O_PATH);
        if (marker < 0)
                return msp_err_set(err, EINVAL, "\"%s\" is not an OCI image layout (no oci-layout file)",
                                   dir);
        char name[PATH_MAX];
        snprintf(name, sizeof name, "%s/index.json", dir);
        _cleanup_close_ int ifd = open_regular(dfd, "index.json", name, NULL, err);
        if (ifd < 0)
                return ifd;
        _cleanup_free_ char *buf = NULL;
        size_t n;
        if (mcp_read_fd(ifd, OCI_CONFIG_MAX_BYTES + 1, &buf, &n, err) < 0)
                return msp_err_prefix(err, "%s", name);
        _cleanup_json_doc_ oci_json_doc *index = NULL;
        int r = oci_json_parse(name, buf, n, &index, err);
        if (r < 0)
                return r;
        const oci_json *d = choose_in_index(oci_json_get(oci_json_doc_root(index), "manifests"),
                                            tag, dir, err);
        if (!d)
                return -EINVAL;

        _cleanup_json_doc_ oci_json_doc *nested = NULL, *manifest = NULL, *config = NULL;
        const char *mt = jstr(oci_json_get(d, "mediaType"));
        if (mt && (strcmp(mt, MT_INDEX) == 0 || strcmp(mt, MT_DOCKER_LIST) == 0)) {
                if ((r = read_json_blob(dfd, d, "image index", NULL, NULL, &nested, err)) < 0)
                        return r;
                d = choose_platform(oci_json_doc_root(nested),
                                    jstr(oci_json_get(d, "digest")), err);
                if (!d)
                        return -ENOENT;
                mt = jstr(oci_json_get(d, "mediaType"));
        }
        if (mt && strcmp(mt, MT_MANIFEST) != 0 && strcmp(mt, MT_DOCKER_MANIFEST) != 0)
                return msp_err_set(err, ENOTSUP, "%s: media type \"%.100s\" is not an image manifest",
                                   dir, mt);
        if ((r = read_json_blob(dfd, d, "manifest", NULL, NULL, &manifest, err)) < 0)
                return r;
        snprintf(ret->manifest_digest, sizeof ret->manifest_digest, "%s",
                 jstr(oci_json_get(d, "digest")));
        const oci_json *m = oci_json_doc_root(manifest);
        if ((r = read_json_blob(dfd, oci_json_get(m, "config"), "config", &ret->config_json,
                                &ret->config_len, &config, err)) < 0 ||
            (r = read_layers(m, ret, err)) < 0) {
                mcp_image_layout_done(ret);
                return r;
        }
        snprintf(ret->config_digest, sizeof ret->config_digest, "%s",
                 jstr(oci_json_get(oci_json_get(m, "config"), "digest")));
        ret->dir_fd = TAKE_FD(dfd);
        return 0;
}

void
mcp_image_layout_done(mcp_image_layout *l)
{
        if (l->dir_fd >= 0)
                close(l->dir_fd);
        free(l->layers);
        free(l->config_json);
        *l = (mcp_image_layout) { .dir_fd = -1 };
}

int
mcp_image_layer_open(const mcp_image_layout *l, const mcp_image_layer *layer, msp_err *err)
{
        int fd = open_blob(l->dir_fd, layer->digest, layer->size, err);
        return fd < 0 ? msp_err_prefix(err, "layer") : fd;
}

static char *
json_strdup(const oci_json *v)
{
        const char *s = jstr(v);
        return s && *s ? strdup(s) : NULL;
}

int
mcp_image_defaults_parse(const char *config_json, size_t len, mcp_image_defaults *ret,
                         msp_err *err)
{
        *ret = (mcp_image_defaults) { 0 };
        _cleanup_json_doc_ oci_json_doc *doc = NULL;
        int r = oci_json_parse("image config", config_json, len, &doc, err);
        if (r < 0)
                return r;
        const oci_json *c = oci_json_get(oci_json_doc_root(doc), "config");
        const oci_json *env = oci_json_get(c, "Env");
        size_t n = jlen(env);
        ret->env = calloc(n + 1, sizeof(*ret->env));
        if (!ret->env)
                return msp_err_set(err, ENOMEM, "out of memory");
        for (size_t i = 0; i < n; i++) {
                const char *kv = jstr(oci_json_value_at(env, i));
                if (!kv || !strchr(kv, '=') || kv[0] == '=') {
                        mcp_image_defaults_done(ret);
                        return msp_err_set(err, EINVAL, "image config: Env[%zu]: expected KEY=VALUE", i);
                }
                if (!(ret->env[ret->n_env++] = strdup(kv))) {
                        mcp_image_defaults_done(ret);
                        return msp_err_set(err, ENOMEM, "out of memory");
                }
        }
        ret->workdir = json_strdup(oci_json_get(c, "WorkingDir"));
        ret->user = json_strdup(oci_json_get(c, "User"));
        return 0;
}

void
mcp_image_defaults_done(mcp_image_defaults *d)
{
        for (size_t i = 0; d->env && i < d->n_env; i++)
                free(d->env[i]);
        free(d->env);
        free(d->workdir);
        free(d->user);
        *d = (mcp_image_defaults) { 0 };
}
