/* --check: every listed language runs a trivial program in a real sandbox, once, bounded in
 * time. Owner: langprobe.c.
 *
 * Detection (languages.h) decides from files: the interpreter and what it needs resolve
 * in the view. Whether it then works is known only by running it: --check names a listed
 * language whose program fails in the sandbox, with the failure. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "oci/oci.h"
#include "sandbox/sandbox.h"

#define MCP_LANGPROBE_TIMEOUT_MS 60000u /* one program, compilers on a busy host included */

typedef struct mcp_langprobe {
        const char *name;               /* in: the language */
        bool ran;                       /* out: printed "ok", nothing on stderr, exited 0 */
        bool conclusive;                /* out: the program ran to its end (no timeout, the
                                         * sandbox started): ran says whether it works */
        uint64_t ms;
        char why[1100];                 /* when !ran */
} mcp_langprobe;

/* Run each language's hello program (mcp_language.hello) in an engine of its own (msp-mcp's
 * private mount namespace, an instance in the state dir, removed again) on the host the
 * caller detected, all at once up to the configured concurrency. -errno when no engine
 * could be made (err says why). */
int mcp_langprobe_run(const mcp_config *cfg, const mcp_host *host, mcp_langprobe *probes,
                      size_t n, msp_err *err);
