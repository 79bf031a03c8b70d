/* Switching to process.user.
 *
 * Order matters: supplementary groups and the gid can only be changed while we still have
 * CAP_SETGID, i.e. before the uid leaves 0; and leaving uid 0 clears the effective and
 * permitted capability sets unless PR_SET_KEEPCAPS is set, which would leave
 * rt_caps_apply() nothing to give to the container process. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <linux/magic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "lib/fileio.h"
#include "oci/oci.h"
#include "lib/pathres.h"
#include "lib/process.h"

#define RT_DEFAULT_UMASK 0022

/* Read the ids back: setres*id() can succeed on some ids and not others only in
 * theory, but an unmapped id or an LSM could leave us somewhere unexpected, and running
 * the container as the wrong user is not something to find out later. */
static int
user_verify(const oci_user *u, msp_err *err)
{
        uid_t ruid, euid, suid;
        gid_t rgid, egid, sgid;

        if (getresuid(&ruid, &euid, &suid) < 0)
                return msp_err_sys(err, errno, "getresuid");
        if (getresgid(&rgid, &egid, &sgid) < 0)
                return msp_err_sys(err, errno, "getresgid");
        if (ruid != u->uid || euid != u->uid || suid != u->uid)
                return msp_err_set(err, EPERM, "user switch: uids are %u/%u/%u, expected %" PRIu32,
                                   (unsigned) ruid, (unsigned) euid, (unsigned) suid, u->uid);
        if (rgid != u->gid || egid != u->gid || sgid != u->gid)
                return msp_err_set(err, EPERM, "user switch: gids are %u/%u/%u, expected %" PRIu32,
                                   (unsigned) rgid, (unsigned) egid, (unsigned) sgid, u->gid);
        return 0;
}

static int
groups_verify(const oci_user *u, msp_err *err)
{
        gid_t got[64];
        int n = getgroups(ARRAY_SIZE(got), got);

        /* more groups than we can check: trust setgroups(), which did not fail */
        if (n < 0 && errno == EINVAL)
                return 0;
        if (n < 0)
                return msp_err_sys(err, errno, "getgroups");
        /* the kernel sorts the list, so compare as sets */
        bool same = (size_t) n == u->n_additional_gids;
        for (int i = 0; same && i < n; i++) {
                same = false;
                for (size_t j = 0; !same && j < u->n_additional_gids; j++)
                        same = got[i] == u->additional_gids[j];
        }
        if (!same)
                return msp_err_set(err, EPERM, "user switch: supplementary groups differ from "
                                   "process.user.additionalGids (%d set, %zu requested)", n,
                                   u->n_additional_gids);
        return 0;
}

static int
groups_apply(const oci_user *u, bool setgroups_allowed, msp_err *err)
{
        if (!setgroups_allowed) {
                /* In a user namespace whose setgroups file says "deny" the call always fails;
                 * the inherited (overflow) groups stay, which is what the kernel enforces. */
                if (u->n_additional_gids > 0)
                        return msp_err_set(err, EPERM, "process.user.additionalGids requested, but "
                                           "setgroups is denied in this user namespace");
                return 0;
        }
        /* Called even with no additional gids, to drop the runtime's own groups. */
        if (setgroups(u->n_additional_gids, (const gid_t *) u->additional_gids) < 0)
                return msp_err_sys(err, errno, "setgroups (%zu additionalGids)", u->n_additional_gids);
        return 0;
}

static int
ids_apply(const oci_user *u, msp_err *err)
{
        if (setresgid(u->gid, u->gid, u->gid) < 0) {
                int e = errno;
                return msp_err_sys(err, e, "setresgid %" PRIu32 "%s", u->gid,
                                   e == EINVAL ? " (gid not mapped in the user namespace?)" : "");
        }
        if (setresuid(u->uid, u->uid, u->uid) < 0) {
                int e = errno;
                return msp_err_sys(err, e, "setresuid %" PRIu32 "%s", u->uid,
                                   e == EINVAL ? " (uid not mapped in the user namespace?)" : "");
        }
        return 0;
}

int
rt_user_switch(const oci_user *u, bool setgroups_allowed, msp_err *err)
{
        int r;

        if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0)
                return msp_err_sys(err, errno, "prctl(PR_SET_KEEPCAPS, 1)");
        r = groups_apply(u, setgroups_allowed, err);
        if (r >= 0)
                r = ids_apply(u, err);
        /* keepcaps only matters at the uid change; clear it so that it is not inherited
         * by an exec'd program that changes uids itself. */
        if (prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) < 0 && r >= 0)
                r = msp_err_sys(err, errno, "prctl(PR_SET_KEEPCAPS, 0)");
        if (r < 0)
                return r;
        r = user_verify(u, err);
        if (r >= 0 && setgroups_allowed)
                r = groups_verify(u, err);
        if (r < 0)
                return r;
        umask(u->has_umask ? (mode_t) (u->umask & 0777) : RT_DEFAULT_UMASK);
        return 0;
}

/* The container's /etc/passwd is the image's: parsed defensively, capped in size, and a
 * FIFO or device there is never opened for reading (O_NONBLOCK, then a regular-file check). */
#define RT_PASSWD_MAX (4u << 20)

/* A "regular file" of a kernel interface: the runtime reads /etc/passwd with all of its
 * privilege, so a symlink to one would have it read what the process may not (/proc/kmsg:
 * the host's kernel log, consumed; /proc/self/environ: the runtime's own environment). */
static bool
kernel_file(int fd)
{
        struct statfs sfs;

        if (fstatfs(fd, &sfs) < 0)
                return true;
        switch (sfs.f_type) {
        case PROC_SUPER_MAGIC:
        case SYSFS_MAGIC:
        case DEBUGFS_MAGIC:
        case TRACEFS_MAGIC:
        case SECURITYFS_MAGIC:
        case CGROUP_SUPER_MAGIC:
        case CGROUP2_SUPER_MAGIC:
        case BPF_FS_MAGIC:
                return true;
        default:
                return false;
        }
}

static bool
env_has(char *const *envp, const char *name)
{
        size_t n = strlen(name);

        for (; envp && *envp; envp++)
                if (strncmp(*envp, name, n) == 0 && (*envp)[n] == '=')
                        return true;
        return false;
}

/* The home field of the first "name:pw:uid:gid:gecos:home:shell" line for uid, or NULL. */
static char *
passwd_home(char *data, uid_t uid)
{
        for (char *line = data, *next; line && *line; line = next) {
                char *f[7] = { 0 };
                int n = 0;

                next = strchr(line, '\n');
                if (next)
                        *next++ = '\0';
                for (char *p = line; n < 7; n++) {
                        f[n] = p;
                        p = strchr(p, ':');
                        if (!p)
                                break;
                        *p++ = '\0';
                }
                if (n < 5 || f[2][strspn(f[2], "0123456789")] || !*f[2])
                        continue;
                errno = 0;
                unsigned long v = strtoul(f[2], NULL, 10);
                if (errno || v != (unsigned long) uid)
                        continue;
                return f[5];
        }
        return NULL;
}

static int
read_passwd(char **ret, msp_err *err)
{
        _cleanup_close_ int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        struct stat st;
        size_t len;

        *ret = NULL;
        if (root < 0)
                return 0;
        msp_err ignored = { 0 };
        /* Looked at before it is opened for reading: opening a device can act (a watchdog
         * starts), so only a regular file is opened, and only the one looked at. */
        _cleanup_close_ int path = rt_open_in_root(root, "/etc/passwd", O_PATH, &ignored);
        if (path < 0 || fstat(path, &st) < 0 || !S_ISREG(st.st_mode))
                return 0;
        int fd = rt_open_in_root(root, "/etc/passwd", O_RDONLY | O_NONBLOCK | O_NOCTTY, &ignored);
        if (fd < 0)
                return 0;
        _cleanup_close_ int pfd = fd;
        struct stat again;
        if (fstat(pfd, &again) < 0 || again.st_dev != st.st_dev || again.st_ino != st.st_ino ||
            kernel_file(pfd))
                return 0;
        int r = rt_read_fd_all(pfd, "/etc/passwd", RT_PASSWD_MAX, ret, &len, &ignored);
        if (r == -ENOMEM)
                return msp_err_set(err, ENOMEM, "out of memory");
        return 0;
}

int
rt_env_default_home(char *const *envp, uid_t uid, char *const **ret, msp_err *err)
{
        _cleanup_free_ char *passwd = NULL;
        size_t n = 0;
        int r;

        *ret = envp;
        if (env_has(envp, "HOME"))
                return 0;
        r = read_passwd(&passwd, err);
        if (r < 0)
                return r;
        const char *home = passwd ? passwd_home(passwd, uid) : NULL;
        if (!home || !*home)
                home = "/";
        while (envp && envp[n])
                n++;
        char **out = calloc(n + 2, sizeof *out);
        if (!out)
                return msp_err_set(err, ENOMEM, "out of memory");
        for (size_t i = 0; i < n; i++)
                out[i] = envp[i];
        if (asprintf(&out[n], "HOME=%s", home) < 0) {
                free(out);
                return msp_err_set(err, ENOMEM, "out of memory");
        }
        *ret = out;
        return 0;
}
