/* Rootless detection (rootless.h). */
#include "rootless.h"

#include <sys/stat.h>
#include <unistd.h>

/* The inode of the initial user namespace (PROC_USER_INIT_INO). */
#define RT_INIT_USERNS_INO 0xEFFFFFFDU

bool
rt_rootless_detect(void)
{
        struct stat st;

        if (geteuid() != 0)
                return true;
        /* No procfs to tell: assume the host's root, as runc does when it cannot read
         * /proc/self/uid_map. */
        if (stat("/proc/self/ns/user", &st) < 0)
                return false;
        return st.st_ino != RT_INIT_USERNS_INO;
}
