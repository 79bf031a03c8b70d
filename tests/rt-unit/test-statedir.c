/* State directories after a crash: removing a container removes every file of its
 * directory (a command killed mid-write leaves <name>.tmp), and a directory without
 * state.json whose lock is free (a create killed before its first save) is taken over by
 * the next create of the id, while a locked one or one with state.json is not. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "oci/macros.h"
#include "lib/statedir.h"
#include "tests/lib/tap.h"

static msp_err e;
static char root_path[] = "/tmp/msp-statedir-XXXXXX";

/* A fresh state root under /tmp, as an fd. */
static int
make_root(void)
{
        CHECK(mkdtemp(root_path));
        int fd = open(root_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        CHECK(fd >= 0);
        return fd;
}

/* Remove the container dirs `ids` (NULL-terminated) left in the root, then the root. */
static void
drop_root(int root, const char *const *ids)
{
        for (; *ids; ids++) {
                int dfd = openat(root, *ids, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (dfd >= 0) {
                        CHECK_OK(rt_statedir_remove(root, *ids, dfd, &e), e);
                        close(dfd);
                }
        }
        close(root);
        CHECK(rmdir(root_path) == 0);
}

/* <root>/<id>/ holding the given files, as a killed command left it. */
static void
leftover(int root, const char *id, const char *const *files)
{
        CHECK(mkdirat(root, id, 0700) == 0);
        int dfd = openat(root, id, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        CHECK(dfd >= 0);
        for (; *files; files++) {
                int fd = openat(dfd, *files, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
                CHECK(fd >= 0);
                CHECK(write(fd, "{", 1) == 1);
                close(fd);
        }
        close(dfd);
}

static void
test_remove_takes_temp_files(void)
{
        static const char *const files[] = { "config.json.tmp", "state.json", "state.json.tmp",
                                             "exec.fifo", NULL };
        int root = make_root(), dfd;

        leftover(root, "c", files);
        CHECK_OK(rt_statedir_open(root, "c", true, &dfd, &e), e);
        CHECK_OK(rt_statedir_remove(root, "c", dfd, &e), e);
        CHECK(faccessat(root, "c", F_OK, 0) < 0 && errno == ENOENT);
        drop_root(root, (const char *const[]) { NULL });
}

static void
test_create_takes_over_incomplete(void)
{
        static const char *const files[] = { "config.json.tmp", NULL };
        int root = make_root(), dfd;
        struct stat st;

        leftover(root, "c", files);
        CHECK_OK(rt_statedir_create(root, "c", &dfd, &e), e);
        /* A fresh, empty directory, locked by us. */
        CHECK(faccessat(dfd, "config.json.tmp", F_OK, 0) < 0 && errno == ENOENT);
        CHECK(fstat(dfd, &st) == 0 && st.st_nlink == 2);
        int other = openat(root, "c", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        CHECK(other >= 0 && flock(other, LOCK_EX | LOCK_NB) < 0 && errno == EWOULDBLOCK);
        close(other);
        close(dfd);
        drop_root(root, (const char *const[]) { "c", NULL });
}

static void
test_create_keeps_locked_or_complete(void)
{
        static const char *const none[] = { NULL };
        static const char *const complete[] = { "state.json", "config.json", NULL };
        int root = make_root(), dfd;

        /* Being created: its creator holds the lock. */
        leftover(root, "busy", none);
        int holder = openat(root, "busy", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        CHECK(holder >= 0 && flock(holder, LOCK_EX) == 0);
        CHECK_ERR(rt_statedir_create(root, "busy", &dfd, &e), e, EEXIST,
                  "container 'busy' already exists");
        CHECK(faccessat(root, "busy", F_OK, 0) == 0);
        /* A container (state.json written): delete's business, not create's. */
        leftover(root, "done", complete);
        CHECK_ERR(rt_statedir_create(root, "done", &dfd, &e), e, EEXIST,
                  "container 'done' already exists");
        CHECK(faccessat(root, "done/state.json", F_OK, 0) == 0);
        CHECK(rt_statedir_remove_incomplete(root, "done", true, &e) == -EEXIST);
        CHECK(faccessat(root, "done/state.json", F_OK, 0) == 0);
        /* delete --force of an incomplete one, and of none at all. */
        CHECK(close(holder) == 0);
        CHECK_OK(rt_statedir_remove_incomplete(root, "busy", true, &e), e);
        CHECK(faccessat(root, "busy", F_OK, 0) < 0 && errno == ENOENT);
        CHECK_OK(rt_statedir_remove_incomplete(root, "busy", true, &e), e);
        drop_root(root, (const char *const[]) { "done", NULL });
}

int
main(void)
{
        static const tap_fork_test tests[] = {
                { "remove: every file of the dir, temp files too", test_remove_takes_temp_files },
                { "create: an incomplete unlocked dir is taken over", test_create_takes_over_incomplete },
                { "create: a locked or complete dir is not; remove_incomplete", test_create_keeps_locked_or_complete },
        };
        return tap_run_table(tests, ARRAY_SIZE(tests));
}
