/* mcp-adapter/session/files.c: the confined file tools against the real kernel. Every escape
 * attempt must fail with the documented errno and leave the canary outside the workspace
 * untouched. Root only (tmpfs mounts in a private mount namespace, device nodes, chown). */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "tests/lib/tap.h"
#include "session/files.h"
#include "base/fileio.h"
#include "sandbox/sandbox-ids.h"

static char base[64];                   /* /tmp/mcp-files-XXXXXX */
static char mnt[128];                   /* base/mnt: a 2 MiB tmpfs holding the workspaces */
static char outside[128];               /* base/outside/canary */
static const char canary_text[] = "canary, must stay as it is\n";
static int ws_counter;

/* A fresh workspace directory on the tmpfs; returns its fd, name in name. */
static int
new_ws(char *name, size_t size)
{
        snprintf(name, size, "%s/ws%d", mnt, ws_counter++);
        if (mkdir(name, 0755) < 0)
                return -1;
        return open(name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

static bool
canary_intact(void)
{
        char p[256], buf[256] = { 0 };
        snprintf(p, sizeof p, "%s/canary", outside);
        int fd = open(p, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return false;
        ssize_t n = read(fd, buf, sizeof buf - 1);
        close(fd);
        struct stat st;
        if (stat(outside, &st) < 0 || st.st_nlink != 2)
                return false;   /* no new subdirectory appeared outside */
        return n == (ssize_t) strlen(canary_text) && strcmp(buf, canary_text) == 0;
}

static int
count_entries(const char *dir)
{
        DIR *d = opendir(dir);
        int n = 0;
        if (!d)
                return -1;
        for (struct dirent *de; (de = readdir(d));)
                n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
        closedir(d);
        return n;
}

TEST(write_read_roundtrip)
{
        char ws[256];
        msp_err err = { 0 };
        int fd = new_ws(ws, sizeof ws);
        ASSERT_TRUE(fd >= 0);
        ASSERT_OK_ERR(mcp_workspace_write_file(fd, "a/b/c.txt", "hello", 5, false,
                                               MCP_RUN_IDS_DEFAULT, &err), err);
        ASSERT_OK_ERR(mcp_workspace_write_file(fd, "/workspace/run.sh", "#!/bin/sh\n", 10, true,
                                               MCP_RUN_IDS_DEFAULT, &err), err);
        char *buf = NULL;
        size_t len = 0;
        uint64_t size = 0;
        bool trunc = true;
        ASSERT_OK_ERR(mcp_workspace_read_file(fd, "/a/b/c.txt", 100, &buf, &len, &size, &trunc,
                                              &err), err);
        ASSERT_STREQ(buf, "hello");
        ASSERT_EQ_U64(size, 5);
        ASSERT_FALSE(trunc);
        free(buf);
        ASSERT_OK_ERR(mcp_workspace_read_file(fd, "./a//b/./c.txt", 2, &buf, &len, &size, &trunc,
                                              &err), err);
        ASSERT_EQ_U64(len, 2);
        ASSERT_TRUE(trunc);
        ASSERT_EQ_U64(size, 5);
        free(buf);
        /* owner: the sandbox user; modes 0644 / 0755; created parents 0755 */
        struct stat st;
        ASSERT_OK(NERRNO(fstatat(fd, "a/b/c.txt", &st, 0)));
        ASSERT_EQ_INT(st.st_uid, MCP_SANDBOX_HOST_UID);
        ASSERT_EQ_INT(st.st_gid, MCP_SANDBOX_HOST_GID);
        ASSERT_EQ_INT(st.st_mode & 07777, 0644);
        ASSERT_OK(NERRNO(fstatat(fd, "a/b", &st, 0)));
        ASSERT_EQ_INT(st.st_uid, MCP_SANDBOX_HOST_UID);
        ASSERT_EQ_INT(st.st_mode & 07777, 0755);
        ASSERT_OK(NERRNO(fstatat(fd, "run.sh", &st, 0)));
        ASSERT_EQ_INT(st.st_mode & 07777, 0755);
        /* overwrite truncates */
        ASSERT_OK_ERR(mcp_workspace_write_file(fd, "a/b/c.txt", "x", 1, false,
                                               MCP_RUN_IDS_DEFAULT, &err), err);
        ASSERT_OK_ERR(mcp_workspace_read_file(fd, "a/b/c.txt", 100, &buf, &len, &size, &trunc,
                                              &err), err);
        ASSERT_STREQ(buf, "x");
        free(buf);
        close(fd);
}

TEST(dotdot_refused)
{
        char ws[256];
        msp_err err = { 0 };
        int fd = new_ws(ws, sizeof ws);
        ASSERT_TRUE(fd >= 0);
        ASSERT_EQ_INT(mcp_workspace_write_file(fd, "../../etc/passwd", "x", 1, false,
                                               MCP_RUN_IDS_DEFAULT, &err), -EXDEV);
        ASSERT_TRUE(strstr(err.msg, "path \"../../etc/passwd\"") != NULL);
        ASSERT_TRUE(strstr(err.msg, "escapes the workspace") != NULL);
        char *buf = NULL;
        size_t len;
        uint64_t size;
        bool trunc;
        ASSERT_EQ_INT(mcp_workspace_read_file(fd, "../../etc/passwd", 10, &buf, &len, &size,
                                              &trunc, &err), -EXDEV);
        ASSERT_EQ_INT(mcp_workspace_write_file(fd, "a/../../x", "x", 1, false,
                                               MCP_RUN_IDS_DEFAULT, &err), -EXDEV);
        mcp_dirent *ents = NULL;
        size_t n;
        ASSERT_EQ_INT(mcp_workspace_list_files(fd, "..", 10, &ents, &n, &trunc, &err), -EXDEV);
        ASSERT_EQ_INT(count_entries(ws), 0);
        ASSERT_TRUE(canary_intact());
        close(fd);
}

TEST(absolute_path_stays_inside)
{
        char ws[256], p[512];
        msp_err err = { 0 };
        int fd = new_ws(ws, sizeof ws);
        ASSERT_TRUE(fd >= 0);
        char *buf = NULL;
        size_t len;
        uint64_t size;
        bool trunc;
        /* "/etc/passwd" is /workspace/etc/passwd: absent */
        ASSERT_EQ_INT(mcp_workspace_read_file(fd, "/etc/passwd", 10, &buf, &len, &size, &trunc,
                                              &err), -ENOENT);
        ASSERT_TRUE(strstr(err.msg, "path \"/etc/passwd\"") != NULL);
        /* the canary's absolute host path lands inside the workspace */
        snprintf(p, sizeof p, "%s/canary", outside);
        ASSERT_OK_ERR(mcp_workspace_write_file(fd, p, "evil", 4, false,
                                               MCP_RUN_IDS_DEFAULT, &err), err);
        ASSERT_TRUE(canary_intact());
        snprintf(p, sizeof p, "%s%s/canary", ws, outside);
        ASSERT_OK(NERRNO(access(p, F_OK)));
        close(fd);
}

TEST(absolute_symlink_to_etc)
{
        char ws[256];
        msp_err err = { 0 };
        int fd = new_ws(ws, sizeof ws);
        ASSERT_TRUE(fd >= 0);
        ASSERT_OK(NERRNO(symlinkat("/etc", fd, "hostetc")));
        ASSERT_OK(NERRNO(symlinkat(outside, fd, "out")));
        /* the test could fail: without confinement these names reach the host */
        ASSERT_OK(NERRNO(faccessat(fd, "hostetc/passwd", F_OK, 0)));
        char *buf = NULL;
        size_t len;
        uint64_t size;
        bool trunc;
        ASSERT_EQ_INT(mcp_workspace_read_file(fd, "hostetc/passwd", 4096, &buf, &len, &size,
                                              &trunc, &err), -ENOENT);
        ASSERT_EQ_INT(mcp_workspace_read_file(fd, "out/canary", 4096, &buf, &len, &size, &trunc,
                                              &err), -ENOENT);
        ASSERT_EQ_INT(mcp_workspace_write_file(fd, "out/canary", "evil", 4, false,
                                               MCP_RUN_IDS_DEFAULT, &err), -ELOOP);
        ASSERT_TRUE(strstr(err.msg, "path \"out/canary\"") != NULL);
        ASSERT_EQ_INT(mcp_workspace_write_file(fd, "hostetc/evil", "evil", 4, false,
                                               MCP_RUN_IDS_DEFAULT, &err), -ELOOP);
        mcp_dirent *ents = NULL;
        size_t n;
        ASSERT_EQ_INT(mcp_workspace_list_files(fd, "hostetc", 10, &ents, &n, &trunc, &err),
                      -ENOENT);
        ASSERT_TRUE(canary_intact());
        ASSERT_EQ_INT(faccessat(AT_FDCWD, "/etc/evil", F_OK, AT_SYMLINK_NOFOLLOW), -1);
        close(fd);
}

TEST(relative_symlink_chain)
{
        char ws[256];
        msp_err err = { 0 };
        int fd = new_ws(ws, sizeof ws);
        ASSERT_TRUE(fd >= 0);
        /* ws is base/mnt/wsN: "../../outside" is the canary's dir */
        ASSERT_OK(NERRNO(symlinkat("../../outside", fd, "a")));
        ASSERT_OK(NERRNO(symlinkat("a", fd, "b")));
        ASSERT_OK(NERRNO(mkdirat(fd, "d", 0755)));
        ASSERT_OK(NERRNO(symlinkat("../b", fd, "d/c")));
        ASSERT_OK(NERRNO(faccessat(fd, "d/c/canary", F_OK, 0)));       /* reaches it unconfined */
        char *buf = NULL;
        size_t len;
        uint64_t size;
        bool trunc;
        ASSERT_EQ_INT(mcp_workspace_read_file(fd, "d/c/canary", 4096, &buf, &len, &size, &trunc,
                                              &err), -ENOENT);
        ASSERT_EQ_INT(mcp_workspace_write_file(fd, "d/c/canary", "evil", 4, false,
                                               MCP_RUN_IDS_DEFAULT, &err), -ELOOP);
        ASSERT_EQ_INT(mcp_workspace_write_file(fd, "b/new", "evil", 4, false,
                                               MCP_RUN_IDS_DEFAULT, &err), -ELOOP);
        ASSERT_TRUE(canary_intact());
        close(fd);
}

TEST(symlink_last_component_on_write)
{
        char ws[256], target[256];
        msp_err err = { 0 };
        int fd = new_ws(ws, sizeof ws);
        ASSERT_TRUE(fd >= 0);
        snprintf(target, sizeof target, "%s/canary", outside);
        ASSERT_OK(NERRNO(symlinkat(target, fd, "abs")));
        ASSERT_OK(NERRNO(symlinkat("../../outside/canary", fd, "rel")));
        ASSERT_OK(NERRNO(symlinkat("inside.txt", fd, "in")));
        ASSERT_EQ_INT(mcp_workspace_write_file(fd, "abs", "evil", 4, false,
                                               MCP_RUN_IDS_DEFAULT, &err), -ELOOP);
        ASSERT_TRUE(strstr(err.msg, "path \"abs\"") != NULL);
        ASSERT_EQ_INT(mcp_workspace_write_file(fd, "rel", "evil", 4, false,
                                               MCP_RUN_IDS_DEFAULT, &err), -ELOOP);
        ASSERT_EQ_INT(mcp_workspace_write_file(fd, "in", "x", 1, false,
                                               MCP_RUN_IDS_DEFAULT, &err), -ELOOP);
        ASSERT_EQ_INT(faccessat(fd, "inside.txt", F_OK, 0), -1);
        ASSERT_TRUE(canary_intact());
        /* a symlink inside the workspace is followed for reading */
        ASSERT_OK_ERR(mcp_workspace_write_file(fd, "inside.txt", "ok", 2, false,
                                               MCP_RUN_IDS_DEFAULT, &err), err);
        char *buf = NULL;
        size_t len;
        uint64_t size;
        bool trunc;
        ASSERT_OK_ERR(mcp_workspace_read_file(fd, "in", 10, &buf, &len, &size, &trunc, &err),
                      err);
        ASSERT_STREQ(buf, "ok");
        free(buf);
        close(fd);
}

TEST(fifo_and_device_do_not_block)
{
        char ws[256];
        msp_err err = { 0 };
        int fd = new_ws(ws, sizeof ws);
        ASSERT_TRUE(fd >= 0);
        ASSERT_OK(NERRNO(mkfifoat(fd, "fifo", 0666)));
        ASSERT_OK(NERRNO(mknodat(fd, "null", S_IFCHR | 0666, makedev(1, 3))));
        char *buf = NULL;
        size_t len;
        uint64_t size;
        bool trunc;
        /* alarm() in main turns a hang into a failure */
        ASSERT_EQ_INT(mcp_workspace_read_file(fd, "fifo", 10, &buf, &len, &size, &trunc, &err),
                      -EINVAL);
        ASSERT_TRUE(strstr(err.msg, "FIFO") != NULL);
        ASSERT_EQ_INT(mcp_workspace_write_file(fd, "fifo", "x", 1, false,
                                               MCP_RUN_IDS_DEFAULT, &err), -EINVAL);
        /* with a reader the open succeeds: fstat refuses it */
        int rd = openat(fd, "fifo", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        ASSERT_TRUE(rd >= 0);
        int r = mcp_workspace_write_file(fd, "fifo", "x", 1, false, MCP_RUN_IDS_DEFAULT, &err);
        char c;
        ssize_t got = read(rd, &c, 1);
        close(rd);
        ASSERT_EQ_INT(r, -EINVAL);
        ASSERT_TRUE(got <= 0);
        ASSERT_EQ_INT(mcp_workspace_read_file(fd, "null", 10, &buf, &len, &size, &trunc, &err),
                      -EINVAL);
        ASSERT_TRUE(strstr(err.msg, "device") != NULL);
        ASSERT_EQ_INT(mcp_workspace_write_file(fd, "null", "x", 1, false,
                                               MCP_RUN_IDS_DEFAULT, &err), -EINVAL);
        close(fd);
}

TEST(directory_as_file)
{
        char ws[256];
        msp_err err = { 0 };
        int fd = new_ws(ws, sizeof ws);
        ASSERT_TRUE(fd >= 0);
        ASSERT_OK(NERRNO(mkdirat(fd, "d", 0755)));
        char *buf = NULL;
        size_t len;
        uint64_t size;
        bool trunc;
        ASSERT_EQ_INT(mcp_workspace_read_file(fd, "d", 10, &buf, &len, &size, &trunc, &err),
                      -EISDIR);
        ASSERT_EQ_INT(mcp_workspace_write_file(fd, "d", "x", 1, false,
                                               MCP_RUN_IDS_DEFAULT, &err), -EISDIR);
        ASSERT_EQ_INT(mcp_workspace_write_file(fd, "/workspace", "x", 1, false,
                                               MCP_RUN_IDS_DEFAULT, &err), -EISDIR);
        ASSERT_EQ_INT(mcp_workspace_write_file(fd, "/", "x", 1, false,
                                               MCP_RUN_IDS_DEFAULT, &err), -EISDIR);
        ASSERT_OK_ERR(mcp_workspace_write_file(fd, "f", "x", 1, false,
                                               MCP_RUN_IDS_DEFAULT, &err), err);
        ASSERT_EQ_INT(mcp_workspace_write_file(fd, "f/g", "x", 1, false,
                                               MCP_RUN_IDS_DEFAULT, &err), -ENOTDIR);
        mcp_dirent *ents = NULL;
        size_t n;
        ASSERT_EQ_INT(mcp_workspace_list_files(fd, "f", 10, &ents, &n, &trunc, &err), -ENOTDIR);
        close(fd);
}

TEST(size_caps)
{
        char ws[256];
        msp_err err = { 0 };
        int fd = new_ws(ws, sizeof ws);
        ASSERT_TRUE(fd >= 0);
        size_t big = MCP_FILE_MAX_BYTES + 1;
        char *data = calloc(1, big);
        ASSERT_NOT_NULL(data);
        int r = mcp_workspace_write_file(fd, "big", data, big, false, MCP_RUN_IDS_DEFAULT, &err);
        /* the tmpfs is 2 MiB: 3 MiB is within the file cap but over the room */
        int r2 = mcp_workspace_write_file(fd, "three", data, 3u << 20, false,
                                          MCP_RUN_IDS_DEFAULT, &err);
        free(data);
        ASSERT_EQ_INT(r, -EFBIG);
        ASSERT_EQ_INT(faccessat(fd, "big", F_OK, 0), -1);
        ASSERT_EQ_INT(r2, -EFBIG);
        ASSERT_TRUE(strstr(err.msg, "path \"three\"") != NULL);
        struct stat st;
        ASSERT_TRUE(fstatat(fd, "three", &st, 0) < 0 || st.st_size == 0);
        close(fd);
}

TEST(bad_bytes_in_path)
{
        char ws[256];
        msp_err err = { 0 };
        int fd = new_ws(ws, sizeof ws);
        ASSERT_TRUE(fd >= 0);
        ASSERT_EQ_INT(mcp_path_check("a\0b", 3, &err), -EINVAL);
        ASSERT_TRUE(strstr(err.msg, "NUL") != NULL);
        ASSERT_OK(mcp_path_check("a/b", 3, &err));
        ASSERT_EQ_INT(mcp_workspace_write_file(fd, "a\nb", "x", 1, false,
                                               MCP_RUN_IDS_DEFAULT, &err), -EINVAL);
        ASSERT_EQ_INT(mcp_workspace_write_file(fd, NULL, "x", 1, false,
                                               MCP_RUN_IDS_DEFAULT, &err), -EINVAL);
        char longname[300];
        memset(longname, 'n', sizeof longname - 1);
        longname[sizeof longname - 1] = '\0';
        ASSERT_EQ_INT(mcp_workspace_write_file(fd, longname, "x", 1, false,
                                               MCP_RUN_IDS_DEFAULT, &err), -ENAMETOOLONG);
        ASSERT_EQ_INT(count_entries(ws), 0);
        close(fd);
}

TEST(list_sorted_and_capped)
{
        char ws[256];
        msp_err err = { 0 };
        int fd = new_ws(ws, sizeof ws);
        ASSERT_TRUE(fd >= 0);
        ASSERT_OK_ERR(mcp_workspace_write_file(fd, "c", "ccc", 3, false,
                                               MCP_RUN_IDS_DEFAULT, &err), err);
        ASSERT_OK_ERR(mcp_workspace_write_file(fd, "a/x", "x", 1, false,
                                               MCP_RUN_IDS_DEFAULT, &err), err);
        ASSERT_OK(NERRNO(symlinkat("/etc", fd, "b")));
        mcp_dirent *ents = NULL;
        size_t n = 0;
        bool trunc = true;
        ASSERT_OK_ERR(mcp_workspace_list_files(fd, NULL, 10, &ents, &n, &trunc, &err), err);
        ASSERT_EQ_INT(n, 3);
        ASSERT_FALSE(trunc);
        ASSERT_STREQ(ents[0].name, "a");
        ASSERT_EQ_INT(ents[0].type, MCP_FILE_DIR);
        ASSERT_STREQ(ents[1].name, "b");
        ASSERT_EQ_INT(ents[1].type, MCP_FILE_SYMLINK);
        ASSERT_STREQ(ents[2].name, "c");
        ASSERT_EQ_INT(ents[2].type, MCP_FILE_REG);
        ASSERT_EQ_U64(ents[2].size, 3);
        mcp_dirents_free(ents, n);
        ASSERT_OK_ERR(mcp_workspace_list_files(fd, "/workspace/", 2, &ents, &n, &trunc, &err),
                      err);
        ASSERT_EQ_INT(n, 2);
        ASSERT_TRUE(trunc);
        ASSERT_STREQ(ents[1].name, "b");
        mcp_dirents_free(ents, n);
        ASSERT_OK_ERR(mcp_workspace_list_files(fd, "a", 10, &ents, &n, &trunc, &err), err);
        ASSERT_EQ_INT(n, 1);
        ASSERT_STREQ(ents[0].name, "x");
        mcp_dirents_free(ents, n);
        close(fd);
}

TEST(remove_tree_confined)
{
        char ws[256], p[300];
        msp_err err = { 0 };
        int fd = new_ws(ws, sizeof ws);
        ASSERT_TRUE(fd >= 0);
        ASSERT_OK_ERR(mcp_workspace_write_file(fd, "t/a/b/c", "x", 1, false,
                                               MCP_RUN_IDS_DEFAULT, &err), err);
        ASSERT_OK(NERRNO(symlinkat(outside, fd, "t/out")));
        ASSERT_OK(NERRNO(symlinkat("../../../outside", fd, "t/a/rel")));
        ASSERT_OK(mcp_remove_tree_at(fd, "t", &err));
        ASSERT_EQ_INT(faccessat(fd, "t", F_OK, AT_SYMLINK_NOFOLLOW), -1);
        ASSERT_TRUE(canary_intact());
        ASSERT_OK(mcp_remove_tree_at(fd, "absent", &err));
        /* a mount point inside is not crossed */
        ASSERT_OK(NERRNO(mkdirat(fd, "m", 0755)));
        ASSERT_OK(NERRNO(mkdirat(fd, "m/mp", 0755)));
        snprintf(p, sizeof p, "%s/m/mp", ws);
        ASSERT_OK(NERRNO(mount("tmpfs", p, "tmpfs", 0, "size=64k")));
        ASSERT_OK(NERRNO(mknodat(fd, "m/mp/keep", S_IFREG | 0644, 0)));
        int r = mcp_remove_tree_at(fd, "m", &err);
        bool kept = faccessat(fd, "m/mp/keep", F_OK, 0) == 0;
        (void) umount2(p, MNT_DETACH);
        ASSERT_EQ_INT(r, -EBUSY);
        ASSERT_TRUE(kept);
        ASSERT_OK(mcp_remove_tree_at(fd, "m", &err));
        close(fd);
}

/* Random paths over a tree with symlinks that point outside: whatever the path, nothing
 * outside changes and every failure is one of the documented errnos. */
TEST(random_paths_stay_inside)
{
        char ws[256];
        msp_err err = { 0 };
        int fd = new_ws(ws, sizeof ws);
        ASSERT_TRUE(fd >= 0);
        ASSERT_OK(NERRNO(mkdirat(fd, "a", 0755)));
        ASSERT_OK(NERRNO(symlinkat("../../outside", fd, "up")));
        ASSERT_OK(NERRNO(symlinkat(outside, fd, "a/abs")));
        ASSERT_OK(NERRNO(symlinkat("..", fd, "a/dotdot")));
        ASSERT_OK(NERRNO(symlinkat("/", fd, "a/root")));
        static const char *const parts[] = { "a", "up", "abs", "dotdot", "root", "..", ".", "",
                                             "canary", "outside", "x", "/workspace", "tmp" };
        unsigned seed = 7;
        int writes_ok = 0;
        for (int i = 0; i < 2000; i++) {
                char path[512] = "";
                int n = 1 + (int) (rand_r(&seed) % 6);
                if (rand_r(&seed) % 3 == 0)
                        strcat(path, "/");
                for (int k = 0; k < n; k++) {
                        strcat(path, parts[rand_r(&seed) % ARRAY_SIZE(parts)]);
                        if (k + 1 < n)
                                strcat(path, "/");
                }
                int r = mcp_workspace_write_file(fd, path, "r", 1, false,
                                                 MCP_RUN_IDS_DEFAULT, &err);
                writes_ok += r == 0;
                if (r < 0 && r != -EXDEV && r != -ELOOP && r != -EISDIR && r != -ENOTDIR &&
                    r != -ENOENT && r != -EINVAL)
                        TAP_FAIL_("write %s: unexpected %d: %s", path, r, err.msg);
                char *buf = NULL;
                size_t len;
                uint64_t size;
                bool trunc;
                r = mcp_workspace_read_file(fd, path, 64, &buf, &len, &size, &trunc, &err);
                if (r == 0 && strcmp(buf, "r") != 0) {
                        free(buf);
                        TAP_FAIL_("read %s: got content that is not ours", path);
                }
                free(buf);
                if (!canary_intact())
                        TAP_FAIL_("after %s: the canary changed", path);
        }
        ASSERT_TRUE(writes_ok > 0);
        close(fd);
}

static void
teardown(void)
{
        char p[256];
        (void) umount2(mnt, MNT_DETACH);
        rmdir(mnt);
        snprintf(p, sizeof p, "%s/canary", outside);
        unlink(p);
        rmdir(outside);
        rmdir(base);
}

int
main(void)
{
        if (geteuid() != 0) {
                tap_skip("files", "needs root (tmpfs mounts, chown to the sandbox uid, mknod)");
                return tap_done();
        }
        /* our mounts stay in a private namespace, as in msp-mcp */
        if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
                tap_skip("files", "no private mount namespace");
                return tap_done();
        }
        alarm(60);      /* a blocking open (FIFO) fails the run instead of hanging it */
        snprintf(base, sizeof base, "/tmp/mcp-files-XXXXXX");
        if (!mkdtemp(base)) {
                perror("mkdtemp");
                return 1;
        }
        snprintf(mnt, sizeof mnt, "%s/mnt", base);
        snprintf(outside, sizeof outside, "%s/outside", base);
        char p[256];
        snprintf(p, sizeof p, "%s/canary", outside);
        if (mkdir(mnt, 0755) < 0 || mkdir(outside, 0755) < 0 ||
            mount("tmpfs", mnt, "tmpfs", 0, "size=2m") < 0) {
                perror("setup");
                teardown();
                return 1;
        }
        FILE *f = fopen(p, "we");
        if (!f || fputs(canary_text, f) < 0 || fclose(f) != 0) {
                perror("canary");
                teardown();
                return 1;
        }
        RUN(write_read_roundtrip);
        RUN(dotdot_refused);
        RUN(absolute_path_stays_inside);
        RUN(absolute_symlink_to_etc);
        RUN(relative_symlink_chain);
        RUN(symlink_last_component_on_write);
        RUN(fifo_and_device_do_not_block);
        RUN(directory_as_file);
        RUN(size_caps);
        RUN(bad_bytes_in_path);
        RUN(list_sorted_and_capped);
        RUN(remove_tree_confined);
        RUN(random_paths_stay_inside);
        tap_check(canary_intact(), "canary outside the workspaces untouched");
        teardown();
        tap_check(access(base, F_OK) < 0, "no leftovers in /tmp");
        return tap_done();
}
