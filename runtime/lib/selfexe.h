/* CVE-2019-5736: run with an exe no container can write (a detached read-only view of the
 * binary, made at the entry point, or a sealed memfd copy), so that a process in a
 * container cannot reach the host binary through /proc/<pid>/exe of a runtime process. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "oci/oci.h"
#include "lib/selfexe-rule.h"

/* Does the command line (global options, then COMMAND) name a command that creates or
 * enters a container? Only those need the protection. */
bool rt_selfexe_needed(int argc, char **argv);

/* When needed and not yet protected (neither the read-only view nor a sealed memfd):
 * copy /proc/self/exe into a memfd, seal it and fexecve it with the same argv and
 * environment, unless the file alone keeps every container from writing it
 * (selfexe-rule.h); then the copy is deferred until the container's uid mappings are
 * known, and one of the rt_selfexe_confirm_*() must run before the command makes any
 * change. Returns only when nothing had to be done (0) or on failure (-errno, with a
 * message on stderr). */
int rt_selfexe_ensure(int argc, char **argv, char **envp);

/* The facts of the file open at fd that the rule (selfexe-rule.h) looks at. */
int rt_selfexe_file_facts(int fd, rt_exe_facts *f);

/* create/run, once the config is read: the container's uid mappings (host ids as this
 * user namespace shows them) when it gets a user namespace of its own (own_userns),
 * else it may hold any id msp can. Where the owner of the binary is among them, msp
 * goes on from the sealed copy: it re-executes itself with the same arguments (returns
 * only on failure). 0 when no copy was deferred or none is needed. */
int rt_selfexe_confirm_maps(const oci_id_mapping *m, size_t n, bool own_userns, msp_err *err);
/* exec: the same for the running container whose process is `pid` (started at
 * start_time), from its user namespace's uid_map, read from outside. */
int rt_selfexe_confirm_pid(pid_t pid, uint64_t start_time, msp_err *err);
