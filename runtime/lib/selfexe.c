/* CVE-2019-5736: a process in a container overwrote runc's binary on the host by opening
 * /proc/<runtime pid>/exe (or /proc/self/exe after exec'ing it) while the runtime was
 * inside the container, and writing to it once the runtime had exited.
 *
 * The answer, as in crun and runc: before anything else, the commands that create or
 * enter a container copy the binary into a memfd, seal it against every change
 * (F_SEAL_SEAL|SHRINK|GROW|WRITE, and F_SEAL_EXEC where the kernel has it) and fexecve
 * it. From then on every process of this msp, the container init cloned from it
 * included, has the sealed copy as its /proc/<pid>/exe: nothing reachable from a
 * container leads back to the file on the host.
 *
 * "Already done" is decided from the executable itself (the seals of /proc/self/exe),
 * never from an environment marker a caller could set.
 *
 * Where msp is a static PIE (runtime/meson.build), selfexe-early.c does the same copy at
 * the ELF entry point, before glibc starts; rt_selfexe_ensure() then finds the seals and
 * returns, and stays the path (with error messages) when the early one could not. Its
 * command-line rule must stay the same as rt_selfexe_needed(). */
#include "selfexe.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U
#endif
#ifndef F_SEAL_EXEC
#define F_SEAL_EXEC 0x0020
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

static bool
running_sealed(void)
{
        int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);

        if (fd < 0)
                return false;
        int seals = fcntl(fd, F_GET_SEALS);
        close(fd);
        return seals >= 0 && (seals & SEALS_REQUIRED) == SEALS_REQUIRED;
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
        if (!rt_selfexe_needed(argc, argv) || running_sealed())
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
