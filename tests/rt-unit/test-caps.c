/* rt_caps_apply against the real kernel: every set exactly as requested, read back from
 * /proc/self/status. Each test runs in its own fork so the drops stay there. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/process.h"

#include "tests/lib/tap.h"

#define B(c) (UINT64_C(1) << (c))

static uint64_t
status_caps(const char *key)
{
        char line[256];
        size_t klen = strlen(key);
        unsigned long long v = ~0ULL;
        FILE *f = fopen("/proc/self/status", "re");

        CHECK(f);
        while (fgets(line, sizeof line, f))
                if (strncmp(line, key, klen) == 0 && line[klen] == ':')
                        CHECK(sscanf(line + klen + 1, "%llx", &v) == 1);
        fclose(f);
        return v;
}

static void
expect_sets(const oci_capabilities *c)
{
        uint64_t known = 0;
        for (int i = 0; i <= rt_caps_last_cap(); i++)
                known |= B(i);
        struct { const char *key; uint64_t want; } s[] = {
                { "CapInh", c->inheritable & known }, { "CapPrm", c->permitted & known },
                { "CapEff", c->effective & known }, { "CapBnd", c->bounding & known },
                { "CapAmb", c->ambient & known },
        };
        for (size_t i = 0; i < ARRAY_SIZE(s); i++) {
                uint64_t got = status_caps(s[i].key);
                printf("# %s got %016llx want %016llx\n", s[i].key, (unsigned long long) got,
                       (unsigned long long) s[i].want);
                CHECK(got == s[i].want);
        }
}

static void
test_exact_sets_as_root(void)
{
        oci_capabilities c = {
                .bounding = B(CAP_CHOWN) | B(CAP_KILL) | B(CAP_NET_BIND_SERVICE) | B(CAP_SYS_ADMIN),
                .effective = B(CAP_CHOWN) | B(CAP_KILL),
                .permitted = B(CAP_CHOWN) | B(CAP_KILL) | B(CAP_NET_BIND_SERVICE),
                .inheritable = B(CAP_NET_BIND_SERVICE),
                .ambient = B(CAP_NET_BIND_SERVICE),
        };
        msp_err e;

        CHECK_OK(rt_caps_apply(&c, true, &e), e);
        expect_sets(&c);
}

/* The init's order: rt_user_switch (keepcaps) and then rt_caps_apply. */
static void
test_exact_sets_after_user_switch(void)
{
        oci_user u = { .uid = 1000, .gid = 1000 };
        oci_capabilities c = {
                .bounding = B(CAP_NET_RAW) | B(CAP_NET_BIND_SERVICE),
                .effective = B(CAP_NET_BIND_SERVICE),
                .permitted = B(CAP_NET_BIND_SERVICE) | B(CAP_NET_RAW),
                .inheritable = B(CAP_NET_BIND_SERVICE),
                .ambient = B(CAP_NET_BIND_SERVICE),
        };
        msp_err e;

        CHECK_OK(rt_user_switch(&u, true, &e), e);
        CHECK_OK(rt_caps_apply(&c, true, &e), e);
        expect_sets(&c);
        CHECK(getuid() == 1000);
}

static void
test_no_capabilities(void)
{
        oci_capabilities none = { 0 };
        msp_err e;

        CHECK(prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) == 0);
        CHECK_OK(rt_caps_apply(NULL, false, &e), e);
        expect_sets(&none);
        /* and no way back */
        cap_value_t v = CAP_SYS_ADMIN;
        cap_t cur = cap_get_proc();
        CHECK(cur);
        CHECK(cap_set_flag(cur, CAP_EFFECTIVE, 1, &v, CAP_SET) == 0);
        CHECK(cap_set_proc(cur) < 0 && errno == EPERM);
        cap_free(cur);
}

/* CVE-2022-29162: a full bounding set must not leak into inheritable. */
static void
test_inheritable_not_from_bounding(void)
{
        oci_capabilities c = { .effective = B(CAP_CHOWN),
                               .permitted = B(CAP_CHOWN) };
        msp_err e;

        /* the runner's own bounding set may already lack some */
        c.bounding = status_caps("CapBnd");
        CHECK_OK(rt_caps_apply(&c, true, &e), e);
        expect_sets(&c);
        CHECK(status_caps("CapInh") == 0);
}

static void
test_unknown_caps_skipped(void)
{
        oci_capabilities c = { .bounding = B(CAP_CHOWN) | B(62), .effective = B(CAP_CHOWN) | B(62),
                               .permitted = B(CAP_CHOWN) | B(62), .ambient = B(62) };
        msp_err e;

        if (rt_caps_last_cap() >= 62)
                SKIP("the kernel knows capability 62");
        CHECK(rt_caps_unsupported_mask(&c) == B(62));
        CHECK_OK(rt_caps_apply(&c, true, &e), e);
        expect_sets(&c);
}

static void
test_ambient_needs_inheritable(void)
{
        oci_capabilities c = { .bounding = B(CAP_CHOWN), .effective = B(CAP_CHOWN),
                               .permitted = B(CAP_CHOWN), .ambient = B(CAP_CHOWN) };
        msp_err e;

        /* Left out, not refused: runc's and crun's default specs rely on that. */
        CHECK(rt_caps_ambient_dropped(&c) == B(CAP_CHOWN));
        CHECK_OK(rt_caps_apply(&c, true, &e), e);
        c.ambient = 0;
        expect_sets(&c);
}

static void
test_effective_not_in_permitted(void)
{
        oci_capabilities c = { .bounding = B(CAP_CHOWN), .effective = B(CAP_CHOWN) };
        msp_err e;

        CHECK_ERR(rt_caps_apply(&c, true, &e), e, EPERM, "effective must be within permitted");
        /* inheritable outside bounding */
        c = (oci_capabilities) { .bounding = B(CAP_CHOWN), .inheritable = B(CAP_KILL) };
        CHECK_ERR(rt_caps_apply(&c, true, &e), e, EPERM, "inheritable within bounding");
}

static void
test_last_cap_and_names(void)
{
        const char *names[64];
        int last = -1;
        FILE *f = fopen("/proc/sys/kernel/cap_last_cap", "re");

        CHECK(f);
        CHECK(fscanf(f, "%d", &last) == 1);
        fclose(f);
        CHECK(rt_caps_last_cap() == last);
        size_t n = rt_caps_supported_names(names, ARRAY_SIZE(names));
        printf("# %zu names, last %s\n", n, n ? names[n - 1] : "-");
        CHECK(n > 0 && n <= (size_t) last + 1);
        CHECK(strcmp(names[0], "CAP_CHOWN") == 0);
        CHECK(rt_caps_supported_names(names, 3) == 3);
}

int
main(void)
{
        static const tap_fork_test tests[] = {
                { "five sets exactly as requested (root)", test_exact_sets_as_root },
                { "five sets after switching to uid 1000", test_exact_sets_after_user_switch },
                { "no capabilities: all sets empty", test_no_capabilities },
                { "inheritable is not copied from bounding", test_inheritable_not_from_bounding },
                { "capabilities unknown to the kernel are skipped", test_unknown_caps_skipped },
                { "ambient without inheritable is left out", test_ambient_needs_inheritable },
                { "effective outside permitted, inheritable outside bounding: errors", test_effective_not_in_permitted },
                { "cap_last_cap probe and supported names", test_last_cap_and_names },
        };
        if (geteuid() != 0) {
                printf("1..0 # SKIP needs root\n");
                return 0;
        }
        return tap_run_table(tests, ARRAY_SIZE(tests));
}
