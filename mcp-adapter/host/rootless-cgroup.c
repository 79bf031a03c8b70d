/* Sandboxes in a delegated cgroup v2 subtree, msp-mcp run by a user (rootless-cgroup.h). */
#include "host/rootless-cgroup.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"
#include "oci/oci.h"

static const char *const controllers[] = { "cpu", "memory", "pids" };

/* The cgroup2 mount: /sys/fs/cgroup on a unified host, /sys/fs/cgroup/unified on a hybrid. */
static const char *
cgroup2_mount(void)
{
        if (access("/sys/fs/cgroup/cgroup.controllers", F_OK) == 0)
                return "/sys/fs/cgroup";
        if (access("/sys/fs/cgroup/unified/cgroup.controllers", F_OK) == 0)
                return "/sys/fs/cgroup/unified";
        return NULL;
}

/* This process's cgroup2 path ("0::" line of /proc/self/cgroup), from the root. */
static int
own_cgroup(char *buf, size_t size)
{
        char line[4096];
        _cleanup_fclose_ FILE *f = fopen("/proc/self/cgroup", "re");
        while (f && fgets(line, sizeof line, f)) {
                if (strncmp(line, "0::/", 4) != 0)
                        continue;
                line[strcspn(line, "\n")] = '\0';
                return (size_t) snprintf(buf, size, "%s", line + 3) < size ? 0 : -ENAMETOOLONG;
        }
        return -ENOENT;
}

/* A control file of the cgroup directory dir: its first line, or the whole text written. */
static int
read_file(const char *dir, const char *name, char *buf, size_t size)
{
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, name);
        ssize_t n = mcp_read_text(path, buf, size);
        buf[strcspn(buf, "\n")] = '\0';
        return n < 0 ? (int) n : 0;
}

static int
write_file(const char *dir, const char *name, const char *text)
{
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, name);
        return mcp_write_text(path, text);
}

static bool
has_word(const char *list, const char *word)
{
        size_t n = strlen(word);
        for (const char *p = strstr(list, word); p; p = strstr(p + 1, word))
                if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
                        return true;
        return false;
}

/* The absolute directory of the cgroup at `rel` (from the root). */
static void
abs_dir(const char *mnt, const char *rel, char *buf, size_t size)
{
        snprintf(buf, size, "%s%s", mnt, strcmp(rel, "/") == 0 ? "" : rel);
}

/* Every pid in dir's cgroup.procs is ours. */
static bool
alone_in(const char *dir, char *others, size_t size)
{
        char path[1024], line[32];
        int n = 0;
        snprintf(path, sizeof path, "%s/cgroup.procs", dir);
        _cleanup_fclose_ FILE *f = fopen(path, "re");
        while (f && fgets(line, sizeof line, f))
                if (atol(line) != (long) getpid())
                        n++;
        snprintf(others, size, "%d", n);
        return f && n == 0;
}

bool
mcp_rootless_delegated(char *why, size_t size)
{
        const char *mnt = cgroup2_mount();
        char rel[400], dir[512], file[600], ctl[512] = "", others[16];
        if (!mnt) {
                snprintf(why, size, "no cgroup2 mount (a v1 host: only root makes cgroups)");
                return false;
        }
        if (own_cgroup(rel, sizeof rel) < 0) {
                snprintf(why, size, "no cgroup2 entry in /proc/self/cgroup (or its path is too long)");
                return false;
        }
        abs_dir(mnt, rel, dir, sizeof dir);
        static const char *const files[] = { ".", "cgroup.procs", "cgroup.subtree_control" };
        for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
                snprintf(file, sizeof file, "%s/%s", dir, files[i]);
                if (faccessat(AT_FDCWD, file, W_OK, AT_EACCESS) < 0) {
                        snprintf(why, size, "%s: not delegated to this user (%s)", file,
                                 strerror(errno));
                        return false;
                }
        }
        (void) read_file(dir, "cgroup.controllers", ctl, sizeof ctl);
        for (size_t i = 0; i < ARRAY_SIZE(controllers); i++)
                if (!has_word(ctl, controllers[i])) {
                        snprintf(why, size, "%s: delegated, but its controllers are \"%s\" "
                                 "(needs cpu, memory, pids)", dir, ctl);
                        return false;
                }
        if (!alone_in(dir, others, sizeof others)) {
                snprintf(why, size, "%s: delegated, but %s other processes are in it (a cgroup "
                         "whose children have controllers may hold none): start msp-mcp in a "
                         "cgroup of its own, e.g. systemd-run --user --scope msp-mcp ...", dir,
                         others);
                return false;
        }
        snprintf(why, size, "%s: delegated, controllers \"%s\"", dir, ctl);
        return true;
}

void
mcp_user_cgroup_dir(const mcp_user_cgroup *cg, char *buf, size_t size)
{
        buf[0] = '\0';
        if (cg->mnt[0])
                abs_dir(cg->mnt, cg->inst, buf, size);
}

int
mcp_user_cgroup_enter(mcp_user_cgroup *cg, const char *name, char *why, size_t size)
{
        *cg = (mcp_user_cgroup){ 0 };
        if (!mcp_rootless_delegated(why, size))
                return -ENOTSUP;
        const char *mnt = cgroup2_mount();
        char base[512], inst[600], server[700];
        int r = own_cgroup(cg->base, sizeof cg->base);
        if (r < 0 || (size_t) snprintf(cg->inst, sizeof cg->inst, "%s/%s",
                                       strcmp(cg->base, "/") == 0 ? "" : cg->base, name) >=
                             sizeof cg->inst) {
                snprintf(why, size, "the cgroup path is too long");
                return -ENAMETOOLONG;
        }
        snprintf(cg->mnt, sizeof cg->mnt, "%s", mnt);
        abs_dir(mnt, cg->base, base, sizeof base);
        abs_dir(mnt, cg->inst, inst, sizeof inst);
        snprintf(server, sizeof server, "%s/server", inst);
        if (mkdir(inst, 0755) < 0 || mkdir(server, 0755) < 0) {
                r = -errno;
                snprintf(why, size, "mkdir '%s': %s", errno == EEXIST ? inst : server, strerror(-r));
                goto fail;
        }
        if ((r = write_file(server, "cgroup.procs", "0")) < 0) {
                snprintf(why, size, "move msp-mcp into '%s': %s", server, strerror(-r));
                goto fail;
        }
        cg->moved = true;
        (void) read_file(base, "cgroup.subtree_control", cg->before, sizeof cg->before);
        for (size_t i = 0; i < ARRAY_SIZE(controllers); i++) {
                char op[16];
                if (has_word(cg->before, controllers[i]))
                        continue;
                snprintf(op, sizeof op, "+%s", controllers[i]);
                if ((r = write_file(base, "cgroup.subtree_control", op)) < 0) {
                        snprintf(why, size, "enable %s in '%s/cgroup.subtree_control': %s",
                                 controllers[i], base, strerror(-r));
                        goto fail;
                }
        }
        if ((r = write_file(inst, "cgroup.subtree_control", "+cpu +memory +pids")) < 0) {
                snprintf(why, size, "enable cpu, memory, pids in '%s/cgroup.subtree_control': %s",
                         inst, strerror(-r));
                goto fail;
        }
        return 0;
fail:
        mcp_user_cgroup_leave(cg);
        return r;
}

/* Disable every controller in dir's cgroup.subtree_control that `keep` does not list. */
static void
give_back(const char *dir, const char *keep)
{
        char now[256] = "";
        (void) read_file(dir, "cgroup.subtree_control", now, sizeof now);
        for (char *save = NULL, *c = strtok_r(now, " ", &save); c; c = strtok_r(NULL, " ", &save)) {
                char op[40];
                if (has_word(keep, c))
                        continue;
                snprintf(op, sizeof op, "-%s", c);
                (void) write_file(dir, "cgroup.subtree_control", op);
        }
}

void
mcp_user_cgroup_leave(mcp_user_cgroup *cg)
{
        if (!cg->mnt[0])
                return;
        char base[512], inst[600], server[700];
        abs_dir(cg->mnt, cg->base, base, sizeof base);
        abs_dir(cg->mnt, cg->inst, inst, sizeof inst);
        snprintf(server, sizeof server, "%s/server", inst);
        give_back(inst, "");
        /* What another instance still gives its children stays (the kernel refuses with
         * EBUSY), and so do we, below. */
        give_back(base, cg->before);
        if (cg->moved && write_file(base, "cgroup.procs", "0") == 0)
                cg->moved = false;
        /* Still in it: the next server's recovery removes it (engine.c records it). */
        if (!cg->moved) {
                /* A cgroup whose last process is still exiting is busy for a moment. */
                for (int i = 0; i < 100 && rmdir(server) < 0 && errno == EBUSY; i++)
                        (void) poll(NULL, 0, 10);
                (void) rmdir(inst);
        }
        cg->mnt[0] = '\0';
}
