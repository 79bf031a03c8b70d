/* The TAP producer of every C unit test (tests/unit, tests/rt-unit, tests/mcp-unit); meson
 * reads its output with protocol 'tap'. Two ways to write a test:
 *
 * In process, for pure functions:
 *   TEST(parses_args) { ASSERT_EQ_INT(spec->process->args.n, 1); ... }
 *   int main(void) { RUN(parses_args); return tap_done(); }
 * A failing ASSERT_* prints the expression and both values as TAP diagnostics ("# ...")
 * and returns from the test function. tap_check() records one data-driven result without
 * returning; tap_skip() records a skip with its reason.
 *
 * In a forked child, for tests that drop privileges, unshare, mount or install filters
 * (nothing they do can poison the runner):
 *   static void test_x(void) { CHECK_OK(rt_thing(&e), e); CHECK(x == 1); }
 *   static const tap_fork_test tests[] = { { "x does y", test_x } };
 *   return tap_run_table(tests, ARRAY_SIZE(tests));
 * A failing CHECK* prints a diagnostic and exits the child with status 1; SKIP(why) exits
 * it with 77 and the runner reports "ok N - name # SKIP why".
 *
 * Each result prints "ok N - name" or "not ok N - name"; the plan ("1..N") is printed by
 * tap_done() at the end, so no count is hard-coded. The exit status is non-zero when
 * anything failed. Test code only: exit() and globals are fine. */
#pragma once

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "oci/err.h"

static int tap_count;
static int tap_failures;
static bool tap_current_failed;

static inline void tap_diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline bool tap_check(bool ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static inline void
tap_diag(const char *fmt, ...)
{
        char buf[8192];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(buf, sizeof buf, fmt, ap);
        va_end(ap);
        /* one "# " per line so that multi-line values stay diagnostics */
        for (char *line = buf, *nl; line && *line; line = nl ? nl + 1 : NULL) {
                nl = strchr(line, '\n');
                printf("# %.*s\n", nl ? (int) (nl - line) : (int) strlen(line), line);
        }
        fflush(stdout);
}

static inline void
tap_result(bool ok, const char *name)
{
        tap_count++;
        if (!ok)
                tap_failures++;
        printf("%s %d - %s\n", ok ? "ok" : "not ok", tap_count, name);
        fflush(stdout);
}

/* One data-driven result; returns ok. */
static inline bool
tap_check(bool ok, const char *fmt, ...)
{
        char name[512];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(name, sizeof name, fmt, ap);
        va_end(ap);
        tap_result(ok, name);
        return ok;
}

static inline void
tap_run(const char *name, void (*fn)(void))
{
        tap_current_failed = false;
        fn();
        tap_result(!tap_current_failed, name);
}

static inline void
tap_skip(const char *name, const char *why)
{
        tap_count++;
        printf("ok %d - %s # SKIP %s\n", tap_count, name, why);
        fflush(stdout);
}

static inline int
tap_done(void)
{
        printf("1..%d\n", tap_count);
        if (tap_failures)
                tap_diag("%d of %d tests failed", tap_failures, tap_count);
        return tap_failures ? 1 : 0;
}

#define TEST(name) static void name(void)
#define RUN(name) tap_run(#name, name)

#define TAP_FAIL_(...)                                                  \
        do {                                                            \
                tap_diag("%s:%d: in %s", __FILE__, __LINE__, __func__); \
                tap_diag(__VA_ARGS__);                                  \
                tap_current_failed = true;                              \
                return;                                                 \
        } while (0)

#define ASSERT_TRUE(expr)                                               \
        do {                                                            \
                if (!(expr))                                            \
                        TAP_FAIL_("ASSERT_TRUE(%s) failed", #expr);     \
        } while (0)

#define ASSERT_FALSE(expr)                                              \
        do {                                                            \
                if (expr)                                               \
                        TAP_FAIL_("ASSERT_FALSE(%s) failed", #expr);    \
        } while (0)

#define ASSERT_EQ_INT(a, b)                                                             \
        do {                                                                            \
                intmax_t a_ = (intmax_t) (a), b_ = (intmax_t) (b);                      \
                if (a_ != b_)                                                           \
                        TAP_FAIL_("ASSERT_EQ_INT(%s, %s): %jd != %jd", #a, #b, a_, b_); \
        } while (0)

#define ASSERT_EQ_U64(a, b)                                                             \
        do {                                                                            \
                uint64_t a_ = (uint64_t) (a), b_ = (uint64_t) (b);                      \
                if (a_ != b_)                                                           \
                        TAP_FAIL_("ASSERT_EQ_U64(%s, %s): %" PRIu64 " != %" PRIu64,     \
                                  #a, #b, a_, b_);                                      \
        } while (0)

#define ASSERT_STREQ(a, b)                                                              \
        do {                                                                            \
                const char *a_ = (a), *b_ = (b);                                        \
                if (!a_ || !b_ || strcmp(a_, b_) != 0)                                  \
                        TAP_FAIL_("ASSERT_STREQ(%s, %s):\n  got:      %s%s%s\n"         \
                                  "  expected: %s%s%s",                                 \
                                  #a, #b, a_ ? "\"" : "", a_ ? a_ : "NULL",             \
                                  a_ ? "\"" : "", b_ ? "\"" : "", b_ ? b_ : "NULL",     \
                                  b_ ? "\"" : "");                                      \
        } while (0)

#define ASSERT_NULL(p)                                                  \
        do {                                                            \
                if ((p) != NULL)                                        \
                        TAP_FAIL_("ASSERT_NULL(%s): not NULL", #p);     \
        } while (0)

#define ASSERT_NOT_NULL(p)                                              \
        do {                                                            \
                if ((p) == NULL)                                        \
                        TAP_FAIL_("ASSERT_NOT_NULL(%s): NULL", #p);     \
        } while (0)

/* expr returns >= 0 on success or -errno; err (an msp_err) holds the message. */
#define ASSERT_OK_ERR(expr, err)                                                        \
        do {                                                                            \
                int r_ = (expr);                                                        \
                if (r_ < 0)                                                             \
                        TAP_FAIL_("ASSERT_OK(%s) = %d (%s): %s", #expr, r_,             \
                                  strerror(-r_), (err).msg);                            \
        } while (0)

#define ASSERT_OK(expr)                                                                 \
        do {                                                                            \
                int r_ = (expr);                                                        \
                if (r_ < 0)                                                             \
                        TAP_FAIL_("ASSERT_OK(%s) = %d (%s)", #expr, r_, strerror(-r_)); \
        } while (0)

/* ---- tests in a forked child ---- */

/* In a forked test: the write end of the pipe that carries a skip's reason to the runner. */
static int tap_skip_fd = -1;

#define CHECK(c)                                                                           \
        do {                                                                               \
                if (!(c)) {                                                                \
                        printf("# %s:%d: CHECK(%s) failed (errno: %s)\n", __FILE__, __LINE__, \
                               #c, strerror(errno));                                       \
                        fflush(stdout);                                                    \
                        _exit(1);                                                          \
                }                                                                          \
        } while (0)

/* call returns >= 0 or -errno with the msp_err e set; evaluates to the result */
#define CHECK_OK(call, e)                                                                  \
        ({                                                                                 \
                msp_err_clear(&(e));                                                       \
                int r_ = (call);                                                           \
                if (r_ < 0) {                                                              \
                        printf("# %s:%d: %s = %d: %s\n", __FILE__, __LINE__, #call, r_,    \
                               (e).msg);                                                   \
                        fflush(stdout);                                                    \
                        _exit(1);                                                          \
                }                                                                          \
                r_;                                                                        \
        })

/* call must fail with -eno and a message in e containing text */
#define CHECK_ERR(call, e, eno, text)                                                      \
        do {                                                                               \
                msp_err_clear(&(e));                                                       \
                int r_ = (call);                                                           \
                printf("# %s -> %d '%s'\n", #call, r_, (e).msg);                           \
                CHECK(r_ == -(eno));                                                       \
                CHECK(strstr((e).msg, (text)) != NULL);                                    \
        } while (0)

#define CHECK_STR(got, want)                                                               \
        do {                                                                               \
                const char *g_ = (got), *w_ = (want);                                      \
                if (strcmp(g_, w_) != 0) {                                                 \
                        printf("# %s:%d: got '%s', want '%s'\n", __FILE__, __LINE__, g_, w_); \
                        fflush(stdout);                                                    \
                        _exit(1);                                                          \
                }                                                                          \
        } while (0)

/* Ends the forked test as skipped; the runner prints why on its TAP line. */
#define SKIP(why)                                                                          \
        do {                                                                               \
                const char *why_ = (why);                                                  \
                if (tap_skip_fd >= 0)                                                      \
                        (void) !write(tap_skip_fd, why_, strlen(why_));                    \
                fflush(stdout);                                                            \
                _exit(77);                                                                 \
        } while (0)

/* Runs fn in a child: exit status 0 passes, 77 skips (SKIP's reason), anything else
 * fails. Returns the child's wait status. */
static inline int
tap_run_forked(const char *name, void (*fn)(void))
{
        int st = 0, fds[2] = { -1, -1 };
        char why[256] = "";

        if (pipe2(fds, O_CLOEXEC) < 0) {
                tap_check(false, "%s (pipe: %s)", name, strerror(errno));
                return -1;
        }
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
                close(fds[0]);
                tap_skip_fd = fds[1];
                fn();
                fflush(stdout);
                _exit(0);
        }
        close(fds[1]);
        if (pid < 0) {
                close(fds[0]);
                tap_check(false, "%s (fork: %s)", name, strerror(errno));
                return -1;
        }
        (void) waitpid(pid, &st, 0);
        /* a grandchild the test left running may hold the write end: never wait for it */
        (void) fcntl(fds[0], F_SETFL, O_NONBLOCK);
        ssize_t n = read(fds[0], why, sizeof why - 1);
        why[n > 0 ? n : 0] = '\0';
        close(fds[0]);
        if (WIFEXITED(st) && WEXITSTATUS(st) == 77)
                tap_skip(name, why[0] ? why : "see the diagnostic above");
        else
                tap_check(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s", name);
        return st;
}

typedef struct tap_fork_test {
        const char *name;
        void (*fn)(void);
} tap_fork_test;

/* Each test of the table in its own child (tap_run_forked), then the plan. */
static inline int
tap_run_table(const tap_fork_test *tests, size_t n)
{
        for (size_t i = 0; i < n; i++)
                (void) tap_run_forked(tests[i].name, tests[i].fn);
        return tap_done();
}

/* ---- the source tree ---- */

/* The source tree's root, from MSP_SOURCE_ROOT (meson's test env: tests/meson.build,
 * tests/rt-unit/meson.build). Unset, the whole program bails out: a test that reads the
 * tree must never pass or skip without it. */
static inline const char *
tap_source_root(void)
{
        const char *root = getenv("MSP_SOURCE_ROOT");
        if (!root || !*root) {
                printf("Bail out! MSP_SOURCE_ROOT is not set (meson test sets it to the source tree)\n");
                fflush(stdout);
                exit(1);
        }
        return root;
}
