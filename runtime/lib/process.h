/* The container process: user and groups, capabilities, rlimits, umask, oomScoreAdj,
 * ioPriority, scheduler, personality, no_new_privs, the executable lookup and the final
 * fd hygiene before execve. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "oci/oci.h"

/* setrlimit for every process.rlimits entry (the whole set is applied, in order). */
int rt_rlimits_apply(const oci_rlimit *rl, size_t n, msp_err *err);
/* ioPriority, scheduler, personality (from linux.personality; may be NULL). */
int rt_process_sched_apply(const oci_process *p, const oci_personality *pers, msp_err *err);
/* The first step of preparing any container process, the init's and exec's alike: the
 * Landlock rule that needs no_new_privs, rlimits, then rt_process_sched_apply. */
int rt_process_apply_limits(const oci_process *p, const oci_linux *lx, msp_err *err);
/* Switch to process.user: setgroups(additionalGids), setresgid, setresuid, umask; keeps
 * the permitted capabilities across the uid change (PR_SET_KEEPCAPS) so that
 * rt_caps_apply can set exactly the configured sets afterwards. Verifies the result. */
int rt_user_switch(const oci_user *u, bool setgroups_allowed, msp_err *err);
/* HOME as runc sets it when process.env has none: the home of the first entry for uid
 * in the container's /etc/passwd (read after pivot_root, resolved beneath the root; a
 * missing, unreadable or odd file counts as no entry), else "/". *ret is envp itself when
 * it names HOME, else a new array with HOME added (never freed: execve follows). */
int rt_env_default_home(char *const *envp, uid_t uid, char *const **ret, msp_err *err);
/* Apply all five capability sets exactly as configured: drop the bounding set, set
 * effective/permitted/inheritable with capset, then raise ambient. Capabilities the
 * running kernel does not know (> cap_last_cap) are skipped (the caller may log them,
 * see rt_caps_unsupported_mask). Expects to run after rt_user_switch (it raises effective
 * to permitted first, so the keepcaps'd permitted set must still hold CAP_SETPCAP).
 * With has_caps false, all sets are emptied. */
int rt_caps_apply(const oci_capabilities *caps, bool has_caps, msp_err *err);
/* The highest capability number the running kernel knows (probed with PR_CAPBSET_READ,
 * no procfs needed); -1 on failure. */
int rt_caps_last_cap(void);
/* The capabilities in any set of caps that the kernel does not know (rt_caps_apply
 * skips them), so that the caller can log them at debug level. */
uint64_t rt_caps_unsupported_mask(const oci_capabilities *caps);
/* Ambient capabilities rt_caps_apply leaves out because they are not also permitted
 * and inheritable (the kernel's rule), for a debug message. */
uint64_t rt_caps_ambient_dropped(const oci_capabilities *caps);
/* For `features`: fill ret with the names (oci_cap_name) of every capability the kernel
 * supports, in number order; returns the count (at most max). */
size_t rt_caps_supported_names(const char **ret, size_t max);
/* Find args[0] for execve: a name without '/' is searched in PATH from env (default
 * PATH when unset); the result must be a regular executable file for the current ids.
 * Errors use podman's phrases: "executable file `x` not found in $PATH: No such file or
 * directory" (maps to exit 127) and "open executable: Permission denied" (126).
 * Writes the path into buf (size PATH_MAX). */
int rt_exec_lookup(const char *file, char *const *env, char *buf, size_t bufsz, msp_err *err);
/* The fds systemd socket activation passed this process (3..3+n-1): LISTEN_FDS when
 * LISTEN_PID is our own pid, else 0. */
int rt_listen_fds(void);
/* Mark every fd >= first_fd close-on-exec (close_range(CLOSE_RANGE_CLOEXEC), with a
 * /proc/self/fd walk as the fallback), so that no runtime fd reaches the container. */
int rt_fds_cloexec_from(int first_fd, msp_err *err);
