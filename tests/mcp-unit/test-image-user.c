/* An image's User resolved in the image's own account files (image-user.c): a rootfs
 * under /tmp with its own etc/passwd and etc/group, some lines malformed, and links that
 * point at the host's files (absolute, and up through ..), which must resolve inside it. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/lib/tap.h"
#include "image/image-user.h"

static char base[64];                   /* /tmp/mcp-image-user-XXXXXX: the rootfs */
static int root_fd = -1;

static void
put(const char *name, const char *text)
{
        char p[256];
        snprintf(p, sizeof p, "%s/%s", base, name);
        FILE *f = fopen(p, "w");
        if (f) {
                fputs(text, f);
                fclose(f);
        }
}

static int
resolve(const char *user, unsigned *uid, unsigned *gid, msp_err *err)
{
        *uid = *gid = 99999;
        return mcp_image_user_resolve(root_fd, user, uid, gid, err);
}

TEST(names_ids_and_groups)
{
        unsigned uid, gid;
        msp_err err = { 0 };
        put("etc/passwd", "root:x:0:0:root:/root:/bin/sh\n"
                          "broken line without fields\n"
                          "bad:x:notanumber:1::/:/bin/sh\n"
                          "app:x:1234:1235:app:/home/app:/bin/sh\n"
                          "last:x:77:78::/:/bin/sh");            /* no final newline */
        put("etc/group", "root:x:0:\nstaff:x:50:app\nweird\n");
        ASSERT_OK_ERR(resolve("app", &uid, &gid, &err), err);
        ASSERT_EQ_INT(uid, 1234);
        ASSERT_EQ_INT(gid, 1235);
        ASSERT_OK_ERR(resolve("last", &uid, &gid, &err), err);
        ASSERT_EQ_INT(uid, 77);
        ASSERT_EQ_INT(gid, 78);
        /* A uid with an entry takes its group; one without gets 0. */
        ASSERT_OK_ERR(resolve("1234", &uid, &gid, &err), err);
        ASSERT_EQ_INT(gid, 1235);
        ASSERT_OK_ERR(resolve("4000", &uid, &gid, &err), err);
        ASSERT_EQ_INT(uid, 4000);
        ASSERT_EQ_INT(gid, 0);
        ASSERT_OK_ERR(resolve("app:staff", &uid, &gid, &err), err);
        ASSERT_EQ_INT(gid, 50);
        ASSERT_OK_ERR(resolve("4000:9", &uid, &gid, &err), err);
        ASSERT_EQ_INT(gid, 9);
        /* A malformed line names no one. */
        ASSERT_EQ_INT(resolve("bad", &uid, &gid, &err), -ENOENT);
        ASSERT_EQ_INT(resolve("nobody", &uid, &gid, &err), -ENOENT);
        ASSERT_TRUE(strstr(err.msg, "no user \"nobody\" in the image's /etc/passwd") != NULL);
        ASSERT_EQ_INT(resolve("app:wheel", &uid, &gid, &err), -ENOENT);
        ASSERT_TRUE(strstr(err.msg, "no group \"wheel\"") != NULL);
        ASSERT_EQ_INT(resolve(":5", &uid, &gid, &err), -EINVAL);
        ASSERT_EQ_INT(resolve("app:", &uid, &gid, &err), -EINVAL);
        ASSERT_EQ_INT(resolve("99999999999", &uid, &gid, &err), -ENOENT);      /* not an id */
}

TEST(host_files_never_read)
{
        unsigned uid, gid;
        msp_err err = { 0 };
        char p[256], host[128], up[256];
        /* Host files naming "hostonly" and "hostgrp"; the image's account files link to
         * them by absolute path and up through "..": inside the rootfs neither exists. */
        snprintf(host, sizeof host, "%s-host", base);
        FILE *f = fopen(host, "w");
        ASSERT_TRUE(f != NULL);
        fputs("hostonly:x:4242:4242::/:/bin/sh\nhostgrp:x:4343:\n", f);
        fclose(f);
        snprintf(p, sizeof p, "%s/etc/passwd", base);
        ASSERT_EQ_INT(unlink(p), 0);
        ASSERT_EQ_INT(symlink(host, p), 0);
        snprintf(p, sizeof p, "%s/etc/group", base);
        ASSERT_EQ_INT(unlink(p), 0);
        snprintf(up, sizeof up, "../../../../../../..%s", host);
        ASSERT_EQ_INT(symlink(up, p), 0);
        ASSERT_EQ_INT(resolve("hostonly", &uid, &gid, &err), -ENOENT);
        ASSERT_OK_ERR(resolve("4242", &uid, &gid, &err), err);
        ASSERT_EQ_INT(gid, 0);          /* no entry: the host's line was not read */
        ASSERT_EQ_INT(resolve("0:hostgrp", &uid, &gid, &err), -ENOENT);
        /* A link to itself (from inside, /etc/passwd is the link) is an error, not empty. */
        snprintf(p, sizeof p, "%s/etc/passwd", base);
        ASSERT_EQ_INT(unlink(p), 0);
        ASSERT_EQ_INT(symlink("/etc/passwd", p), 0);
        ASSERT_EQ_INT(resolve("app", &uid, &gid, &err), -ELOOP);
        ASSERT_TRUE(strstr(err.msg, "the image's /etc/passwd") != NULL);
        ASSERT_EQ_INT(unlink(host), 0);
}

int
main(void)
{
        snprintf(base, sizeof base, "/tmp/mcp-image-user-XXXXXX");
        char etc[128];
        if (!mkdtemp(base))
                return 1;
        snprintf(etc, sizeof etc, "%s/etc", base);
        if (mkdir(etc, 0755) < 0 || (root_fd = open(base, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
                return 1;
        RUN(names_ids_and_groups);
        RUN(host_files_never_read);
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
        if (system(cmd) != 0)
                tap_diag("could not remove %s", base);
        return tap_done();
}
