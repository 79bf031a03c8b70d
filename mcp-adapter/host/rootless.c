/* msp-mcp run by an ordinary user: its own user namespace (see rootless.h). */
#include "host/rootless.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/base.h"
#include "oci/oci.h"
#include "sandbox/sandbox.h"

/* The first "name:start:count" or "uid:start:count" line of `file` with room for the
 * sandbox's uid (1000). */
static void
read_range(const char *file, const char *name, unsigned long id, unsigned long *start,
           unsigned long *n)
{
        *start = *n = 0;
        _cleanup_fclose_ FILE *f = fopen(file, "re");
        char line[512], idtext[32];
        snprintf(idtext, sizeof idtext, "%lu", id);
        while (f && fgets(line, sizeof line, f)) {
                size_t who_len;
                unsigned long vs, vc;
                if (!mcp_subid_parse(line, &who_len, &vs, &vc) || vc <= 1000)
                        continue;
                line[who_len] = '\0';
                if (strcmp(line, name) != 0 && strcmp(line, idtext) != 0)
                        continue;
                *start = vs;
                *n = vc < MCP_ROOTLESS_IDS_MAX ? vc : MCP_ROOTLESS_IDS_MAX;
                return;
        }
}

static void
find_helper(const char *name, char *buf, size_t size)
{
        static const char *const dirs[] = { "/usr/bin", "/bin", "/usr/sbin", "/sbin" };
        buf[0] = '\0';
        for (size_t i = 0; i < ARRAY_SIZE(dirs); i++) {
                snprintf(buf, size, "%s/%s", dirs[i], name);
                struct stat st;
                if (stat(buf, &st) == 0 && S_ISREG(st.st_mode) && access(buf, X_OK) == 0)
                        return;
        }
        buf[0] = '\0';
}

/* The process probes once: the start-up's callers (main, the host check, the image cache,
 * the engine) share what the first read of the account, the ranges and the helpers found,
 * which inside the namespace the process enters once could not be read the same way. Every
 * later engine (--check's language probes run one before the server's) finds it there. */
static bool probed, entered;
static mcp_rootless probed_as;

void
mcp_rootless_probe(mcp_rootless *ret)
{
        if (probed) {
                *ret = probed_as;
                return;
        }
        mcp_rootless rl = { .on = geteuid() != 0, .uid = geteuid(), .gid = getegid() };
        if (rl.on) {
                char buf[4096], name[256] = "";
                struct passwd pw, *p = NULL;
                if (getpwuid_r(rl.uid, &pw, buf, sizeof buf, &p) == 0 && p)
                        snprintf(name, sizeof name, "%s", p->pw_name);
                read_range("/etc/subuid", name, rl.uid, &rl.subuid, &rl.subuid_n);
                read_range("/etc/subgid", name, rl.uid, &rl.subgid, &rl.subgid_n);
                find_helper("newuidmap", rl.newuidmap, sizeof rl.newuidmap);
                find_helper("newgidmap", rl.newgidmap, sizeof rl.newgidmap);
                rl.multi = rl.subuid_n && rl.subgid_n && rl.newuidmap[0] && rl.newgidmap[0];
        }
        probed = true;
        probed_as = rl;
        *ret = rl;
}

/* In a child still in the parent namespace: the setuid helpers write our maps, root to
 * the user and 1.. to the ranges. */
_noreturn_ static void
map_ranges(const mcp_rootless *rl, pid_t pid, int sync_fd)
{
        char c;
        if (read(sync_fd, &c, 1) != 1)
                _exit(1);
        char spid[16], own_u[16], own_g[16], su[24], sun[16], sg[24], sgn[16];
        snprintf(spid, sizeof spid, "%d", (int) pid);
        snprintf(own_u, sizeof own_u, "%u", (unsigned) rl->uid);
        snprintf(own_g, sizeof own_g, "%u", (unsigned) rl->gid);
        snprintf(su, sizeof su, "%lu", rl->subuid);
        snprintf(sun, sizeof sun, "%lu", rl->subuid_n);
        snprintf(sg, sizeof sg, "%lu", rl->subgid);
        snprintf(sgn, sizeof sgn, "%lu", rl->subgid_n);
        const char *u[] = { rl->newuidmap, spid, "0", own_u, "1", "1", su, sun, NULL };
        const char *g[] = { rl->newgidmap, spid, "0", own_g, "1", "1", sg, sgn, NULL };
        _exit(mcp_spawn_wait(u, NULL) == 0 && mcp_spawn_wait(g, NULL) == 0 ? 0 : 1);
}

/* Without ranges: the user's own uid and gid as root, written by ourselves (setgroups must
 * be denied first, as the kernel requires of an unprivileged writer). */
static int
map_self(const mcp_rootless *rl, msp_err *err)
{
        char map[64];
        int r = mcp_write_text("/proc/self/setgroups", "deny");
        if (r < 0)
                return msp_err_sys(err, -r, "user namespace: write /proc/self/setgroups");
        snprintf(map, sizeof map, "0 %u 1\n", (unsigned) rl->uid);
        if ((r = mcp_write_text("/proc/self/uid_map", map)) < 0)
                return msp_err_sys(err, -r, "user namespace: write uid_map '%s'", map);
        snprintf(map, sizeof map, "0 %u 1\n", (unsigned) rl->gid);
        if ((r = mcp_write_text("/proc/self/gid_map", map)) < 0)
                return msp_err_sys(err, -r, "user namespace: write gid_map '%s'", map);
        return 0;
}

unsigned
mcp_rootless_id_count(const mcp_rootless *rl)
{
        if (!rl->multi)
                return 1;
        return (unsigned) (rl->subuid_n < rl->subgid_n ? rl->subuid_n : rl->subgid_n);
}

int
mcp_rootless_enter(const mcp_rootless *rl, msp_err *err)
{
        if (!rl->on || entered)
                return 0;
        bool mapped = false;
        if (rl->multi) {
                int sync[2];
                if (pipe2(sync, O_CLOEXEC) < 0)
                        return msp_err_sys(err, errno, "pipe");
                pid_t self = getpid(), child = fork();
                if (child < 0) {
                        close(sync[0]);
                        close(sync[1]);
                        return msp_err_sys(err, errno, "fork");
                }
                if (child == 0) {
                        close(sync[1]);
                        map_ranges(rl, self, sync[0]);
                }
                close(sync[0]);
                int unshared = unshare(CLONE_NEWUSER) < 0 ? -errno : 0;
                if (unshared == 0)
                        (void) !write(sync[1], "x", 1);
                close(sync[1]);
                int st;
                while (waitpid(child, &st, 0) < 0 && errno == EINTR)
                        ;
                if (unshared < 0)
                        return msp_err_sys(err, -unshared, "unshare(CLONE_NEWUSER)");
                mapped = WIFEXITED(st) && WEXITSTATUS(st) == 0;
        } else if (unshare(CLONE_NEWUSER) < 0) {
                return msp_err_sys(err, errno, "unshare(CLONE_NEWUSER)");
        }
        if (mapped) {
                /* The user's supplementary groups are not mapped: drop them. */
                if (setgroups(0, NULL) < 0)
                        return msp_err_sys(err, errno, "setgroups");
                /* Not our 0: the kernel lets no child namespace map it (the user's own id
                 * needs CAP_SETFCAP over the initial namespace). */
                mcp_sandbox_map = (mcp_sandbox_ids){ .host_id = 1,
                                                     .size = mcp_rootless_id_count(rl) };
        } else {
                /* newuidmap refused (its message is on stderr): nothing is mapped yet. */
                int r = map_self(rl, err);
                if (r < 0)
                        return r;
                mcp_sandbox_map = (mcp_sandbox_ids){ .host_id = 0, .size = 1 };
        }
        if (setresgid(0, 0, 0) < 0 || setresuid(0, 0, 0) < 0)
                return msp_err_sys(err, errno, "become root of the user namespace");
        entered = true;
        return 0;
}

/* mkdir -p, each new level 0700 (the fallback's ~/.local/state may not exist yet). */
static int
make_dirs(const char *path)
{
        if (mkdir(path, 0700) == 0 || errno == EEXIST)
                return 0;
        if (errno != ENOENT)
                return -errno;
        char parent[PATH_MAX];
        snprintf(parent, sizeof parent, "%s", path);
        char *slash = strrchr(parent, '/');
        if (!slash || slash == parent)
                return -ENOENT;
        *slash = '\0';
        int r = make_dirs(parent);
        if (r < 0)
                return r;
        return mkdir(path, 0700) == 0 || errno == EEXIST ? 0 : -errno;
}

int
mcp_rootless_state_check(const char *path, msp_err *err)
{
        int m = make_dirs(path);
        if (m < 0)
                return msp_err_sys(err, -m, "state dir '%s'", path);
        struct stat st;
        int r = mcp_own_dir(path, 0022, &st);   /* no one else may write */
        if (r == -EPERM)
                return msp_err_set(err, EPERM, "state dir '%s': owned by uid %u with mode %04o; "
                                               "it must be the user's own (uid %u) and writable "
                                               "by no one else",
                                   path, (unsigned) st.st_uid, (unsigned) (st.st_mode & 07777),
                                   (unsigned) geteuid());
        if (r < 0)
                return msp_err_sys(err, -r, "state dir '%s'", path);
        return 0;
}

int
mcp_rootless_reachable(const char *state, msp_err *err)
{
        char up[PATH_MAX];
        snprintf(up, sizeof up, "%s", state);
        char *slash = strrchr(up, '/');
        if (!slash || slash == up || !slash[1])
                return msp_err_set(err, EINVAL, "state dir '%s': not below a directory", state);
        *slash = '\0';                 /* the parent: covered by a tmpfs when need be */
        for (char *p = strrchr(up, '/'); p; p = strrchr(up, '/')) {
                p[p == up] = '\0';     /* "/a/b" -> "/a", "/a" -> "/" */
                struct stat st;
                if (stat(up, &st) < 0)
                        return msp_err_set(err, EACCES,
                                           "state dir '%s': '%s' does not exist (made 0700, the "
                                           "sandbox's root could not search it); name another "
                                           "with --state-dir", state, up);
                if (!(st.st_mode & 0001))
                        return msp_err_set(err, EACCES,
                                           "state dir '%s': '%s' (mode %04o) cannot be searched by "
                                           "the sandbox's root; name another with --state-dir",
                                           state, up, (unsigned) (st.st_mode & 07777));
                if (p == up)
                        break;
        }
        return 0;
}

int
mcp_rootless_reach(const char *state, msp_err *err)
{
        /* The state dir was verified (mcp_rootless_state_check): the user's own. */
        if (chmod(state, 0711) < 0)
                return msp_err_sys(err, errno, "state dir '%s': chmod", state);
        char parent[PATH_MAX];
        snprintf(parent, sizeof parent, "%s", state);
        char *slash = strrchr(parent, '/');
        if (!slash || slash == parent || !slash[1])
                return msp_err_set(err, EINVAL, "state dir '%s': not below a directory", state);
        *slash = '\0';
        int r = mcp_rootless_reachable(state, err);
        if (r < 0)
                return r;
        struct stat st;
        if (stat(parent, &st) < 0)
                return msp_err_sys(err, errno, "state dir's parent '%s'", parent);
        if (st.st_mode & 0001)
                return 0;
        _cleanup_close_ int fd = open(state, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return msp_err_sys(err, errno, "state dir '%s'", state);
        if (mount("tmpfs", parent, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
                  "mode=0711,size=64k,nr_inodes=16") < 0)
                return msp_err_sys(err, errno, "mount tmpfs on '%s'", parent);
        char src[64];
        snprintf(src, sizeof src, "/proc/self/fd/%d", fd);
        if (mkdir(state, 0711) < 0 || mount(src, state, NULL, MS_BIND, NULL) < 0)
                return msp_err_sys(err, errno, "bind the state dir '%s' back", state);
        return 0;
}
