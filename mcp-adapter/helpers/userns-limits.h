/* Per-namespace kernel budgets of a sandbox's user namespace. Owner: userns-limits.c.
 *
 * Whatever a sandbox charges to a per-user budget (inotify instances and watches,
 * namespaces) is charged to the owner of its user namespace as well: host root's, when the
 * runtime made it (sandbox-userns.h says when msp-mcp does). The budgets of the namespace itself
 * (/proc/sys/user/max_*, settable only from inside it with CAP_SYS_RESOURCE there) cap what
 * one sandbox can take. A createRuntime hook sets them: the runtime runs msp-sandbox-hook
 * (hook-main.c) with MCP_USERNS_HOOK_ARG once the container's namespaces exist and before
 * its process starts; the hook joins the user namespace of the state's pid and writes the
 * limits. Runtime-agnostic (msp and runc run createRuntime hooks alike). */
#pragma once

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* The hook: the OCI state on `in`, exit status 0 or 1 (the reason on stderr);
 * max_inotify_instances and max_inotify_watches as given (decimal text). */
int mcp_userns_limits_hook(FILE *in, const char *instances, const char *watches);

/* The createRuntime hooks' input: the OCI state's pid and (when `bundle` is not NULL) its
 * bundle path; -EINVAL with the reason on stderr, prefixed by `who`. */
int mcp_hook_state(FILE *in, const char *who, pid_t *ret, char *bundle, size_t bundle_size);
