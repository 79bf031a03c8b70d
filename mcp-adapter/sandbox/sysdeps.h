/* The /etc paths a language's own files name, found where the language keeps them and
 * joined to the system view. Owner: sysdeps.c.
 *
 * A language reads configuration from /etc through the code it runs: compiled-in paths in
 * its interpreter and in the libraries it loads (fontconfig's /etc/fonts, reached by R's
 * cairo device through libcairo and libfontconfig), and paths in its packages' sources
 * (Debian's matplotlib reads /etc/matplotlibrc). The scan reads the string literals naming
 * an existing path under /etc: in the read-only data (.rodata*) of the interpreter, of the
 * shared objects in the language's home directories, and of every library they link
 * (DT_NEEDED, found as the dynamic loader finds it: RUNPATH, then /etc/ld.so.cache); and in
 * the package sources a language names (mcp_language.sources). Each path found is resolved
 * with mcp_sysview_resolve, which joins it only where the view may follow (never the
 * synthesized or secret files). Bounded in files and bytes: start-up cost. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

typedef struct mcp_hostview mcp_hostview;
typedef struct mcp_sysdeps mcp_sysdeps;

/* A scan's state (files seen, the loader's cache); NULL on out of memory. */
mcp_sysdeps *mcp_sysdeps_new(mcp_hostview *view);
void mcp_sysdeps_free(mcp_sysdeps *d);
/* An ELF file (and what it links) or, with text, a source file. */
void mcp_sysdeps_file(mcp_sysdeps *d, const char *path, bool text);
/* Below dir (a language's home; a directory, not a link to one), in it and three levels of
 * directories below: every shared object ("*.so", "*.so.*") and every file named source
 * (NULL: none) as text; and every symlink in it and one level below, resolved as the
 * sandbox would (/usr/lib/R/etc/Renviron -> /etc/R/Renviron brings /etc/R). Links the view
 * may not follow are left out; links that dangle on the host dangle in the sandbox too. */
void mcp_sysdeps_tree(mcp_sysdeps *d, const char *dir, const char *source);
