/* A language's Jupyter kernelspec (share/jupyter/kernels/NAME/kernel.json) found in a root
 * filesystem: the host's "/" or an image's rootfs, every path resolved inside that root
 * (openat2 RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS: a symlink that points out of it
 * resolves inside it, as it would in the sandbox). Part of kernel.h's face. Owner:
 * kernelspec.c. */
#pragma once

#include "oci/oci.h"

#define MCP_KERNELSPEC_MAX (64u * 1024)         /* bytes of one kernel.json */
#define MCP_KERNELSPECS_MAX 256u                /* names read from one kernels directory */

typedef struct mcp_kernelspec {
        char *name;             /* its directory's name: "python3", "ir" */
        char *path;             /* its kernel.json inside the root, e.g.
                                 * "/usr/share/jupyter/kernels/python3/kernel.json" */
        char *language;         /* as written: "python", "R" */
        char *display_name;     /* NULL when absent */
        char **argv;            /* NULL-terminated, at least one; "{connection_file}" as
                                 * written; argv[0] may be a bare name, for PATH */
        char **env;             /* its "env" as "NAME=value", NULL-terminated */
        char *interrupt_mode;   /* "signal" (the default) or "message" */
} mcp_kernelspec;

/* The kernel for language (compared without case) under usr/local and then usr of the
 * root whose O_PATH fd is root_fd; a name found under both is usr/local's, as Jupyter
 * finds it. Preferred: "python3" for python, "ir" for R; otherwise the first name in
 * byte order whose "language" is the one asked. 0 with *ret, -ENOENT when none,
 * -EINVAL (-E2BIG) for a spec that is not valid (too big): err names its file and field. */
int mcp_kernelspec_find(int root_fd, const char *language, mcp_kernelspec **ret, msp_err *err);
mcp_kernelspec *mcp_kernelspec_free(mcp_kernelspec *s);

static inline void
mcp_kernelspec_freep(mcp_kernelspec **s)
{
        if (*s)
                mcp_kernelspec_free(*s);
}
#define _cleanup_kernelspec_ _cleanup_(mcp_kernelspec_freep)
