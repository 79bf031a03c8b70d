/* The languages a sandbox can run, detected once at start from the host's system
 * directories (never from PATH). Owner: languages.c. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#define MCP_LANG_MAX 16
#define MCP_LANG_ARGV_MAX 8

typedef struct mcp_language {
        const char *name;               /* "python" */
        const char *ext;                /* "py": the program is MCP_CODE_DIR/main.<ext> */
        const char *interp;             /* absolute path inside the sandbox, "/usr/bin/python3" */
        /* argv before the request's args; "@PROG@" is replaced by the program's path */
        const char *argv[MCP_LANG_ARGV_MAX];
} mcp_language;

typedef struct mcp_languages {
        size_t n;
        const mcp_language *langs[MCP_LANG_MAX];
        const char *names[MCP_LANG_MAX + 1];    /* NULL-terminated, stable order */
} mcp_languages;

/* Detect in the host view rooted at root_fd (an O_PATH fd of "/" normally): a language is
 * available when its interpreter (and compiler) is an executable regular file there. */
void mcp_languages_detect(int root_fd, mcp_languages *ret);
const mcp_language *mcp_language_find(const mcp_languages *l, const char *name);
/* Whether the language's interpreter exists in the rootfs at root_fd. */
bool mcp_language_available(const mcp_language *lang, int root_fd);
