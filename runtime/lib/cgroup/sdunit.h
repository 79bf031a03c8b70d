/* Transient units of a systemd manager over D-Bus (lib/dbus.c): a scope with Delegate=yes
 * for the container, started and stopped with a bounded wait for the manager's job. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "oci/oci.h"

/* Where a manager listens: a bus (Hello, AddMatch) or its private socket (peer to peer). */
typedef struct rt_sdunit_conn {
        char path[108];
        bool bus;
} rt_sdunit_conn;

/* The user's manager: $DBUS_SESSION_BUS_ADDRESS's unix:path=, else $XDG_RUNTIME_DIR/bus.
 * 0, or -ENOENT with why filled. */
int rt_sdunit_user_conn(rt_sdunit_conn *c, char *why, size_t whysz);

/* StartTransientUnit(unit, "fail") with Description, Slice, Delegate=yes and PIDs=[pid];
 * waits for the job and requires the result "done". */
int rt_sdunit_start_scope(const rt_sdunit_conn *c, const char *unit, const char *slice,
                          pid_t pid, msp_err *err);
/* StopUnit(unit, "replace") and the job's end; a unit the manager no longer has is
 * stopped already (0). */
int rt_sdunit_stop(const rt_sdunit_conn *c, const char *unit, msp_err *err);
