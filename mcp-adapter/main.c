/* msp-mcp: the MCP server that will run agents' code in a fresh msp sandbox per call.
 *
 * Not implemented yet (issue 7). Until then this binary answers --version and refuses
 * everything else with a clear message and exit status 1, so that nothing mistakes the
 * stub for a working server. */
#include <stdio.h>
#include <string.h>

#ifndef MSP_VERSION
#define MSP_VERSION "unknown"
#endif

int
main(int argc, char **argv)
{
        if (argc == 2 && strcmp(argv[1], "--version") == 0) {
                printf("msp-mcp version %s\n", MSP_VERSION);
                return 0;
        }

        fputs("msp-mcp: the MCP server is not implemented yet (see issue 7)\n", stderr);
        return 1;
}
