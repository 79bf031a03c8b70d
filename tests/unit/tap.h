/* A tiny TAP producer for msp's C unit tests.
 *
 *   TEST(parses_args) { ASSERT_EQ_INT(spec->process->args.n, 1); ... }
 *   int main(void) { RUN(parses_args); return tap_done(); }
 *
 * Each RUN() prints "ok N - name" or "not ok N - name"; the plan ("1..N") is printed by
 * tap_done() at the end, so no count is hard-coded. A failing ASSERT_* prints the
 * expression and both values as TAP diagnostics ("# ...") and returns from the test
 * function. tap_check() records one data-driven result without returning. The exit
 * status is non-zero when anything failed. Test code only: exit() and globals are fine. */
#pragma once

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
