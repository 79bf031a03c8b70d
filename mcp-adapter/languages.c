/* Language table and detection. Each interpreter is looked up at a fixed absolute path in
 * the host's system directories (through fds, resolved as if root_fd were "/"), so that a
 * shim earlier in msp-mcp's own PATH can never become what a sandbox runs. */
#include <fcntl.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bundle.h"
#include "languages.h"
#include "macros.h"

/* The C and C++ programs are compiled into /tmp (a tmpfs the sandbox may execute from)
 * and run from there; "$@" passes the request's args. */
#define COMPILE_RUN(cc, flags) \
        cc " " flags " -o /tmp/main @PROG@ && exec /tmp/main \"$@\""

static const mcp_language table[] = {
        { "sh", "sh", "/bin/sh", { "/bin/sh", "@PROG@" } },
        { "bash", "sh", "/bin/bash", { "/bin/bash", "@PROG@" } },
        { "python", "py", "/usr/bin/python3", { "/usr/bin/python3", "-u", "@PROG@" } },
        { "node", "js", "/usr/bin/node", { "/usr/bin/node", "@PROG@" } },
        { "perl", "pl", "/usr/bin/perl", { "/usr/bin/perl", "@PROG@" } },
        { "ruby", "rb", "/usr/bin/ruby", { "/usr/bin/ruby", "@PROG@" } },
        { "r", "R", "/usr/bin/Rscript", { "/usr/bin/Rscript", "@PROG@" } },
        { "c", "c", "/usr/bin/gcc",
          { "/bin/sh", "-c", COMPILE_RUN("/usr/bin/gcc", "-O1 -std=gnu17 -x c") " -lm", "c" } },
        { "cpp", "cpp", "/usr/bin/g++",
          { "/bin/sh", "-c", COMPILE_RUN("/usr/bin/g++", "-O1 -std=gnu++17 -x c++"), "cpp" } },
};

bool
mcp_language_available(const mcp_language *lang, int root_fd)
{
        struct open_how how = { .flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_IN_ROOT };
        _cleanup_close_ int fd = (int) syscall(SYS_openat2, root_fd, lang->interp + 1, &how,
                                               sizeof how);
        if (fd < 0)
                return false;
        struct stat st;
        return fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111);
}

void
mcp_languages_detect(int root_fd, mcp_languages *ret)
{
        mcp_languages l = { 0 };
        for (size_t i = 0; i < ARRAY_SIZE(table) && l.n < MCP_LANG_MAX; i++) {
                if (!mcp_language_available(&table[i], root_fd))
                        continue;
                l.langs[l.n] = &table[i];
                l.names[l.n] = table[i].name;
                l.n++;
        }
        l.names[l.n] = NULL;
        *ret = l;
}

const mcp_language *
mcp_language_find(const mcp_languages *l, const char *name)
{
        for (size_t i = 0; i < l->n; i++)
                if (strcmp(l->langs[i]->name, name) == 0)
                        return l->langs[i];
        return NULL;
}
