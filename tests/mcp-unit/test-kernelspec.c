/* kernel/kernelspec.h: kernelspecs found in root directories the test makes under /tmp
 * (good ones, a preferred name among others of its language, /usr/local's before /usr's,
 * bad fields, a file over the bound, symlinks that point out of the root), and on the
 * host's "/" when it has ipykernel's spec. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"
#include "kernel/kernel.h"
#include "oci/oci.h"
#include "lib/tap.h"

static char tmp[] = "/tmp/msp-kspec-XXXXXX";

/* Makes every missing directory of path's parent, then path with text. */
static void
put(const char *root, const char *rel, const char *text)
{
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", root, rel);
        (void) mkdir(root, 0755);
        for (char *q = path + strlen(root) + 1; (q = strchr(q, '/')); q++) {
                *q = '\0';
                (void) mkdir(path, 0755);
                *q = '/';
        }
        FILE *f = fopen(path, "we");
        if (f) {
                fputs(text, f);
                fclose(f);
        }
}

static const char *
root_path(const char *name)
{
        static char p[200];
        snprintf(p, sizeof p, "%s/%s", tmp, name);
        return p;
}

static int
find_in(const char *root, const char *language, mcp_kernelspec **s, msp_err *err)
{
        int fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        int r = mcp_kernelspec_find(fd, language, s, err);
        close(fd);
        return r;
}

#define K "usr/share/jupyter/kernels/"
#define LK "usr/local/share/jupyter/kernels/"

TEST(python3_is_preferred_and_its_fields_are_read)
{
        const char *root = root_path("good");
        put(root, K "a-python/kernel.json", "{\"argv\":[\"python\",\"{connection_file}\"],\"language\":\"python\"}");
        put(root, K "python3/kernel.json",
            "{\"argv\":[\"python3\",\"-m\",\"ipykernel_launcher\",\"-f\",\"{connection_file}\"],"
            "\"display_name\":\"Python 3\",\"language\":\"python\",\"env\":{\"A\":\"b\"},"
            "\"metadata\":{\"debugger\":true}}");
        put(root, LK "ir/kernel.json", "{\"argv\":[\"R\",\"--slave\",\"-e\",\"IRkernel::main()\","
            "\"--args\",\"{connection_file}\"],\"display_name\":\"R\",\"language\":\"R\"}");
        put(root, K "ir/kernel.json", "{\"argv\":[\"/usr/bin/R-old\"],\"language\":\"R\"}");
        put(root, K "julia-1.9/kernel.json", "{\"argv\":[\"julia\",\"{connection_file}\"],"
            "\"language\":\"julia\",\"interrupt_mode\":\"message\"}");
        msp_err err = { 0 };
        _cleanup_kernelspec_ mcp_kernelspec *py = NULL, *r = NULL, *jl = NULL;
        ASSERT_OK_ERR(find_in(root, "python", &py, &err), err);
        ASSERT_STREQ(py->name, "python3");
        ASSERT_STREQ(py->path, "/usr/share/jupyter/kernels/python3/kernel.json");
        ASSERT_STREQ(py->argv[0], "python3");
        ASSERT_STREQ(py->argv[4], "{connection_file}");
        ASSERT_NULL(py->argv[5]);
        ASSERT_STREQ(py->display_name, "Python 3");
        ASSERT_STREQ(py->env[0], "A=b");
        ASSERT_NULL(py->env[1]);
        ASSERT_STREQ(py->interrupt_mode, "signal");
        ASSERT_OK_ERR(find_in(root, "R", &r, &err), err);
        ASSERT_STREQ(r->name, "ir");
        ASSERT_STREQ(r->path, "/usr/local/share/jupyter/kernels/ir/kernel.json");
        ASSERT_STREQ(r->argv[0], "R");
        ASSERT_OK_ERR(find_in(root, "julia", &jl, &err), err);
        ASSERT_STREQ(jl->name, "julia-1.9");
        ASSERT_STREQ(jl->interrupt_mode, "message");
        ASSERT_NULL(jl->display_name);
        ASSERT_NULL(jl->env[0]);
        mcp_kernelspec *none = NULL;
        ASSERT_EQ_INT(find_in(root, "haskell", &none, &err), -ENOENT);
        ASSERT_NULL(none);
}

TEST(another_name_of_the_language_when_the_preferred_is_absent)
{
        const char *root = root_path("other");
        put(root, K "py-venv/kernel.json", "{\"argv\":[\"/opt/venv/bin/python\"],\"language\":\"Python\"}");
        msp_err err = { 0 };
        _cleanup_kernelspec_ mcp_kernelspec *s = NULL;
        ASSERT_OK_ERR(find_in(root, "python", &s, &err), err);
        ASSERT_STREQ(s->name, "py-venv");
}

static void
expect_bad(const char *name, const char *text, const char *language, int want, const char *field)
{
        const char *root = root_path(name);
        char rel[256];
        snprintf(rel, sizeof rel, K "python3/kernel.json");
        put(root, rel, text);
        msp_err err = { 0 };
        mcp_kernelspec *s = NULL;
        int r = find_in(root, language, &s, &err);
        tap_check(r == want && !s && strstr(err.msg, "/usr/share/jupyter/kernels/python3/kernel.json") &&
                  strstr(err.msg, field), "%s: %s", name, err.msg);
        mcp_kernelspec_free(s);
}

TEST(a_bad_spec_is_an_error_naming_file_and_field)
{
        expect_bad("bad-argv", "{\"argv\":\"python3\",\"language\":\"python\"}", "python", -EINVAL, "argv");
        expect_bad("bad-argv-item", "{\"argv\":[\"python3\", 3],\"language\":\"python\"}", "python", -EINVAL, "argv");
        expect_bad("empty-argv", "{\"argv\":[],\"language\":\"python\"}", "python", -EINVAL, "argv");
        expect_bad("bad-env", "{\"argv\":[\"p\"],\"language\":\"python\",\"env\":{\"A\":1}}", "python", -EINVAL, "env");
        expect_bad("bad-mode", "{\"argv\":[\"p\"],\"language\":\"python\",\"interrupt_mode\":\"x\"}", "python", -EINVAL, "interrupt_mode");
        expect_bad("bad-lang", "{\"argv\":[\"p\"],\"language\":7}", "python", -EINVAL, "language");
        expect_bad("bad-json", "{\"argv\":[\"p\"],", "python", -EINVAL, "kernelspec");
        /* Not the preferred name and not the language asked: another language's bad spec
         * is the error only when nothing else was found. */
        const char *root = root_path("bad-other");
        put(root, K "zz/kernel.json", "{\"argv\":[\"p\"],\"language\":7}");
        put(root, K "julia/kernel.json", "{\"argv\":[\"julia\"],\"language\":\"julia\"}");
        msp_err err = { 0 };
        _cleanup_kernelspec_ mcp_kernelspec *s = NULL;
        ASSERT_OK_ERR(find_in(root, "julia", &s, &err), err);
        ASSERT_STREQ(s->name, "julia");
}

TEST(a_spec_over_the_bound_is_refused)
{
        size_t n = MCP_KERNELSPEC_MAX + 16;
        char *big = malloc(n + 1);
        ASSERT_NOT_NULL(big);
        memset(big, ' ', n);
        const char *spec = "{\"argv\":[\"p\"],\"language\":\"python\"}";
        memcpy(big, spec, strlen(spec));
        big[n] = '\0';
        expect_bad("big", big, "python", -E2BIG, "bytes");
        free(big);
}

TEST(symlinks_out_of_the_root_resolve_inside_it)
{
        /* A real spec outside the root, where an absolute and a relative symlink point. */
        char outside[200], root[200];
        snprintf(outside, sizeof outside, "%s", root_path("outside"));
        put(outside, "share/jupyter/kernels/evil/kernel.json",
            "{\"argv\":[\"/bin/evil\"],\"language\":\"evil\"}");
        snprintf(root, sizeof root, "%s", root_path("links"));
        put(root, K "x/kernel.json", "{\"argv\":[\"x\"],\"language\":\"x\"}");
        char link1[1024], link2[1024], link3[1024], target[1024];
        snprintf(link1, sizeof link1, "%s/" K "evil", root);
        snprintf(target, sizeof target, "%s/share/jupyter/kernels/evil", outside);
        ASSERT_OK(symlink(target, link1));
        snprintf(link2, sizeof link2, "%s/" K "evil2", root);
        snprintf(target, sizeof target, "../../../../../../../../../../%s/share/jupyter/kernels/evil",
                 outside + 1);
        ASSERT_OK(symlink(target, link2));
        /* The whole kernels directory of /usr/local a link out of the root. */
        snprintf(link3, sizeof link3, "%s/usr/local", root);
        ASSERT_OK(symlink(outside, link3));
        ASSERT_TRUE(access(link1, F_OK) == 0);  /* on the host, they do lead there */
        msp_err err = { 0 };
        mcp_kernelspec *s = NULL;
        int r = find_in(root, "evil", &s, &err);
        tap_diag("%s", err.msg);
        ASSERT_TRUE(r < 0);
        ASSERT_NULL(s);
        /* The links inside the root's own tree are followed: the same spec through one. */
        char link4[1024];
        snprintf(link4, sizeof link4, "%s/" K "y", root);
        ASSERT_OK(symlink("/" K "x", link4));
        ASSERT_OK_ERR(find_in(root, "x", &s, &err), err);
        ASSERT_STREQ(s->name, "x");
        s = mcp_kernelspec_free(s);
}

TEST(the_hosts_python_kernel)
{
        if (access("/usr/share/jupyter/kernels/python3/kernel.json", R_OK) < 0) {
                tap_skip("the_hosts_python_kernel", "no /usr/share/jupyter/kernels/python3 (Debian: python3-ipykernel)");
                return;
        }
        msp_err err = { 0 };
        _cleanup_kernelspec_ mcp_kernelspec *s = NULL;
        ASSERT_OK_ERR(find_in("/", "python", &s, &err), err);
        ASSERT_STREQ(s->name, "python3");
        ASSERT_NOT_NULL(strstr(s->argv[0], "python3"));
}

int
main(void)
{
        if (!mkdtemp(tmp)) {
                tap_diag("mkdtemp failed");
                return 1;
        }
        RUN(python3_is_preferred_and_its_fields_are_read);
        RUN(another_name_of_the_language_when_the_preferred_is_absent);
        RUN(a_bad_spec_is_an_error_naming_file_and_field);
        RUN(a_spec_over_the_bound_is_refused);
        RUN(symlinks_out_of_the_root_resolve_inside_it);
        RUN(the_hosts_python_kernel);
        int fd = open("/tmp", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        msp_err err = { 0 };
        if (fd < 0 || mcp_remove_tree_at(fd, tmp + strlen("/tmp/"), &err) < 0)
                tap_diag("could not remove %s: %s", tmp, err.msg);
        if (fd >= 0)
                close(fd);
        return tap_done();
}
