/* Rootless detection (rootless.h). */
#include "lib/rootless.h"

#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "oci/oci.h"

/* The inode of the initial user namespace (PROC_USER_INIT_INO). */
#define RT_INIT_USERNS_INO 0xEFFFFFFDU

bool
rt_in_initial_userns(void)
{
        struct stat st;

        /* No procfs to tell: assume the initial one, as runc does when it cannot read
         * /proc/self/uid_map. */
        if (stat("/proc/self/ns/user", &st) < 0)
                return true;
        return st.st_ino == RT_INIT_USERNS_INO;
}

bool
rt_rootless_detect(void)
{
        return geteuid() != 0 || !rt_in_initial_userns();
}

bool
rt_rootless_setgroups_denied(void)
{
        _cleanup_close_ int fd = open("/proc/self/setgroups", O_RDONLY | O_CLOEXEC);
        char buf[16] = "";

        if (fd < 0 || read(fd, buf, sizeof buf - 1) < 4)
                return false;
        return strncmp(buf, "deny", 4) == 0;
}
