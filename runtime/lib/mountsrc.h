/* Bind-mount sources of a container with its own user namespace, opened by the runtime
 * with its host credentials (as runc does): the container's root may be unable to reach
 * a source (a host directory under a 0700 parent). The parent joins the init's new
 * mount namespace for the opens, so the fds name mounts of that namespace, which the
 * init may clone with open_tree(); destinations stay the init's, resolved in the root. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "oci/oci.h"

/* Is the mount a bind mount (type "bind", or a "bind"/"rbind" option)? */
bool rt_mount_is_bind(const oci_mount *m);
/* The host path of a bind source: absolute as given, else below the bundle. */
int rt_mount_source_path(const oci_mount *m, const char *bundle, char *buf, size_t size);

/* Parent, on the init's RT_SYNC_MOUNT_SOURCES request: join the mount namespace of
 * `pid`, open each bind source O_PATH, come back, and send the fds (batches of
 * RT_SYNC_MAX_FDS, each naming its mount indexes). A source it cannot open is left out:
 * the init's own attempt then reports it. */
int rt_mountsrc_send(int sync_fd, pid_t pid, const oci_spec *spec, const char *bundle,
                     msp_err *err);
/* Init: ask for the sources (after its mount namespace exists). */
int rt_mountsrc_request(int sync_fd, msp_err *err);
/* Init: receive them into *ret_fds (n_mounts entries, -1 where none; free with
 * rt_mountsrc_free). */
int rt_mountsrc_recv(int sync_fd, size_t n_mounts, int **ret_fds, msp_err *err);
void rt_mountsrc_free(int *fds, size_t n_mounts);
