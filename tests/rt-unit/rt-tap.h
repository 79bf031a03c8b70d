/* A small TAP harness for the runtime mechanism tests: each test runs in a forked child
 * so that privilege drops, namespaces and filters cannot poison the runner (as the
 * Landlock selftests' TEST_F_FORK). Exit 77 in a test means skip. Test code only. */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "oci/err.h"

#define CHECK(c) do { if (!(c)) { printf("# %s:%d: CHECK(%s) failed (errno: %s)\n", __FILE__, \
        __LINE__, #c, strerror(errno)); fflush(stdout); _exit(1); } } while (0)
#define CHECK_OK(call, e) do { msp_err_clear(&(e)); int r_ = (call); if (r_ < 0) { \
        printf("# %s:%d: %s = %d: %s\n", __FILE__, __LINE__, #call, r_, (e).msg); \
        fflush(stdout); _exit(1); } } while (0)
#define CHECK_ERR(call, e, eno, text) do { msp_err_clear(&(e)); int r_ = (call); \
        printf("# %s -> %d '%s'\n", #call, r_, (e).msg); \
        CHECK(r_ == -(eno)); CHECK(strstr((e).msg, (text)) != NULL); } while (0)
#define SKIP(why) do { printf("# skip: %s\n", why); fflush(stdout); _exit(77); } while (0)
typedef struct { const char *name; void (*fn)(void); } rt_test;
static int
run_tests(const rt_test *t, size_t n)
{
        int failed = 0;
        printf("1..%zu\n", n);
        for (size_t i = 0; i < n; i++) {
                int st = 0;
                fflush(stdout);
                pid_t pid = fork();
                if (pid == 0) { t[i].fn(); fflush(stdout); _exit(0); }
                (void) waitpid(pid, &st, 0);
                bool skip = WIFEXITED(st) && WEXITSTATUS(st) == 77;
                bool ok = WIFEXITED(st) && (WEXITSTATUS(st) == 0 || skip);
                printf("%sok %zu - %s%s\n", ok ? "" : "not ", i + 1, t[i].name, skip ? " # SKIP" : "");
                failed += !ok;
        }
        return failed ? 1 : 0;
}
