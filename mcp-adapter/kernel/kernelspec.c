/* Kernelspec discovery (kernelspec.h): the kernels directories listed, kernel.json files
 * read within a bound and parsed with the project's JSON. */
#include "kernel/kernelspec.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"
#include "oci/oci.h"

#ifndef RESOLVE_NO_MAGICLINKS
#define RESOLVE_NO_MAGICLINKS 0x02
#endif
#ifndef RESOLVE_IN_ROOT
#define RESOLVE_IN_ROOT 0x10
#endif
#define IN_ROOT (RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS)

/* Jupyter's order of the system's directories, relative to the root. */
static const char *const prefixes[] = { "usr/local/share/jupyter/kernels", "usr/share/jupyter/kernels" };

static const struct {
        const char *language, *name;
} preferred[] = {
        { "python", "python3" },
        { "R", "ir" },
};

struct candidate {
        char name[256];
        size_t prefix;
};

static char **
strv_free(char **v)
{
        for (size_t i = 0; v && v[i]; i++)
                free(v[i]);
        free(v);
        return NULL;
}

mcp_kernelspec *
mcp_kernelspec_free(mcp_kernelspec *s)
{
        if (!s)
                return NULL;
        free(s->name);
        free(s->path);
        free(s->language);
        free(s->display_name);
        strv_free(s->argv);
        strv_free(s->env);
        free(s->interrupt_mode);
        free(s);
        return NULL;
}

static int
bad(msp_err *err, const char *path, const char *field, const char *what)
{
        return msp_err_set(err, EINVAL, "kernelspec %s: %s: %s", path, field, what);
}

static int
oom(msp_err *err)
{
        return msp_err_set(err, ENOMEM, "kernelspec: out of memory");
}

/* kernel.json's bytes (at most MCP_KERNELSPEC_MAX), of a regular file inside the root. */
static int
read_spec(int root_fd, const char *rel, const char *path, char **ret, size_t *len, msp_err *err)
{
        /* O_NONBLOCK: a FIFO in an image's rootfs must not hang the open. */
        _cleanup_close_ int fd = mcp_openat2(root_fd, rel, O_RDONLY | O_NONBLOCK | O_NOCTTY, 0,
                                             IN_ROOT);
        if (fd < 0)
                return msp_err_sys(err, -fd, "kernelspec %s", path);
        struct stat st;
        if (fstat(fd, &st) < 0)
                return msp_err_sys(err, errno, "kernelspec %s", path);
        if (!S_ISREG(st.st_mode))
                return msp_err_set(err, EINVAL, "kernelspec %s: not a regular file", path);
        int r = mcp_read_fd(fd, MCP_KERNELSPEC_MAX + 1, ret, len, err);
        if (r < 0)
                return msp_err_prefix(err, "kernelspec %s", path);
        if (*len > MCP_KERNELSPEC_MAX) {
                free(*ret);
                *ret = NULL;
                return msp_err_set(err, E2BIG, "kernelspec %s: over %u bytes", path,
                                   MCP_KERNELSPEC_MAX);
        }
        return 0;
}

static char *
dup_string(const oci_json *v)
{
        const char *s = v ? oci_json_string(v) : NULL;
        return s ? strdup(s) : NULL;
}

static int
parse_argv(const oci_json *v, const char *path, mcp_kernelspec *s, msp_err *err)
{
        size_t n = v && oci_json_type_of(v) == OCI_JSON_ARRAY ? oci_json_len(v) : 0;
        if (n == 0)
                return bad(err, path, "argv", "not a non-empty array of strings");
        if (!(s->argv = calloc(n + 1, sizeof *s->argv)))
                return oom(err);
        for (size_t i = 0; i < n; i++) {
                const char *a = oci_json_string(oci_json_value_at(v, i));
                if (!a || (i == 0 && !a[0]))
                        return bad(err, path, "argv", "not a non-empty array of strings");
                if (!(s->argv[i] = strdup(a)))
                        return oom(err);
        }
        return 0;
}

static int
parse_env(const oci_json *v, const char *path, mcp_kernelspec *s, msp_err *err)
{
        if (v && oci_json_type_of(v) != OCI_JSON_OBJECT)
                return bad(err, path, "env", "not an object of strings");
        size_t n = v ? oci_json_len(v) : 0;
        if (!(s->env = calloc(n + 1, sizeof *s->env)))
                return oom(err);
        for (size_t i = 0; i < n; i++) {
                const char *key = oci_json_key_at(v, i);
                const char *val = oci_json_string(oci_json_value_at(v, i));
                if (!val || !key[0] || strchr(key, '='))
                        return bad(err, path, "env", "not an object of strings");
                if (asprintf(&s->env[i], "%s=%s", key, val) < 0) {
                        s->env[i] = NULL;
                        return oom(err);
                }
        }
        return 0;
}

/* The spec's every field checked; *ret only when its language is language. 0 (nothing
 * when it is another language's), or -errno naming the file and field; *matched says
 * whether its language was the one asked. */
static int
load(int root_fd, const struct candidate *c, const char *language, mcp_kernelspec **ret,
     bool *matched, msp_err *err)
{
        *matched = false;
        char rel[512], path[520];
        snprintf(rel, sizeof rel, "%s/%s/kernel.json", prefixes[c->prefix], c->name);
        snprintf(path, sizeof path, "/%s", rel);
        _cleanup_free_ char *data = NULL;
        size_t len;
        int r = read_spec(root_fd, rel, path, &data, &len, err);
        if (r < 0)
                return r;
        _cleanup_json_doc_ oci_json_doc *doc = NULL;
        char name[540];
        snprintf(name, sizeof name, "kernelspec %s", path);
        if ((r = oci_json_parse(name, data, len, &doc, err)) < 0)
                return r;
        const oci_json *root = oci_json_doc_root(doc);
        if (oci_json_type_of(root) != OCI_JSON_OBJECT)
                return bad(err, path, "(document)", "not an object");
        const char *lang = oci_json_string(oci_json_get(root, "language"));
        if (!lang || !lang[0])
                return bad(err, path, "language", "not a non-empty string");
        if (strcasecmp(lang, language) != 0)
                return 0;
        *matched = true;
        mcp_kernelspec *s = calloc(1, sizeof *s);
        if (!s)
                return oom(err);
        const oci_json *dn = oci_json_get(root, "display_name");
        const oci_json *im = oci_json_get(root, "interrupt_mode");
        const char *mode = im ? oci_json_string(im) : "signal";
        if (!(s->name = strdup(c->name)) || !(s->path = strdup(path)) || !(s->language = strdup(lang)))
                r = oom(err);
        else if (dn && !(s->display_name = dup_string(dn)))
                r = bad(err, path, "display_name", "not a string");
        else if (!mode || (strcmp(mode, "signal") != 0 && strcmp(mode, "message") != 0))
                r = bad(err, path, "interrupt_mode", "neither \"signal\" nor \"message\"");
        else if (!(s->interrupt_mode = strdup(mode)))
                r = oom(err);
        else if ((r = parse_argv(oci_json_get(root, "argv"), path, s, err)) >= 0)
                r = parse_env(oci_json_get(root, "env"), path, s, err);
        if (r < 0) {
                mcp_kernelspec_free(s);
                return r;
        }
        *ret = s;
        return 0;
}

static int
by_name(const void *a, const void *b)
{
        return strcmp(((const struct candidate *) a)->name, ((const struct candidate *) b)->name);
}

/* The names under each kernels directory (a missing one is none), the first prefix's
 * where both have one, in byte order. */
static int
list_candidates(int root_fd, struct candidate **ret, size_t *n_ret, msp_err *err)
{
        size_t cap = MCP_KERNELSPECS_MAX * ARRAY_SIZE(prefixes), n = 0;
        _cleanup_free_ struct candidate *c = calloc(cap, sizeof *c);
        if (!c)
                return oom(err);
        for (size_t p = 0; p < ARRAY_SIZE(prefixes); p++) {
                int fd = mcp_openat2(root_fd, prefixes[p], O_RDONLY | O_DIRECTORY, 0, IN_ROOT);
                if (fd == -ENOENT || fd == -ENOTDIR)
                        continue;
                if (fd < 0)
                        return msp_err_sys(err, -fd, "kernelspec /%s", prefixes[p]);
                DIR *d = fdopendir(fd);
                if (!d) {
                        close(fd);
                        return msp_err_sys(err, errno, "kernelspec /%s", prefixes[p]);
                }
                size_t here = 0;
                struct dirent *de;
                while ((de = readdir(d)) && here < MCP_KERNELSPECS_MAX) {
                        if (de->d_name[0] == '.')
                                continue;
                        bool seen = false;
                        for (size_t i = 0; i < n && !seen; i++)
                                seen = strcmp(c[i].name, de->d_name) == 0;
                        if (seen)
                                continue;
                        snprintf(c[n].name, sizeof c[n].name, "%s", de->d_name);
                        c[n++].prefix = p;
                        here++;
                }
                closedir(d);
        }
        qsort(c, n, sizeof *c, by_name);
        *ret = TAKE_PTR(c);
        *n_ret = n;
        return 0;
}

int
mcp_kernelspec_find(int root_fd, const char *language, mcp_kernelspec **ret, msp_err *err)
{
        _cleanup_free_ struct candidate *c = NULL;
        size_t n = 0;
        int r = list_candidates(root_fd, &c, &n, err);
        if (r < 0)
                return r;
        const char *want = NULL;
        for (size_t i = 0; i < ARRAY_SIZE(preferred); i++)
                if (strcasecmp(preferred[i].language, language) == 0)
                        want = preferred[i].name;
        /* The preferred name first: a bad spec of it is the answer's error. */
        for (size_t i = 0; want && i < n; i++) {
                if (strcmp(c[i].name, want) != 0)
                        continue;
                mcp_kernelspec *s = NULL;
                bool matched;
                if ((r = load(root_fd, &c[i], language, &s, &matched, err)) < 0)
                        return r;
                if (s) {
                        *ret = s;
                        return 0;
                }
        }
        /* Then every other: a bad spec of the language asked is the answer's error; one
         * whose language cannot be read may have been it, so that its error is the answer
         * when no other is found. */
        msp_err first = { 0 };
        for (size_t i = 0; i < n; i++) {
                if (want && strcmp(c[i].name, want) == 0)
                        continue;
                mcp_kernelspec *s = NULL;
                msp_err e = { 0 };
                bool matched;
                r = load(root_fd, &c[i], language, &s, &matched, &e);
                if (r < 0 && matched) {
                        *err = e;
                        return r;
                }
                if (r < 0 && !first.errnum)
                        first = e;
                if (s) {
                        *ret = s;
                        return 0;
                }
        }
        if (first.errnum) {
                *err = first;
                return -first.errnum;
        }
        return msp_err_set(err, ENOENT, "no Jupyter kernel for the language %s in /%s or /%s",
                           language, prefixes[0], prefixes[1]);
}
