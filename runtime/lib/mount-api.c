/* The new mount API as the rootfs and device code use it: detached mounts made with
 * fsopen/fsconfig/fsmount or cloned with open_tree, given their attributes with
 * mount_setattr while still detached, and attached onto an fd with move_mount. No path
 * is looked up here: every target is an fd its caller resolved (pathres.h). */
#include "lib/mount-api.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include "oci/oci.h"

int
rt_mount_attach(int mfd, int targetfd)
{
        return NERRNO(move_mount(mfd, "", targetfd, "",
                                 MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH));
}

int
rt_mount_setattr(int mfd, bool recursive, uint64_t set, uint64_t clr, uint64_t propagation)
{
        struct mount_attr a = { .attr_set = set, .attr_clr = clr, .propagation = propagation };
        return NERRNO(mount_setattr(mfd, "", AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0), &a,
                                    sizeof a));
}

int
rt_mount_bind_fd(int srcfd, int targetfd, bool recursive, msp_err *err)
{
        _cleanup_close_ int mfd = open_tree(srcfd, "",
                                            OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH |
                                                    (recursive ? AT_RECURSIVE : 0));
        if (mfd < 0)
                return msp_err_sys(err, errno, "open_tree");
        if (rt_mount_attach(mfd, targetfd) < 0)
                return msp_err_sys(err, errno, "move_mount");
        return 0;
}

/* The fs_context log holds the kernel's own reason for a failed fsconfig ("e msg"). */
static void
fs_log(int fsfd, char *buf, size_t size)
{
        ssize_t n = read(fsfd, buf, size - 1);
        if (n < 3) {
                buf[0] = '\0';
                return;
        }
        buf[n] = '\0';
        buf[strcspn(buf, "\n")] = '\0';
        memmove(buf, buf + 2, strlen(buf + 2) + 1);
}

/* Feed "k=v,flag,k2=v2" to fsconfig; commas inside double quotes do not split. */
static int
fsconfig_data(int fsfd, const char *data, const char **ret_item)
{
        char item[4096];

        for (const char *p = data; p && *p;) {
                size_t len = 0;
                bool quoted = false;
                while (p[len] && (quoted || p[len] != ',')) {
                        quoted ^= p[len] == '"';
                        len++;
                }
                if (len >= sizeof item)
                        return -E2BIG;
                memcpy(item, p, len);
                item[len] = '\0';
                *ret_item = p;
                char *eq = strchr(item, '=');
                int r = eq ? (*eq = '\0', fsconfig(fsfd, FSCONFIG_SET_STRING, item, eq + 1, 0))
                           : fsconfig(fsfd, FSCONFIG_SET_FLAG, item, NULL, 0);
                if (r < 0)
                        return -errno;
                p += len + (p[len] == ',');
        }
        return 0;
}

int
rt_mount_new_fs(const char *label, const char *type, const char *source, const char *data,
                const rt_mount_opts *o, uint64_t attrs, msp_err *err)
{
        const char *sb[8], *step = "fsopen", *item = NULL;
        char log[256] = "";
        int r = 0;

        _cleanup_close_ int fsfd = fsopen(type, FSOPEN_CLOEXEC);
        if (fsfd < 0)
                return msp_err_sys(err, errno, "%s: fsopen", label);
        if (source && *source) {
                step = "source";
                r = NERRNO(fsconfig(fsfd, FSCONFIG_SET_STRING, "source", source, 0));
        }
        for (int i = 0, n = o ? rt_mount_opts_sb_flags(o, sb, 8) : 0; r >= 0 && i < n; i++) {
                step = sb[i];
                r = NERRNO(fsconfig(fsfd, FSCONFIG_SET_FLAG, sb[i], NULL, 0));
        }
        if (r >= 0) {
                step = "option";
                r = fsconfig_data(fsfd, data, &item);
        }
        if (r >= 0) {
                step = "create";
                item = NULL;
                r = NERRNO(fsconfig(fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0));
        }
        if (r < 0) {
                fs_log(fsfd, log, sizeof log);
                return msp_err_sys(err, -r, "%s: fsconfig %s%s%.*s%s%s%s", label, step,
                                   item ? " '" : "", item ? (int) strcspn(item, ",") : 0,
                                   item ? item : "", item ? "'" : "", *log ? ": " : "", log);
        }
        int mfd = fsmount(fsfd, FSMOUNT_CLOEXEC, (unsigned) attrs);
        if (mfd < 0)
                return msp_err_sys(err, errno, "%s: fsmount", label);
        return mfd;
}
