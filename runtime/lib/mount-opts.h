/* OCI mount options ("ro", "rbind", "rnosuid", "mode=755", ...) parsed into what the
 * mount code needs: legacy MS_* flags, mount_setattr attributes for the recursive r*
 * options, propagation, bind/tmpcopyup/idmap markers and the fs data string.
 * A pure function of its input: no syscalls, unit-tested without privileges. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "oci/oci.h"

typedef struct rt_mount_opts {
        unsigned long flags_set;        /* MS_RDONLY, MS_NOSUID, ... to set */
        unsigned long flags_clr;        /* explicitly cleared by "rw", "suid", ... */
        unsigned long propagation;      /* MS_SHARED|MS_SLAVE|... (| MS_REC), 0 = none */
        uint64_t rec_attr_set;          /* MOUNT_ATTR_* from r* options (AT_RECURSIVE) */
        uint64_t rec_attr_clr;          /* includes MOUNT_ATTR__ATIME when an r*atime is set */
        bool bind;                      /* "bind" or "rbind" */
        bool rbind;                     /* "rbind" */
        bool tmpcopyup;
        bool idmap;                     /* "idmap" or "ridmap" (optionally "=<mapping>") */
        bool ridmap;
        char *data;                     /* malloc'd "k=v,flag" fs options, NULL when none */
} rt_mount_opts;

/* Parse `opts` for the mount at `dest` (used in messages). Unknown flag-like options
 * are an error naming the option and the destination; anything with '=' and the known
 * fs-specific flags ("newinstance", "userxattr", ...) go into data; "x-*" userspace
 * hints and the engine's relabel/chown hints ("z", "Z", "U") are ignored. On success
 * *ret must be released with rt_mount_opts_done(); on failure nothing is allocated. */
int rt_mount_opts_parse(const oci_strv *opts, const char *dest, rt_mount_opts *ret,
                        msp_err *err);
void rt_mount_opts_done(rt_mount_opts *o);

/* The per-mount (non-recursive) flags as mount_setattr() attr_set/attr_clr. An atime
 * option selects a new atime mode, which the kernel requires to come with
 * MOUNT_ATTR__ATIME in attr_clr; options that only clear an atime flag ("atime",
 * "norelatime", "nostrictatime") select relatime, as legacy mount(2) does. */
void rt_mount_opts_attr(const rt_mount_opts *o, uint64_t *ret_set, uint64_t *ret_clr);

/* MS_* superblock flags that the new mount API takes as fsconfig(FSCONFIG_SET_FLAG)
 * keys: "sync", "dirsync", "lazytime", "mand" (each only when set). Fills up to `max`
 * names into `names` and returns how many. */
int rt_mount_opts_sb_flags(const rt_mount_opts *o, const char **names, int max);
