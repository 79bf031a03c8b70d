/* The first argument of msp-sandbox-hook (helpers/hook-main.c) that the bundle's
 * createRuntime hooks give it (bundle.c), naming the hook to run: the user namespace's own
 * budgets (helpers/userns-limits.h) or the user-mode network (usernet.h). */
#pragma once

#define MCP_USERNS_HOOK_ARG "--userns-limits"
#define MCP_USERNET_HOOK_ARG "--usernet"
