/* CVE-2019-5736: when the binary itself needs no sealed copy (docs/SECURITY_MODEL.md).
 *
 * The copy (or the read-only view) keeps a container process that reaches the binary
 * through /proc/<pid>/exe of a runtime process from opening it for writing or changing
 * its mode. Neither is possible when no id the container can hold may write the inode:
 *  - its owner is neither the caller (a container's processes and msp exec's process
 *    start with the caller's ids) nor inside the container's uid mappings, so no
 *    container process is the owner, and CAP_DAC_OVERRIDE / CAP_FOWNER in the
 *    container's user namespace do not apply to it (the kernel grants them only over
 *    inodes whose uid and gid are both mapped there);
 *  - its mode grants no write to group or other, and it has no POSIX access ACL (which
 *    could grant write to a named user or group);
 *  - it is on a filesystem whose permission checks are the kernel's own (mode bits and
 *    POSIX ACLs), not a FUSE daemon's or a network server's.
 * The typical case: a root-owned 0755 msp run by a user, whose containers map the user's
 * id and /etc/subuid ranges, never host 0.
 *
 * Freestanding (no libc): selfexe-early.c uses it at the entry point, before the config
 * is read, as a first verdict on the file alone; rt_selfexe_ensure() gives the same
 * verdict with the facts it gathers, and rt_selfexe_confirm_*() the final one once the
 * container's uid mappings are known. */
#pragma once

/* fgetxattr(fd, "system.posix_acl_access", NULL, 0) results that mean "no ACL". */
#define RT_EXE_ENODATA 61
#define RT_EXE_EOPNOTSUPP 95

typedef struct rt_exe_facts {
        unsigned int uid;       /* the owner, as this user namespace shows it */
        unsigned int mode;
        unsigned long fs_magic; /* statfs f_type */
        long acl;               /* the fgetxattr result above (size, or -errno) */
        int owner_ambiguous;    /* uid is the overflowuid, which also names a mapped id */
} rt_exe_facts;

enum {
        RT_EXE_OWNER_UNKNOWN = -1,      /* the container's mappings are not known yet */
        RT_EXE_OWNER_UNMAPPED = 0,
        RT_EXE_OWNER_MAPPED = 1,        /* or the container has no user namespace of its own */
};

/* Filesystems that enforce permissions by the inode's mode and POSIX ACLs in the kernel. */
static inline int
rt_exe_fs_kernel_checked(unsigned long magic)
{
        return magic == 0xEF53 /* ext2/3/4 */ || magic == 0x58465342 /* xfs */ ||
               magic == 0x9123683E /* btrfs */ || magic == 0x01021994 /* tmpfs */ ||
               magic == 0x794C7630 /* overlayfs */ || magic == 0x73717368 /* squashfs */ ||
               magic == 0xE0F5E1E2 /* erofs */ || magic == 0xF2F52010 /* f2fs */;
}

/* The one decision: 1 when the sealed copy is needed, 0 when the file may stay
 * /proc/self/exe. euid: the caller's, as this user namespace shows it. owner: the
 * RT_EXE_OWNER_* above; UNKNOWN gives the verdict on the file alone, which must be
 * confirmed once the mappings are known. */
static inline int
rt_exe_copy_needed(const rt_exe_facts *f, unsigned int euid, int owner)
{
        if (f->uid == euid || f->owner_ambiguous)
                return 1;
        if (f->mode & 022)
                return 1;
        if (f->acl != -RT_EXE_ENODATA && f->acl != -RT_EXE_EOPNOTSUPP)
                return 1;
        if (!rt_exe_fs_kernel_checked(f->fs_magic))
                return 1;
        return owner == RT_EXE_OWNER_MAPPED;
}
