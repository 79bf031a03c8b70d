/* Linux security module labels of the container process: process.apparmorProfile,
 * process.selinuxLabel and linux.mountLabel (docs/SECURITY_MODEL.md, "LSM labels").
 * A label is refused at create when its LSM is not active on the host: a confinement the
 * config asks for is never silently dropped. The exec label is written through the
 * trusted procfs handle (procfs.h), never a path under the container's /proc
 * (CVE-2019-16884, CVE-2025-52881). */
#pragma once

#include "oci/oci.h"

enum rt_lsm { RT_LSM_SELINUX, RT_LSM_APPARMOR };

/* 1 if the LSM is active on this kernel, 0 if not. Asks lsm_list_modules(2) (Linux
 * 6.8), else /sys/kernel/security/lsm, else the LSM's own sysfs/selinuxfs switch. */
int rt_lsm_active(enum rt_lsm lsm);

/* At create: every label in the config names an active LSM (else -ENOTSUP naming the
 * field, its value and the host's LSMs); mountLabel is not applied yet (-ENOTSUP). */
int rt_lsm_check(const oci_process *p, const oci_linux *lx, msp_err *err);
/* The process labels only, for `exec` (its process may come from --process FILE or
 * --apparmor): the message starts with `source` ("exec", a file name). */
int rt_lsm_check_process(const char *source, const oci_process *p, msp_err *err);

/* In the init and in an exec'd process, before no_new_privs and the capability drop
 * (AppArmor restricts transitions under no_new_privs): the label the next execve
 * switches to, written to <procfd>/thread-self/attr/apparmor/exec ("exec PROFILE") or
 * .../attr/exec; an SELinux label also to attr/keycreate (call it before creating the
 * session keyring). procfd may be a procfs of an ancestor pid namespace (thread-self
 * resolves in it). A no-op without a label. */
int rt_lsm_set_exec_label(int procfd, const oci_process *p, msp_err *err);
