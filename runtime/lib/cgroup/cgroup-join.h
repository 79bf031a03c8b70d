/* Joining the container's cgroup without the kernel's global threadgroup write lock.
 *
 * Writing a pid into cgroup.procs takes cgroup_threadgroup_rwsem for writing, and the
 * first writer after a quiet spell waits for an RCU grace period: 7-15 ms on a 2-core
 * VM, more than everything else `create` does (docs/PERFORMANCE.md). Two ways into a
 * cgroup skip that lock: clone3(CLONE_INTO_CGROUP) for the v2 hierarchy (the child is
 * born in its cgroup) and a task writing "0" (itself, one thread) into a v1
 * hierarchy's `tasks` file. The single-threaded init moves exactly like a write of its
 * pid to cgroup.procs would move it.
 *
 * The parent opens everything before clone3 (rt_cgroup_join_prepare_parent), so the
 * kernel checks permissions against the parent's credentials in both cases (v1 checks
 * a migration against the opener's credentials; CLONE_INTO_CGROUP against the caller's,
 * in the caller's cgroup namespace, like a write to cgroup.procs). The child writes
 * "0" into each `tasks` fd first thing after the parent's go-ahead
 * (rt_cgroup_join_child). When prepare fails, or clone3 refuses CLONE_INTO_CGROUP, the
 * caller falls back to rt_cgroup_enter() from the parent, which reports the same errors
 * as before. */
#pragma once

#include <stddef.h>

#include "oci/oci.h"

/* Which hierarchies a call works on: the cgroup2 one (all of a unified host, only
 * `unified` on a hybrid one) and the v1 ones. */
enum {
        RT_CGROUP_V2 = 1 << 0,
        RT_CGROUP_V1 = 1 << 1,
        RT_CGROUP_ALL = RT_CGROUP_V2 | RT_CGROUP_V1,
};

#define RT_CGROUP_JOIN_MAX 32

typedef struct rt_cgroup_join {
        int v2_fd;                              /* the cgroup2 leaf for CLONE_INTO_CGROUP, or -1 */
        size_t n;                               /* v1 hierarchies */
        int tasks_fd[RT_CGROUP_JOIN_MAX];       /* <hierarchy><path>/tasks, O_WRONLY */
        char hier[RT_CGROUP_JOIN_MAX][64];      /* for messages */
        const char *path;                       /* borrowed */
} rt_cgroup_join;

/* No fds: the state rt_cgroup_join_close() leaves. */
void rt_cgroup_join_init(rt_cgroup_join *j);
/* Open the v2 leaf and each v1 `tasks` file of path (of the hierarchies `which` names,
 * RT_CGROUP_V1/V2 of cgroup.h), every fd at or above min_fd (so that --preserve-fds
 * slots stay free). On failure nothing stays open. */
int rt_cgroup_join_prepare_parent(const char *path, unsigned which, int min_fd,
                                  rt_cgroup_join *j, msp_err *err);
/* The hierarchies of the prepared `tasks` fds, one per line, for the child's messages;
 * -ENAMETOOLONG when they do not fit. */
int rt_cgroup_join_names(const rt_cgroup_join *j, char *buf, size_t size);
/* In the child: take n `tasks` fds received from the parent, with their names as
 * rt_cgroup_join_names wrote them (j owns the fds from here on). */
void rt_cgroup_join_adopt(rt_cgroup_join *j, const char *path, const int *fds, size_t n,
                          const char *names);
/* In the child after clone3: move itself into each v1 hierarchy, then close every fd. */
int rt_cgroup_join_child(rt_cgroup_join *j, msp_err *err);
void rt_cgroup_join_close(rt_cgroup_join *j);
