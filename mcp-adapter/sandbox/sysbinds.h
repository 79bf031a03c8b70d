/* The host view's read-only binds on the skeleton rootfs. Owner: sysbinds.c.
 *
 * The system view (bundle.h: the /usr-like directories and the /etc selection; sysview.h:
 * what the languages link to under /etc) is the same for every run of an instance, so it is
 * mounted once, when the instance is made, on the skeleton's mount points in msp-mcp's
 * private mount namespace: each a recursive bind of the host path, read-only, nosuid and
 * nodev on every mount of its tree (files noexec too). A run's root is the skeleton with
 * these submounts (msp clones it with its submounts, runc rbinds it), so a run's
 * config.json names only its own mounts. The sandbox's mount namespace is a copy owned by
 * its own user namespace: the kernel locks the binds there (their flags cannot be cleared,
 * they cannot be unmounted to reveal the skeleton below). They go with the skeleton's
 * tmpfs (mcp_private_view_release) and with msp-mcp's mount namespace. */
#pragma once

#include "sandbox/bundle.h"
#include "oci/oci.h"

/* Bind view's directories and files onto the skeleton at skel_fd (its mount points are
 * there: mcp_skeleton_create). */
int mcp_sysbinds_mount(int skel_fd, const mcp_hostview *view, msp_err *err);
