/* The languages a sandbox can run, detected once at start from the host's system
 * directories (never from PATH). Owner: languages.c. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "sandbox/bundle.h"
#include "oci/oci.h"

#define MCP_LANG_MAX 16
#define MCP_LANG_ARGV_MAX 8
#define MCP_INTERP_MAX 64

typedef struct mcp_language {
        const char *name;               /* "python" */
        const char *ext;                /* "py": the program is MCP_CODE_DIR/main.<ext> */
        const char *prog;               /* "python3": looked up in /usr/bin, /bin, /usr/local/bin */
        /* argv before the request's args: "@INTERP@" is replaced by the interpreter's path,
         * "@PROG@" by the program's, also inside a longer argument */
        const char *argv[MCP_LANG_ARGV_MAX];
        /* Names starting with home in <prefix>/lib, lib64 and share (prefix: the
         * interpreter's, /usr) are its home directories: their symlinks are followed into
         * /etc. NULL: none. */
        const char *home;
        /* Files below <prefix>/lib/<home> (or lib64) it cannot start without, checked in
         * the view. */
        const char *needs[3];
        /* The name of its package sources that may name configuration under /etc, scanned
         * in its home directories (sysdeps.h); NULL: none. */
        const char *sources;
        /* A program that prints "ok" (msp-mcp --check runs it in the sandbox). */
        const char *hello;
} mcp_language;

typedef struct mcp_languages {
        size_t n;
        const mcp_language *langs[MCP_LANG_MAX];
        /* found in the host view; "" for a language only a rootfs has (runs only there) */
        char interp[MCP_LANG_MAX][MCP_INTERP_MAX];
        const char *names[MCP_LANG_MAX + 1];    /* NULL-terminated, stable order */
        size_t n_off;                   /* present on the host, not working in the view */
        const mcp_language *off[MCP_LANG_MAX];
        char why[MCP_LANG_MAX][320];
} mcp_languages;

/* The host view and the languages detected in it, once at start: what the language
 * cache's keys name, what the engine lists and binds, what --check reports. */
typedef struct mcp_host {
        mcp_hostview view;              /* what the languages link to joined view.sys */
        mcp_languages langs;
} mcp_host;
int mcp_host_detect(mcp_host *ret, msp_err *err);

/* Detect in the host view rooted at root_fd (an O_PATH fd of "/"). With view: what each
 * language's home links to and what its files name under /etc (sysdeps.h) join
 * view->sys, and a language whose interpreter or needs do not resolve in the view is left
 * out (off, with why). */
void mcp_languages_detect(int root_fd, mcp_hostview *view, mcp_languages *ret);
/* List every known language not listed yet whose interpreter resolves in the rootfs at
 * root_fd (an --image or --rootfs view), with no host interpreter: it runs only in
 * sessions on a rootfs that has it. */
void mcp_languages_add_rootfs(mcp_languages *l, int root_fd);
/* Move the listed language name to the ones not listed, with why. */
void mcp_languages_drop(mcp_languages *l, const char *name, const char *why);
/* The table's entry of that name, or NULL. */
const mcp_language *mcp_language_named(const char *name);
/* Index in l, or -1. */
int mcp_language_find(const mcp_languages *l, const char *name);
/* The interpreter's absolute path in the rootfs at root_fd (resolved inside it, as if it were
 * "/"): an executable regular file in /usr/bin, /bin or /usr/local/bin, in that order. */
bool mcp_language_resolve(const mcp_language *lang, int root_fd, char buf[MCP_INTERP_MAX]);
/* argv for the sandbox: the template expanded, then args; malloc'd (one block, free() it). */
int mcp_language_argv(const mcp_language *lang, const char *interp, const char *prog_path,
                      const char *const *args, size_t n_args, const char ***ret, msp_err *err);
