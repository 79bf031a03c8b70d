/* What the languages' files point to outside the bound system directories, found by
 * following their symlinks, and whether a path resolves inside the system view.
 * Owner: sysview.c.
 *
 * The system view is the host's own paths, bound at the same place (the /usr-like
 * directories and an /etc selection, bundle.c). Debian keeps a language's configuration in
 * /etc and links it from the language's home (/usr/lib/R/etc/Renviron -> /etc/R/Renviron,
 * /usr/lib/python3.11/sitecustomize.py -> /etc/python3.11/...): those targets join the view
 * as read-only binds, or as the same symlinks when they are links themselves. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "oci/oci.h"

#define MCP_SYSVIEW_MAX 64
#define MCP_SYSVIEW_PATH 256

typedef enum mcp_sysview_kind {
        MCP_SYSVIEW_DIR,                /* bound read-only, recursively */
        MCP_SYSVIEW_FILE,               /* bound read-only, noexec */
        MCP_SYSVIEW_LINK,               /* the same symlink in the skeleton */
} mcp_sysview_kind;

typedef struct mcp_sysview_entry {
        mcp_sysview_kind kind;
        char path[MCP_SYSVIEW_PATH];    /* absolute, as on the host and in the sandbox */
        char target[MCP_SYSVIEW_PATH];  /* MCP_SYSVIEW_LINK: the link's text */
} mcp_sysview_entry;

typedef struct mcp_sysview {
        size_t n;
        mcp_sysview_entry e[MCP_SYSVIEW_MAX];
} mcp_sysview;

/* The host's system view, computed once: which top-level entries are symlinks (merged
 * /usr) and which are directories to bind read-only. */
#define MCP_HOSTVIEW_MAX 16
typedef struct mcp_hostview {
        size_t n_binds;
        const char *binds[MCP_HOSTVIEW_MAX];       /* "/usr", "/opt"... (static strings) */
        size_t n_links;
        const char *links[MCP_HOSTVIEW_MAX];       /* "/bin"... */
        char link_targets[MCP_HOSTVIEW_MAX][64];   /* "usr/bin" */
        size_t n_etc;                              /* /etc files and dirs bound read-only */
        const char *etc[MCP_HOSTVIEW_MAX];
        bool etc_is_dir[MCP_HOSTVIEW_MAX];
        mcp_sysview sys;                           /* what the languages link to */
} mcp_hostview;

/* Resolve path hop by hop as the sandbox would see it. A hop outside the view that may join
 * it (under /etc, not a synthesized or secret file) is added to view->sys when add is set.
 * false: path cannot be reached; why says which hop and why. */
bool mcp_sysview_resolve(mcp_hostview *view, const char *path, bool add, char *why,
                         size_t why_size);
/* In the skeleton at fd: the mount points of the binds and the symlinks. */
int mcp_sysview_skeleton(int fd, const mcp_sysview *sys, msp_err *err);
