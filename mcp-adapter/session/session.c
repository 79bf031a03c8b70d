/* The session store: see session.h. Layout of one session:
 *
 *   <state_dir>/sessions/<id>/          0711 root (the runtime's remapped root must traverse)
 *       lock                            flock'ed by the owning msp-mcp for its whole life
 *       meta.json                       id, created/expires (wall clock, usec), rootfs,
 *                                       network, limits, runs; written tmp + rename
 *       merged/                         the workspace: a tmpfs (size = workspace_bytes)
 *                                       or, with --seed-dir, an overlay (lower = seed);
 *                                       its root 0700, the sandbox user's
 *       ws/                             with --seed-dir: the tmpfs holding upper/ and work/
 *
 * The workspace lives in a size-capped tmpfs mounted in msp-mcp's private mount namespace:
 * the sandboxed code cannot fill the host's disk, and a crashed server leaves no mount
 * behind. The price: a session's files live as long as the msp-mcp process that created
 * it (its lock). A new start removes every session whose lock is free (its owner died,
 * its files with it) and every expired one of its own. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "session/files.h"
#include "base/base.h"
#include "oci/oci.h"
#include "sandbox/sandbox.h"
#include "session/session.h"

#define ID_HEX 16
#define ID_LEN (2 + ID_HEX)
#define ORPHAN_GRACE_S 60               /* age of a lock-less session dir that is removed */

typedef struct session session;
struct session {
        session *next;
        mcp_session_store *store;       /* back pointer for the expiry timer */
        char id[ID_LEN + 1];
        const char *rootfs;             /* borrowed from the config */
        bool network;
        mcp_egress_policy allow;
        mcp_limits limits;
        uint64_t created_usec, expires_usec;
        unsigned runs;
        bool busy, expired, mounted;
        int dirfd;                      /* <sessions>/<id> */
        int lockfd;
        int wsfd;                       /* the workspace root, when mounted */
        int slice;                      /* held from create to free; -1: none */
        char *ws_path;                  /* <sessions>/<id>/merged */
        mcp_timer *timer;
};

struct mcp_session_store {
        mcp_loop *loop;                 /* borrowed */
        const mcp_config *cfg;          /* borrowed */
        char *path;                     /* <state_dir>/sessions */
        int dirfd;
        session *list;
        size_t n;
        mcp_session_evict_fn evict;
        void *evict_data;
        mcp_session_expired_fn expired;
        void *expired_data;
        mcp_session_closing_fn closing;
        void *closing_data;
        mcp_slices *slices;             /* borrowed; NULL: the storage range */
};

/* The host id of the session's container id 0, and how many ids it maps. */
static unsigned
session_base(const mcp_session_store *store, const session *s)
{
        return store->slices && s->slice >= 0 ? mcp_slice_base(store->slices, (unsigned) s->slice)
                                              : MCP_SANDBOX_HOST_BASE;
}

static unsigned
session_count(const mcp_session_store *store, const session *s)
{
        return store->slices && s->slice >= 0 ? mcp_slice_size(store->slices)
                                              : MCP_SANDBOX_ID_COUNT;
}

bool
mcp_session_id_valid(const char *id)
{
        if (!id || strncmp(id, "s-", 2) != 0 || strlen(id) != ID_LEN)
                return false;
        for (size_t i = 2; i < ID_LEN; i++)
                if (!((id[i] >= '0' && id[i] <= '9') || (id[i] >= 'a' && id[i] <= 'f')))
                        return false;
        return true;
}

/* ---- mounts ---- */

static int
fs_new(const char *type, int *ret, msp_err *err)
{
        int fd = fsopen(type, FSOPEN_CLOEXEC);
        if (fd < 0)
                return msp_err_sys(err, errno, "fsopen %s", type);
        *ret = fd;
        return 0;
}

static int
fs_set(int fsfd, const char *key, const char *value, msp_err *err)
{
        if (fsconfig(fsfd, value ? FSCONFIG_SET_STRING : FSCONFIG_SET_FLAG, key, value, 0) < 0)
                return msp_err_sys(err, errno, "fsconfig %s=%s", key, value ? value : "");
        return 0;
}

/* Create the filesystem configured on fsfd and attach it at dirfd/name. */
static int
fs_attach(int fsfd, int dirfd, const char *name, msp_err *err)
{
        if (fsconfig(fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
                return msp_err_sys(err, errno, "create the filesystem for \"%s\"", name);
        _cleanup_close_ int mnt = fsmount(fsfd, FSMOUNT_CLOEXEC,
                                          MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
        if (mnt < 0)
                return msp_err_sys(err, errno, "fsmount \"%s\"", name);
        if (move_mount(mnt, "", dirfd, name, MOVE_MOUNT_F_EMPTY_PATH) < 0)
                return msp_err_sys(err, errno, "move_mount onto \"%s\"", name);
        return 0;
}

/* The ids of the session's runs: its rootfs' (an image's User) or the default. */
static mcp_run_ids
session_ids(const mcp_session_store *store, const session *s)
{
        unsigned base = session_base(store, s), count = session_count(store, s);
        for (size_t i = 0; s->rootfs && i < store->cfg->n_rootfs; i++)
                if (strcmp(store->cfg->rootfs[i].name, s->rootfs) == 0)
                        return mcp_rootfs_ids(&store->cfg->rootfs[i], base, count);
        return MCP_RUN_IDS_IN(base, count);
}

/* owner: the ids (inside) the tmpfs root belongs to, or NULL: root's. */
static int
mount_tmpfs(int dirfd, const char *name, uint64_t bytes, const mcp_run_ids *owner, msp_err *err)
{
        _cleanup_close_ int fs = -1;
        char size[32], inodes[32], id[16];
        /* one inode per 4 KiB of space, at least 4096: many small files fit, no more */
        uint64_t n_inodes = bytes / 4096 > 4096 ? bytes / 4096 : 4096;
        snprintf(size, sizeof size, "%" PRIu64, bytes);
        snprintf(inodes, sizeof inodes, "%" PRIu64, n_inodes);
        int r = fs_new("tmpfs", &fs, err);
        if (r >= 0)
                r = fs_set(fs, "size", size, err);
        if (r >= 0)
                r = fs_set(fs, "nr_inodes", inodes, err);
        if (r >= 0)
                r = fs_set(fs, "mode", "0700", err);   /* the sandbox's or root's only */
        if (r >= 0 && owner) {
                snprintf(id, sizeof id, "%u", MCP_HOST_UID_OF(*owner));
                r = fs_set(fs, "uid", id, err);
                snprintf(id, sizeof id, "%u", MCP_HOST_GID_OF(*owner));
                if (r >= 0)
                        r = fs_set(fs, "gid", id, err);
        }
        if (r >= 0)
                r = fs_attach(fs, dirfd, name, err);
        return r;
}

static void
umount_at(const mcp_session_store *store, const char *id, const char *name)
{
        char p[4096];
        snprintf(p, sizeof p, "%s/%s/%s", store->path, id, name);
        /* EINVAL: not a mount point (never mounted, or a dead server's namespace had it) */
        (void) umount2(p, MNT_DETACH | UMOUNT_NOFOLLOW);
}

/* The seed as the overlay's lower layer; "lowerdir+" (Linux 6.8) takes a path verbatim,
 * the older "lowerdir" would split it at ':'. */
static int
set_lower(int fs, const char *seed, msp_err *err)
{
        if (fsconfig(fs, FSCONFIG_SET_STRING, "lowerdir+", seed, 0) == 0)
                return 0;
        if (strchr(seed, ':') || strchr(seed, ','))
                return msp_err_set(err, EINVAL, "--seed-dir \"%s\": ':' and ',' need Linux 6.8",
                                   seed);
        return fs_set(fs, "lowerdir", seed, err);
}

static int
mount_overlay(const mcp_session_store *store, session *s, msp_err *err)
{
        int r = mount_tmpfs(s->dirfd, "ws", s->limits.workspace_bytes, NULL, err);
        if (r < 0)
                return r;
        _cleanup_close_ int ws = openat(s->dirfd, "ws", O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
                                        O_CLOEXEC);
        if (ws < 0)
                return msp_err_sys(err, errno, "open ws");
        if (mkdirat(ws, "upper", 0700) < 0 || mkdirat(ws, "work", 0700) < 0)
                return msp_err_sys(err, errno, "mkdir upper/work");
        /* the workspace root is the upper root: the sandbox user owns it */
        mcp_run_ids ids = session_ids(store, s);
        if (fchownat(ws, "upper", MCP_HOST_UID_OF(ids), MCP_HOST_GID_OF(ids),
                     AT_SYMLINK_NOFOLLOW) < 0)
                return msp_err_sys(err, errno, "chown upper");
        char upper[4096], work[4096];
        snprintf(upper, sizeof upper, "%s/%s/ws/upper", store->path, s->id);
        snprintf(work, sizeof work, "%s/%s/ws/work", store->path, s->id);
        _cleanup_close_ int fs = -1;
        r = fs_new("overlay", &fs, err);
        if (r >= 0)
                r = set_lower(fs, store->cfg->seed_dir, err);
        if (r >= 0)
                r = fs_set(fs, "upperdir", upper, err);
        if (r >= 0)
                r = fs_set(fs, "workdir", work, err);
        if (r >= 0)
                r = fs_attach(fs, s->dirfd, "merged", err);
        return r;
}

/* Mount the workspace on first use (acquire or a file tool). */
static int
session_mount(mcp_session_store *store, session *s, msp_err *err)
{
        if (s->mounted)
                return 0;
        mcp_run_ids ids = session_ids(store, s);
        int r = store->cfg->seed_dir ? mount_overlay(store, s, err)
                                     : mount_tmpfs(s->dirfd, "merged", s->limits.workspace_bytes,
                                                   &ids, err);
        if (r >= 0) {
                s->wsfd = openat(s->dirfd, "merged", O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
                                 O_CLOEXEC);
                if (s->wsfd < 0)
                        r = msp_err_sys(err, errno, "open the workspace");
        }
        if (r >= 0)
                r = mcp_workspace_make_out(s->wsfd, ids, err);
        if (r < 0) {
                if (s->wsfd >= 0)
                        close(TAKE_FD(s->wsfd));
                umount_at(store, s->id, "merged");
                umount_at(store, s->id, "ws");
                return msp_err_prefix(err, "session %s: workspace", s->id);
        }
        s->mounted = true;
        return 0;
}

/* ---- on disk ---- */

static int
write_meta(const mcp_session_store *store, const session *s, msp_err *err)
{
        _cleanup_jw_ oci_jw *w = oci_jw_new(true);
        if (!w)
                return msp_err_set(err, ENOMEM, "out of memory");
        oci_jw_begin_object(w);
        oci_jw_kv_string(w, "id", s->id);
        oci_jw_kv_uint64(w, "created_usec", s->created_usec);
        oci_jw_kv_uint64(w, "expires_usec", s->expires_usec);
        oci_jw_kv_string(w, "rootfs", s->rootfs);
        oci_jw_kv_bool(w, "network", s->network);
        oci_jw_key(w, "network_allow");
        oci_jw_begin_array(w);
        for (size_t i = 0; i < s->allow.n; i++)
                oci_jw_string(w, s->allow.rules[i].text);
        oci_jw_end_array(w);
        oci_jw_kv_uint64(w, "runs", s->runs);
        oci_jw_kv_bool(w, "seeded", store->cfg->seed_dir != NULL);
        oci_jw_key(w, "limits");
        oci_jw_begin_object(w);
        oci_jw_kv_uint64(w, "memory_bytes", s->limits.memory_bytes);
        oci_jw_kv_uint64(w, "pids", s->limits.pids);
        oci_jw_kv_uint64(w, "cpu_millis", s->limits.cpu_millis);
        oci_jw_kv_uint64(w, "timeout_ms", s->limits.timeout_ms);
        oci_jw_kv_uint64(w, "output_bytes", s->limits.output_bytes);
        oci_jw_kv_uint64(w, "tmp_bytes", s->limits.tmp_bytes);
        oci_jw_kv_uint64(w, "workspace_bytes", s->limits.workspace_bytes);
        oci_jw_end_object(w);
        oci_jw_end_object(w);
        _cleanup_free_ char *json = NULL;
        size_t len = 0;
        int r = oci_jw_finish(w, &json, &len, err);
        if (r < 0)
                return r;
        _cleanup_close_ int fd = openat(s->dirfd, "meta.json.tmp",
                                        O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
                                        0600);
        if (fd < 0)
                return msp_err_sys(err, errno, "session %s: meta.json.tmp", s->id);
        if (write(fd, json, len) != (ssize_t) len || write(fd, "\n", 1) != 1)
                return msp_err_sys(err, errno ? errno : EIO, "session %s: write meta.json",
                                   s->id);
        if (renameat(s->dirfd, "meta.json.tmp", s->dirfd, "meta.json") < 0)
                return msp_err_sys(err, errno, "session %s: rename meta.json", s->id);
        return 0;
}

/* A session dir whose lock is free: its owner is gone. Returns the locked fd, -EWOULDBLOCK
 * when a live msp-mcp holds it. */
static int
lock_session(int dirfd, bool create)
{
        int fd = openat(dirfd, "lock", O_RDWR | O_NOFOLLOW | O_CLOEXEC | (create ? O_CREAT : 0),
                        0600);
        if (fd < 0)
                return -errno;
        if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
                int e = errno;
                close(fd);
                return -e;
        }
        return fd;
}

static void
remove_dir(mcp_session_store *store, const char *id)
{
        msp_err err = { 0 };
        umount_at(store, id, "merged");
        umount_at(store, id, "ws");
        (void) mcp_remove_tree_at(store->dirfd, id, &err);
}

/* At start: remove every session dir whose owner is gone (an unlocked lock, or none). */
static void
remove_orphans(mcp_session_store *store)
{
        int fd = openat(store->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return;
        _cleanup_closedir_ DIR *d = fdopendir(fd);
        if (!d) {
                close(fd);
                return;
        }
        struct dirent *de;
        while ((de = readdir(d))) {
                if (!mcp_session_id_valid(de->d_name))
                        continue;
                _cleanup_close_ int sd = openat(store->dirfd, de->d_name,
                                                O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (sd < 0)
                        continue;
                _cleanup_close_ int lk = lock_session(sd, false);
                if (lk == -EWOULDBLOCK)
                        continue;       /* a live msp-mcp owns it */
                struct stat st;
                /* no lock yet: maybe a live server between its mkdir and its lock */
                if (lk == -ENOENT && fstat(sd, &st) == 0 &&
                    (uint64_t) st.st_mtime + ORPHAN_GRACE_S > mcp_wallclock_usec() / 1000000)
                        continue;
                remove_dir(store, de->d_name);
        }
}

/* ---- the store ---- */

static void
session_free(mcp_session_store *store, session *s, bool remove)
{
        if (s->timer)
                mcp_timer_cancel(store->loop, s->timer);
        if (s->wsfd >= 0)
                close(s->wsfd);
        if (remove)
                remove_dir(store, s->id);
        if (s->dirfd >= 0)
                close(s->dirfd);
        if (s->lockfd >= 0)
                close(s->lockfd);       /* after the removal: nobody else takes it meanwhile */
        free(s->ws_path);
        mcp_egress_policy_done(&s->allow);
        /* Its workspace is gone; a run still using it holds the slice itself. */
        if (store->slices && s->slice >= 0)
                mcp_slice_unref(store->slices, (unsigned) s->slice);
        free(s);
}

static void
session_unlink(mcp_session_store *store, session *s)
{
        for (session **p = &store->list; *p; p = &(*p)->next)
                if (*p == s) {
                        *p = s->next;
                        store->n--;
                        return;
                }
}

static void
session_destroy(mcp_session_store *store, session *s)
{
        if (store->closing)
                store->closing(s->id, store->closing_data);
        session_unlink(store, s);
        session_free(store, s, true);
}

/* An expired session goes, and whoever watches expiries hears of it. */
static void
session_expire(mcp_session_store *store, session *s)
{
        char sid[ID_LEN + 1], why[96];
        memcpy(sid, s->id, sizeof sid);
        snprintf(why, sizeof why, "expired: its ttl_s of %" PRIu64 " s passed",
                 (s->expires_usec - s->created_usec) / 1000000);
        session_destroy(store, s);
        if (store->expired)
                store->expired(sid, why, store->expired_data);
}

static int
on_expire(mcp_loop *loop, void *data)
{
        (void) loop;
        session *s = data;
        s->timer = NULL;
        s->expired = true;
        /* a busy one goes when its run releases it */
        if (!s->busy)
                session_expire(s->store, s);
        return 0;
}

mcp_session_store *
mcp_sessions_free(mcp_session_store *store)
{
        if (!store)
                return NULL;
        while (store->list) {
                session *s = store->list;
                store->list = s->next;
                session_free(store, s, true);
        }
        if (store->dirfd >= 0)
                close(store->dirfd);
        free(store->path);
        free(store);
        return NULL;
}

static int
mkdir_open(int dirfd, const char *path, mode_t mode, msp_err *err)
{
        if (mkdirat(dirfd, path, mode) < 0 && errno != EEXIST)
                return msp_err_sys(err, errno, "mkdir \"%s\"", path);
        int fd = openat(dirfd, path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return msp_err_sys(err, errno, "open \"%s\"", path);
        return fd;
}

int
mcp_sessions_new(mcp_loop *loop, const mcp_config *cfg, mcp_session_store **ret, msp_err *err)
{
        mcp_session_store *store = calloc(1, sizeof *store);
        if (!store)
                return msp_err_set(err, ENOMEM, "out of memory");
        store->loop = loop;
        store->cfg = cfg;
        store->dirfd = -1;
        int r = 0;
        if (asprintf(&store->path, "%s/sessions", cfg->state_dir) < 0) {
                store->path = NULL;
                r = msp_err_set(err, ENOMEM, "out of memory");
        }
        _cleanup_close_ int state = -1;
        if (r >= 0 && cfg->seed_dir) {
                struct stat st;
                if (cfg->seed_dir[0] != '/' || stat(cfg->seed_dir, &st) < 0 ||
                    !S_ISDIR(st.st_mode)) {
                        r = msp_err_set(err, EINVAL, "--seed-dir \"%s\": not an absolute path of "
                                        "a directory", cfg->seed_dir);
                        mcp_sessions_free(store);
                        return r;
                }
        }
        if (r >= 0)
                r = state = mkdir_open(AT_FDCWD, cfg->state_dir, 0711, err);
        if (r >= 0)
                r = store->dirfd = mkdir_open(state, "sessions", 0711, err);
        if (r < 0) {
                msp_err_prefix(err, "--state-dir \"%s\"", cfg->state_dir);
                mcp_sessions_free(store);
                return r;
        }
        remove_orphans(store);
        *ret = store;
        return 0;
}

void
mcp_sessions_set_slices(mcp_session_store *store, mcp_slices *slices)
{
        store->slices = slices;
}

void
mcp_sessions_set_evict(mcp_session_store *store, mcp_session_evict_fn fn, void *data)
{
        store->evict = fn;
        store->evict_data = data;
}

void
mcp_sessions_set_expired(mcp_session_store *store, mcp_session_expired_fn fn, void *data)
{
        store->expired = fn;
        store->expired_data = data;
}

/* A live session of this store, or NULL with err set (-ENOENT). Expired ones that the
 * timer has not removed yet (wall clock ahead of the monotonic one) go now. */
static session *
lookup(mcp_session_store *store, const char *id, bool want_expired, msp_err *err)
{
        if (!mcp_session_id_valid(id)) {
                char q[64];
                oci_json_quote(id ? id : "", q, sizeof q);
                msp_err_set(err, ENOENT, "session_id %s: not a session id", q);
                return NULL;
        }
        uint64_t now = mcp_wallclock_usec();
        for (session *s = store->list; s; s = s->next) {
                if (strcmp(s->id, id) != 0)
                        continue;
                if (!s->expired && now >= s->expires_usec) {
                        s->expired = true;
                        if (!s->busy) {
                                session_expire(store, s);
                                break;
                        }
                }
                if (s->expired && !want_expired)
                        break;
                return s;
        }
        msp_err_set(err, ENOENT, "session_id \"%s\": no such session (closed or expired)", id);
        return NULL;
}

static void
fill_info(const mcp_session_store *store, const session *s, mcp_session_info *ret)
{
        memset(ret, 0, sizeof *ret);
        snprintf(ret->id, sizeof ret->id, "%s", s->id);
        ret->rootfs = s->rootfs;
        ret->network = s->network;
        ret->allow = &s->allow;
        ret->limits = s->limits;
        ret->created_usec = s->created_usec;
        ret->expires_usec = s->expires_usec;
        ret->runs = s->runs;
        ret->busy = s->busy;
        ret->slice = s->slice;
        ret->id_base = session_base(store, s);
        ret->id_count = session_count(store, s);
}

static void
limits_fill(mcp_limits *l, const mcp_limits *def)
{
#define FILL(f) if (!l->f) l->f = def->f
        FILL(memory_bytes);
        FILL(pids);
        FILL(cpu_millis);
        FILL(timeout_ms);
        FILL(output_bytes);
        FILL(tmp_bytes);
        FILL(workspace_bytes);
#undef FILL
}

static int
new_id(char id[ID_LEN + 1], msp_err *err)
{
        uint64_t v;
        if (getrandom(&v, sizeof v, 0) != (ssize_t) sizeof v)
                return msp_err_sys(err, errno ? errno : EIO, "getrandom");
        snprintf(id, ID_LEN + 1, "s-%016" PRIx64, v);
        return 0;
}

static int
check_opts(const mcp_config *cfg, const mcp_session_opts *opts, const char **ret_rootfs,
           uint64_t *ret_ttl, msp_err *err)
{
        const char *name = opts->rootfs ? opts->rootfs : "host";
        const char *rootfs = NULL;
        for (size_t i = 0; i < cfg->n_rootfs; i++)
                if (strcmp(cfg->rootfs[i].name, name) == 0)
                        rootfs = cfg->rootfs[i].name;
        if (!rootfs && strcmp(name, "host") == 0)
                rootfs = "host";
        if (!rootfs)
                return msp_err_set(err, EINVAL, "rootfs \"%.100s\": not a configured rootfs",
                                   name);
        if (opts->network && !cfg->allow_network)
                return msp_err_set(err, EINVAL, "network: true needs --allow-network");
        int r;
        if (opts->network && (r = mcp_usernet_check(cfg->usernet_path, err)) < 0)
                return r;
        uint64_t ttl = opts->ttl_s ? opts->ttl_s : cfg->session_ttl_s;
        if (cfg->session_max_ttl_s && ttl > cfg->session_max_ttl_s)
                return msp_err_set(err, EINVAL, "ttl_s: %" PRIu64 " is over the maximum %" PRIu64,
                                   ttl, cfg->session_max_ttl_s);
        if (ttl == 0)
                return msp_err_set(err, EINVAL, "ttl_s: 0 (no default --session-ttl)");
        *ret_rootfs = rootfs;
        *ret_ttl = ttl;
        return 0;
}

/* The session's directory with its lock, under a fresh unguessable id. */
static int
session_dir_new(mcp_session_store *store, session *s, msp_err *err)
{
        for (int tries = 0; tries < 8; tries++) {
                int r = new_id(s->id, err);
                if (r < 0)
                        return r;
                if (mkdirat(store->dirfd, s->id, 0711) == 0)
                        break;
                if (errno != EEXIST)
                        return msp_err_sys(err, errno, "mkdir %s/%s", store->path, s->id);
                s->id[0] = '\0';
        }
        if (!s->id[0])
                return msp_err_set(err, EEXIST, "no free session id");
        s->dirfd = openat(store->dirfd, s->id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (s->dirfd < 0)
                return msp_err_sys(err, errno, "open %s/%s", store->path, s->id);
        s->lockfd = lock_session(s->dirfd, true);
        if (s->lockfd < 0)
                return msp_err_sys(err, -s->lockfd, "lock %s/%s", store->path, s->id);
        if (mkdirat(s->dirfd, "merged", 0755) < 0 ||
            (store->cfg->seed_dir && mkdirat(s->dirfd, "ws", 0700) < 0))
                return msp_err_sys(err, errno, "mkdir in %s/%s", store->path, s->id);
        if (asprintf(&s->ws_path, "%s/%s/merged", store->path, s->id) < 0) {
                s->ws_path = NULL;
                return msp_err_set(err, ENOMEM, "out of memory");
        }
        return 0;
}

int
mcp_session_create(mcp_session_store *store, const mcp_session_opts *opts,
                   mcp_session_info *ret, msp_err *err)
{
        const char *rootfs = NULL;
        uint64_t ttl = 0;
        int r = check_opts(store->cfg, opts, &rootfs, &ttl, err);
        if (r < 0)
                return r;
        size_t live = 0;
        for (session *s = store->list; s; s = s->next)
                live += !s->expired;
        if (store->cfg->max_sessions && live >= store->cfg->max_sessions)
                return msp_err_set(err, EUSERS, "%zu sessions open, the maximum (--max-sessions); "
                                   "close one with session_close", live);
        session *s = calloc(1, sizeof *s);
        if (!s)
                return msp_err_set(err, ENOMEM, "out of memory");
        s->store = store;
        s->dirfd = s->lockfd = s->wsfd = s->slice = -1;
        s->rootfs = rootfs;
        s->network = opts->network;
        r = 0;
        for (size_t i = 0; opts->allow && i < opts->allow->n && r >= 0; i++)
                r = mcp_egress_policy_add(&s->allow, opts->allow->rules[i].text, err);
        if (r < 0) {
                mcp_egress_policy_done(&s->allow);
                free(s);
                return r;
        }
        s->limits = opts->limits;
        limits_fill(&s->limits, &store->cfg->defaults);
        s->created_usec = mcp_wallclock_usec();
        s->expires_usec = s->created_usec + ttl * 1000000;
        /* On an image's tree, run by a user, the whole range (no slice). */
        bool sliced = store->slices && (strcmp(rootfs, "host") == 0 ||
                                        mcp_slices_image_slices(store->slices));
        unsigned slice;
        if (sliced && (r = mcp_slice_take(store->slices, &slice, err)) < 0) {
                mcp_egress_policy_done(&s->allow);
                free(s);
                return r;
        }
        if (sliced)
                s->slice = (int) slice;
        r = session_dir_new(store, s, err);
        if (r >= 0)
                r = write_meta(store, s, err);
        if (r >= 0)
                r = mcp_loop_add_timer(store->loop, ttl * 1000000, on_expire, s, &s->timer);
        if (r < 0) {
                if (!err || !err->errnum)
                        msp_err_sys(err, -r, "session timer");
                session_free(store, s, s->id[0] != '\0');
                return r;
        }
        session **tail = &store->list;          /* oldest first: session_list's order */
        while (*tail)
                tail = &(*tail)->next;
        *tail = s;
        store->n++;
        fill_info(store, s, ret);
        return 0;
}

int
mcp_session_close(mcp_session_store *store, const char *id, bool force, msp_err *err)
{
        session *s = lookup(store, id, false, err);
        if (!s)
                return -ENOENT;
        if (s->busy && !force)
                return msp_err_set(err, EBUSY, "session %s: a run is using it", s->id);
        char sid[ID_LEN + 1];
        memcpy(sid, s->id, sizeof sid);
        if (s->busy && store->evict)
                store->evict(sid, store->evict_data);   /* the engine cancels the run */
        /* The callback may have released it: look it up again. A run still using it
         * keeps its bind mount of the detached workspace until it dies. */
        for (session *p = store->list; p; p = p->next)
                if (strcmp(p->id, sid) == 0) {
                        session_destroy(store, p);
                        break;
                }
        return 0;
}

int
mcp_session_get(mcp_session_store *store, const char *id, mcp_session_info *ret, msp_err *err)
{
        session *s = lookup(store, id, false, err);
        if (!s)
                return -ENOENT;
        fill_info(store, s, ret);
        return 0;
}

int
mcp_session_list(mcp_session_store *store, mcp_session_info **ret, size_t *ret_n, msp_err *err)
{
        mcp_session_info *v = calloc(store->n ? store->n : 1, sizeof *v);
        if (!v)
                return msp_err_set(err, ENOMEM, "out of memory");
        size_t n = 0;
        for (session *s = store->list; s; s = s->next)
                if (!s->expired)
                        fill_info(store, s, &v[n++]);
        *ret = v;
        *ret_n = n;
        return 0;
}

int
mcp_session_acquire(mcp_session_store *store, const char *id, int *ret_workspace_fd,
                    const char **ret_workspace_path, mcp_session_info *ret_info, msp_err *err)
{
        session *s = lookup(store, id, false, err);
        if (!s)
                return -ENOENT;
        if (s->busy)
                return msp_err_set(err, EBUSY, "session %s: another run is using it; "
                                   "wait for it to finish", s->id);
        int r = session_mount(store, s, err);
        if (r < 0)
                return r;
        s->busy = true;
        s->runs++;
        *ret_workspace_fd = s->wsfd;
        *ret_workspace_path = s->ws_path;
        if (ret_info)
                fill_info(store, s, ret_info);
        return 0;
}

int
mcp_session_hold(mcp_session_store *store, const char *id, int *ret_workspace_fd,
                 const char **ret_workspace_path, mcp_session_info *ret_info, msp_err *err)
{
        session *s = lookup(store, id, false, err);
        if (!s)
                return -ENOENT;
        int r = session_mount(store, s, err);
        if (r < 0)
                return r;
        *ret_workspace_fd = s->wsfd;
        *ret_workspace_path = s->ws_path;
        if (ret_info)
                fill_info(store, s, ret_info);
        return 0;
}

void
mcp_sessions_set_closing(mcp_session_store *store, mcp_session_closing_fn fn, void *data)
{
        store->closing = fn;
        store->closing_data = data;
}

void
mcp_session_release(mcp_session_store *store, const char *id)
{
        session *s = lookup(store, id, true, NULL);
        if (!s || !s->busy)
                return;
        s->busy = false;
        if (s->expired) {
                session_expire(store, s);
                return;
        }
        (void) write_meta(store, s, NULL);      /* the run count; informational */
}

/* The workspace fd of a live session, mounted. */
static int
workspace_of(mcp_session_store *store, const char *id, msp_err *err)
{
        session *s = lookup(store, id, false, err);
        if (!s)
                return -ENOENT;
        int r = session_mount(store, s, err);
        return r < 0 ? r : s->wsfd;
}

int
mcp_session_write_file(mcp_session_store *store, const char *id, const char *path,
                       const void *data, size_t len, bool executable, msp_err *err)
{
        session *s = lookup(store, id, false, err);
        if (!s)
                return -ENOENT;
        int r = session_mount(store, s, err);
        return r < 0 ? r : mcp_workspace_write_file(s->wsfd, path, data, len, executable,
                                                    session_ids(store, s), err);
}

int
mcp_session_read_file(mcp_session_store *store, const char *id, const char *path, size_t max,
                      char **ret, size_t *ret_len, uint64_t *ret_size, bool *ret_truncated,
                      msp_err *err)
{
        int fd = workspace_of(store, id, err);
        return fd < 0 ? fd : mcp_workspace_read_file(fd, path, max, ret, ret_len, ret_size,
                                                     ret_truncated, err);
}

int
mcp_session_list_files(mcp_session_store *store, const char *id, const char *path,
                       size_t max_entries, mcp_dirent **ret, size_t *ret_n, bool *ret_truncated,
                       msp_err *err)
{
        int fd = workspace_of(store, id, err);
        return fd < 0 ? fd : mcp_workspace_list_files(fd, path, max_entries, ret, ret_n,
                                                      ret_truncated, err);
}
