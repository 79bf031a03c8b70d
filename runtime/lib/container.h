/* The container lifecycle on the runtime side: create (clone the init with its
 * namespaces and drive it until it is parked), start, kill, delete. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "lib/ctx.h"
#include "oci/oci.h"

typedef struct rt_create_opts {
        const char *id;
        const char *bundle;             /* default "." */
        const char *config_path;        /* NULL: <bundle>/config.json */
        const char *pid_file;           /* NULL: none */
        const char *console_socket;     /* NULL: none */
        bool has_console_fd;            /* send the pty master over console_fd instead */
        int console_fd;                 /* a connected AF_UNIX stream socket (borrowed) */
        const int *stdio;               /* the init's fds 0-2 instead of ours, -1 or NULL:
                                           inherited (borrowed; rt_stdio_relay) */
        int preserve_fds;
        bool no_pivot;
        bool no_new_keyring;
        /* `run`: the init goes on to exec when its setup is done instead of parking for
         * `start` (one round trip less), and tells the parent by the close-on-exec of
         * the sync socket instead of READY; ignored when there are poststart hooks,
         * which need start's wait for the exec. */
        bool start_at_ready;
} rt_create_opts;

/* A container this process holds: the locked state dir, its state and config. */
typedef struct rt_container {
        char *id;
        int rootfd;                     /* the state root */
        int dirfd;                      /* <root>/<id>, flock()ed */
        oci_state *state;
        oci_spec *spec;                 /* the config copy from the state dir */
        int pidfd;                      /* only after create in this process, else -1 */
        bool released;                  /* created with start_at_ready: start has nothing to send */
} rt_container;

rt_container *rt_container_free(rt_container *c);
static inline void
rt_container_freep(rt_container **c)
{
        if (*c)
                rt_container_free(*c);
}
#define _cleanup_container_ _cleanup_(rt_container_freep)

/* Create: on success the init is parked in `created` state and *ret holds the lock.
 * On failure nothing is left: no state dir, cgroup, mount or process. */
int rt_container_create(const rt_ctx *ctx, const rt_create_opts *o, rt_container **ret,
                        msp_err *err);
/* Load and lock an existing container; its status is refreshed from the live system. */
int rt_container_load(const rt_ctx *ctx, const char *id, bool exclusive, rt_container **ret,
                      msp_err *err);
/* Parse the config copy of the state dir into c->spec (no-op when already loaded). */
int rt_container_load_config(rt_container *c, msp_err *err);
/* created -> running: release the init, run poststart hooks. */
int rt_container_start(const rt_ctx *ctx, rt_container *c, msp_err *err);
/* Signal the init; `all`: every process in the cgroup (frozen meanwhile, so that none
 * forks past it). SIGKILL to a paused container thaws it so that it can die. */
int rt_container_kill(const rt_ctx *ctx, rt_container *c, int sig, bool all, msp_err *err);
/* running -> paused (freeze the cgroup) and back. */
int rt_container_pause(const rt_ctx *ctx, rt_container *c, msp_err *err);
int rt_container_resume(const rt_ctx *ctx, rt_container *c, msp_err *err);
/* Write res into the cgroup of a created, running or paused container. Device rules
 * are left alone (as runc does): callers like podman send the config's list, which
 * relies on the defaults create adds. */
int rt_container_update(const rt_ctx *ctx, rt_container *c, const oci_resources *res,
                        msp_err *err);
/* The pids in the container's cgroup (none once it is gone). */
int rt_container_pids(const rt_ctx *ctx, rt_container *c, pid_t **ret, size_t *ret_n,
                      msp_err *err);
/* One usage sample of a created, running or paused container; ret->id is c->id. */
int rt_container_stats(const rt_ctx *ctx, rt_container *c, oci_stats *ret, msp_err *err);
/* Remove everything create made (the state dir last) and run poststop hooks.
 * Without force, only a stopped (or never started) container may be deleted. */
int rt_container_delete(const rt_ctx *ctx, rt_container *c, bool force, msp_err *err);
