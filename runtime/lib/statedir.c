#include "lib/statedir.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/cgroup/cgroup.h"
#include "lib/fileio.h"
#include "lib/procfs.h"

int
rt_id_validate(const char *id, msp_err *err)
{
        size_t len = id ? strlen(id) : 0;

        if (len == 0)
                return msp_err_set(err, EINVAL, "container id must not be empty");
        if (len > RT_ID_MAX)
                return msp_err_set(err, EINVAL, "container id is longer than %d bytes", RT_ID_MAX);
        for (size_t i = 0; i < len; i++) {
                char c = id[i];
                bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                          (c >= '0' && c <= '9') || c == '_' || c == '+' || c == '-' ||
                          (c == '.' && i > 0);
                if (!ok)
                        return msp_err_set(err, EINVAL,
                                           "invalid container id '%.64s': only [A-Za-z0-9_+-] "
                                           "and '.' after the first character are allowed",
                                           id);
        }
        return 0;
}

static int
mkdir_p(const char *path, mode_t mode)
{
        char buf[4096];

        if (strlen(path) >= sizeof buf)
                return -ENAMETOOLONG;
        strcpy(buf, path);
        for (char *p = buf + 1; *p; p++) {
                if (*p != '/')
                        continue;
                *p = '\0';
                if (mkdir(buf, 0755) < 0 && errno != EEXIST)
                        return -errno;
                *p = '/';
        }
        if (mkdir(buf, mode) < 0 && errno != EEXIST)
                return -errno;
        return 0;
}

int
rt_state_root_open(const rt_ctx *ctx, bool create, int *ret_fd, msp_err *err)
{
        int fd, r;

        if (!ctx->state_root)
                return msp_err_set(err, EINVAL, "rootless: no state root: XDG_RUNTIME_DIR is not "
                                   "set (set it, or pass --root DIR)");
        if (create) {
                r = mkdir_p(ctx->state_root, 0700);
                if (r < 0)
                        return msp_err_sys(err, -r, "create state root '%s'", ctx->state_root);
        }
        fd = open(ctx->state_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return msp_err_sys(err, errno, "open state root '%s'", ctx->state_root);
        *ret_fd = fd;
        return 0;
}

static int
lock_dir(int dirfd, bool exclusive, const char *id, msp_err *err)
{
        while (flock(dirfd, exclusive ? LOCK_EX : LOCK_SH) < 0) {
                if (errno != EINTR)
                        return msp_err_sys(err, errno, "lock container '%s'", id);
        }
        return 0;
}

int
rt_statedir_remove_incomplete(int rootfd, const char *id, bool wait, msp_err *err)
{
        _cleanup_close_ int fd = openat(rootfd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        struct stat st;

        if (fd < 0)
                return errno == ENOENT ? 0 : -EEXIST;
        while (flock(fd, wait ? LOCK_EX : LOCK_EX | LOCK_NB) < 0)
                if (errno != EINTR)
                        return -EEXIST;
        if (fstat(fd, &st) < 0)
                return -EEXIST;
        if (st.st_nlink == 0)
                return 0;
        if (faccessat(fd, RT_STATE_NAME, F_OK, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT)
                return -EEXIST;
        return rt_statedir_remove(rootfd, id, fd, err);
}

int
rt_statedir_create(int rootfd, const char *id, int *ret_dirfd, msp_err *err)
{
        int r;

        if (!id)
                return msp_err_set(err, EINVAL, "container id must not be empty");
        /* Bounded: each round either makes the directory or removes a leftover; a
         * concurrent create or delete --force may remove ours between mkdir and flock
         * (it found it empty and unlocked), and then we start again. */
        for (int attempt = 0; attempt < 8; attempt++) {
                _cleanup_close_ int fd = -1;
                struct stat st;

                if (mkdirat(rootfd, id, 0700) < 0) {
                        if (errno != EEXIST)
                                return msp_err_sys(err, errno, "create state directory for '%s'", id);
                        r = rt_statedir_remove_incomplete(rootfd, id, false, err);
                        if (r == -EEXIST)
                                return msp_err_set(err, EEXIST, "container '%s' already exists", id);
                        if (r < 0)
                                return r;
                        continue;
                }
                fd = openat(rootfd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (fd < 0)
                        continue;
                r = lock_dir(fd, true, id, err);
                if (r < 0) {
                        (void) unlinkat(rootfd, id, AT_REMOVEDIR);
                        return r;
                }
                if (fstat(fd, &st) < 0 || st.st_nlink == 0)
                        continue;
                *ret_dirfd = TAKE_FD(fd);
                return 0;
        }
        return msp_err_set(err, EEXIST, "container '%s' already exists", id);
}

int
rt_statedir_open(int rootfd, const char *id, bool exclusive, int *ret_dirfd, msp_err *err)
{
        _cleanup_close_ int fd = -1;
        int r;

        fd = openat(rootfd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
                if (errno == ENOENT)
                        return msp_err_set(err, ENOENT, "container '%s' does not exist", id);
                return msp_err_sys(err, errno, "open state directory of '%s'", id);
        }
        r = lock_dir(fd, exclusive, id, err);
        if (r < 0)
                return r;
        /* A concurrent delete may have removed the directory while we waited. */
        struct stat st;
        if (fstat(fd, &st) < 0 || st.st_nlink == 0)
                return msp_err_set(err, ENOENT, "container '%s' does not exist", id);
        *ret_dirfd = TAKE_FD(fd);
        return 0;
}

int
rt_statedir_remove(int rootfd, const char *id, int dirfd, msp_err *err)
{
        /* Every entry, not only the names msp writes: a command killed mid-write leaves
         * a temp file (config.json.tmp, state.json.tmp) that would keep the rmdir from
         * succeeding. Its own fd: a readdir on dirfd would move the offset the lock
         * holder's other readers share. */
        _cleanup_closedir_ DIR *d = NULL;
        int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        struct dirent *de;

        if (fd < 0 || !(d = fdopendir(fd))) {
                if (fd >= 0)
                        close(fd);
                return msp_err_sys(err, errno, "read state directory of '%s'", id);
        }
        while ((de = readdir(d))) {
                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                        continue;
                if (unlinkat(dirfd, de->d_name, 0) < 0 && errno != ENOENT)
                        return msp_err_sys(err, errno, "remove '%s' of container '%s'", de->d_name,
                                           id);
        }
        if (unlinkat(rootfd, id, AT_REMOVEDIR) < 0 && errno != ENOENT)
                return msp_err_sys(err, errno, "remove state directory of '%s'", id);
        return 0;
}

int
rt_state_load(int dirfd, const char *id, oci_state **ret, msp_err *err)
{
        _cleanup_free_ char *data = NULL;
        size_t len = 0;
        int r = rt_read_file_at(dirfd, RT_STATE_NAME, true, 1 << 20, &data, &len, err);

        if (r < 0)
                return msp_err_prefix(err, "read state of container '%s'", id);
        r = oci_state_parse_data(RT_STATE_NAME, data, len, ret, err);
        if (r < 0)
                return msp_err_prefix(err, "container '%s'", id);
        return 0;
}

int
rt_state_save(int dirfd, const oci_state *st, msp_err *err)
{
        _cleanup_free_ char *json = NULL;
        size_t len;
        int r = oci_state_to_json(st, OCI_STATE_JSON_PRIVATE, &json, &len, err);

        if (r < 0)
                return r;
        return rt_write_file_exchange(dirfd, RT_STATE_NAME, json, len, 0600, err);
}

void
rt_state_refresh(oci_state *st, int dirfd)
{
        if (!rt_pid_alive(st->pid, st->pid_start_time)) {
                st->pid = 0;
                st->status = (char *) "stopped";
                return;
        }
        if (faccessat(dirfd, RT_FIFO_NAME, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
                st->status = (char *) "created";
        else if (st->cgroup_path && rt_cgroup_is_frozen(st->cgroup_path))
                st->status = (char *) "paused";
        else
                st->status = (char *) "running";
}
