/* The createRuntime hook that attaches slirp4netns to a network session's sandbox (see
 * usernet-hook.h); part of msp-sandbox-hook (hook-main.c). */
#include "helpers/usernet-hook.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "oci/oci.h"
#include "sandbox/sandbox.h"
#include "helpers/userns-limits.h"

/* The runtime's hook timeout (bundle.c) is 10 s: give up a little earlier, with the reason. */
#define READY_TIMEOUT_MS 8000

/* In the child: fds 0-4 as slirp4netns gets them, nothing else open, then exec. */
_noreturn_ static void
exec_helper(const char *const argv[], int null_fd, int log_fd, int exit_fd, int ready_fd)
{
        int want[] = { null_fd, log_fd, log_fd, exit_fd, ready_fd };
        int high[ARRAY_SIZE(want)];
        (void) setsid();
        /* Above the targets first, so that no dup2 overwrites a source still needed. */
        for (size_t i = 0; i < ARRAY_SIZE(want); i++)
                if ((high[i] = fcntl(want[i], F_DUPFD_CLOEXEC, 16)) < 0)
                        _exit(127);
        for (size_t i = 0; i < ARRAY_SIZE(want); i++)
                if (dup2(high[i], (int) i) < 0)
                        _exit(127);
        (void) close_range(ARRAY_SIZE(want), ~0U, 0);
        execv(argv[0], (char *const *) argv);
        _exit(127);
}

/* The helper's log, for the hook's error message. */
static void
report_log(int bfd)
{
        char buf[1024];
        _cleanup_close_ int fd = openat(bfd, MCP_USERNET_HELPER_LOG, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);
        if (n > 0) {
                buf[n] = '\0';
                fprintf(stderr, "msp-sandbox-hook network helper: its output: %s\n", buf);
        }
}

static int
wait_ready(int fd)
{
        struct pollfd p = { .fd = fd, .events = POLLIN };
        int n;
        while ((n = poll(&p, 1, READY_TIMEOUT_MS)) < 0 && errno == EINTR)
                ;
        if (n == 0)
                return -ETIMEDOUT;
        char c;
        ssize_t r = read(fd, &c, 1);
        return r == 1 && c == '1' ? 0 : -EPIPE;
}

int
mcp_usernet_hook(FILE *in, const char *helper)
{
        pid_t pid;
        char bundle[4096];
        if (mcp_hook_state(in, "network helper", &pid, bundle, sizeof bundle) < 0)
                return 1;
        _cleanup_close_ int bfd = open(bundle, O_PATH | O_DIRECTORY | O_CLOEXEC);
        _cleanup_close_ int exit_fd = bfd < 0 ? -1
                : openat(bfd, MCP_USERNET_EXIT_FIFO, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
        struct stat st;
        if (exit_fd < 0 || fstat(exit_fd, &st) < 0 || !S_ISFIFO(st.st_mode)) {
                fprintf(stderr, "msp-sandbox-hook network helper: %s/%s: %s\n", bundle, MCP_USERNET_EXIT_FIFO,
                        exit_fd < 0 ? strerror(errno) : "not a FIFO");
                return 1;
        }
        _cleanup_close_ int log_fd = openat(bfd, MCP_USERNET_HELPER_LOG,
                                            O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
        _cleanup_close_ int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
        int ready[2];
        if (log_fd < 0 || null_fd < 0 || pipe2(ready, O_CLOEXEC) < 0) {
                fprintf(stderr, "msp-sandbox-hook network helper: %s\n", strerror(errno));
                return 1;
        }
        _cleanup_close_ int ready_rd = ready[0];
        char netns[64];
        snprintf(netns, sizeof netns, "/proc/%d/ns/net", (int) pid);
        /* No port forwarding (that needs --api-socket), no way to host loopback, the
         * helper's own mount namespace without capabilities and its seccomp filter. It joins
         * the namespace by path, from the host's user namespace: the sandbox's user
         * namespace (and its budgets) is never entered. */
        const char *const argv[] = { helper, "--configure", "--mtu=65520",
                                     "--disable-host-loopback", "--enable-sandbox",
                                     "--enable-seccomp", "--exit-fd=3", "--ready-fd=4",
                                     "--netns-type=path", netns, "tap0", NULL };
        pid_t child = fork();
        if (child < 0) {
                fprintf(stderr, "msp-sandbox-hook network helper: fork: %s\n", strerror(errno));
                close(ready[1]);
                return 1;
        }
        if (child == 0)
                exec_helper(argv, null_fd, log_fd, exit_fd, ready[1]);
        close(ready[1]);
        int r = wait_ready(ready_rd);
        if (r == 0)
                return 0;       /* it runs on, detached, until the exit FIFO closes */
        fprintf(stderr, "msp-sandbox-hook network helper: %s did not bring up the network in %s: %s\n",
                helper, netns, r == -ETIMEDOUT ? "timed out" : "it exited");
        (void) kill(child, SIGKILL);
        (void) waitpid(child, NULL, 0);
        report_log(bfd);
        return 1;
}
