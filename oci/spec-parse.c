/* config.json, top level: ociVersion, root, hostname, domainname, mounts, hooks and
 * annotations, plus the public entry points. process and linux are parsed in their own
 * files. Unknown properties are ignored, as the runtime-spec requires; JSON null counts
 * as absent. */
#include "oci/json.h"
#include "oci/spec.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- ociVersion ---- */

/* Reads a run of digits into *ret; returns the end or NULL. */
static const char *
version_part(const char *p, unsigned long *ret)
{
        if (*p < '0' || *p > '9')
                return NULL;
        unsigned long v = 0;
        for (; *p >= '0' && *p <= '9'; p++) {
                if (v > 100000)
                        return NULL;
                v = v * 10 + (unsigned long) (*p - '0');
        }
        *ret = v;
        return p;
}

/* Accepts 1.0.0 to 1.3.x, with an optional "-suffix" or "+build" ("1.0.2-dev"). */
static int
check_oci_version(oci_jr *r, const char *version)
{
        unsigned long major = 0, minor = 0, patch = 0;
        const char *p = version_part(version, &major);
        if (p && *p == '.')
                p = version_part(p + 1, &minor);
        else
                p = NULL;
        if (p && *p == '.')
                p = version_part(p + 1, &patch);
        else
                p = NULL;
        char q[OCI_JR_VALUE_MAX * 2 + 16];
        oci_json_quote(version, q, sizeof q);
        size_t mark = oci_jr_push_key(r, "ociVersion");
        int k = 0;
        if (!p || (*p && *p != '-' && *p != '+'))
                k = oci_jr_fail(r, EINVAL, "invalid version %s, expected MAJOR.MINOR.PATCH", q);
        else if (major != 1 || minor > 3)
                k = oci_jr_fail(r, EINVAL, "unsupported version %s (msp supports 1.0.0 to 1.3.x)",
                                q);
        oci_jr_pop(r, mark);
        return k;
}

/* ---- root, mounts ---- */

static int
parse_root(oci_jr *r, const oci_json *top, oci_spec *spec)
{
        const oci_json *root;
        int k = oci_jr_require(r, oci_jr_object(r, top, "root", &root), "root");
        if (k < 0)
                return k;
        size_t mark = oci_jr_push_key(r, "root");
        k = oci_jr_require(r, oci_jr_str(r, root, "path", &spec->root_path), "path");
        if (k > 0 && !spec->root_path[0]) {
                oci_jr_push_key(r, "path");
                k = oci_jr_fail(r, EINVAL, "must not be empty");
        }
        if (k >= 0)
                k = oci_jr_bool(r, root, "readonly", &spec->root_readonly);
        oci_jr_pop(r, mark);
        return k;
}

static int
parse_mount(oci_jr *r, const oci_json *v, void *elem)
{
        oci_mount *m = elem;
        static const oci_jr_field fields[] = {
                OCI_JR_FR(oci_mount, "destination", OCI_JR_STR, destination),
                OCI_JR_F(oci_mount, "type", OCI_JR_STR, type),
                OCI_JR_F(oci_mount, "source", OCI_JR_STR, source),
                OCI_JR_F(oci_mount, "options", OCI_JR_STRV, options),
        };
        int k = oci_jr_fields(r, v, m, fields, ARRAY_SIZE(fields));
        if (k < 0)
                return k;
        const oci_json *maps;
        k = oci_jr_array(r, v, "uidMappings", &maps);
        if (k > 0) {
                size_t mark = oci_jr_push_key(r, "uidMappings");
                k = oci_jr_val_id_mappings(r, maps, &m->uid_mappings, &m->n_uid_mappings);
                oci_jr_pop(r, mark);
        }
        if (k < 0)
                return k;
        k = oci_jr_array(r, v, "gidMappings", &maps);
        if (k > 0) {
                size_t mark = oci_jr_push_key(r, "gidMappings");
                k = oci_jr_val_id_mappings(r, maps, &m->gid_mappings, &m->n_gid_mappings);
                oci_jr_pop(r, mark);
        }
        return k < 0 ? k : 0;
}

/* ---- hooks ---- */

static int
parse_hook(oci_jr *r, const oci_json *v, void *elem)
{
        oci_hook *h = elem;
        int k = oci_jr_require(r, oci_jr_abs_path(r, v, "path", &h->path), "path");
        if (k >= 0)
                k = oci_jr_strv(r, v, "args", &h->args);
        if (k >= 0)
                k = oci_jr_strv(r, v, "env", &h->env);
        if (k >= 0)
                k = oci_jr_i32(r, v, "timeout", &h->timeout);
        if (k > 0) {
                h->has_timeout = true;
                if (h->timeout <= 0) {
                        size_t mark = oci_jr_push_key(r, "timeout");
                        k = oci_jr_expected(r, oci_json_get(v, "timeout"), "a positive integer");
                        oci_jr_pop(r, mark);
                }
        }
        return k < 0 ? k : 0;
}

static int
parse_hooks(oci_jr *r, const oci_json *top, oci_spec *spec)
{
        static const struct {
                const char *key;
                size_t offset;
        } lists[] = {
                { "prestart", offsetof(oci_hooks, prestart) },
                { "createRuntime", offsetof(oci_hooks, create_runtime) },
                { "createContainer", offsetof(oci_hooks, create_container) },
                { "startContainer", offsetof(oci_hooks, start_container) },
                { "poststart", offsetof(oci_hooks, poststart) },
                { "poststop", offsetof(oci_hooks, poststop) },
        };
        const oci_json *hooks;
        int k = oci_jr_object(r, top, "hooks", &hooks);
        if (k <= 0)
                return k;
        spec->has_hooks = true;
        size_t mark = oci_jr_push_key(r, "hooks");
        for (size_t i = 0; i < ARRAY_SIZE(lists) && k >= 0; i++) {
                oci_hook_list *l = (oci_hook_list *) ((char *) &spec->hooks + lists[i].offset);
                k = oci_jr_objects(r, hooks, lists[i].key, sizeof(oci_hook), parse_hook,
                                   (void **) &l->v, &l->n);
        }
        oci_jr_pop(r, mark);
        return k;
}

/* ---- the whole document ---- */

static int
parse_spec(oci_jr *r, const oci_json *top, oci_spec *spec)
{
        int k = oci_jr_require(r, oci_jr_str(r, top, "ociVersion", &spec->oci_version),
                               "ociVersion");
        if (k >= 0)
                k = check_oci_version(r, spec->oci_version);
        if (k >= 0)
                k = parse_root(r, top, spec);
        if (k >= 0)
                k = oci_jr_str(r, top, "hostname", &spec->hostname);
        if (k >= 0)
                k = oci_jr_str(r, top, "domainname", &spec->domainname);
        if (k >= 0)
                k = oci_jr_objects(r, top, "mounts", sizeof(oci_mount), parse_mount,
                                   (void **) &spec->mounts, &spec->n_mounts);
        if (k >= 0)
                k = parse_hooks(r, top, spec);
        if (k >= 0)
                k = oci_jr_map(r, top, "annotations", &spec->annotations);
        const oci_json *v;
        if (k >= 0 && (k = oci_jr_object(r, top, "process", &v)) > 0) {
                size_t mark = oci_jr_push_key(r, "process");
                k = oci_parse_process(r, v, &spec->process);
                oci_jr_pop(r, mark);
        }
        if (k >= 0 && (k = oci_jr_object(r, top, "linux", &v)) > 0) {
                size_t mark = oci_jr_push_key(r, "linux");
                k = oci_parse_linux(r, v, &spec->linux_);
                oci_jr_pop(r, mark);
        }
        return k < 0 ? k : 0;
}

static int
parse_process_doc(oci_jr *r, const oci_json *top, oci_spec *spec)
{
        return oci_parse_process(r, top, &spec->process);
}

static int
parse_resources_doc(oci_jr *r, const oci_json *top, oci_spec *spec)
{
        spec->linux_ = oci_arena_calloc(r->arena, 1, sizeof *spec->linux_);
        if (!spec->linux_)
                return oci_jr_oom(r);
        return oci_parse_resources(r, top, &spec->linux_->resources);
}

typedef int (*doc_fn)(oci_jr *r, const oci_json *top, oci_spec *spec);

static int
parse_document(const char *name, const char *data, size_t len, doc_fn fn, oci_spec **ret_spec,
               msp_err *err)
{
        _cleanup_json_doc_ oci_json_doc *doc = NULL;
        int k = oci_json_parse(name, data, len, &doc, err);
        if (k < 0)
                return k;

        _cleanup_arena_ oci_arena *arena = oci_arena_new();
        oci_spec *spec = arena ? oci_arena_calloc(arena, 1, sizeof *spec) : NULL;
        if (!spec)
                return msp_err_set(err, ENOMEM, "%s: out of memory", name);
        spec->arena = arena;

        oci_jr r;
        oci_jr_init(&r, name, arena, err);
        const oci_json *top = oci_json_doc_root(doc);
        if (oci_json_type_of(top) != OCI_JSON_OBJECT)
                return oci_jr_expected(&r, top, "an object");
        k = fn(&r, top, spec);
        if (k < 0)
                return k;
        arena = NULL;                   /* now owned by spec */
        *ret_spec = spec;
        return 0;
}

int
oci_spec_parse_data(const char *name, const char *data, size_t len, oci_spec **ret_spec,
                    msp_err *err)
{
        return parse_document(name, data, len, parse_spec, ret_spec, err);
}

int
oci_process_parse_data(const char *name, const char *data, size_t len, oci_spec **ret_spec,
                       msp_err *err)
{
        return parse_document(name, data, len, parse_process_doc, ret_spec, err);
}

int
oci_resources_parse_data(const char *name, const char *data, size_t len, oci_spec **ret_spec,
                         msp_err *err)
{
        return parse_document(name, data, len, parse_resources_doc, ret_spec, err);
}

/* Reads at most max + 1 bytes so that an oversized file is detected without reading it
 * all. */
static int
read_bounded(int fd, size_t max, char **ret_buf, size_t *ret_len)
{
        size_t cap = 16384, len = 0;
        _cleanup_free_ char *buf = malloc(cap);
        if (!buf)
                return -ENOMEM;
        for (;;) {
                if (len == cap) {
                        if (cap > max)
                                break;
                        size_t ncap = cap * 2 > max + 1 ? max + 1 : cap * 2;
                        char *nbuf = realloc(buf, ncap);
                        if (!nbuf)
                                return -ENOMEM;
                        buf = nbuf;
                        cap = ncap;
                }
                ssize_t n = read(fd, buf + len, cap - len);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (n == 0)
                        break;
                len += (size_t) n;
        }
        *ret_buf = TAKE_PTR(buf);
        *ret_len = len;
        return 0;
}

int
oci_spec_parse_file(const char *path, oci_spec **ret_spec, msp_err *err)
{
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return msp_err_sys(err, errno, "%s: open", path);
        struct stat st;
        if (fstat(fd, &st) < 0)
                return msp_err_sys(err, errno, "%s: stat", path);
        if (!S_ISREG(st.st_mode))
                return msp_err_set(err, EINVAL, "%s: not a regular file", path);
        if (st.st_size > (off_t) OCI_CONFIG_MAX_BYTES)
                return msp_err_set(err, E2BIG, "%s: too large (%lld bytes, limit %u)", path,
                                   (long long) st.st_size, OCI_CONFIG_MAX_BYTES);
        _cleanup_free_ char *data = NULL;
        size_t len = 0;
        int k = read_bounded(fd, OCI_CONFIG_MAX_BYTES, &data, &len);
        if (k < 0)
                return msp_err_sys(err, -k, "%s: read", path);
        return oci_spec_parse_data(path, data, len, ret_spec, err);
}

/* A parsed spec lives inside its own arena. One with arena == NULL was malloc'd by the
 * caller with borrowed members: only the struct is freed. */
oci_spec *
oci_spec_free(oci_spec *spec)
{
        if (!spec)
                return NULL;
        if (spec->arena)
                oci_arena_free(spec->arena);
        else
                free(spec);
        return NULL;
}
