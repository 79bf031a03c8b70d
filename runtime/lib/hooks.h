/* OCI hooks: each hook is forked and exec'd with its args and env, the state JSON on
 * stdin, and killed when its timeout expires. */
#pragma once

#include "lib/ctx.h"
#include "oci/oci.h"

/* Run every hook in order; stop at the first failure and return its error
 * ("<kind> hook '<path>' exited with status N" / "... timed out after N s"). */
int rt_hooks_run(const oci_hook_list *hooks, const char *kind, const char *state_json,
                 msp_err *err);
/* Run every hook in order; a failing one is a warning ("<error>, ignoring") and the ones
 * after it still run (poststop: runtime.md, "as if the hook had succeeded"). */
void rt_hooks_run_all(const rt_ctx *ctx, const oci_hook_list *hooks, const char *kind,
                      const char *state_json);
/* --debug: one line per hook about to run ("<kind> hook[i]: <path> <args>"). */
void rt_hooks_debug(const rt_ctx *ctx, const oci_hook_list *hooks, const char *kind);
/* rt_hooks_debug, then rt_hooks_run with st as the state JSON (nothing is serialised
 * without hooks). */
int rt_hooks_run_state(const rt_ctx *ctx, const oci_hook_list *hooks, const char *kind,
                       const oci_state *st, msp_err *err);
