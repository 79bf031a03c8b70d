/* seccomp from linux.seccomp through libseccomp. The filter is built and validated by
 * the parent of create or exec (so errors reach the caller) and loaded as late as
 * possible. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "oci/oci.h"

typedef struct rt_seccomp rt_seccomp;

/* Build the filter. Unknown syscall names are skipped (debug message), like runc.
 * `debug` enables those messages on stderr before the container runs. */
int rt_seccomp_prepare(const oci_seccomp *s, bool debug, rt_seccomp **ret, msp_err *err);
/* Load the filter into the calling process: one seccomp(2) call on the prepared BPF, no
 * allocation. Needs no_new_privs or CAP_SYS_ADMIN, so with noNewPrivileges false load it
 * before capabilities are dropped. With SCMP_ACT_NOTIFY rules, the listener fd
 * (O_CLOEXEC) is returned in *ret_listener (else -1); hand it to the agent with sendmsg
 * (prepare refuses NOTIFY on write, sendmsg and recvmsg, so that cannot deadlock). */
int rt_seccomp_load(rt_seccomp *f, int *ret_listener, msp_err *err);
/* Send the listener fd and the container state to listenerPath (seccomp.md protocol). */
int rt_seccomp_send_listener(const oci_seccomp *s, int listener, const char *state_json,
                             msp_err *err);
rt_seccomp *rt_seccomp_free(rt_seccomp *f);
static inline void
rt_seccomp_freep(rt_seccomp **f)
{
        if (*f)
                rt_seccomp_free(*f);
}

/* rt_seccomp_send_listener() takes the pid from the state's "pid"; for `exec` the
 * ContainerProcessState pid is the new process, so pass it explicitly. */
int rt_seccomp_send_listener_pid(const oci_seccomp *s, int listener, pid_t pid,
                                 const char *state_json, msp_err *err);

/* SCMP_ACT_NOTIFY with listenerPath. listenerPath is a host path, unreachable once the
 * init has pivoted, so the runtime connects before clone (rt_seccomp_listener_connect,
 * an O_CLOEXEC socket, or -1 with no error when the profile has no NOTIFY rule) and the
 * init sends on that socket after loading the filter. `pid` is the process as seen by
 * the runtime (the host), as ContainerProcessState requires. */
bool rt_seccomp_needs_listener(const oci_seccomp *s);
int rt_seccomp_listener_connect(const oci_seccomp *s, msp_err *err);
int rt_seccomp_send_listener_on(int sock, const oci_seccomp *s, int listener, pid_t pid,
                                const char *state_json, msp_err *err);

/* For `features`: static NULL-terminated lists of OCI names. */
const char *const *rt_seccomp_supported_actions(void);
const char *const *rt_seccomp_supported_operators(void);
const char *const *rt_seccomp_supported_archs(void);
const char *const *rt_seccomp_known_flags(void);
/* Flags this kernel accepts, written to ret[0..n-1] and NULL-terminated (probed; 5
 * entries suffice). Returns the count. */
#define RT_SECCOMP_FLAGS_MAX 5
size_t rt_seccomp_supported_flags(const char **ret, size_t n);
