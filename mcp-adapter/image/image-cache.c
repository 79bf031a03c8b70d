/* The image cache. One msp-mcp at a time prepares images (flock on <cache>/.lock), so
 * what it finds under tmp-* or import-* was left by a start that died and is removed. An
 * entry sha256-<hex> exists only once complete (renamed from its temporary directory):
 * its presence is the whole validity check, and it is never written again.
 *
 *   <cache>/sha256-<manifest hex>/rootfs        the unpacked layers, owners shifted
 *   <cache>/sha256-<manifest hex>/config.json   the verified image config
 *   <cache>/cs-<id> -> sha256-<manifest hex>     a containers-storage image unpacked before,
 *                                                by its id in the store (not exported again) */
#include "image/image-cache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/openat2.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox/sandbox.h"
#include "base/base.h"
#include "image/image-user.h"
#include "oci/oci.h"
#include "host/host.h"

extern char **environ;

#define REF_OCI "oci:"
#define REF_STORAGE "containers-storage:"
#define MAX_LAYERS 128                  /* overlay-based engines stop at 127 */

/* What a start that died left behind. */
static void
remove_leftovers(int cache_fd)
{
        _cleanup_closedir_ DIR *d = mcp_image_opendir_at(cache_fd, ".");
        struct dirent *de;
        msp_err err = { 0 };
        while (d && (de = readdir(d)))
                if (strncmp(de->d_name, "tmp-", 4) == 0 || strncmp(de->d_name, "import-", 7) == 0)
                        (void) mcp_remove_tree_at(cache_fd, de->d_name, &err);
}

static int
open_cache(const char *dir, msp_err *err)
{
        /* its parents too (/var/cache/msp-mcp): each 0700 when made here */
        if (mcp_mkdir_parents(dir, 0700, err) < 0)
                return msp_err_prefix(err, "--image-cache \"%s\"", dir);
        int fd = open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return msp_err_sys(err, errno, "--image-cache \"%s\"", dir);
        return fd;
}

/* podman with argv; its first line of stdout in line (when not NULL). */
static int
run_podman(const mcp_image_opts *o, char *const argv[], const char *name, char *line,
           size_t size, msp_err *err)
{
        int p[2] = { -1, -1 };
        if (line && pipe2(p, O_CLOEXEC) < 0)
                return msp_err_sys(err, errno, "containers-storage:%s: pipe", name);
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
        posix_spawn_file_actions_adddup2(&fa, line ? p[1] : 2, 1);
        pid_t pid;
        int r = posix_spawnp(&pid, o->podman, &fa, NULL, argv, environ);
        posix_spawn_file_actions_destroy(&fa);
        _cleanup_close_ int rd = p[0];
        if (p[1] >= 0)
                close(p[1]);
        if (r != 0)
                return msp_err_sys(err, r, "containers-storage:%s: running %s", name, o->podman);
        size_t n = 0;
        while (line && n + 1 < size) {
                ssize_t k = read(rd, line + n, size - 1 - n);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        break;
                n += (size_t) k;
        }
        if (line) {
                line[n] = '\0';
                line[strcspn(line, "\n")] = '\0';
        }
        int status;
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return msp_err_sys(err, errno, "containers-storage:%s: waiting for %s", name,
                                           o->podman);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                return msp_err_set(err, EIO, "containers-storage:%s: \"%s %s\" failed (status %d): "
                                   "is the image in this user's store (podman images)?", name,
                                   o->podman, argv[1],
                                   WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
        return 0;
}

/* The image's id in the store (its config digest there, 64 hex digits). */
static int
storage_id(const mcp_image_opts *o, const char *name, char id[72], msp_err *err)
{
        char *argv[] = { (char *) o->podman, "image", "inspect", "--format", "{{.Id}}",
                         (char *) name, NULL };
        memset(id, 0, 72);
        int r = run_podman(o, argv, name, id, 72, err);
        if (r < 0)
                return r;
        if (strlen(id) != 64 || strspn(id, "0123456789abcdef") != 64)
                return msp_err_set(err, EIO, "containers-storage:%s: podman gave the id \"%.70s\"",
                                   name, id);
        return 0;
}

/* `podman save --format oci-dir` of the store's image id (never its name, which may
 * name another image by now) into <cache>/import-XXXXXX. */
static int
import_storage(const mcp_image_opts *o, const char *id, char *dir, size_t size, msp_err *err)
{
        snprintf(dir, size, "%s/import-XXXXXX", o->cache_dir);
        if (!mkdtemp(dir))
                return msp_err_sys(err, errno, "image cache: %s", dir);
        char out[PATH_MAX + 16];
        snprintf(out, sizeof out, "%s/oci", dir);
        char *argv[] = { (char *) o->podman, "save", "--quiet", "--format", "oci-dir", "-o", out,
                         (char *) id, NULL };
        int r = run_podman(o, argv, id, NULL, 0, err);
        if (r < 0)
                return r;
        snprintf(dir + strlen(dir), size - strlen(dir), "/oci");
        return 0;
}

/* The layers' fds passed on to msp-mcp-unpack, which checks each against its digest and
 * size as it unpacks it (the one read of the blob): inheritable in the child only (every
 * fd here is O_CLOEXEC), their numbers and descriptors in its arguments. */
typedef struct unpacker_args {
        char *argv[5 + 4 * MAX_LAYERS + 1];
        char nums[4 + 2 * MAX_LAYERS][32];
        int fds[2 + MAX_LAYERS];
        size_t n_fds;
} unpacker_args;

static void
unpacker_args_done(unpacker_args *a)
{
        for (size_t i = 2; i < a->n_fds; i++)
                close(a->fds[i]);
}

static char *
arg_num(unpacker_args *a, size_t i, uint64_t v)
{
        snprintf(a->nums[i], sizeof a->nums[i], "%" PRIu64, v);
        return a->nums[i];
}

static int
unpacker_args_make(const mcp_image_opts *o, int root_fd, int result_fd, const mcp_image_layout *l,
                   bool chown, unpacker_args *a, msp_err *err)
{
        static const char *const names[] = { [MCP_LAYER_TAR] = "tar", [MCP_LAYER_GZIP] = "gzip",
                                             [MCP_LAYER_ZSTD] = "zstd" };
        size_t n = 0;
        a->fds[0] = root_fd;
        a->fds[1] = result_fd;
        a->n_fds = 2;
        a->argv[n++] = (char *) o->unpack_helper;
        a->argv[n++] = arg_num(a, 0, (uint64_t) root_fd);
        a->argv[n++] = arg_num(a, 1, (uint64_t) result_fd);
        a->argv[n++] = arg_num(a, 2, o->max_bytes);
        snprintf(a->nums[3], sizeof a->nums[3], "%u:%u", MCP_SANDBOX_HOST_BASE, MCP_SANDBOX_ID_COUNT);
        a->argv[n++] = chown ? a->nums[3] : "-";
        if (l->n_layers > MAX_LAYERS)
                return msp_err_set(err, E2BIG, "more than %d layers", MAX_LAYERS);
        for (size_t i = 0; i < l->n_layers; i++) {
                int bfd = mcp_image_layer_open(l, &l->layers[i], err);
                if (bfd < 0)
                        return bfd;
                a->fds[a->n_fds++] = bfd;
                a->argv[n++] = l->layers[i].digest;
                a->argv[n++] = arg_num(a, 4 + 2 * i, l->layers[i].size);
                a->argv[n++] = (char *) names[l->layers[i].compression];
                a->argv[n++] = arg_num(a, 5 + 2 * i, (uint64_t) bfd);
        }
        a->argv[n] = NULL;
        return 0;
}

/* What msp-mcp-unpack wrote on its result pipe: "<result> <bytes used>\n" and, on failure,
 * its message; a helper that died without a result says how. */
static int
unpacker_result(int rd, pid_t pid, const char *helper, msp_err *err)
{
        _cleanup_free_ char *buf = NULL;
        size_t n = 0;
        msp_err e = { 0 };
        int r = mcp_read_fd(rd, sizeof err->msg + 64, &buf, &n, &e);
        int status = 0;
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return msp_err_sys(err, errno, "waiting for %s", helper);
        int res, off = 0;
        if (r < 0 || sscanf(buf, "%d %*u\n%n", &res, &off) != 1 || off == 0)
                return msp_err_set(err, EIO, "%s ended (status %d) without a result", helper,
                                   WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
        if (res >= 0)
                return 0;
        return msp_err_set(err, -res, "%s", buf + off);
}

/* Every layer applied to root_fd by msp-mcp-unpack, the one program that parses the
 * archives (it links libarchive; msp-mcp does not). */
static int
run_unpacker(const mcp_image_opts *o, int root_fd, const mcp_image_layout *l, bool chown,
             msp_err *err)
{
        if (!o->unpack_helper)
                return msp_err_set(err, ENOENT, "image unpack: no msp-mcp-unpack beside msp-mcp or at "
                                   "'%s'", MCP_UNPACK_INSTALLED);
        int p[2];
        if (pipe2(p, O_CLOEXEC) < 0)
                return msp_err_sys(err, errno, "image unpack: pipe");
        _cleanup_close_ int rd = p[0];
        _cleanup_close_ int wr = p[1];
        _cleanup_(unpacker_args_done) unpacker_args a = { .n_fds = 0 };
        int r = unpacker_args_make(o, root_fd, wr, l, chown, &a, err);
        if (r < 0)
                return r;
        pid_t parent = getpid(), pid = fork();
        if (pid < 0)
                return msp_err_sys(err, errno, "image unpack: fork");
        if (pid == 0) {
                /* a helper outliving msp-mcp would write into a tmp-* the next start removes */
                if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
                        _exit(127);
                for (size_t i = 0; i < a.n_fds; i++)
                        if (fcntl(a.fds[i], F_SETFD, 0) < 0)
                                _exit(127);
                execve(o->unpack_helper, a.argv, environ);
                _exit(127);
        }
        close(TAKE_FD(wr));
        return unpacker_result(rd, pid, o->unpack_helper, err);
}

/* Every layer into <cache>/tmp-XXXXXX/rootfs, then the rename to entry. */
static int
unpack_here(const mcp_image_opts *o, int cache_fd, const mcp_image_layout *l, const char *entry,
            msp_err *err)
{
        char tmp[] = "tmp-XXXXXX";
        char path[PATH_MAX];
        msp_err scratch = { 0 };        /* removing a failed unpack: err keeps why */
        snprintf(path, sizeof path, "%s/%s", o->cache_dir, tmp);
        if (!mkdtemp(path))
                return msp_err_sys(err, errno, "image cache: %s", path);
        memcpy(tmp, path + strlen(path) - strlen(tmp), strlen(tmp));
        _cleanup_close_ int tfd = openat(cache_fd, tmp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        int r = tfd < 0 ? -errno : 0;
        if (r == 0 && mkdirat(tfd, "rootfs", 0755) < 0)
                r = -errno;
        _cleanup_close_ int rfd = r < 0 ? -1 : openat(tfd, "rootfs", O_PATH | O_DIRECTORY | O_NOFOLLOW |
                                                       O_CLOEXEC);
        if (r == 0 && rfd < 0)
                r = -errno;
        if (r < 0) {
                msp_err_sys(err, -r, "image cache: %s", path);
                goto fail;
        }
        /* owners shifted: needs CAP_CHOWN (msp-mcp as root, or in its namespace) */
        bool chown = geteuid() == 0 && MCP_SANDBOX_ID_COUNT > 1;
        if (chown)
                (void) fchownat(rfd, "", MCP_SANDBOX_HOST_BASE, MCP_SANDBOX_HOST_BASE, AT_EMPTY_PATH);
        if ((r = run_unpacker(o, rfd, l, chown, err)) < 0)
                goto fail;
        if ((r = mcp_write_new_at(tfd, "config.json", l->config_json, l->config_len, 0600,
                                  err)) < 0) {
                msp_err_prefix(err, "image cache: %s", path);
                goto fail;
        }
        if (renameat(cache_fd, tmp, cache_fd, entry) < 0) {
                r = msp_err_sys(err, errno, "image cache: rename %s to %s", tmp, entry);
                goto fail;
        }
        return 0;
fail:
        (void) mcp_remove_tree_at(cache_fd, tmp, &scratch);
        return r;
}

/* Run by a user, owners can be given to the sandbox's ids only inside a user namespace like
 * the one msp-mcp makes for itself (rootless.h: the user is 0 there, its subordinate range
 * 1..): the unpack runs in a child that enters one, so that the cache holds the ids the
 * sandboxes will see. */
typedef struct unpack_job {
        const mcp_image_opts *o;
        int cache_fd;
        const mcp_image_layout *l;
        const char *entry;
} unpack_job;

static int
unpack_in_namespace(void *data, void *out _unused_, msp_err *err)
{
        const unpack_job *j = data;
        mcp_rootless rl;
        mcp_rootless_probe(&rl);
        int r = mcp_rootless_enter(&rl, err);
        return r < 0 ? r : unpack_here(j->o, j->cache_fd, j->l, j->entry, err);
}

static int
unpack_image(const mcp_image_opts *o, int cache_fd, const mcp_image_layout *l,
             const char *entry, msp_err *err)
{
        if (geteuid() == 0)
                return unpack_here(o, cache_fd, l, entry, err);
        unpack_job j = { .o = o, .cache_fd = cache_fd, .l = l, .entry = entry };
        return mcp_child_call(unpack_in_namespace, &j, NULL, 0, err);
}

static int
read_config(int cache_fd, const char *entry, mcp_image_defaults *ret, msp_err *err)
{
        char name[MCP_DIGEST_MAX + 64];
        snprintf(name, sizeof name, "%s/config.json", entry);
        _cleanup_close_ int fd = openat(cache_fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return msp_err_sys(err, errno, "image cache: %s", name);
        _cleanup_free_ char *buf = NULL;
        size_t n;
        if (mcp_read_fd(fd, OCI_CONFIG_MAX_BYTES + 1, &buf, &n, err) < 0)
                return msp_err_prefix(err, "image cache: %s", name);
        return mcp_image_defaults_parse(buf, n, ret, err);
}

/* WorkingDir is the runs' cwd only when the image has that directory (the rootfs is
 * read-only: the runtime cannot make it). */
static void
check_workdir(int cache_fd, const char *entry, mcp_image_defaults *d)
{
        if (!d->workdir)
                return;
        char root[MCP_DIGEST_MAX + 64];
        snprintf(root, sizeof root, "%s/rootfs", entry);
        _cleanup_close_ int rfd = openat(cache_fd, root, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
                                .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS };
        _cleanup_close_ int fd = rfd < 0 ? -1 : (int) syscall(SYS_openat2, rfd, d->workdir, &how,
                                                             sizeof how);
        if (fd < 0 || d->workdir[0] != '/') {
                free(d->workdir);
                d->workdir = NULL;
        }
}

/* The config's User in the image's own account files. */
static int
resolve_user(int cache_fd, const char *entry, mcp_image_rootfs *ret, msp_err *err)
{
        const char *user = ret->defaults.user;
        if (!user || !*user)
                return 0;
        char root[MCP_DIGEST_MAX + 64];
        snprintf(root, sizeof root, "%s/rootfs", entry);
        _cleanup_close_ int rfd = openat(cache_fd, root, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (rfd < 0)
                return msp_err_sys(err, errno, "image cache: %s", root);
        int r = mcp_image_user_resolve(rfd, user, &ret->uid, &ret->gid, err);
        ret->has_user = r == 0;
        return r;
}

/* What a run may read of an image's top level beyond the Landlock profile (which knows only
 * the usual system directories; an image's files may live anywhere: /data, /srv, /app.py):
 * "/<name>" of each directory and each regular file. Never a symlink (/lib -> usr/lib
 * resolves into what is granted, or not, on its own), nor a name the sandbox has its own
 * entry at: a directory at one of its mount points is not the image's there, and a file
 * where the view has a directory (bundle.h) is hidden by it, so the file's rule would
 * grant beneath that directory instead. */
#define TOP_GRANTS_MAX 1024             /* rules in every run's config */

static bool
sandbox_own(const char *name, bool dir)
{
        static const char *const own[] = { "proc", "sys", "dev", "tmp", "workspace", ".msp",
                                           NULL };
        for (size_t i = 0; own[i]; i++)
                if (strcmp(name, own[i]) == 0)
                        return true;
        for (size_t i = 0; !dir && mcp_view_top_dirs[i]; i++)
                if (strcmp(name, mcp_view_top_dirs[i]) == 0)
                        return true;
        return false;
}

/* "/name" appended to the NULL-terminated *list of *n entries. */
static int
push_top(char ***list, size_t *n, const char *name)
{
        char **p = realloc(*list, (*n + 2) * sizeof(*p));
        if (!p)
                return -ENOMEM;
        *list = p;
        if (asprintf(&p[*n], "/%s", name) < 0) {
                p[*n] = NULL;           /* asprintf leaves it undefined */
                return -ENOMEM;
        }
        p[++*n] = NULL;
        return 0;
}

static void
free_top(char **list)
{
        for (size_t i = 0; list && list[i]; i++)
                free(list[i]);
        free(list);
}

static int
list_top(int cache_fd, const char *entry, mcp_image_rootfs *ret, msp_err *err)
{
        char root[MCP_DIGEST_MAX + 64];
        snprintf(root, sizeof root, "%s/rootfs", entry);
        _cleanup_closedir_ DIR *d = mcp_image_opendir_at(cache_fd, root);
        if (!d)
                return msp_err_sys(err, errno, "image cache: %s", root);
        size_t n_dirs = 0, n_files = 0;
        ret->top_dirs = calloc(1, sizeof(*ret->top_dirs));
        ret->top_files = calloc(1, sizeof(*ret->top_files));
        if (!ret->top_dirs || !ret->top_files)
                return msp_err_set(err, ENOMEM, "out of memory");
        struct dirent *de;
        while ((de = readdir(d))) {
                struct stat st;
                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
                    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
                    !(S_ISDIR(st.st_mode) || S_ISREG(st.st_mode)) ||
                    sandbox_own(de->d_name, S_ISDIR(st.st_mode)))
                        continue;
                if (n_dirs + n_files >= TOP_GRANTS_MAX)
                        return msp_err_set(err, E2BIG, "more than %d directories and files at "
                                           "its top level (each is a Landlock rule of every run)",
                                           TOP_GRANTS_MAX);
                int r = S_ISDIR(st.st_mode) ? push_top(&ret->top_dirs, &n_dirs, de->d_name)
                                            : push_top(&ret->top_files, &n_files, de->d_name);
                if (r < 0)
                        return msp_err_set(err, -r, "out of memory");
        }
        return 0;
}

/* The entry a containers-storage image was unpacked into before: cs-<id> links to it. */
static void
storage_entry(int cache_fd, const char *link, char *entry, size_t size)
{
        char target[MCP_DIGEST_MAX + 40];
        ssize_t n = readlinkat(cache_fd, link, target, sizeof target - 1);
        struct stat st;
        if (n <= 0)
                return;
        target[n] = '\0';
        if (strncmp(target, "sha256-", 7) == 0 && !strchr(target, '/') &&
            fstatat(cache_fd, target, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode))
                snprintf(entry, size, "%s", target);
}

/* The layout at dir: its entry, found or unpacked. A containers-storage export names
 * the id its image must have (config_id: its config's digest), else NULL. */
static int
entry_of_layout(const mcp_image_opts *o, int cache_fd, const char *dir, const char *tag,
                const char *config_id, char *entry, size_t size, bool *unpacked, msp_err *err)
{
        mcp_image_layout l;
        int r = mcp_image_layout_open(dir, tag && *tag ? tag : NULL, &l, err);
        if (r < 0)
                return r;
        struct stat st;
        snprintf(entry, size, "sha256-%.64s", l.manifest_digest + 7);
        if (config_id && strcmp(l.config_digest + strlen("sha256:"), config_id) != 0)
                r = msp_err_set(err, EIO, "podman exported an image whose config is %s, not the "
                                "id sha256:%s it was asked for", l.config_digest, config_id);
        else if (fstatat(cache_fd, entry, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode))
                *unpacked = false;
        else if ((r = unpack_image(o, cache_fd, &l, entry, err)) == 0)
                *unpacked = true;
        mcp_image_layout_done(&l);
        return r;
}

/* A containers-storage image: by its id from the cache, else exported by that id and
 * unpacked (the export removed again) and its id linked to the entry. The link is a
 * cache key too: it is made only to an image whose config hashes to the id. */
static int
entry_of_storage(const mcp_image_opts *o, int cache_fd, const char *name, char *entry,
                 size_t size, bool *unpacked, msp_err *err)
{
        char id[72], link[80], dir[PATH_MAX] = "";
        int r = storage_id(o, name, id, err);
        if (r < 0)
                return r;
        snprintf(link, sizeof link, "cs-%s", id);
        storage_entry(cache_fd, link, entry, size);
        if (*entry) {
                *unpacked = false;
                return 0;
        }
        r = import_storage(o, id, dir, sizeof dir, err);
        if (r == 0)
                r = entry_of_layout(o, cache_fd, dir, NULL, id, entry, size, unpacked, err);
        if (r == 0 && ((unlinkat(cache_fd, link, 0) < 0 && errno != ENOENT) ||
                       symlinkat(entry, cache_fd, link) < 0))
                r = msp_err_sys(err, errno, "image cache: %s", link);
        if (*dir) {
                msp_err scratch = { 0 };        /* removing the export: err keeps why */
                char *imp = dir + strlen(o->cache_dir) + 1;     /* import-XXXXXX[/oci] */
                imp[strcspn(imp, "/")] = '\0';
                (void) mcp_remove_tree_at(cache_fd, imp, &scratch);
        }
        return r;
}

static int
prepare_locked(const mcp_image_opts *o, int cache_fd, const char *ref, mcp_image_rootfs *ret,
               msp_err *err)
{
        char entry[MCP_DIGEST_MAX + 40] = "";
        int r;
        if (strncmp(ref, REF_OCI, strlen(REF_OCI)) == 0) {
                char dir[PATH_MAX];
                const char *tag = NULL;
                snprintf(dir, sizeof dir, "%s", ref + strlen(REF_OCI));
                char *colon = strrchr(dir, ':');
                if (colon && !strchr(colon, '/')) {
                        *colon = '\0';
                        tag = colon + 1;
                }
                r = entry_of_layout(o, cache_fd, dir, tag, NULL, entry, sizeof entry,
                                    &ret->unpacked, err);
        } else if (strncmp(ref, REF_STORAGE, strlen(REF_STORAGE)) == 0 && ref[strlen(REF_STORAGE)])
                r = entry_of_storage(o, cache_fd, ref + strlen(REF_STORAGE), entry, sizeof entry,
                                     &ret->unpacked, err);
        else
                return msp_err_set(err, EINVAL, "expected oci:DIR[:TAG] or containers-storage:NAME");
        if (r < 0 || (r = read_config(cache_fd, entry, &ret->defaults, err)) < 0)
                return r;
        check_workdir(cache_fd, entry, &ret->defaults);
        if ((r = resolve_user(cache_fd, entry, ret, err)) < 0)
                return r;
        if ((r = list_top(cache_fd, entry, ret, err)) < 0)
                return r;
        /* asprintf leaves its pointer undefined on failure: NULL it for mcp_image_rootfs_done */
        if (asprintf(&ret->rootfs, "%s/%s/rootfs", o->cache_dir, entry) < 0) {
                ret->rootfs = NULL;
                return msp_err_set(err, ENOMEM, "out of memory");
        }
        if (asprintf(&ret->digest, "sha256:%s", entry + 7) < 0) {
                ret->digest = NULL;
                return msp_err_set(err, ENOMEM, "out of memory");
        }
        return 0;
}

int
mcp_image_prepare(const mcp_image_opts *o, const char *ref, mcp_image_rootfs *ret, msp_err *err)
{
        *ret = (mcp_image_rootfs) { 0 };
        _cleanup_close_ int cfd = open_cache(o->cache_dir, err);
        if (cfd < 0)
                return cfd;
        _cleanup_close_ int lock = openat(cfd, ".lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (lock < 0 || flock(lock, LOCK_EX) < 0)
                return msp_err_sys(err, errno, "image cache \"%s\": lock", o->cache_dir);
        remove_leftovers(cfd);
        int r = prepare_locked(o, cfd, ref, ret, err);
        if (r < 0) {
                mcp_image_rootfs_done(ret);
                return msp_err_prefix(err, "image \"%s\"", ref);
        }
        return 0;
}

void
mcp_image_rootfs_done(mcp_image_rootfs *r)
{
        free(r->rootfs);
        free(r->digest);
        free_top(r->top_dirs);
        free_top(r->top_files);
        mcp_image_defaults_done(&r->defaults);
        *r = (mcp_image_rootfs) { 0 };
}

int
mcp_image_cache_usable(const char *dir, msp_err *err)
{
        _cleanup_close_ int fd = open_cache(dir, err);
        if (fd < 0)
                return fd;
        if (faccessat(fd, ".", W_OK | X_OK, AT_EACCESS) < 0)
                return msp_err_sys(err, errno, "--image-cache \"%s\"", dir);
        return 0;
}
