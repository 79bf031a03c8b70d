/* Per-container state directories under the state root (/run/msp/<id>/):
 *   state.json  the OCI state plus msp-private fields (pid start time, cgroup)
 *   config.json the config as it was at create (later edits have no effect)
 *   exec.fifo   present while the container is `created`; `start` writes to it
 * and, for a moment, <name>.tmp while one of them is replaced. state.json is written
 * before create makes a cgroup or a process: a directory without it (a create killed
 * early) holds nothing else, and the next create or `delete --force` removes it.
 * Each command holds flock() on the directory fd for its whole run, so commands on one
 * container are serialised while commands on different containers run in parallel. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/ctx.h"
#include "oci/oci.h"

#define RT_ID_MAX 1024
#define RT_FIFO_NAME "exec.fifo"
#define RT_STATE_NAME "state.json"
#define RT_CONFIG_NAME "config.json"

/* runc's rule: [A-Za-z0-9_+-][A-Za-z0-9_+.-]*, at most RT_ID_MAX bytes. */
int rt_id_validate(const char *id, msp_err *err);
/* Open (creating with 0700 when `create`) the state root. */
int rt_state_root_open(const rt_ctx *ctx, bool create, int *ret_fd, msp_err *err);
/* mkdir <id> exclusively (EEXIST: "container 'id' already exists") and lock it. An
 * existing directory that is incomplete (see below) and unlocked is removed first. */
int rt_statedir_create(int rootfd, const char *id, int *ret_dirfd, msp_err *err);
/* Open and lock an existing container dir (ENOENT: "container 'id' does not exist"). */
int rt_statedir_open(int rootfd, const char *id, bool exclusive, int *ret_dirfd, msp_err *err);
/* Remove every file of the dir and the dir itself. */
int rt_statedir_remove(int rootfd, const char *id, int dirfd, msp_err *err);
/* Remove <id> if it is incomplete: no state.json, which create writes before it makes a
 * cgroup or a process, so a create killed before that left nothing else. Takes the lock
 * (waiting for it when `wait`, else -EEXIST while it is held); -EEXIST when state.json
 * exists, 0 when removed or already gone. */
int rt_statedir_remove_incomplete(int rootfd, const char *id, bool wait, msp_err *err);

int rt_state_load(int dirfd, const char *id, oci_state **ret, msp_err *err);
/* Atomically replace state.json (write a temp file, fsync-free rename). */
int rt_state_save(int dirfd, const oci_state *st, msp_err *err);
/* Derive the live status (created/running/paused/stopped) into st->status, and set
 * st->pid to 0 when the process is gone or the pid was reused. */
void rt_state_refresh(oci_state *st, int dirfd);
