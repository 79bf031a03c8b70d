/* Switching to process.user.
 *
 * Order matters: supplementary groups and the gid can only be changed while we still have
 * CAP_SETGID, i.e. before the uid leaves 0; and leaving uid 0 clears the effective and
 * permitted capability sets unless PR_SET_KEEPCAPS is set, which would leave
 * rt_caps_apply() nothing to give to the container process. */
#include <errno.h>
#include <grp.h>
#include <inttypes.h>
#include <stdbool.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "macros.h"
#include "process.h"

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
