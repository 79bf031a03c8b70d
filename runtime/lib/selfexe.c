/* CVE-2019-5736: a process in a container overwrote runc's binary on the host by opening
 * /proc/<runtime pid>/exe (or /proc/self/exe after exec'ing it) while the runtime was
 * inside the container, and writing to it once the runtime had exited.
 *
 * The commands that create or enter a container therefore run with an exe no one can
 * write: where msp is a static PIE, selfexe-early.c swaps /proc/self/exe for a detached
 * read-only view of the file at the entry point (docs/SECURITY_MODEL.md). Here is the
 * fallback, as in crun and runc: copy the binary into a memfd, seal it against every
 * change (F_SEAL_SEAL|SHRINK|GROW|WRITE, and F_SEAL_EXEC where the kernel has it) and
 * fexecve it. Either way every process of this msp, the container init cloned from it
 * included, has a protected /proc/<pid>/exe.
 *
 * A caller without CAP_SYS_ADMIN (rootless) can make neither the view nor, cheaply,
 * anything else; where the file alone already keeps every container from writing it
 * (selfexe-rule.h: not the caller's, no group/other write, no ACL) the copy waits until
 * the container's uid mappings are known, and is made only when the owner is among them.
 *
 * "Already done" is decided from the executable itself (its seals, or its mount),
 * never from an environment marker a caller could set. The command-line rule must stay
 * the same as selfexe-early.c's. */
#include "lib/selfexe.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <linux/nsfs.h>

#include "oci/oci.h"
#include "lib/procfs.h"
#include "lib/rootless.h"
#include "lib/selfexe-rule.h"
#include "lib/statedir.h"

#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U
#endif
#ifndef F_SEAL_EXEC
#define F_SEAL_EXEC 0x0020
#endif

#ifndef STATX_MNT_ID_UNIQUE
#define STATX_MNT_ID_UNIQUE 0x00004000U
#endif
#ifndef SYS_statmount
#define SYS_statmount 457
#endif

#define SEALS_REQUIRED (F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE)

/* Global options that take a separate argument (see main.c); --rootless only takes one
 * in the --rootless=BOOL form. The same list is in selfexe-early.c. */
static bool
option_takes_arg(const char *opt)
{
        static const char *const with_arg[] = { "--root", "--log", "--log-format",
                                                 "--log-level", "--cgroup-manager" };

        for (size_t i = 0; i < sizeof with_arg / sizeof with_arg[0]; i++)
                if (strcmp(opt, with_arg[i]) == 0)
                        return true;
        return false;
}

bool
rt_selfexe_needed(int argc, char **argv)
{
        /* "exec" is listed for when it exists: it enters a running container. */
        static const char *const enters[] = { "create", "run", "exec" };

        for (int i = 1; i < argc; i++) {
                const char *a = argv[i];
                if (strcmp(a, "--") == 0) {
                        a = i + 1 < argc ? argv[i + 1] : NULL;
                        if (!a)
                                return false;
                } else if (a[0] == '-') {
                        if (a[1] == '-' && !strchr(a, '=') && option_takes_arg(a))
                                i++;
                        continue;
                }
                for (size_t k = 0; k < sizeof enters / sizeof enters[0]; k++)
                        if (strcmp(a, enters[k]) == 0)
                                return true;
                return false;
        }
        return false;
}

/* Is the mount with this (statx) id absent from our mount namespace? statmount(2) knows
 * the unique id (6.8); older kernels get a scan of /proc/self/mountinfo. */
static bool
mount_unreachable(const struct statx *stx)
{
        if (stx->stx_mask & STATX_MNT_ID_UNIQUE) {
                struct {
                        uint32_t size, spare;
                        uint64_t mnt_id, param;
                } req = { .size = sizeof req, .mnt_id = stx->stx_mnt_id, .param = 1 /* STATMOUNT_SB_BASIC */ };
                char buf[4096];
                return syscall(SYS_statmount, &req, buf, sizeof buf, 0) < 0 && errno == ENOENT;
        }
        _cleanup_fclose_ FILE *f = fopen("/proc/self/mountinfo", "re");
        unsigned long long id;
        char line[4096];

        if (!f)
                return false;
        while (fgets(line, sizeof line, f))
                if (sscanf(line, "%llu", &id) == 1 && id == stx->stx_mnt_id)
                        return false;
        return !ferror(f);
}

/* Already protected: /proc/self/exe is a sealed memfd, or (selfexe-early.c) a read-only
 * bind mount of the file alone that is attached nowhere, so no one can make it writable
 * again. A binary that merely lives on a read-only filesystem does not count. */
static bool
running_protected(void)
{
        _cleanup_close_ int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
        struct statx stx;
        struct statfs sfs;

        if (fd < 0)
                return false;
        int seals = fcntl(fd, F_GET_SEALS);
        if (seals >= 0)
                return (seals & SEALS_REQUIRED) == SEALS_REQUIRED;
        if (fstatfs(fd, &sfs) < 0 || !(sfs.f_flags & ST_RDONLY))
                return false;
        if (statx(fd, "", AT_EMPTY_PATH, STATX_MNT_ID | STATX_MNT_ID_UNIQUE, &stx) < 0 ||
            !(stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) ||
            !(stx.stx_attributes & STATX_ATTR_MOUNT_ROOT) || !(stx.stx_mask & (STATX_MNT_ID | STATX_MNT_ID_UNIQUE)))
                return false;
        return mount_unreachable(&stx);
}

static int
copy_all(int in, int out, off_t size)
{
        off_t done = 0;

        while (done < size) {
                ssize_t n = sendfile(out, in, NULL, (size_t) (size - done));
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                if (n == 0)
                        return -EIO;    /* the file shrank under us */
                done += n;
        }
        return 0;
}

static int
make_sealed_copy(void)
{
        int in = -1, mfd = -1, r;
        struct stat st;

        in = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
        if (in < 0)
                return -errno;
        if (fstat(in, &st) < 0) {
                r = -errno;
                goto fail;
        }
        /* MFD_EXEC: executable even where vm.memfd_noexec defaults memfds to noexec;
         * kernels before 6.3 do not know the flag (EINVAL). */
        mfd = memfd_create("msp", MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_EXEC);
        if (mfd < 0 && errno == EINVAL)
                mfd = memfd_create("msp", MFD_CLOEXEC | MFD_ALLOW_SEALING);
        if (mfd < 0) {
                r = -errno;
                goto fail;
        }
        r = copy_all(in, mfd, st.st_size);
        if (r < 0)
                goto fail;
        if (fchmod(mfd, 0555) < 0 && errno != EPERM) {
                r = -errno;
                goto fail;
        }
        if (fcntl(mfd, F_ADD_SEALS, SEALS_REQUIRED | F_SEAL_EXEC) < 0 &&
            (errno != EINVAL || fcntl(mfd, F_ADD_SEALS, SEALS_REQUIRED) < 0)) {
                r = -errno;
                goto fail;
        }
        close(in);
        return mfd;
fail:
        if (in >= 0)
                close(in);
        if (mfd >= 0)
                close(mfd);
        return r;
}

/* The copy rt_selfexe_ensure() deferred: the facts of the file, and what to re-execute
 * with should the container's mappings hold its owner. */
static struct {
        bool pending;
        rt_exe_facts facts;
        unsigned int euid;
        char **argv, **envp;
} deferred;

/* Does the map (uid_map's lines "inside outside count") hold `id` in `column` (0 for the
 * inside ids, 1 for the outside ones)? Unreadable or malformed: yes. */
static bool
map_holds(int fd, unsigned int id, int column)
{
        _cleanup_fclose_ FILE *f = fdopen(fd, "re");
        unsigned long long v[3];

        if (!f) {
                close(fd);
                return true;
        }
        while (fscanf(f, "%llu %llu %llu", &v[0], &v[1], &v[2]) == 3)
                if (id >= v[column] && id - v[column] < v[2])
                        return true;
        return !feof(f) || ferror(f);
}

/* An owner shown as the overflowuid says nothing unless the overflowuid itself is
 * unmapped here: in a user namespace it is also the stand-in for every unmapped owner.
 * In the initial one every id is mapped, so the owner is what it shows. */
static bool
owner_ambiguous(unsigned int uid)
{
        char buf[16] = "";
        _cleanup_close_ int fd = open("/proc/sys/kernel/overflowuid", O_RDONLY | O_CLOEXEC);

        if (fd < 0 || read(fd, buf, sizeof buf - 1) <= 0)
                return true;
        if (strtoul(buf, NULL, 10) != uid || rt_in_initial_userns())
                return false;
        int map = open("/proc/self/uid_map", O_RDONLY | O_CLOEXEC);
        return map < 0 || map_holds(map, uid, 0);
}

int
rt_selfexe_file_facts(int fd, rt_exe_facts *f)
{
        struct statfs sfs;
        struct stat st;

        if (fstat(fd, &st) < 0 || fstatfs(fd, &sfs) < 0)
                return -errno;
        f->uid = st.st_uid;
        f->mode = st.st_mode;
        f->fs_magic = (unsigned long) sfs.f_type;
        ssize_t n = fgetxattr(fd, "system.posix_acl_access", NULL, 0);
        f->acl = n < 0 ? -errno : n;
        f->owner_ambiguous = owner_ambiguous(st.st_uid);
        return 0;
}

/* Copy, seal, fexecve. Returns only on failure: -errno, *what names the step. */
static int
reexec_sealed(char **argv, char **envp, const char **what)
{
        int mfd = make_sealed_copy();
        if (mfd < 0) {
                *what = "copying the binary into a sealed memfd (CVE-2019-5736)";
                return mfd;
        }
        fexecve(mfd, argv, envp);
        int e = errno;
        close(mfd);
        *what = "executing the sealed copy of the binary";
        return -e;
}

int
rt_selfexe_ensure(int argc, char **argv, char **envp)
{
        const char *what;
        int r;

        if (!rt_selfexe_needed(argc, argv) || running_protected())
                return 0;
        deferred.euid = geteuid();
        _cleanup_close_ int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
        if (fd >= 0 && rt_selfexe_file_facts(fd, &deferred.facts) == 0 &&
            !rt_exe_copy_needed(&deferred.facts, deferred.euid, RT_EXE_OWNER_UNKNOWN)) {
                deferred.pending = true;
                deferred.argv = argv;
                deferred.envp = envp;
                return 0;
        }
        r = reexec_sealed(argv, envp, &what);
        fprintf(stderr, "msp: %s: %s\n", what, strerror(-r));
        return r;
}

/* The final verdict on a deferred copy, and the copy itself where it is needed. The
 * choice: re-execute through the sealed copy rather than refuse. A binary owned by an id
 * the container maps (a /etc/subuid range that includes it, or host 0 granted by
 * mistake) is protected the way runc and crun protect every binary, and the command
 * runs as it would with them; nothing has been changed yet, so the re-executed msp
 * starts the command afresh. */
static int
confirm(int owner, msp_err *err)
{
        const char *what;

        if (!deferred.pending)
                return 0;
        deferred.pending = false;
        if (!rt_exe_copy_needed(&deferred.facts, deferred.euid, owner))
                return 0;
        int r = reexec_sealed(deferred.argv, deferred.envp, &what);
        return msp_err_sys(err, -r, "%s", what);
}

int
rt_selfexe_confirm_maps(const oci_id_mapping *m, size_t n, bool own_userns, msp_err *err)
{
        int owner = own_userns && n ? RT_EXE_OWNER_UNMAPPED : RT_EXE_OWNER_MAPPED;

        for (size_t i = 0; own_userns && i < n; i++)
                if (deferred.facts.uid >= m[i].host_id && deferred.facts.uid - m[i].host_id < m[i].size)
                        owner = RT_EXE_OWNER_MAPPED;
        return confirm(owner, err);
}

/* The container's user namespace is a child of ours (made by the create, so its
 * uid_map read from here gives host ids as we see them), and the owner is not among
 * them. Anything else, or anything that cannot be read, counts as mapped. */
static int
owner_in_container(pid_t pid, uint64_t start_time)
{
        _cleanup_close_ int procfd = -1, ns = -1, parent = -1;
        struct stat pst, self;
        char path[64];

        procfd = rt_procfs_open(&(msp_err){ 0 });
        if (procfd < 0)
                return RT_EXE_OWNER_MAPPED;
        snprintf(path, sizeof path, "%d/ns/user", (int) pid);
        ns = openat(procfd, path, O_RDONLY | O_CLOEXEC);
        if (ns < 0)
                return RT_EXE_OWNER_MAPPED;
        parent = ioctl(ns, NS_GET_PARENT);
        if (parent < 0 || fstat(parent, &pst) < 0 || fstatat(procfd, "self/ns/user", &self, 0) < 0 ||
            pst.st_ino != self.st_ino || pst.st_dev != self.st_dev)
                return RT_EXE_OWNER_MAPPED;
        snprintf(path, sizeof path, "%d/uid_map", (int) pid);
        int map = openat(procfd, path, O_RDONLY | O_CLOEXEC);
        if (map < 0 || map_holds(map, deferred.facts.uid, 1))
                return RT_EXE_OWNER_MAPPED;
        /* Still the container's process: the map read was its namespace's. */
        return rt_pid_alive(pid, start_time) ? RT_EXE_OWNER_UNMAPPED : RT_EXE_OWNER_MAPPED;
}

int
rt_selfexe_confirm_pid(pid_t pid, uint64_t start_time, msp_err *err)
{
        if (!deferred.pending)
                return 0;
        return confirm(owner_in_container(pid, start_time), err);
}
