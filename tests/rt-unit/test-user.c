/* rt_user_switch against the real kernel. Each test runs in its own fork (as Landlock's
 * TEST_F_FORK does), so the privilege drops never reach the runner. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/process.h"

#include "tests/lib/tap.h"

/* The value of a "Key:\t..." line of /proc/self/status, tabs turned into spaces. */
static void
status_field(const char *key, char *out, size_t outsz)
{
        char line[512];
        size_t klen = strlen(key);
        FILE *f = fopen("/proc/self/status", "re");

        CHECK(f);
        out[0] = '\0';
        while (fgets(line, sizeof line, f)) {
                if (strncmp(line, key, klen) == 0 && line[klen] == ':') {
                        char *v = line + klen + 1;
                        v += strspn(v, " \t");
                        v[strcspn(v, "\n")] = '\0';
                        for (char *p = v; *p; p++)
                                if (*p == '\t')
                                        *p = ' ';
                        for (size_t l = strlen(v); l > 0 && v[l - 1] == ' '; l--)
                                v[l - 1] = '\0';
                        snprintf(out, outsz, "%s", v);
                }
        }
        fclose(f);
}

static void
expect_status(const char *key, const char *want)
{
        char got[256];

        status_field(key, got, sizeof got);
        printf("# %s: '%s'\n", key, got);
        CHECK(strcmp(got, want) == 0);
}

static void
test_switch_with_groups(void)
{
        uint32_t gids[] = { 3000, 1000, 2000 };        /* unsorted on purpose */
        oci_user u = { .uid = 1000, .gid = 1000, .has_umask = true, .umask = 027,
                       .additional_gids = gids, .n_additional_gids = 3 };
        msp_err e;

        CHECK_OK(rt_user_switch(&u, true, &e), e);
        expect_status("Uid", "1000 1000 1000 1000");
        expect_status("Gid", "1000 1000 1000 1000");
        expect_status("Groups", "1000 2000 3000");
        /* keepcaps kept permitted for rt_caps_apply, and is off again */
        expect_status("CapEff", "0000000000000000");
        char prm[64];
        status_field("CapPrm", prm, sizeof prm);
        CHECK(strcmp(prm, "0000000000000000") != 0);
        CHECK(prctl(PR_GET_KEEPCAPS, 0, 0, 0, 0) == 0);
        CHECK(umask(0) == 027);
}

static void
test_default_umask_and_no_groups(void)
{
        oci_user u = { .uid = 0, .gid = 0 };
        gid_t g = 4242;
        msp_err e;

        CHECK(setgroups(1, &g) == 0);
        CHECK_OK(rt_user_switch(&u, true, &e), e);
        /* the runtime's own groups are dropped even when none are requested */
        expect_status("Groups", "");
        CHECK(umask(0) == 0022);
}

static void
test_setgroups_denied_with_gids(void)
{
        uint32_t gids[] = { 5 };
        oci_user u = { .uid = 0, .gid = 0, .additional_gids = gids, .n_additional_gids = 1 };
        msp_err e;

        CHECK_ERR(rt_user_switch(&u, false, &e), e, EPERM, "setgroups is denied");
}

static void
write_file(const char *path, const char *s)
{
        int fd = open(path, O_WRONLY | O_CLOEXEC);
        CHECK(fd >= 0);
        CHECK(write(fd, s, strlen(s)) == (ssize_t) strlen(s));
        close(fd);
}

/* A user namespace mapping only root, with setgroups denied, as rootless podman has. */
static void
enter_userns_root_only(void)
{
        CHECK(unshare(CLONE_NEWUSER) == 0);
        write_file("/proc/self/setgroups", "deny");
        write_file("/proc/self/uid_map", "0 0 1");
        write_file("/proc/self/gid_map", "0 0 1");
}

static void
test_userns_setgroups_denied_skips(void)
{
        oci_user u = { .uid = 0, .gid = 0 };
        msp_err e;

        enter_userns_root_only();
        CHECK_OK(rt_user_switch(&u, false, &e), e);
        expect_status("Uid", "0 0 0 0");
}

static void
test_userns_unmapped_uid(void)
{
        oci_user u = { .uid = 1000, .gid = 0 };
        msp_err e;

        enter_userns_root_only();
        CHECK_ERR(rt_user_switch(&u, false, &e), e, EINVAL, "setresuid 1000");
        CHECK(strstr(e.msg, "not mapped") != NULL);
}

int
main(void)
{
        static const tap_fork_test tests[] = {
                { "switch to 1000:1000 with groups and umask", test_switch_with_groups },
                { "default umask, runtime groups dropped", test_default_umask_and_no_groups },
                { "additionalGids with setgroups denied fails", test_setgroups_denied_with_gids },
                { "userns with setgroups denied: groups skipped", test_userns_setgroups_denied_skips },
                { "userns: unmapped uid is a clear error", test_userns_unmapped_uid },
        };
        if (geteuid() != 0) {
                printf("1..0 # SKIP needs root\n");
                return 0;
        }
        return tap_run_table(tests, ARRAY_SIZE(tests));
}
