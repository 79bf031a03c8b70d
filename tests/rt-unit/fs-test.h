/* Shared by the filesystem tests (test-pathres.c, test-procfs.c, test-rootfs.c): each
 * test runs in a forked child that may unshare and mount freely; a failed CHECK prints a
 * TAP diagnostic and exits the child; the parent reports one TAP line per test (tap.h).
 * Test code only: globals and _exit() are fine. */
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
#include "tap.h"

static msp_err e;
/* A fresh mkdtemp() directory per test (fs_run), removed after the child exits; the
 * child mounts a tmpfs on it in its own mount namespace, so it is empty on the host. */
static char base[64];

#define CHECK(c)                                                                           \
        do {                                                                               \
                if (!(c)) {                                                                \
                        printf("# %s:%d: CHECK(%s) failed (errno: %s)\n", __FILE__, __LINE__, \
                               #c, strerror(errno));                                       \
                        fflush(stdout);                                                    \
                        _exit(1);                                                          \
                }                                                                          \
        } while (0)

/* call returns >= 0 or -errno with `e` set; evaluates to the result */
#define CHECK_OK(call)                                                                     \
        ({                                                                                 \
                msp_err_clear(&e);                                                         \
                int r_ = (call);                                                           \
                if (r_ < 0) {                                                              \
                        printf("# %s:%d: %s = %d: %s\n", __FILE__, __LINE__, #call, r_, e.msg); \
                        fflush(stdout);                                                    \
                        _exit(1);                                                          \
                }                                                                          \
                r_;                                                                        \
        })

/* call must fail with -eno and a message containing text */
#define CHECK_FAIL(call, eno, text)                                                        \
        do {                                                                               \
                msp_err_clear(&e);                                                         \
                int r_ = (call);                                                           \
                printf("# %s -> %d '%s'\n", #call, r_, e.msg);                             \
                CHECK(r_ == -(eno));                                                       \
                CHECK(strstr(e.msg, (text)) != NULL);                                      \
        } while (0)

static inline void
fs_run(const char *name, void (*fn)(void))
{
        int st = 0;
        snprintf(base, sizeof base, "/tmp/rt-fs-test-XXXXXX");
        if (!mkdtemp(base)) {
                tap_check(false, "%s (mkdtemp: %s)", name, strerror(errno));
                return;
        }
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
                fn();
                fflush(stdout);
                _exit(0);
        }
        (void) waitpid(pid, &st, 0);
        (void) rmdir(base);
        tap_check(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s", name);
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
