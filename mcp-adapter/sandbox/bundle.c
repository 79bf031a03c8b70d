/* config.json of one sandbox run, and the skeleton rootfs it uses.
 *
 * The skeleton is a directory owned by root with every mount point the config names
 * (so that the runtime never has to create one: root.readonly is true, and msp creates
 * missing mount targets only on a writable root), the merged-/usr symlinks as the host
 * has them, and synthesized /etc files. It is created once per instance and shared by
 * every run, with the system view bound on it (sysbinds.h): a run's config.json names
 * only the run's own mounts. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox/bundle.h"
#include "oci/oci.h"
#include "sandbox/hook-args.h"
#include "sandbox/usernet.h"

/* Top-level host entries that may hold the system: bound read-only when they are
 * directories, reproduced when they are symlinks (merged /usr). /opt is left out on
 * purpose: it holds installed applications, not the system. */
static const char *const host_system[] = { "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64",
                                           "/libx32" };

/* The /etc selection every program may need (the loader, TLS roots, names of protocols
 * and services, the zone). What one language needs besides is found from its own files
 * (sysdeps.h). Never passwd/shadow/group (synthesized). */
static const char *const host_etc[] = {
        "/etc/ld.so.cache",     /* the dynamic loader's library index */
        "/etc/alternatives",    /* python3, node... may be symlinks through it */
        "/etc/ssl/certs",       /* TLS roots (only /etc/ssl/private stays out) */
        "/etc/ssl/openssl.cnf",
        "/etc/ca-certificates.conf",
        "/etc/mime.types",
        "/etc/protocols",
        "/etc/services",
        "/etc/timezone",
};

/* Mount points inside the skeleton, created as directories. */
static const char *const skel_dirs[] = { "proc", "dev", "tmp", "workspace", ".msp", "etc",
                                         "etc/ssl" };

static const char passwd_txt[] = "root:x:0:0:root:/root:/bin/sh\n"
                                 "sandbox:x:1000:1000:sandbox:/workspace:/bin/sh\n"
                                 "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n";
static const char group_txt[] = "root:x:0:\nsandbox:x:1000:\nnogroup:x:65534:\n";
static const char hosts_txt[] = "127.0.0.1\tlocalhost sandbox\n::1\tlocalhost ip6-localhost\n";
static const char nsswitch_txt[] = "passwd: files\ngroup: files\nhosts: files dns\n";

int
mcp_hostview_probe(mcp_hostview *ret, msp_err *err)
{
        mcp_hostview v = { 0 };

        for (size_t i = 0; i < ARRAY_SIZE(host_system); i++) {
                struct stat st;
                if (lstat(host_system[i], &st) < 0)
                        continue;
                if (S_ISLNK(st.st_mode)) {
                        char *t = v.link_targets[v.n_links];
                        ssize_t n = readlink(host_system[i], t, sizeof v.link_targets[0] - 1);
                        if (n <= 0 || (size_t) n >= sizeof v.link_targets[0] - 1)
                                return msp_err_set(err, ENAMETOOLONG, "readlink '%s'",
                                                   host_system[i]);
                        t[n] = '\0';
                        v.links[v.n_links++] = host_system[i];
                } else if (S_ISDIR(st.st_mode)) {
                        v.binds[v.n_binds++] = host_system[i];
                }
        }
        if (v.n_binds == 0 || strcmp(v.binds[0], "/usr") != 0)
                return msp_err_set(err, ENOENT, "the host has no /usr directory");
        for (size_t i = 0; i < ARRAY_SIZE(host_etc); i++) {
                struct stat st;
                if (stat(host_etc[i], &st) < 0 || !(S_ISDIR(st.st_mode) || S_ISREG(st.st_mode)))
                        continue;
                v.etc_is_dir[v.n_etc] = S_ISDIR(st.st_mode);
                v.etc[v.n_etc++] = host_etc[i];
        }
        *ret = v;
        return 0;
}

static int
write_file_at(int dirfd, const char *name, const char *text, msp_err *err)
{
        _cleanup_close_ int fd = openat(dirfd, name,
                                        O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
                                        0644);
        if (fd < 0)
                return msp_err_sys(err, errno, "skeleton: create '%s'", name);
        size_t len = strlen(text);
        if (write(fd, text, len) != (ssize_t) len)
                return msp_err_sys(err, errno ? errno : EIO, "skeleton: write '%s'", name);
        return 0;
}

static int
mkdir_at(int dirfd, const char *name, mode_t mode, msp_err *err)
{
        if (mkdirat(dirfd, name, mode) < 0 && errno != EEXIST)
                return msp_err_sys(err, errno, "skeleton: mkdir '%s'", name);
        return 0;
}

int
mcp_skeleton_create(int dirfd, const char *name, const mcp_hostview *view, msp_err *err)
{
        int r = mkdir_at(dirfd, name, 0755, err);
        if (r < 0)
                return r;
        _cleanup_close_ int fd = openat(dirfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return msp_err_sys(err, errno, "skeleton: open '%s'", name);

        for (size_t i = 0; i < ARRAY_SIZE(skel_dirs); i++)
                if ((r = mkdir_at(fd, skel_dirs[i], 0755, err)) < 0)
                        return r;
        /* runc gives a tmpfs the mode of the directory it covers. */
        if (fchmodat(fd, "tmp", 01777, 0) < 0)
                return msp_err_sys(err, errno, "skeleton: chmod 'tmp'");
        for (size_t i = 0; i < view->n_binds; i++)
                if ((r = mkdir_at(fd, view->binds[i] + 1, 0755, err)) < 0)
                        return r;
        for (size_t i = 0; i < view->n_links; i++)
                if (symlinkat(view->link_targets[i], fd, view->links[i] + 1) < 0 && errno != EEXIST)
                        return msp_err_sys(err, errno, "skeleton: symlink '%s'", view->links[i]);
        for (size_t i = 0; i < view->n_etc; i++) {
                const char *rel = view->etc[i] + 1;
                if (view->etc_is_dir[i])
                        r = mkdir_at(fd, rel, 0755, err);
                else
                        r = write_file_at(fd, rel, "", err);
                if (r < 0)
                        return r;
        }
        if ((r = mcp_sysview_skeleton(fd, &view->sys, err)) < 0)
                return r;
        /* Targets of the network-only bind, and the zone link (resolved through /usr). */
        if ((r = write_file_at(fd, "etc/resolv.conf", "", err)) < 0 ||
            (r = write_file_at(fd, "etc/passwd", passwd_txt, err)) < 0 ||
            (r = write_file_at(fd, "etc/group", group_txt, err)) < 0 ||
            (r = write_file_at(fd, "etc/hosts", hosts_txt, err)) < 0 ||
            (r = write_file_at(fd, "etc/hostname", "sandbox\n", err)) < 0 ||
            (r = write_file_at(fd, "etc/nsswitch.conf", nsswitch_txt, err)) < 0)
                return r;
        char zone[PATH_MAX];
        ssize_t n = readlink("/etc/localtime", zone, sizeof zone - 1);
        if (n > 0) {
                zone[n] = '\0';
                if (strncmp(zone, "/usr/", 5) == 0 && symlinkat(zone, fd, "etc/localtime") < 0 &&
                    errno != EEXIST)
                        return msp_err_sys(err, errno, "skeleton: symlink 'etc/localtime'");
        }
        if (symlinkat("../usr/lib/os-release", fd, "etc/os-release") < 0 && errno != EEXIST)
                return msp_err_sys(err, errno, "skeleton: symlink 'etc/os-release'");
        return 0;
}

/* The sources of the sandbox's binds show in its /proc/self/mountinfo as paths inside
 * their filesystem: on tmpfs mounts of their own (in msp-mcp's private mount namespace)
 * the bundles and the skeleton read "/r-<id>/code" and "/", never the state dir, and the
 * init is a copy in the bundles' tmpfs rather than a bind of a path in a build or install
 * tree. */
static const struct { const char *name, *opts; } private_dirs[] = {
        { "b", "mode=0711,nr_inodes=65536" },
        { "rootfs", "mode=0755,nr_inodes=4096,size=1m" },
};

static int
copy_file_at(const char *src, int dirfd, const char *name, mode_t mode, msp_err *err)
{
        _cleanup_close_ int in = open(src, O_RDONLY | O_CLOEXEC);
        if (in < 0)
                return msp_err_sys(err, errno, "open '%s'", src);
        _cleanup_close_ int out = openat(dirfd, name,
                                         O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                                         mode);
        if (out < 0)
                return msp_err_sys(err, errno, "create '%s'", name);
        char buf[65536];
        for (;;) {
                ssize_t n = read(in, buf, sizeof buf);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return msp_err_sys(err, errno, "read '%s'", src);
                if (n == 0)
                        return 0;
                for (ssize_t off = 0; off < n;) {
                        ssize_t w = write(out, buf + off, (size_t) (n - off));
                        if (w < 0 && errno == EINTR)
                                continue;
                        if (w <= 0)
                                return msp_err_sys(err, w < 0 ? errno : EIO, "write '%s'", name);
                        off += w;
                }
        }
}

int
mcp_private_view(int inst_fd, const char *inst_path, const char *init_src, msp_err *err)
{
        char path[4200];
        for (size_t i = 0; i < ARRAY_SIZE(private_dirs); i++) {
                int r = mkdir_at(inst_fd, private_dirs[i].name, 0755, err);
                if (r < 0)
                        return r;
                snprintf(path, sizeof path, "%s/%s", inst_path, private_dirs[i].name);
                if (mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, private_dirs[i].opts) < 0)
                        return msp_err_sys(err, errno, "mount tmpfs on '%s'", path);
        }
        if (!init_src)
                return 0;
        return copy_file_at(init_src, inst_fd, "b/" MCP_INIT_COPY, 0755, err);
}

void
mcp_private_view_release(const char *inst_path)
{
        char path[4200];
        for (size_t i = 0; i < ARRAY_SIZE(private_dirs); i++) {
                snprintf(path, sizeof path, "%s/%s", inst_path, private_dirs[i].name);
                (void) umount2(path, MNT_DETACH | UMOUNT_NOFOLLOW);
        }
}

/* rootfs cloned and attached at dirfd/name with the ids as idmap_fd's namespace maps them
 * (an idmapped mount: the tree's files stay as stored, each slice sees them as its own). */
static int
idmapped_bind(const char *rootfs, int idmap_fd, int dirfd, const char *name, msp_err *err)
{
        _cleanup_close_ int tree = open_tree(AT_FDCWD, rootfs, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC |
                                             AT_RECURSIVE);
        if (tree < 0)
                return msp_err_sys(err, errno, "rootfs '%s': open_tree", rootfs);
        struct mount_attr attr = { .attr_set = MOUNT_ATTR_IDMAP | MOUNT_ATTR_RDONLY |
                                               MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
                                   .userns_fd = (uint64_t) idmap_fd };
        if (mount_setattr(tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof attr) < 0)
                return msp_err_sys(err, errno, "rootfs '%s': an idmapped mount of it (each "
                                   "sandbox sees the tree with ids of its own; the filesystem "
                                   "must support idmapped mounts)", rootfs);
        int r = mkdir_at(dirfd, name, 0755, err);
        if (r < 0)
                return r;
        if (move_mount(tree, "", dirfd, name, MOVE_MOUNT_F_EMPTY_PATH) < 0)
                return msp_err_sys(err, errno, "rootfs '%s': move_mount onto '%s'", rootfs, name);
        return 0;
}

const char *const mcp_view_top_dirs[] = { "proc", "dev", "tmp", "workspace", ".msp", "etc",
                                          NULL };

/* A prepared rootfs is never written to: msp-mcp mounts a read-only overlay of it under a
 * layer that holds only the mount points (lowerdir=<mp>:<rootfs>, no upper), in its own
 * private mount namespace; with idmap_fd, over an idmapped mount of it at <name>.lower. */
int
mcp_rootfs_view(int dirfd, const char *dir_path, const char *name, const char *rootfs,
                int idmap_fd, msp_err *err)
{
        char mp[64], lower[64], opts[8192], target[4200];
        if (strpbrk(rootfs, ":,\\") || rootfs[0] != '/')
                return msp_err_set(err, EINVAL,
                                   "rootfs '%s': must be an absolute path without ':', ',' or '\\'",
                                   rootfs);
        _cleanup_close_ int rfd = open(rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (rfd < 0)
                return msp_err_sys(err, errno, "rootfs '%s'", rootfs);
        snprintf(mp, sizeof mp, "%s.mp", name);
        int r = mkdir_at(dirfd, mp, 0755, err);
        if (r < 0)
                return r;
        _cleanup_close_ int mfd = openat(dirfd, mp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (mfd < 0)
                return msp_err_sys(err, errno, "rootfs view '%s'", mp);
        for (size_t i = 0; mcp_view_top_dirs[i]; i++)
                if ((r = mkdir_at(mfd, mcp_view_top_dirs[i], 0755, err)) < 0)
                        return r;
        if (fchmodat(mfd, "tmp", 01777, 0) < 0)
                return msp_err_sys(err, errno, "rootfs view: chmod 'tmp'");
        snprintf(lower, sizeof lower, "%s.lower", name);
        if (idmap_fd >= 0 && (r = idmapped_bind(rootfs, idmap_fd, dirfd, lower, err)) < 0)
                return r;
        if ((r = mkdir_at(dirfd, name, 0755, err)) < 0)
                return r;
        if (idmap_fd >= 0)
                snprintf(opts, sizeof opts, "lowerdir=%s/%s:%s/%s", dir_path, mp, dir_path, lower);
        else
                snprintf(opts, sizeof opts, "lowerdir=%s/%s:%s", dir_path, mp, rootfs);
        snprintf(target, sizeof target, "%s/%s", dir_path, name);
        if (mount("overlay", target, "overlay", MS_RDONLY | MS_NOSUID | MS_NODEV, opts) < 0)
                return msp_err_sys(err, errno, "rootfs '%s': read-only overlay on '%s'", rootfs,
                                   target);
        return 0;
}

void
mcp_rootfs_view_release(const char *dir_path, const char *name)
{
        char p[4200];
        snprintf(p, sizeof p, "%s/%s", dir_path, name);
        (void) umount2(p, MNT_DETACH | UMOUNT_NOFOLLOW);
        snprintf(p, sizeof p, "%s/%s.lower", dir_path, name);
        (void) umount2(p, MNT_DETACH | UMOUNT_NOFOLLOW);
}

int
mcp_env_check(const char *kv, size_t i, msp_err *err)
{
        const char *eq = strchr(kv, '=');
        size_t klen = eq ? (size_t) (eq - kv) : strlen(kv);
        if (!eq || !mcp_env_name_valid(kv, klen))
                return msp_err_set(err, EINVAL,
                                   "env[%zu]: '%.64s' is not KEY=VALUE with KEY matching "
                                   "[A-Za-z_][A-Za-z0-9_]* (at most %d bytes)",
                                   i, kv, MCP_ENV_NAME_MAX);
        return 0;
}

/* ---- config.json ---- */

static void
jw_copy(oci_jw *w, const oci_json *v)
{
        switch (oci_json_type_of(v)) {
        case OCI_JSON_NULL:
                oci_jw_null(w);
                break;
        case OCI_JSON_BOOL:
                oci_jw_bool(w, oci_json_bool(v));
                break;
        case OCI_JSON_NUMBER: {
                /* The profiles hold integers only. */
                const char *t = oci_json_number_text(v);
                if (t[0] == '-')
                        oci_jw_int64(w, strtoll(t, NULL, 10));
                else
                        oci_jw_uint64(w, strtoull(t, NULL, 10));
                break;
        }
        case OCI_JSON_STRING:
                oci_jw_string(w, oci_json_string(v));
                break;
        case OCI_JSON_OBJECT:
                oci_jw_begin_object(w);
                for (size_t i = 0; i < oci_json_len(v); i++) {
                        oci_jw_key(w, oci_json_key_at(v, i));
                        jw_copy(w, oci_json_value_at(v, i));
                }
                oci_jw_end_object(w);
                break;
        case OCI_JSON_ARRAY:
                oci_jw_begin_array(w);
                for (size_t i = 0; i < oci_json_len(v); i++)
                        jw_copy(w, oci_json_value_at(v, i));
                oci_jw_end_array(w);
                break;
        }
}

/* Does the profile handle TCP connect and bind? */
static bool
handles_network(const oci_json *ll)
{
        const oci_json *h = oci_json_get(ll, "handledAccess");
        const oci_json *n = h ? oci_json_get(h, "handledAccessNetwork") : NULL;
        return n && oci_json_len(n) > 0;
}

/* An allowlist run: TCP connect and bind on the proxy's port only, on every address
 * (Landlock has no address rules; the namespace has only `lo`). The init binds it before
 * the program starts, so the program can connect to it and bind nothing. */
static void
write_proxy_port_rule(oci_jw *w, unsigned port)
{
        oci_jw_key(w, "networkPort");
        oci_jw_begin_array(w);
        oci_jw_begin_object(w);
        oci_jw_kv_strlist(w, "allowedAccess", (const char *const[]){ "connect", "bind", NULL });
        oci_jw_key(w, "ports");
        oci_jw_begin_array(w);
        oci_jw_uint64(w, port);
        oci_jw_end_array(w);
        oci_jw_end_object(w);
        oci_jw_end_array(w);
}

/* One pathBeneath rule: access on paths (NULL-terminated; none: no rule). */
static void
write_path_rule(oci_jw *w, const char *const *paths, const char *const *access)
{
        if (!paths || !paths[0])
                return;
        oci_jw_begin_object(w);
        oci_jw_kv_strlist(w, "allowedAccess", access);
        oci_jw_kv_strlist(w, "paths", paths);
        oci_jw_end_object(w);
}

/* The rules added to the profile's: reading the program's directory, executing the init
 * in it (pid 1, nothing else there), an image's own top-level directories (read and
 * execute beneath) and regular files (read and execute those files: image-cache.c lists
 * none of a name the view covers, and no symlink, whose target is granted or not on its
 * own), and listing the root (`ls /`, os.listdir("/")), which holds only mount points, the
 * system view and, in an image, its own entries. */
static void
write_own_rules(oci_jw *w, const mcp_bundle_spec *s)
{
        write_path_rule(w, (const char *const[]){ MCP_CODE_DIR, NULL },
                        (const char *const[]){ "read_file", "read_dir", NULL });
        if (s->init_path)
                write_path_rule(w, (const char *const[]){ MCP_INIT_PATH, NULL },
                                (const char *const[]){ "execute", NULL });
        /* The kernels bind their sockets there and read their connection files. */
        if (s->kernel_dir)
                write_path_rule(w, (const char *const[]){ MCP_KERNEL_DIR, NULL },
                                (const char *const[]){ "read_file", "read_dir", "write_file",
                                                       "remove_file", "make_reg", "make_sock",
                                                       NULL });
        write_path_rule(w, s->read_dirs,
                        (const char *const[]){ "execute", "read_file", "read_dir", NULL });
        write_path_rule(w, s->read_files, (const char *const[]){ "execute", "read_file", NULL });
        write_path_rule(w, (const char *const[]){ "/", NULL },
                        (const char *const[]){ "read_dir", NULL });
}

/* process.landlock: the profile, plus write_own_rules. The network rights are never
 * handled here: Landlock's port rules cannot tell loopback from any other address, so
 * handling them would refuse TCP on the sandbox's own loopback (servers under test,
 * multiprocessing managers). The network boundary is the private network namespace (only
 * `lo`), or, with a network session, the operator's explicit --allow-network. An allowlist run is the exception: its network rights are
 * handled and only the proxy's port is open (write_proxy_port_rule). */
static void
write_landlock(oci_jw *w, const mcp_bundle_spec *s)
{
        const oci_json *ll = s->landlock;
        oci_jw_key(w, "landlock");
        oci_jw_begin_object(w);
        for (size_t i = 0; i < oci_json_len(ll); i++) {
                const char *key = oci_json_key_at(ll, i);
                const oci_json *v = oci_json_value_at(ll, i);
                oci_jw_key(w, key);
                if (strcmp(key, "handledAccess") == 0) {
                        oci_jw_begin_object(w);
                        for (size_t k = 0; k < oci_json_len(v); k++) {
                                if (strcmp(oci_json_key_at(v, k), "handledAccessNetwork") == 0 &&
                                    !s->proxy_port)
                                        continue;
                                oci_jw_key(w, oci_json_key_at(v, k));
                                jw_copy(w, oci_json_value_at(v, k));
                        }
                        oci_jw_end_object(w);
                } else if (strcmp(key, "rules") == 0) {
                        oci_jw_begin_object(w);
                        for (size_t k = 0; k < oci_json_len(v); k++) {
                                const char *rk = oci_json_key_at(v, k);
                                const oci_json *rv = oci_json_value_at(v, k);
                                oci_jw_key(w, rk);
                                if (strcmp(rk, "pathBeneath") != 0) {
                                        jw_copy(w, rv);
                                        continue;
                                }
                                oci_jw_begin_array(w);
                                for (size_t j = 0; j < oci_json_len(rv); j++)
                                        jw_copy(w, oci_json_value_at(rv, j));
                                write_own_rules(w, s);
                                oci_jw_end_array(w);
                        }
                        if (s->proxy_port && handles_network(ll))
                                write_proxy_port_rule(w, s->proxy_port);
                        oci_jw_end_object(w);
                } else {
                        jw_copy(w, v);
                }
        }
        oci_jw_end_object(w);
}

/* pip: the sandbox's system dirs are read-only, so an install goes to the user site,
 * ~/.local in the workspace (on sys.path once it exists, its scripts last on PATH); the
 * marker of an EXTERNALLY-MANAGED python (PEP 668, Debian's and Ubuntu's) guards the
 * host's packages, which no run can write, and would stop every install. */
static const char *const base_env[] = { "PATH=/usr/local/bin:/usr/bin:/bin:/workspace/.local/bin",
                                        "HOME=/workspace", "LANG=C.UTF-8", "TERM=dumb",
                                        "PIP_BREAK_SYSTEM_PACKAGES=1" };

static bool
env_in(const char *const *env, size_t n, const char *kv)
{
        size_t klen = strcspn(kv, "=") + 1;
        for (size_t i = 0; env && i < n && env[i]; i++)
                if (strncmp(env[i], kv, klen) == 0)
                        return true;
        return false;
}

/* base_env < the image's Env < the request's env */
static bool
env_overridden(const mcp_bundle_spec *s, const char *kv)
{
        return env_in(s->env, s->n_env, kv) || env_in(s->image_env, SIZE_MAX, kv);
}

/* What pip, npm, curl, wget, git, R and Python's urllib read (each reads some of them, in
 * one case or the other); ALL_PROXY as an http:// URL is what curl takes for any scheme. */
static const char *const proxy_names[] = { "http_proxy", "https_proxy", "HTTP_PROXY",
                                           "HTTPS_PROXY", "ALL_PROXY", "all_proxy",
                                           "NO_PROXY", "no_proxy" };

/* With the egress proxy, its variables win over an image's (only a call's env is above). */
static bool
proxy_var(const char *kv)
{
        size_t klen = strcspn(kv, "=");
        for (size_t i = 0; i < ARRAY_SIZE(proxy_names); i++)
                if (strlen(proxy_names[i]) == klen && strncmp(proxy_names[i], kv, klen) == 0)
                        return true;
        return false;
}

/* The process env of the sandbox, in order: base_env < the proxy's variables < the
 * image's Env < the request's env. Each entry a malloc'd copy. */
static int
env_list(const mcp_bundle_spec *s, char ***ret, size_t *ret_n)
{
        size_t n_image = 0;
        while (s->image_env && s->image_env[n_image])
                n_image++;
        size_t cap = ARRAY_SIZE(base_env) + ARRAY_SIZE(proxy_names) + n_image + s->n_env + 1, n = 0;
        char **v = calloc(cap, sizeof *v);
        if (!v)
                return -ENOMEM;
        char kv[96];
        for (size_t i = 0; i < ARRAY_SIZE(base_env); i++)
                if (!env_overridden(s, base_env[i]))
                        v[n++] = strdup(base_env[i]);
        for (size_t i = 0; s->proxy_port && i < ARRAY_SIZE(proxy_names); i++) {
                if (strcasecmp(proxy_names[i], "no_proxy") == 0)
                        snprintf(kv, sizeof kv, "%s=localhost,127.0.0.1,::1", proxy_names[i]);
                else
                        snprintf(kv, sizeof kv, "%s=http://127.0.0.1:%u", proxy_names[i],
                                 s->proxy_port);
                if (!env_in(s->env, s->n_env, kv))
                        v[n++] = strdup(kv);
        }
        for (size_t i = 0; i < n_image; i++)
                if (!env_in(s->env, s->n_env, s->image_env[i]) &&
                    !(s->proxy_port && proxy_var(s->image_env[i])))
                        v[n++] = strdup(s->image_env[i]);
        for (size_t i = 0; i < s->n_env; i++)
                v[n++] = strdup(s->env[i]);
        for (size_t i = 0; i < n; i++)
                if (!v[i]) {
                        mcp_strv_free(v);
                        return -ENOMEM;
                }
        *ret = v;
        *ret_n = n;
        return 0;
}

int
mcp_bundle_env(const mcp_bundle_spec *spec, char ***ret, msp_err *err)
{
        size_t n;
        if (env_list(spec, ret, &n) < 0)
                return msp_err_set(err, ENOMEM, "out of memory");
        return 0;
}

void
mcp_strv_free(char **v)
{
        for (size_t i = 0; v && v[i]; i++)
                free(v[i]);
        free(v);
}

static void
write_rlimit(oci_jw *w, const char *type, uint64_t v)
{
        oci_jw_begin_object(w);
        oci_jw_kv_string(w, "type", type);
        oci_jw_kv_uint64(w, "hard", v);
        oci_jw_kv_uint64(w, "soft", v);
        oci_jw_end_object(w);
}

static void
write_process(oci_jw *w, const mcp_bundle_spec *s, char *const *env)
{
        static const char *const no_caps[] = { NULL };

        oci_jw_key(w, "process");
        oci_jw_begin_object(w);
        oci_jw_kv_bool(w, "terminal", false);
        oci_jw_key(w, "user");
        oci_jw_begin_object(w);
        oci_jw_kv_uint64(w, "uid", s->ids.uid);
        oci_jw_kv_uint64(w, "gid", s->ids.gid);
        oci_jw_end_object(w);
        oci_jw_key(w, "args");
        oci_jw_begin_array(w);
        if (s->init_path) {
                oci_jw_string(w, MCP_INIT_PATH);
                if (s->proxy_port) {
                        char port[16];
                        snprintf(port, sizeof port, "%u", s->proxy_port);
                        oci_jw_string(w, "--proxy");
                        oci_jw_string(w, port);
                        oci_jw_string(w, MCP_PROXY_SOCKET);
                }
                if (s->serve_fd > 0) {
                        char fd[16];
                        snprintf(fd, sizeof fd, "%d", s->serve_fd);
                        oci_jw_string(w, "--serve");
                        oci_jw_string(w, fd);
                } else {
                        oci_jw_string(w, "--");
                }
        }
        for (size_t i = 0; s->serve_fd <= 0 && s->argv[i]; i++)
                oci_jw_string(w, s->argv[i]);
        oci_jw_end_array(w);
        oci_jw_key(w, "env");
        oci_jw_begin_array(w);
        for (size_t i = 0; env && env[i]; i++)
                oci_jw_string(w, env[i]);
        oci_jw_end_array(w);
        oci_jw_kv_string(w, "cwd", s->cwd ? s->cwd : "/workspace");
        oci_jw_key(w, "capabilities");
        oci_jw_begin_object(w);
        oci_jw_kv_strlist(w, "bounding", no_caps);
        oci_jw_kv_strlist(w, "effective", no_caps);
        oci_jw_kv_strlist(w, "permitted", no_caps);
        oci_jw_kv_strlist(w, "inheritable", no_caps);
        oci_jw_kv_strlist(w, "ambient", no_caps);
        oci_jw_end_object(w);
        oci_jw_key(w, "rlimits");
        oci_jw_begin_array(w);
        write_rlimit(w, "RLIMIT_NOFILE", 1024);
        write_rlimit(w, "RLIMIT_NPROC", s->nproc);
        write_rlimit(w, "RLIMIT_CORE", 0);
        uint64_t fsize = s->limits.tmp_bytes > s->limits.workspace_bytes ? s->limits.tmp_bytes
                                                                         : s->limits.workspace_bytes;
        write_rlimit(w, "RLIMIT_FSIZE", fsize);
        /* CPU seconds a process can use within the timeout at the quota, plus one: a CPU
         * burner dies even if msp-mcp is gone and nobody enforces the timeout. */
        uint64_t cpu_ms = s->limits.timeout_ms * s->limits.cpu_millis / 1000;
        write_rlimit(w, "RLIMIT_CPU", (cpu_ms + 999) / 1000 + 1);
        /* Without a cgroup, memory is each process's writable private mappings. Not
         * RLIMIT_AS: it counts reservations too, and V8 alone reserves more than a run's
         * memory (node would not start). */
        if (!s->cgroups_path)
                write_rlimit(w, "RLIMIT_DATA", s->limits.memory_bytes);
        /* Counted per uid up to the host: the sandbox's share (budget-share.h). */
        const struct { const char *type; uint64_t v; } shared[] = {
                { "RLIMIT_SIGPENDING", s->share.sigpending },
                { "RLIMIT_MSGQUEUE", s->share.msgqueue },
                { "RLIMIT_MEMLOCK", s->share.memlock },
        };
        for (size_t i = 0; i < ARRAY_SIZE(shared); i++)
                if (shared[i].v)        /* 0: unknown, the runtime's own stays */
                        write_rlimit(w, shared[i].type, shared[i].v);
        oci_jw_end_array(w);
        oci_jw_kv_bool(w, "noNewPrivileges", true);
        /* The sandbox is the first victim of a host-wide OOM. */
        oci_jw_kv_int64(w, "oomScoreAdj", 1000);
        if (s->landlock)
                write_landlock(w, s);
        oci_jw_end_object(w);
}

static void
write_mount(oci_jw *w, const char *dest, const char *type, const char *src,
            const char *const *opts)
{
        oci_jw_begin_object(w);
        oci_jw_kv_string(w, "destination", dest);
        oci_jw_kv_string(w, "type", type);
        oci_jw_kv_string(w, "source", src);
        oci_jw_kv_strlist(w, "options", opts);
        oci_jw_end_object(w);
}

static void
write_mounts(oci_jw *w, const mcp_bundle_spec *s)
{
        static const char *const ro_bind_noexec[] = { "bind", "ro", "nosuid", "nodev", "noexec",
                                                      NULL };
        char tmp_size[64];
        snprintf(tmp_size, sizeof tmp_size, "size=%" PRIu64, s->limits.tmp_bytes);

        oci_jw_key(w, "mounts");
        oci_jw_begin_array(w);
        write_mount(w, "/proc", "proc", "proc",
                    (const char *const[]){ "nosuid", "noexec", "nodev", NULL });
        write_mount(w, "/dev", "tmpfs", "tmpfs",
                    (const char *const[]){ "nosuid", "strictatime", "mode=755", "size=65536k",
                                           NULL });
        write_mount(w, "/dev/pts", "devpts", "devpts",
                    (const char *const[]){ "nosuid", "noexec", "newinstance", "ptmxmode=0666",
                                           "mode=0620", NULL });
        write_mount(w, "/dev/shm", "tmpfs", "shm",
                    (const char *const[]){ "nosuid", "noexec", "nodev", "mode=1777",
                                           "size=65536k", NULL });
        write_mount(w, "/tmp", "tmpfs", "tmpfs",
                    (const char *const[]){ "nosuid", "nodev", "mode=1777", "nr_inodes=65536",
                                           tmp_size, NULL });
        /* The system view is the skeleton's own (sysbinds.h); with network, the host's
         * resolver configuration over the skeleton's empty file. */
        if (s->host_view && s->network)
                write_mount(w, "/etc/resolv.conf", "bind", "/etc/resolv.conf", ro_bind_noexec);
        write_mount(w, "/workspace", "bind", s->workspace_path,
                    (const char *const[]){ "rbind", "rw", "nosuid", "nodev", NULL });
        write_mount(w, MCP_CODE_DIR, "bind", s->code_path, ro_bind_noexec);
        /* Over the code dir's placeholder: the only executable file under /.msp. */
        if (s->init_path)
                write_mount(w, MCP_INIT_PATH, "bind", s->init_path,
                            (const char *const[]){ "bind", "ro", "nosuid", "nodev", NULL });
        if (s->kernel_dir)
                write_mount(w, MCP_KERNEL_DIR, "bind", s->kernel_dir,
                            (const char *const[]){ "bind", "rw", "nosuid", "nodev", "noexec", NULL });
        /* connect() to a socket needs no write access to its mount. */
        if (s->proxy_port)
                write_mount(w, MCP_PROXY_SOCKET, "bind", s->proxy_socket, ro_bind_noexec);
        oci_jw_end_array(w);
}

static void
write_id_map(oci_jw *w, const char *key, const mcp_bundle_spec *s)
{
        oci_jw_key(w, key);
        oci_jw_begin_array(w);
        oci_jw_begin_object(w);
        oci_jw_kv_uint64(w, "containerID", 0);
        oci_jw_kv_uint64(w, "hostID", s->ids.base);
        oci_jw_kv_uint64(w, "size", s->ids.count);
        oci_jw_end_object(w);
        oci_jw_end_array(w);
}

/* The cgroup limits (without a cgroup: bundle.h's other means). */
static void
write_resources(oci_jw *w, const mcp_bundle_spec *s)
{
        oci_jw_key(w, "resources");
        oci_jw_begin_object(w);
        oci_jw_key(w, "memory");
        oci_jw_begin_object(w);
        oci_jw_kv_int64(w, "limit", (int64_t) s->limits.memory_bytes);
        oci_jw_kv_int64(w, "swap", (int64_t) s->limits.memory_bytes);   /* == limit: no swap */
        oci_jw_end_object(w);
        oci_jw_key(w, "pids");
        oci_jw_begin_object(w);
        oci_jw_kv_int64(w, "limit", (int64_t) s->limits.pids);
        oci_jw_end_object(w);
        oci_jw_key(w, "cpu");
        oci_jw_begin_object(w);
        oci_jw_kv_int64(w, "quota", (int64_t) (s->limits.cpu_millis * 100));
        oci_jw_kv_uint64(w, "period", 100000);
        oci_jw_end_object(w);
        oci_jw_end_object(w);

        oci_jw_kv_string(w, "cgroupsPath", s->cgroups_path);
}

static void
write_linux(oci_jw *w, const mcp_bundle_spec *s)
{
        /* runc's and podman's list, plus what tells a sandbox about the host's kernel and
         * hardware and nothing it needs: the build config, physical and I/O address maps,
         * kernel symbols, loaded modules. */
        static const char *const masked[] = {
                "/proc/acpi",        "/proc/asound",     "/proc/kcore",      "/proc/keys",
                "/proc/latency_stats", "/proc/timer_list", "/proc/timer_stats",
                "/proc/sched_debug", "/proc/scsi",       "/proc/config.gz",  "/proc/iomem",
                "/proc/ioports",     "/proc/kallsyms",   "/proc/modules",    "/sys/firmware",
                "/sys/devices/virtual/powercap",         "/sys/dev/block",   NULL
        };
        static const char *const readonly[] = { "/proc/bus",   "/proc/fs",           "/proc/irq",
                                                "/proc/sys",   "/proc/sysrq-trigger", NULL };
        static const char *const ns_all[] = { "user", "pid", "mount", "ipc", "uts", "cgroup",
                                              "network" };

        oci_jw_key(w, "linux");
        oci_jw_begin_object(w);
        write_id_map(w, "uidMappings", s);
        write_id_map(w, "gidMappings", s);
        oci_jw_key(w, "namespaces");
        oci_jw_begin_array(w);
        for (size_t i = 0; i < ARRAY_SIZE(ns_all); i++) {
                oci_jw_begin_object(w);
                oci_jw_kv_string(w, "type", ns_all[i]);
                /* The mappings stay: they are the namespace's (runc 1.1 needs them). */
                if (strcmp(ns_all[i], "user") == 0 && s->userns_path)
                        oci_jw_kv_string(w, "path", s->userns_path);
                oci_jw_end_object(w);
        }
        oci_jw_end_array(w);

        if (s->cgroups_path)
                write_resources(w, s);
        if (s->seccomp) {
                oci_jw_key(w, "seccomp");
                jw_copy(w, s->seccomp);
        }
        oci_jw_kv_strlist(w, "maskedPaths", masked);
        oci_jw_kv_strlist(w, "readonlyPaths", readonly);
        oci_jw_end_object(w);
}

/* The user namespace's own budgets (userns-limits.h), and with network the user-mode
 * networking helper attached to the sandbox's network namespace (usernet.h), both before
 * the process starts. */
static void
write_hooks(oci_jw *w, const mcp_bundle_spec *s)
{
        oci_jw_key(w, "hooks");
        oci_jw_begin_object(w);
        oci_jw_key(w, "createRuntime");
        oci_jw_begin_array(w);
        oci_jw_begin_object(w);
        oci_jw_kv_string(w, "path", s->userns_hook);
        char inst[16], watches[16];
        snprintf(inst, sizeof inst, "%u", s->share.inotify_instances);
        snprintf(watches, sizeof watches, "%u", s->share.inotify_watches);
        oci_jw_kv_strlist(w, "args", (const char *const[]){ "msp-sandbox-hook", MCP_USERNS_HOOK_ARG,
                                                           inst, watches, NULL });
        oci_jw_kv_int64(w, "timeout", 10);
        oci_jw_end_object(w);
        if (s->network) {
                oci_jw_begin_object(w);
                oci_jw_kv_string(w, "path", s->userns_hook);
                oci_jw_kv_strlist(w, "args", (const char *const[]){ "msp-sandbox-hook", MCP_USERNET_HOOK_ARG,
                                                                   s->usernet_helper, NULL });
                oci_jw_kv_int64(w, "timeout", 10);
                oci_jw_end_object(w);
        }
        oci_jw_end_array(w);
        oci_jw_end_object(w);
}

int
mcp_bundle_config(const mcp_bundle_spec *s, char **ret, size_t *ret_len, msp_err *err)
{
        if (s->proxy_port && (!s->init_path || !s->proxy_socket || s->network))
                return msp_err_set(err, ENOTSUP, "network: an allowlist needs the sandbox init "
                                                 "(msp-sandbox-init) to hand its listener to the egress proxy");
        if (s->network && (!s->userns_hook || !s->usernet_helper))
                return msp_err_set(err, ENOTSUP, "network: no user-mode networking helper "
                                                 "(slirp4netns) to attach");
        if (s->serve_fd > 0 && !s->init_path)
                return msp_err_set(err, ENOTSUP, "a session's sandbox needs the sandbox init "
                                                 "(msp-sandbox-init) to start its programs");
        char **env = NULL;
        size_t n_env;
        if (env_list(s, &env, &n_env) < 0)
                return msp_err_set(err, ENOMEM, "config.json: out of memory");
        _cleanup_jw_ oci_jw *w = oci_jw_new(false);
        if (!w) {
                mcp_strv_free(env);
                return msp_err_set(err, ENOMEM, "config.json: out of memory");
        }

        oci_jw_begin_object(w);
        oci_jw_kv_string(w, "ociVersion", "1.0.2");
        write_process(w, s, env);
        mcp_strv_free(env);
        oci_jw_key(w, "root");
        oci_jw_begin_object(w);
        oci_jw_kv_string(w, "path", s->root_path);
        oci_jw_kv_bool(w, "readonly", true);
        oci_jw_end_object(w);
        oci_jw_kv_string(w, "hostname", s->hostname ? s->hostname : "sandbox");
        write_mounts(w, s);
        if (s->userns_hook)
                write_hooks(w, s);
        write_linux(w, s);
        oci_jw_end_object(w);
        return oci_jw_finish(w, ret, ret_len, err);
}
