/* The sandboxes' host ids as root (sandbox-ids.c): the lines of the subordinate-id files, a
 * range such a file grants refused naming the file and its line, and a settled base claimed
 * again without reading the files again. /etc/subuid and /etc/subgid are the test's own: in
 * a private mount namespace, /etc is an overlay whose upper layer is a tmpfs (root only:
 * skipped otherwise, with the reason). */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/lib/tap.h"
#include "sandbox/sandbox-ids.h"

/* Far above any range useradd gives and any account id. */
#define FREE_BASE 3000000000ul

static char dir[64];                    /* /tmp/mcp-sandbox-ids-XXXXXX: the tmpfs */
static const char subuid[] = "/etc/subuid", subgid[] = "/etc/subgid";

static int
write_file(const char *path, const char *text)
{
        FILE *f = fopen(path, "we");
        if (!f)
                return -errno;
        int r = fputs(text, f) < 0 ? -EIO : 0;
        return fclose(f) < 0 ? -errno : r;
}

/* The lines rootless.c takes a range from and the claim refuses a range for. */
TEST(subid_lines)
{
        size_t n;
        unsigned long start, count;
        ASSERT_TRUE(mcp_subid_parse("alice:100000:65536\n", &n, &start, &count));
        ASSERT_EQ_INT(n, 5);
        ASSERT_EQ_INT(start, 100000);
        ASSERT_EQ_INT(count, 65536);
        ASSERT_TRUE(mcp_subid_parse("1000:3000000000:10", &n, &start, &count));
        ASSERT_EQ_INT(n, 4);
        ASSERT_EQ_INT(start, 3000000000ul);
        static const char *const bad[] = { "alice:100000\n", "alice::65536\n", "alice:1x:2\n",
                                           "alice:1:\n", "alice:1:2x\n", "# alice\n", "" };
        for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
                ASSERT_FALSE(mcp_subid_parse(bad[i], &n, &start, &count));
}

TEST(range_outside_ids_refused)
{
        msp_err err = { 0 };
        ASSERT_EQ_INT(mcp_sandbox_ids_claim(0, 0, &err), -ERANGE);
        ASSERT_EQ_INT(mcp_sandbox_ids_claim(4294967295ul - 65535ul, 0, &err), -ERANGE);
        ASSERT_TRUE(strstr(err.msg, "1..4294967294") != NULL);
}

TEST(granted_range_refused)
{
        msp_err err = { 0 };
        ASSERT_EQ_INT(write_file(subgid, "someone:3000065000:1000\n"), 0);
        ASSERT_EQ_INT(mcp_sandbox_ids_claim(FREE_BASE, 0, &err), -EEXIST);
        ASSERT_TRUE(strstr(err.msg, "/etc/subgid") != NULL);
        ASSERT_TRUE(strstr(err.msg, "'someone:3000065000:1000'") != NULL);
        ASSERT_EQ_INT(write_file(subgid, ""), 0);
        /* A refused claim settles nothing: the map keeps its default. */
        ASSERT_EQ_INT(MCP_SANDBOX_HOST_BASE, MCP_SANDBOX_ROOT_BASE);
}

/* The pool spans the storage range and a range per slice: a grant in the last one is
 * refused, the same base with fewer slices is not. */
TEST(pool_spans_every_slice)
{
        msp_err err = { 0 };
        ASSERT_EQ_INT(write_file(subuid, "someone:3000140000:10\n"), 0);
        ASSERT_EQ_INT(mcp_sandbox_ids_claim(FREE_BASE, 2, &err), -EEXIST);
        ASSERT_TRUE(strstr(err.msg, "3000000000..3000196607") != NULL);
        ASSERT_EQ_INT(mcp_sandbox_ids_claim(FREE_BASE, 1, &err), 0);
        ASSERT_EQ_INT(MCP_SANDBOX_SLICE_BASE(0), FREE_BASE + 65536);
        ASSERT_EQ_INT(mcp_sandbox_ids_claim(4294967294ul - 3 * 65536ul + 1, 3, &err), -ERANGE);
        ASSERT_EQ_INT(write_file(subuid, ""), 0);
}

/* What start-up does: the host check claims, then the engine claims the same base. */
TEST(settled_base_claimed_once)
{
        msp_err err = { 0 };
        ASSERT_EQ_INT(mcp_sandbox_ids_claim(FREE_BASE, 0, &err), 0);
        ASSERT_EQ_INT(MCP_SANDBOX_HOST_BASE, FREE_BASE);
        ASSERT_EQ_INT(MCP_SANDBOX_ID_COUNT, 65536);
        /* A range granted since is not seen: the files are not read for the same base... */
        ASSERT_EQ_INT(write_file(subuid, "someone:3000000000:10\nother:3000200000:10\n"), 0);
        ASSERT_EQ_INT(mcp_sandbox_ids_claim(FREE_BASE, 0, &err), 0);
        ASSERT_EQ_INT(MCP_SANDBOX_HOST_BASE, FREE_BASE);
        /* ...and are for another one, which leaves the settled map as it was. */
        ASSERT_EQ_INT(mcp_sandbox_ids_claim(FREE_BASE + 200000, 0, &err), -EEXIST);
        ASSERT_TRUE(strstr(err.msg, "'other:3000200000:10'") != NULL);
        ASSERT_EQ_INT(MCP_SANDBOX_HOST_BASE, FREE_BASE);
}

int
main(void)
{
        if (geteuid() != 0) {
                printf("1..0 # SKIP needs root (an overlay on /etc in a private mount "
                       "namespace)\n");
                return 0;
        }
        snprintf(dir, sizeof dir, "/tmp/mcp-sandbox-ids-XXXXXX");
        if (!mkdtemp(dir))
                return 1;
        char opts[512];
        int status = 1;
        snprintf(opts, sizeof opts, "lowerdir=/etc,upperdir=%s/up,workdir=%s/work", dir, dir);
        if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
            mount("tmpfs", dir, "tmpfs", 0, "mode=0700") < 0 || chdir(dir) < 0 ||
            mkdir("up", 0755) < 0 || mkdir("work", 0700) < 0 ||
            mount("overlay", "/etc", "overlay", 0, opts) < 0 ||
            write_file(subuid, "") < 0 || write_file(subgid, "") < 0) {
                printf("Bail out! /etc of our own: %s\n", strerror(errno));
        } else {
                RUN(subid_lines);
                RUN(range_outside_ids_refused);
                RUN(granted_range_refused);
                RUN(pool_spans_every_slice);
                RUN(settled_base_claimed_once);
                status = tap_done();
        }
        (void) chdir("/");
        (void) umount2("/etc", MNT_DETACH);
        (void) umount2(dir, MNT_DETACH);
        if (rmdir(dir) < 0)
                tap_diag("could not remove %s: %s", dir, strerror(errno));
        return status;
}
