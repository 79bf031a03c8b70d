/* The fixture of the runtime's filesystem tests (tests/rt-unit: test-lsm.c, test-pathres.c,
 * test-procfs.c, test-rootfs.c), on top of tests/lib/tap.h's forked tests: each test runs
 * in a forked child that may unshare and mount freely on a fresh base directory; the
 * parent reports one TAP line per test. Test code only: globals and _exit() are fine. */
#pragma once

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "oci/err.h"
#include "tests/lib/tap.h"

static msp_err e;
/* A fresh mkdtemp() directory per test (fs_run), removed after the child exits; the
 * child mounts a tmpfs on it in its own mount namespace, so it is empty on the host. */
static char base[64];

static inline void
fs_run(const char *name, void (*fn)(void))
{
        snprintf(base, sizeof base, "/tmp/rt-fs-test-XXXXXX");
        if (!mkdtemp(base)) {
                tap_check(false, "%s (mkdtemp: %s)", name, strerror(errno));
                return;
        }
        (void) tap_run_forked(name, fn);
        (void) rmdir(base);
}

static inline void
write_file(const char *path, const char *content)
{
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        CHECK(fd >= 0);
        CHECK(write(fd, content, strlen(content)) == (ssize_t) strlen(content));
        close(fd);
}

static inline bool
dir_is_empty(const char *path)
{
        DIR *d = opendir(path);
        CHECK(d);
        int n = 0;
        for (struct dirent *de; (de = readdir(d));)
                n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
        closedir(d);
        return n == 0;
}

static inline int
require_root(void)
{
        if (geteuid() == 0)
                return 0;
        printf("1..0 # SKIP needs root\n");
        return 77;
}
