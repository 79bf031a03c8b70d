/* CVE-2019-5736: run with an exe no container can write (a detached read-only view of the
 * binary, made at the entry point, or a sealed memfd copy), so that a process in a
 * container cannot reach the host binary through /proc/<pid>/exe of a runtime process. */
#pragma once

#include <stdbool.h>

/* Does the command line (global options, then COMMAND) name a command that creates or
 * enters a container? Only those need the protection. */
bool rt_selfexe_needed(int argc, char **argv);

/* When needed and not yet protected (neither the read-only view nor a sealed memfd):
 * copy /proc/self/exe into a memfd, seal it and fexecve it with the same argv and
 * environment. Returns only when nothing
 * had to be done (0) or on failure (-errno, with a message on stderr). */
int rt_selfexe_ensure(int argc, char **argv, char **envp);
