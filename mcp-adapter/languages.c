/* Language table and detection. Each interpreter is looked up in fixed system directories
 * through fds (openat2 RESOLVE_IN_ROOT from the root's fd), so that a shim earlier in
 * msp-mcp's own PATH can never become what a sandbox runs. */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "languages.h"
#include "macros.h"

/* The C and C++ programs are compiled into /tmp (a tmpfs the sandbox may execute from)
 * and run from there; "$@" passes the request's args. */
#define COMPILE_RUN(flags) "@INTERP@ " flags " -o /tmp/main @PROG@ && exec /tmp/main \"$@\""

static const mcp_language table[] = {
        { "sh", "sh", "sh", { "@INTERP@", "@PROG@" } },
        { "bash", "sh", "bash", { "@INTERP@", "@PROG@" } },
        { "python", "py", "python3", { "@INTERP@", "-u", "@PROG@" } },
        { "node", "js", "node", { "@INTERP@", "@PROG@" } },
        { "perl", "pl", "perl", { "@INTERP@", "@PROG@" } },
        { "ruby", "rb", "ruby", { "@INTERP@", "@PROG@" } },
        { "R", "R", "Rscript", { "@INTERP@", "@PROG@" } },
        { "c", "c", "gcc", { "/bin/sh", "-c", COMPILE_RUN("-O1 -std=gnu17 -x c") " -lm", "c" } },
        { "cpp", "cpp", "g++", { "/bin/sh", "-c", COMPILE_RUN("-O1 -std=gnu++17 -x c++"), "cpp" } },
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

void
mcp_languages_detect(int root_fd, mcp_languages *ret)
{
        mcp_languages l = { 0 };
        for (size_t i = 0; i < ARRAY_SIZE(table) && l.n < MCP_LANG_MAX; i++) {
                if (!mcp_language_resolve(&table[i], root_fd, l.interp[l.n]))
                        continue;
                l.langs[l.n] = &table[i];
                l.names[l.n] = table[i].name;
                l.n++;
        }
        l.names[l.n] = NULL;
        *ret = l;
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
