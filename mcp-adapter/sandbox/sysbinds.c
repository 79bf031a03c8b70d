/* The host view's read-only binds on the skeleton (sysbinds.h). */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "oci/oci.h"
#include "sandbox/sysbinds.h"

/* A bind of the host's path at the same place in the skeleton: the source's whole tree
 * (a host's submount under /usr comes along, and a rootless server may not bind a
 * directory without the mounts locked below it), made read-only, nosuid, nodev (and
 * noexec) on every mount of it before it is attached. The target is resolved in the
 * skeleton, never through a symlink. */
static int
bind_ro(int skel_fd, const char *path, bool noexec, msp_err *err)
{
        struct open_how how = { .flags = O_PATH | O_CLOEXEC,
                                .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS |
                                           RESOLVE_NO_MAGICLINKS };
        _cleanup_close_ int tfd = (int) syscall(SYS_openat2, skel_fd, path + 1, &how, sizeof how);
        if (tfd < 0)
                return msp_err_sys(err, errno, "system view: mount point '%s' in the skeleton",
                                   path);
        _cleanup_close_ int mfd = open_tree(AT_FDCWD, path,
                                            OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
        if (mfd < 0)
                return msp_err_sys(err, errno, "system view: bind '%s'", path);
        struct mount_attr a = { .attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID |
                                            MOUNT_ATTR_NODEV | (noexec ? MOUNT_ATTR_NOEXEC : 0) };
        if (mount_setattr(mfd, "", AT_EMPTY_PATH | AT_RECURSIVE, &a, sizeof a) < 0)
                return msp_err_sys(err, errno, "system view: make '%s' read-only", path);
        if (move_mount(mfd, "", tfd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
                return msp_err_sys(err, errno, "system view: attach '%s'", path);
        return 0;
}

int
mcp_sysbinds_mount(int skel_fd, const mcp_hostview *view, msp_err *err)
{
        int r;
        for (size_t i = 0; i < view->n_binds; i++)
                if ((r = bind_ro(skel_fd, view->binds[i], false, err)) < 0)
                        return r;
        for (size_t i = 0; i < view->n_etc; i++)
                if ((r = bind_ro(skel_fd, view->etc[i], !view->etc_is_dir[i], err)) < 0)
                        return r;
        for (size_t i = 0; i < view->sys.n; i++) {
                const mcp_sysview_entry *e = &view->sys.e[i];
                if (e->kind != MCP_SYSVIEW_LINK &&
                    (r = bind_ro(skel_fd, e->path, e->kind == MCP_SYSVIEW_FILE, err)) < 0)
                        return r;
        }
        return 0;
}
