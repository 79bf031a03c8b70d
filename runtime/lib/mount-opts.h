/* OCI mount options ("ro", "rbind", "rnosuid", "mode=755", ...) parsed into what the
 * mount code needs: legacy MS_* flags, mount_setattr attributes for the recursive r*
 * options, propagation, bind/tmpcopyup/idmap markers and the fs data string. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "err.h"
#include "spec.h"

typedef struct rt_mount_opts {
        unsigned long flags_set;        /* MS_RDONLY, MS_NOSUID, ... to set */
        unsigned long flags_clr;        /* explicitly cleared by "rw", "suid", ... */
        unsigned long propagation;      /* MS_SHARED|MS_SLAVE|... (| MS_REC), 0 = none */
        uint64_t rec_attr_set;          /* MOUNT_ATTR_* from r* options (AT_RECURSIVE) */
        uint64_t rec_attr_clr;
        bool bind;                      /* "bind" or "rbind" */
        bool rbind;                     /* "rbind" */
        bool tmpcopyup;
        bool idmap;                     /* "idmap" or "ridmap" */
        bool ridmap;
        char *data;                     /* malloc'd "k=v,k2" fs options, NULL when empty */
} rt_mount_opts;

/* Parse `opts` for the mount at `dest` (used in messages). Unknown flag-like options
 * are an error naming the option and the destination; anything with '=' (and known
 * fs-specific flags listed in the table) goes into data. Free with rt_mount_opts_done. */
int rt_mount_opts_parse(const oci_strv *opts, const char *dest, rt_mount_opts *ret,
                        msp_err *err);
void rt_mount_opts_done(rt_mount_opts *o);

/* MS_* per-mount flags translated to MOUNT_ATTR_* bits (for mount_setattr/fsmount). */
uint64_t rt_mount_flags_to_attr(unsigned long ms_flags);
