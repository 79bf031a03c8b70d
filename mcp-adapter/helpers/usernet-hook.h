/* The createRuntime hook that attaches the user-mode networking helper to a network
 * session's sandbox (sandbox/usernet.h says how it is set up). Owner: usernet-hook.c; run
 * by msp-sandbox-hook (hook-main.c). */
#pragma once

#include <stdio.h>

/* The OCI state on `in`, the helper's path; exit status 0 or 1 (reason on stderr). */
int mcp_usernet_hook(FILE *in, const char *helper);
