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
 * "Already done" is decided from the executable itself (its seals, or its mount),
 * never from an environment marker a caller could set. The command-line rule must stay
 * the same as selfexe-early.c's. */
#include "selfexe.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "macros.h"

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

int
rt_selfexe_ensure(int argc, char **argv, char **envp)
{
        if (!rt_selfexe_needed(argc, argv) || running_protected())
                return 0;
        int mfd = make_sealed_copy();
        if (mfd < 0) {
                fprintf(stderr, "msp: copying the binary into a sealed memfd (CVE-2019-5736): %s\n",
                        strerror(-mfd));
                return mfd;
        }
        fexecve(mfd, argv, envp);
        int e = errno;
        close(mfd);
        fprintf(stderr, "msp: executing the sealed copy of the binary: %s\n", strerror(e));
        return -e;
}
