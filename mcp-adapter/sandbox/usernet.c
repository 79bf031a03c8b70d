/* User-mode networking of network sessions' sandboxes (see usernet.h). */
#include "sandbox/usernet.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "oci/oci.h"

bool
mcp_usernet_usable(const char *path)
{
        struct stat st;
        return path && path[0] == '/' && stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
               access(path, X_OK) == 0;
}

int
mcp_usernet_check(const char *path, msp_err *err)
{
        if (mcp_usernet_usable(path))
                return 0;
        return msp_err_set(err, ENOTSUP, "network: the user-mode networking helper %s is %s "
                                         "(install slirp4netns, or name it with --slirp4netns PATH)",
                           path ? path : MCP_USERNET_HELPER,
                           path ? "not an executable file" : "not in PATH");
}

int
mcp_usernet_prepare(int bfd, int *ret, msp_err *err)
{
        if (mkfifoat(bfd, MCP_USERNET_EXIT_FIFO, 0600) < 0)
                return msp_err_sys(err, errno, "network helper: mkfifo '%s'", MCP_USERNET_EXIT_FIFO);
        /* O_RDWR: never blocks, and keeps one writer open for as long as the run holds it. */
        int fd = openat(bfd, MCP_USERNET_EXIT_FIFO, O_RDWR | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return msp_err_sys(err, errno, "network helper: open '%s'", MCP_USERNET_EXIT_FIFO);
        *ret = fd;
        return 0;
}
