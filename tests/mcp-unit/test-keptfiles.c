/* mcp-adapter/engine/keptfiles.c: kept files on disk within the server's and a tenant's byte
 * budgets, the tenant's own oldest dropped first, then anyone's, each drop reported; a file
 * above a budget refused without dropping; another tenant's file is not found; the disk
 * holds what the index says. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/lib/tap.h"
#include "engine/keptfiles.h"
#include "oci/macros.h"

static char dir[] = "/tmp/test-mcp-kept-XXXXXX";
static char dropped[16][128];
static size_t n_dropped;

static void
on_dropped(const char *uri, const char *tenant, const char *why, void *data)
{
        (void) data;
        if (n_dropped < ARRAY_SIZE(dropped))
                snprintf(dropped[n_dropped++], sizeof dropped[0], "%s %s %s", tenant, uri,
                         strstr(why, "tenant") ? "tenant" : "server");
}

static uint64_t
disk_bytes(int kfd)
{
        uint64_t n = 0;
        DIR *d = fdopendir(dup(kfd));
        for (struct dirent *de; d && (de = readdir(d));) {
                struct stat st;
                if (de->d_name[0] != '.' && fstatat(kfd, de->d_name, &st, 0) == 0)
                        n += (uint64_t) st.st_size;
        }
        if (d)
                closedir(d);
        return n;
}

TEST(budgets_and_drops)
{
        ASSERT_TRUE(mkdtemp(dir) != NULL);
        int ifd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(ifd >= 0);
        mcp_keptfiles k;
        msp_err err = { 0 };
        ASSERT_OK_ERR(mcp_keptfiles_init(&k, ifd, 300, 200, &err), err);
        char data[100];
        memset(data, 'x', sizeof data);
        /* alice: a, b; a third drops her oldest. */
        ASSERT_OK_ERR(mcp_keptfiles_add(&k, "alice", "u/a1", "text/plain", data, 100, on_dropped, NULL, &err), err);
        ASSERT_OK_ERR(mcp_keptfiles_add(&k, "alice", "u/a2", NULL, data, 100, on_dropped, NULL, &err), err);
        ASSERT_EQ_U64(n_dropped, 0);
        ASSERT_OK_ERR(mcp_keptfiles_add(&k, "alice", "u/a3", NULL, data, 100, on_dropped, NULL, &err), err);
        ASSERT_EQ_U64(n_dropped, 1);
        ASSERT_STREQ(dropped[0], "alice u/a1 tenant");
        /* bob's first file fits beside alice's two (300); his second drops the oldest of all. */
        ASSERT_OK_ERR(mcp_keptfiles_add(&k, "bob", "u/b1", NULL, data, 100, on_dropped, NULL, &err), err);
        ASSERT_EQ_U64(n_dropped, 1);
        ASSERT_OK_ERR(mcp_keptfiles_add(&k, "bob", "u/b2", NULL, data, 50, on_dropped, NULL, &err), err);
        ASSERT_EQ_U64(n_dropped, 2);
        ASSERT_STREQ(dropped[1], "alice u/a2 server");
        ASSERT_EQ_U64(k.bytes, 250);
        ASSERT_EQ_U64(disk_bytes(k.dirfd), 250);
        /* Above the tenant's budget: refused, nothing dropped. */
        char big[201] = { 0 };
        ASSERT_EQ_INT(mcp_keptfiles_add(&k, "bob", "u/big", NULL, big, sizeof big, on_dropped, NULL, &err), -EFBIG);
        ASSERT_EQ_U64(n_dropped, 2);
        /* Read back by its tenant only. */
        unsigned char *buf = NULL;
        size_t len = 0;
        const char *mime = NULL;
        ASSERT_OK_ERR(mcp_keptfiles_read(&k, "alice", "u/a3", &buf, &len, &mime, &err), err);
        ASSERT_TRUE(len == 100 && memcmp(buf, data, 100) == 0);
        ASSERT_STREQ(mime, "application/octet-stream");
        free(buf);
        ASSERT_EQ_INT(mcp_keptfiles_read(&k, "bob", "u/a3", &buf, &len, &mime, &err), -ENOENT);
        ASSERT_EQ_INT(mcp_keptfiles_read(&k, "alice", "u/a1", &buf, &len, &mime, &err), -ENOENT);
        /* Freed: every file is gone from the disk too. */
        int kfd = dup(k.dirfd);
        mcp_keptfiles_free(&k);
        ASSERT_EQ_U64(disk_bytes(kfd), 0);
        close(kfd);
        (void) unlinkat(ifd, "kept", AT_REMOVEDIR);
        close(ifd);
        (void) rmdir(dir);
}

int
main(void)
{
        RUN(budgets_and_drops);
        return tap_done();
}
