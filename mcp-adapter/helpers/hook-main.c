/* msp-sandbox-hook: the createRuntime hooks of msp-mcp's sandboxes (bundle.c). The runtime
 * runs it with the OCI state on stdin once a sandbox's namespaces exist and before its
 * program starts:
 *
 *   msp-sandbox-hook --userns-limits        the user namespace's own budgets (userns-limits.h)
 *   msp-sandbox-hook --usernet HELPER       slirp4netns for a network session (usernet-hook.h)
 *
 * A program of its own, static where the build allows, rather than msp-mcp run again: the
 * runtime starts it for every sandbox, and msp-mcp's shared libraries (GnuTLS,
 * libmicrohttpd, p11-kit) would be loaded and their constructors run each time.
 * Exit status 0, or 1 with the reason on stderr (the runtime reports it); 2 on usage. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "helpers/usernet-hook.h"
#include "helpers/userns-limits.h"
#include "sandbox/sandbox.h"

int
main(int argc, char **argv)
{
        if (argc == 4 && strcmp(argv[1], MCP_USERNS_HOOK_ARG) == 0)
                return mcp_userns_limits_hook(stdin, argv[2], argv[3]);
        if (argc == 3 && strcmp(argv[1], MCP_USERNET_HOOK_ARG) == 0)
                return mcp_usernet_hook(stdin, argv[2]);
        fprintf(stderr, "usage: msp-sandbox-hook %s INOTIFY_INSTANCES INOTIFY_WATCHES | %s HELPER "
                "(the OCI state on stdin)\n",
                MCP_USERNS_HOOK_ARG, MCP_USERNET_HOOK_ARG);
        return 2;
}
