/* Language table and detection. Each interpreter is looked up in fixed system directories
 * through fds (openat2 RESOLVE_IN_ROOT from the root's fd), so that a shim earlier in
 * msp-mcp's own PATH can never become what a sandbox runs. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandbox/bundle.h"
#include "sandbox/languages.h"
#include "oci/oci.h"
#include "sandbox/sysdeps.h"

/* The C and C++ programs are compiled into /tmp (a tmpfs the sandbox may execute from)
 * and run from there; "$@" passes the request's args. */
#define COMPILE_RUN(flags) "@INTERP@ " flags " -o /tmp/main @PROG@ && exec /tmp/main \"$@\""

static const mcp_language table[] = {
        { "sh", "sh", "sh", { "@INTERP@", "@PROG@" }, NULL, { NULL }, NULL, "echo ok" },
        { "bash", "sh", "bash", { "@INTERP@", "@PROG@" }, NULL, { NULL }, NULL, "echo ok" },
        /* Debian's matplotlib reads /etc/matplotlibrc, named in its __init__.py. */
        { "python", "py", "python3", { "@INTERP@", "-u", "@PROG@" }, "python3", { NULL },
          "__init__.py", "print('ok')" },
        { "node", "js", "node", { "@INTERP@", "@PROG@" }, "node", { NULL }, NULL,
          "console.log('ok')" },
        { "perl", "pl", "perl", { "@INTERP@", "@PROG@" }, "perl", { NULL }, NULL,
          "print \"ok\\n\";" },
        { "ruby", "rb", "ruby", { "@INTERP@", "@PROG@" }, "ruby", { NULL }, NULL, "puts 'ok'" },
        /* R_HOME is <libdir>/R; R stops without Renviron, finds no libraries without ldpaths. */
        { "R", "R", "Rscript", { "@INTERP@", "@PROG@" }, "R", { "etc/Renviron", "etc/ldpaths" },
          NULL, "cat('ok\\n')" },
        { "c", "c", "gcc", { "/bin/sh", "-c", COMPILE_RUN("-O1 -std=gnu17 -x c") " -lm", "c" },
          "gcc", { NULL }, NULL, "#include <stdio.h>\nint main(void) { puts(\"ok\"); }\n" },
        { "cpp", "cpp", "g++", { "/bin/sh", "-c", COMPILE_RUN("-O1 -std=gnu++17 -x c++"), "cpp" },
          "gcc", { NULL }, NULL, "#include <iostream>\nint main() { std::cout << \"ok\\n\"; }\n" },
};

static const char *const dirs[] = { "usr/bin", "bin", "usr/local/bin" };

bool
mcp_language_resolve(const mcp_language *lang, int root_fd, char buf[MCP_INTERP_MAX])
{
        for (size_t i = 0; i < ARRAY_SIZE(dirs); i++) {
                char rel[MCP_INTERP_MAX - 1];   /* "/" + rel fits in buf */
                snprintf(rel, sizeof rel, "%s/%s", dirs[i], lang->prog);
                struct open_how how = { .flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_IN_ROOT };
                _cleanup_close_ int fd = (int) syscall(SYS_openat2, root_fd, rel, &how, sizeof how);
                struct stat st;
                if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || !(st.st_mode & 0111))
                        continue;
                snprintf(buf, MCP_INTERP_MAX, "/%s", rel);
                return true;
        }
        return false;
}

static const char *const home_roots[] = { "lib", "lib64", "share" };

/* Scan lang's home directories under prefix ("/usr", or "" for "/"): their symlinks, and
 * what their files name under /etc. */
static void
scan_homes(mcp_sysdeps *deps, const mcp_language *lang, const char *prefix)
{
        for (size_t i = 0; i < ARRAY_SIZE(home_roots); i++) {
                char root[MCP_INTERP_MAX + 8];
                snprintf(root, sizeof root, "%s/%s", prefix, home_roots[i]);
                _cleanup_closedir_ DIR *d = opendir(root);
                struct dirent *de;
                while (d && (de = readdir(d))) {
                        if (strncmp(de->d_name, lang->home, strlen(lang->home)) != 0)
                                continue;
                        char dir[PATH_MAX];
                        snprintf(dir, sizeof dir, "%s/%s", root, de->d_name);
                        mcp_sysdeps_tree(deps, dir, lang->sources);
                }
        }
}

/* Whether lang, found at interp, works in the view: its interpreter and its needs resolve
 * there (what they link to joins the view). false: why says what is missing. */
static bool
usable(mcp_hostview *view, mcp_sysdeps *deps, const mcp_language *lang, const char *interp,
       char *why, size_t size)
{
        char prefix[MCP_INTERP_MAX];
        snprintf(prefix, sizeof prefix, "%s", interp);
        for (int up = 0; up < 2; up++)          /* /usr/bin/R -> /usr */
                *strrchr(prefix, '/') = '\0';
        if (!deps)
                return (void) snprintf(why, size, "out of memory"), false;
        if (lang->home)
                scan_homes(deps, lang, prefix);
        mcp_sysdeps_file(deps, interp, false);
        if (!mcp_sysview_resolve(view, interp, true, why, size))
                return false;
        for (size_t i = 0; i < ARRAY_SIZE(lang->needs) && lang->needs[i]; i++) {
                char path[PATH_MAX];
                bool found = false;
                for (size_t k = 0; k < 2 && !found; k++) {
                        snprintf(path, sizeof path, "%s/%s/%s/%s", prefix, home_roots[k],
                                 lang->home, lang->needs[i]);
                        found = access(path, F_OK) == 0;
                }
                if (!found)
                        return (void) snprintf(why, size, "%s/lib/%s/%s does not exist", prefix,
                                               lang->home, lang->needs[i]),
                               false;
                if (!mcp_sysview_resolve(view, path, true, why, size))
                        return false;
        }
        return true;
}

void
mcp_languages_drop(mcp_languages *l, const char *name, const char *why)
{
        int i = mcp_language_find(l, name);
        if (i < 0 || l->n_off >= MCP_LANG_MAX)
                return;
        l->off[l->n_off] = l->langs[i];
        snprintf(l->why[l->n_off++], sizeof l->why[0], "%s", why);
        for (size_t j = (size_t) i; j + 1 < l->n; j++) {
                l->langs[j] = l->langs[j + 1];
                l->names[j] = l->names[j + 1];
                memcpy(l->interp[j], l->interp[j + 1], sizeof l->interp[j]);
        }
        l->names[--l->n] = NULL;
}

void
mcp_languages_detect(int root_fd, mcp_hostview *view, mcp_languages *ret)
{
        mcp_languages l = { 0 };
        mcp_sysdeps *deps = view ? mcp_sysdeps_new(view) : NULL;
        for (size_t i = 0; i < ARRAY_SIZE(table) && l.n < MCP_LANG_MAX; i++) {
                if (!mcp_language_resolve(&table[i], root_fd, l.interp[l.n]))
                        continue;
                if (view && !usable(view, deps, &table[i], l.interp[l.n], l.why[l.n_off],
                                    sizeof l.why[0])) {
                        l.off[l.n_off++] = &table[i];
                        continue;
                }
                l.langs[l.n] = &table[i];
                l.names[l.n] = table[i].name;
                l.n++;
        }
        mcp_sysdeps_free(deps);
        l.names[l.n] = NULL;
        *ret = l;
}

int
mcp_host_detect(mcp_host *ret, msp_err *err)
{
        int r = mcp_hostview_probe(&ret->view, err);
        if (r < 0)
                return r;
        _cleanup_close_ int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        mcp_languages_detect(root, &ret->view, &ret->langs);
        return 0;
}

void
mcp_languages_add_rootfs(mcp_languages *l, int root_fd)
{
        char interp[MCP_INTERP_MAX];
        for (size_t i = 0; i < ARRAY_SIZE(table) && l->n < MCP_LANG_MAX; i++) {
                if (mcp_language_find(l, table[i].name) >= 0 ||
                    !mcp_language_resolve(&table[i], root_fd, interp))
                        continue;
                l->langs[l->n] = &table[i];
                l->names[l->n] = table[i].name;
                l->interp[l->n][0] = '\0';
                l->names[++l->n] = NULL;
        }
}

const mcp_language *
mcp_language_named(const char *name)
{
        for (size_t i = 0; i < ARRAY_SIZE(table); i++)
                if (strcmp(table[i].name, name) == 0)
                        return &table[i];
        return NULL;
}

int
mcp_language_find(const mcp_languages *l, const char *name)
{
        for (size_t i = 0; i < l->n; i++)
                if (strcmp(l->langs[i]->name, name) == 0)
                        return (int) i;
        return -1;
}

/* s with every "@INTERP@" and "@PROG@" replaced, written at out (NULL: only measure). */
static size_t
expand(const char *s, const char *interp, const char *prog, char *out)
{
        size_t n = 0;
        while (*s) {
                const char *rep = NULL;
                size_t skip = 0;
                if (strncmp(s, "@INTERP@", 8) == 0)
                        rep = interp, skip = 8;
                else if (strncmp(s, "@PROG@", 6) == 0)
                        rep = prog, skip = 6;
                if (rep) {
                        size_t k = strlen(rep);
                        if (out)
                                memcpy(out + n, rep, k);
                        n += k;
                        s += skip;
                } else {
                        if (out)
                                out[n] = *s;
                        n++;
                        s++;
                }
        }
        if (out)
                out[n] = '\0';
        return n + 1;
}

int
mcp_language_argv(const mcp_language *lang, const char *interp, const char *prog_path,
                  const char *const *args, size_t n_args, const char ***ret, msp_err *err)
{
        size_t n = 0, bytes = 0;
        while (n < MCP_LANG_ARGV_MAX && lang->argv[n])
                bytes += expand(lang->argv[n++], interp, prog_path, NULL);
        size_t slots = (n + n_args + 1) * sizeof(char *);
        char *block = malloc(slots + bytes);
        if (!block)
                return msp_err_set(err, ENOMEM, "out of memory");
        const char **argv = (const char **) (void *) block;
        char *p = block + slots;
        for (size_t i = 0; i < n; i++) {
                argv[i] = p;
                p += expand(lang->argv[i], interp, prog_path, p);
        }
        for (size_t i = 0; i < n_args; i++)
                argv[n + i] = args[i];
        argv[n + n_args] = NULL;
        *ret = argv;
        return 0;
}
