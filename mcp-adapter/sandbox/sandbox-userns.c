/* A sandbox's user namespace owned by an unprivileged id (sandbox-userns.h). */
#include "sandbox/sandbox-userns.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/base.h"
#include "oci/oci.h"
#include "sandbox/sandbox-ids.h"

/* Root of the host: euid 0 in the initial user namespace, which maps every id. */
static bool
host_root(void)
{
        if (geteuid() != 0)
                return false;
        char map[64];
        unsigned in, out, count;
        return mcp_read_text("/proc/self/uid_map", map, sizeof map) > 0 &&
               sscanf(map, "%u %u %u", &in, &out, &count) == 3 && in == 0 && out == 0 &&
               count == 4294967295u;
}

/* CAP_SYS_RESOURCE in our effective set: over a namespace root does not own, a runtime
 * that sets the init's rlimits from outside (runc prlimits it) needs it; a root without it
 * (some container hosts drop it) is refused there. */
static bool
has_sys_resource(void)
{
        char buf[4096];
        if (mcp_read_text("/proc/self/status", buf, sizeof buf) <= 0)
                return false;
        const char *eff = strstr(buf, "\nCapEff:");
        unsigned long long caps;
        return eff && sscanf(eff + 8, "%llx", &caps) == 1 && (caps >> CAP_SYS_RESOURCE & 1);
}

/* msp (the runtime beside msp-mcp, or one named msp) sets the rlimits in the init, on
 * itself and only lower than its hard limits: no capability over the namespace needed. */
static bool
runtime_sets_rlimits_inside(const char *runtime_path)
{
        const char *slash = runtime_path ? strrchr(runtime_path, '/') : NULL;
        const char *name = slash ? slash + 1 : runtime_path;
        return name && strcmp(name, "msp") == 0;
}

const char *
mcp_sandbox_userns_why_not(const char *runtime_path)
{
        static const char *why = "";
        if (why && !why[0])
                why = !host_root() ? "msp-mcp is not root of the host: the runtime makes it"
                      : !runtime_sets_rlimits_inside(runtime_path) && !has_sys_resource()
                              ? "root lacks CAP_SYS_RESOURCE, which this runtime needs to set "
                                "the rlimits of a process in a namespace root does not own: "
                                "the runtime makes it, owned by root (its per-namespace budgets "
                                "still apply)"
                              : NULL;
        return why;
}

bool
mcp_sandbox_userns_wanted(const char *runtime_path)
{
        return mcp_sandbox_userns_why_not(runtime_path) == NULL;
}

/* A namespace's owner-to-be and maps. */
typedef struct userns_spec {
        unsigned owner;                 /* uid and gid of the child that unshares */
        unsigned inside, outside, count;
} userns_spec;

/* The child: become the owner-to-be, unshare, say so, wait until the parent has taken the
 * namespace (our end of the pipe closes then). Nothing here can be reported but failure. */
_Noreturn static void
child(const userns_spec *spec, int ready, int done)
{
        char c = 0;
        if (setgroups(0, NULL) < 0 || setresgid(spec->owner, spec->owner, spec->owner) < 0 ||
            setresuid(spec->owner, spec->owner, spec->owner) < 0 || unshare(CLONE_NEWUSER) < 0)
                _exit(1);
        if (write(ready, &c, 1) != 1)
                _exit(1);
        (void) !read(done, &c, 1);
        _exit(0);
}

static int
write_map(pid_t pid, const char *file, const userns_spec *spec, msp_err *err)
{
        char path[64], map[64];
        snprintf(path, sizeof path, "/proc/%d/%s", (int) pid, file);
        snprintf(map, sizeof map, "%u %u %u\n", spec->inside, spec->outside, spec->count);
        int r = mcp_write_text(path, map);
        if (r < 0)
                return msp_err_sys(err, -r, "sandbox user namespace: write %s", path);
        return 0;
}

/* A fresh user namespace as spec says: its fd. */
static int
make_userns(const userns_spec *spec, msp_err *err)
{
        int ready[2], done[2];
        if (pipe2(ready, O_CLOEXEC) < 0)
                return msp_err_sys(err, errno, "sandbox user namespace: pipe");
        if (pipe2(done, O_CLOEXEC) < 0) {
                int e = errno;
                close(ready[0]);
                close(ready[1]);
                return msp_err_sys(err, e, "sandbox user namespace: pipe");
        }
        pid_t pid = fork();
        if (pid == 0) {
                close(ready[0]);
                close(done[1]);
                child(spec, ready[1], done[0]);
        }
        int r = pid < 0 ? msp_err_sys(err, errno, "sandbox user namespace: fork") : 0;
        close(ready[1]);
        close(done[0]);
        char c, path[64];
        int fd = -1;
        if (r >= 0 && read(ready[0], &c, 1) != 1)
                r = msp_err_set(err, EPERM, "sandbox user namespace: uid %u could not unshare one",
                                spec->owner);
        if (r >= 0) {
                snprintf(path, sizeof path, "/proc/%d/ns/user", (int) pid);
                fd = open(path, O_RDONLY | O_CLOEXEC);
                if (fd < 0)
                        r = msp_err_sys(err, errno, "sandbox user namespace: open %s", path);
        }
        if (r >= 0)
                r = write_map(pid, "uid_map", spec, err);
        if (r >= 0)
                r = write_map(pid, "gid_map", spec, err);
        close(ready[0]);
        close(done[1]);                 /* the child exits */
        if (pid > 0)
                while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
                        ;
        if (r < 0) {
                if (fd >= 0)
                        close(fd);
                return r;
        }
        return fd;
}

int
mcp_sandbox_userns_make(unsigned base, mcp_sandbox_userns *ret, msp_err *err)
{
        userns_spec spec = { .owner = base + MCP_SANDBOX_UID, .inside = 0, .outside = base,
                             .count = MCP_SANDBOX_ID_COUNT };
        int fd = make_userns(&spec, err);
        if (fd < 0)
                return fd;
        ret->fd = fd;
        snprintf(ret->path, sizeof ret->path, "/proc/%d/fd/%d", (int) getpid(), fd);
        return 0;
}

int
mcp_idmap_userns_make(unsigned base, msp_err *err)
{
        userns_spec spec = { .owner = base + MCP_SANDBOX_UID, .inside = MCP_SANDBOX_HOST_BASE,
                             .outside = base, .count = MCP_SANDBOX_ID_COUNT };
        return make_userns(&spec, err);
}

void
mcp_sandbox_userns_close(mcp_sandbox_userns *u)
{
        if (u->fd >= 0)
                close(u->fd);
        u->fd = -1;
        u->path[0] = '\0';
}
