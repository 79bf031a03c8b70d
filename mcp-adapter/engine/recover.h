/* Crash recovery: the instance directories of dead msp-mcp processes (their flock is free)
 * and everything they left: containers (deleted with the runtime that made them), cgroups
 * under /msp-mcp/<instance>/ in every hierarchy, workspace mounts, the directories.
 * Touches nothing but <state_dir>/inst-* and /msp-mcp/ cgroups. Owner: recover.c. */
#pragma once

#include <stdbool.h>

#include "config.h"
#include "oci/oci.h"

/* Clean every dead instance of cfg->state_dir; returns how many were cleaned. */
int mcp_recover(const mcp_config *cfg, msp_err *err);
/* Clean one instance (path <state>/<name>); the caller holds its lock or knows it is dead.
 * With containers, delete them first (a live instance has already done so). */
void mcp_recover_instance(const mcp_config *cfg, const char *path, const char *name,
                          bool containers);
