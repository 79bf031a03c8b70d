/* A trusted procfs handle (CVE-2019-16884, CVE-2025-52881): every runtime write under
 * /proc goes through fds resolved beneath a procfs root verified with fstatfs, with
 * openat2(RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV | RESOLVE_BENEATH). */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "oci/oci.h"

/* Open a private, verified procfs root: fsopen("proc")+fsmount when possible (a fresh
 * instance nobody else can have mounted over), else open("/proc") verified with
 * fstatfs(PROC_SUPER_MAGIC) and that it is a mount root. Returns an O_PATH dirfd. */
int rt_procfs_open(msp_err *err);
/* Verify that fd is a procfs root (PROC_SUPER_MAGIC, root inode). */
int rt_procfs_verify_root(int procfd, msp_err *err);
/* Open `path` (relative, e.g. "self/oom_score_adj", "sys/net/ipv4/ip_forward") beneath
 * procfd; refuses symlinks/magic links/mount crossings; verifies the result is procfs. */
int rt_procfs_openat(int procfd, const char *path, int flags, msp_err *err);
/* Write a whole string to a file beneath procfd (one write(), as /proc files expect). */
int rt_procfs_write(int procfd, const char *path, const char *data, msp_err *err);

/* ---- a process by pid and start time (/proc/<pid>/stat, not through the handle) ---- */

/* Is `pid` still the process that started at `start_time` (and not a zombie)? */
bool rt_pid_alive(pid_t pid, uint64_t start_time);
/* The start time (field 22 of /proc/<pid>/stat, in clock ticks); ESRCH for a zombie. */
int rt_pid_start_time(pid_t pid, uint64_t *ret, msp_err *err);
