/* One run's setup (run-setup.h): limits, workspace, bundle, egress proxy, runner arguments. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "engine/engine-int.h"
#include "session/session.h"
#include "base/base.h"
#include "engine/run-setup.h"
#include "sandbox/sandbox.h"

static uint64_t
pick(uint64_t req, uint64_t dflt)
{
        return req ? req : dflt;
}

static mcp_limits
effective_limits(const mcp_limits *req, const mcp_limits *base)
{
        return (mcp_limits){
                .memory_bytes = pick(req->memory_bytes, base->memory_bytes),
                .pids = pick(req->pids, base->pids),
                .cpu_millis = pick(req->cpu_millis, base->cpu_millis),
                .timeout_ms = pick(req->timeout_ms, base->timeout_ms),
                .output_bytes = pick(req->output_bytes, base->output_bytes),
                .tmp_bytes = pick(req->tmp_bytes, base->tmp_bytes),
                .workspace_bytes = pick(req->workspace_bytes, base->workspace_bytes),
        };
}

/* A fresh workspace: ws/<id> with a tmpfs of workspace_bytes owned by the sandbox user. */
static int
fresh_workspace(mcp_run *run, uint64_t bytes, msp_err *err)
{
        mcp_engine *e = run->engine;
        char name[64], opts[128];
        snprintf(name, sizeof name, "ws/%s", run->id);
        snprintf(run->ws_path, sizeof run->ws_path, "%s/%s", e->inst_path, name);
        if (mkdirat(e->inst_fd, name, 0700) < 0)
                return msp_err_sys(err, errno, "workspace '%s'", run->ws_path);
        /* 0700: the sandbox's files are the sandbox's and the server's only (the state dir
         * must be traversable by the sandbox's ids, so by everyone). */
        mcp_run_ids ids = mcp_rootfs_ids(NULL, run->id_base, run->id_count);
        snprintf(opts, sizeof opts, "size=%" PRIu64 ",nr_inodes=65536,mode=0700,uid=%u,gid=%u", bytes,
                 MCP_HOST_UID_OF(ids), MCP_HOST_GID_OF(ids));
        if (mount("tmpfs", run->ws_path, "tmpfs", MS_NOSUID | MS_NODEV, opts) < 0)
                return msp_err_sys(err, errno, "workspace '%s': mount tmpfs", run->ws_path);
        run->ws_mounted = true;
        run->ws_fd = openat(e->inst_fd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (run->ws_fd < 0)
                return msp_err_sys(err, errno, "workspace '%s'", run->ws_path);
        return 0;
}

static void
net_event(mcp_proxy_event ev, const char *host, uint16_t port, const char *reason,
          uint64_t up, uint64_t down, void *data)
{
        mcp_run *run = data;
        /* A session's proxy: the decision is the call's that runs in the sandbox now. */
        if (run->serve)
                run = run->live && run->live->call ? run->live->call : NULL;
        if (run && run->on_network && !run->cancelled)
                run->on_network(ev, host, port, reason, up, down, run->data);
}

/* An allowlist run: the proxy's handover socket in the bundle (b/<id>/proxy.sock,
 * connectable by the sandbox's group only), the empty file in the code dir it is bound
 * over, and the proxy in the loop, waiting for the init's listener on it. Bound through /proc/self/fd: the bundle's path may be longer than
 * a socket address holds. */
static int
make_proxy(mcp_run *run, int bfd, int cfd, unsigned host_gid, char *sock_path, size_t size,
           msp_err *err)
{
        mcp_engine *e = run->engine;
        int r = mcp_write_new_at(cfd, "proxy.sock", "", 0, 0600, err);
        if (r < 0)
                return r;
        _cleanup_close_ int lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        snprintf(sa.sun_path, sizeof sa.sun_path, "/proc/self/fd/%d/proxy.sock", bfd);
        if (lfd < 0 || bind(lfd, (struct sockaddr *) &sa, sizeof sa) < 0 || listen(lfd, 1) < 0)
                return msp_err_sys(err, errno, "egress proxy: socket in '%s'", run->bundle);
        if (fchownat(bfd, "proxy.sock", 0, host_gid, AT_SYMLINK_NOFOLLOW) < 0 ||
            fchmodat(bfd, "proxy.sock", 0660, 0) < 0)
                return msp_err_sys(err, errno, "egress proxy: chown 'proxy.sock'");
        snprintf(sock_path, size, "%s/proxy.sock", run->bundle);
        if (!e->resolver && (r = mcp_resolver_new(e->loop, &e->resolver, err)) < 0)
                return r;
        mcp_proxy_conf conf = { .policy = &run->allow, .pins = e->cfg->resolve,
                                .n_pins = e->cfg->n_resolve, .resolver = e->resolver,
                                .max_conns = e->cfg->network_max_conns,
                                .max_bytes = e->cfg->network_max_bytes,
                                .idle_ms = e->cfg->network_idle_ms, .fds = e->cfg->fds,
                                .tenant = run->tenant };
        return mcp_proxy_new(e->loop, TAKE_FD(lfd), &conf, net_event, run, &run->proxy, err);
}

/* A session's sandbox: the spawn service's listener at b/<id>/spawn.sock (only msp-mcp
 * can reach it: the bundle is never inside a sandbox), bound through /proc/self/fd since
 * the bundle's path may be longer than a socket address holds. */
static int
make_listener(mcp_run *run, int bfd, msp_err *err)
{
        _cleanup_close_ int lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        snprintf(sa.sun_path, sizeof sa.sun_path, "/proc/self/fd/%d/spawn.sock", bfd);
        if (lfd < 0 || bind(lfd, (struct sockaddr *) &sa, sizeof sa) < 0 || listen(lfd, 64) < 0)
                return msp_err_sys(err, errno, "session sandbox: the spawn socket in '%s'",
                                   run->bundle);
        if (fchmodat(bfd, "spawn.sock", 0600, 0) < 0)
                return msp_err_sys(err, errno, "session sandbox: chmod 'spawn.sock'");
        run->serve_fd = TAKE_FD(lfd);
        return 0;
}

/* A session's sandbox: b/<id>/kernel, the sandbox user's (its kernels bind their sockets
 * there), bound over the code dir's k/. */
static int
make_kernel_dir(mcp_run *run, int bfd, int cfd, mcp_run_ids ids, char *path, size_t size,
                msp_err *err)
{
        char opts[128];
        if (mkdirat(bfd, "kernel", 0700) < 0 || mkdirat(cfd, "k", 0755) < 0)
                return msp_err_sys(err, errno, "session sandbox: the kernel dir in '%s'", run->bundle);
        snprintf(path, size, "%s/kernel", run->bundle);
        /* A tmpfs of its own: what the sandbox writes there cannot use up the inodes of
         * the bundles' tmpfs, which every run shares. */
        snprintf(opts, sizeof opts, "size=1m,nr_inodes=256,mode=0700,uid=%u,gid=%u",
                 MCP_HOST_UID_OF(ids), MCP_HOST_GID_OF(ids));
        if (mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, opts) < 0)
                return msp_err_sys(err, errno, "session sandbox: mount tmpfs on '%s'", path);
        snprintf(run->live->kernel_dir, sizeof run->live->kernel_dir, "%s", path);
        return 0;
}

/* What the live session needs to start programs in its sandbox: the service's socket,
 * the code dir, the programs' env and cwd, the group of their code files, its cgroup. */
static int
live_describe(mcp_run *run, const mcp_bundle_spec *spec, int cfd, msp_err *err)
{
        mcp_live *l = run->live;
        (void) cfd;
        snprintf(l->sock_path, sizeof l->sock_path, "%s/spawn.sock", run->bundle);
        snprintf(l->code_dir, sizeof l->code_dir, "%s/code", run->bundle);
        snprintf(l->cwd, sizeof l->cwd, "%s", spec->cwd ? spec->cwd : "/workspace");
        l->host_uid = MCP_HOST_UID_OF(spec->ids);
        l->host_gid = MCP_HOST_GID_OF(spec->ids);
        /* The host view's files are the host's own (the skeleton only holds mount points). */
        snprintf(l->root_path, sizeof l->root_path, "%s", spec->host_view ? "/" : spec->root_path);
        mcp_strv_free(l->env);
        l->env = NULL;
        return mcp_bundle_env(spec, &l->env, err);
}

/* The bundle: b/<id>/{code/main.<ext>, config.json}. */
static int
make_bundle(mcp_run *run, msp_err *err)
{
        mcp_engine *e = run->engine;
        const mcp_run_plan *p = &run->plan;
        const mcp_language *lang = p->lang;
        const mcp_limits *lim = &p->lim;
        const mcp_rootfs *rootfs = p->rootfs;
        bool network = p->network, proxy = run->allow.n > 0;
        char name[64];
        snprintf(name, sizeof name, "b/%s", run->id);
        snprintf(run->bundle, sizeof run->bundle, "%s/%s", e->inst_path, name);
        if (mkdirat(e->inst_fd, name, 0711) < 0)
                return msp_err_sys(err, errno, "bundle '%s'", run->bundle);
        _cleanup_close_ int bfd = openat(e->inst_fd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        /* The agent's code is readable by the sandbox's group and root only: the state dir
         * is traversable by everyone (the runtime's remapped root must get through), the
         * bundle path shows in ps, and the program's name is predictable. */
        if (bfd < 0 || mkdirat(bfd, "code", 0711) < 0)
                return msp_err_sys(err, errno, "bundle '%s'", run->bundle);
        _cleanup_close_ int cfd = openat(bfd, "code", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        char prog[64], code_path[4200], cg[600];
        int r;
        mcp_run_ids ids = mcp_rootfs_ids(rootfs, run->id_base, run->id_count);
        char kernel_dir[4200] = "";
        if (run->serve) {
                if ((r = make_listener(run, bfd, err)) < 0 ||
                    (r = make_kernel_dir(run, bfd, cfd, ids, kernel_dir, sizeof kernel_dir, err)) < 0)
                        return r;
        } else {
                snprintf(prog, sizeof prog, "main.%s", lang->ext);
                if ((r = mcp_write_new_at(cfd, prog, p->code, p->code_len, 0640, err)) < 0)
                        return r;
                if (fchownat(cfd, prog, 0, MCP_HOST_GID_OF(ids), AT_SYMLINK_NOFOLLOW) < 0)
                        return msp_err_sys(err, errno, "chown '%s'", prog);
        }
        /* The mount point of the init's bind (the code dir is mounted read-only first). */
        if ((r = mcp_write_new_at(cfd, "init", "", 0, 0600, err)) < 0)
                return r;

        /* argv: the language's template, then the request's args. */
        char prog_path[96];
        _cleanup_free_ const char **argv = NULL;
        if (!run->serve) {
                snprintf(prog_path, sizeof prog_path, MCP_CODE_DIR "/%s", prog);
                if ((r = mcp_language_argv(lang, p->interp, prog_path,
                                           (const char *const *) p->args, p->n_args, &argv,
                                           err)) < 0)
                        return r;
        }

        char sock_path[4200];
        if (proxy && (r = make_proxy(run, bfd, cfd, MCP_HOST_GID_OF(ids), sock_path,
                                     sizeof sock_path, err)) < 0)
                return r;
        snprintf(code_path, sizeof code_path, "%s/code", run->bundle);
        snprintf(cg, sizeof cg, "%s/%s", e->cg_parent, run->id);
        /* Counted per user id; without a cgroup it is the processes limit itself, and each
         * sandbox's own user namespace keeps the count to that sandbox (the kernel counts
         * per namespace since Linux 5.14). */
        uint64_t nproc = e->no_cgroup ? lim->pids : lim->pids * (e->cfg->max_concurrent + 1);
        if (mcp_sandbox_userns_wanted(e->cfg->runtime_path) &&
            (r = mcp_sandbox_userns_make(run->id_base, &run->userns, err)) < 0)
                return r;
        mcp_bundle_spec spec = {
                .root_path = p->root_path,
                .host_view = p->host_view,
                .argv = argv,
                .env = (const char *const *) p->env,
                .n_env = p->n_env,
                .image_env = rootfs ? rootfs->env : NULL,
                .cwd = rootfs ? rootfs->workdir : NULL,
                .ids = ids,
                .read_dirs = rootfs ? rootfs->read_dirs : NULL,
                .read_files = rootfs ? rootfs->read_files : NULL,
                .workspace_path = run->ws_path,
                .code_path = code_path,
                .init_path = e->init_path[0] ? e->init_path : NULL,
                .cgroups_path = e->no_cgroup ? NULL : cg,
                .network = network,
                .usernet_helper = e->cfg->usernet_path,
                .proxy_port = proxy ? MCP_PROXY_PORT : 0,
                .proxy_socket = proxy ? sock_path : NULL,
                .limits = *lim,
                .nproc = nproc < 1024 && !e->no_cgroup ? 1024 : nproc,
                .share = e->share,
                .seccomp = oci_json_doc_root(e->seccomp),
                .landlock = oci_json_doc_root(e->landlock),
                .userns_hook = e->cfg->userns_hook,
                .userns_path = run->userns.fd >= 0 ? run->userns.path : NULL,
                .serve_fd = run->serve ? 3 : 0,
                .kernel_dir = kernel_dir[0] ? kernel_dir : NULL,
        };
        if (run->serve && (r = live_describe(run, &spec, cfd, err)) < 0)
                return r;
        _cleanup_free_ char *json = NULL;
        size_t json_len;
        if ((r = mcp_bundle_config(&spec, &json, &json_len, err)) < 0)
                return r;
        if ((r = mcp_write_new_at(bfd, "config.json", json, json_len, 0600, err)) < 0)
                return r;
        if (network && (r = mcp_usernet_prepare(bfd, &run->usernet_fd, err)) < 0)
                return r;

        mcp_runner *rn = &run->runner;
        if (e->no_cgroup) {
                /* The timeout kills pid 1 through the runtime: the pid namespace goes with it. */
        } else if (e->v2) {
                snprintf(rn->oom_file, sizeof rn->oom_file, "/sys/fs/cgroup%s/memory.events", cg);
                snprintf(rn->kill_file, sizeof rn->kill_file, "/sys/fs/cgroup%s/cgroup.kill", cg);
        } else {
                snprintf(rn->oom_file, sizeof rn->oom_file,
                         "/sys/fs/cgroup/memory%s/memory.oom_control", cg);
                if (e->unified)
                        snprintf(rn->kill_file, sizeof rn->kill_file,
                                 "/sys/fs/cgroup/unified%s/cgroup.kill", cg);
        }
        return 0;
}

/* The view of rootfs i that the run's slice sees: run by a user, the instance's one (every
 * sandbox has the storage range's ids); as root, the slice's own, its tree idmapped onto
 * the slice's ids, mounted at the slice's first use of it. */
static int
slice_view(mcp_run *run, int i, msp_err *err)
{
        mcp_engine *e = run->engine;
        char name[64];
        if (run->id_base == MCP_SANDBOX_HOST_BASE) {
                snprintf(run->root_path, sizeof run->root_path, "%s/rootfs-%d", e->inst_path, i);
                return 0;
        }
        snprintf(name, sizeof name, "rootfs-%d-s%d", i, run->slice);
        snprintf(run->root_path, sizeof run->root_path, "%s/%s", e->inst_path, name);
        bool *made = &e->slice_views[(size_t) i * e->n_slices + (unsigned) run->slice];
        if (*made)
                return 0;
        _cleanup_close_ int idmap = mcp_idmap_userns_make(run->id_base, err);
        if (idmap < 0)
                return idmap;
        int r = mcp_rootfs_view(e->inst_fd, e->inst_path, name, e->cfg->rootfs[i].path, idmap,
                                err);
        if (r < 0) {
                mcp_rootfs_view_release(e->inst_path, name);
                return r;
        }
        *made = true;
        return 0;
}

/* The fresh run's own slice, held until it is gone. */
static int
take_slice(mcp_run *run, msp_err *err)
{
        mcp_engine *e = run->engine;
        unsigned slice;
        int r = mcp_slice_take(e->slices, &slice, err);
        if (r < 0)
                return r;
        run->slice = (int) slice;
        run->id_base = mcp_slice_base(e->slices, slice);
        run->id_count = mcp_slice_size(e->slices);
        return 0;
}

/* The index of a configured rootfs with a view mounted, or -1. */
static int
find_rootfs(const mcp_engine *e, const char *name)
{
        for (size_t i = 0; i < e->cfg->n_rootfs && i < MCP_ROOTFS_MAX; i++)
                if (strcmp(e->cfg->rootfs[i].name, name) == 0 && e->rootfs_mounted[i])
                        return (int) i;
        return -1;
}

static int
copy_policy(mcp_run *run, const mcp_egress_policy *allow, msp_err *err)
{
        for (size_t i = 0; allow && i < allow->n; i++) {
                int r = mcp_egress_policy_add(&run->allow, allow->rules[i].text, err);
                if (r < 0)
                        return r;
        }
        return 0;
}

static char *
memdup0(const char *data, size_t len)
{
        char *c = malloc(len + 1);
        if (c) {
                if (len)
                        memcpy(c, data, len);
                c[len] = '\0';
        }
        return c;
}

/* n strings copied into a NULL-terminated array. */
static int
copy_strv(const char *const *v, size_t n, char ***ret)
{
        char **c = calloc(n + 1, sizeof *c);
        if (!c)
                return -ENOMEM;
        *ret = c;
        for (size_t i = 0; i < n; i++)
                if (!(c[i] = strdup(v[i])))
                        return -ENOMEM;
        return 0;
}

static void
free_strv(char **v, size_t n)
{
        for (size_t i = 0; v && i < n; i++)
                free(v[i]);
        free(v);
}

void
mcp_run_plan_done(mcp_run_plan *p)
{
        free(p->code);
        p->code = NULL;
        for (size_t i = 0; p->files && i < p->n_files; i++) {
                free(p->files[i].path);
                free(p->files[i].data);
        }
        free(p->files);
        p->files = NULL;
        free_strv(p->args, p->n_args);
        p->args = NULL;
        free_strv(p->env, p->n_env);
        p->env = NULL;
        p->n_files = p->n_args = p->n_env = 0;
}

/* The request's code, files, args, env and stdin, kept until the run starts. */
static int
copy_request(mcp_run *run, const mcp_run_request *req, msp_err *err)
{
        mcp_run_plan *p = &run->plan;
        if (!(p->code = memdup0(req->code, req->code_len)))
                return msp_err_set(err, ENOMEM, "out of memory");
        p->code_len = req->code_len;
        if (req->n_files && !(p->files = calloc(req->n_files, sizeof *p->files)))
                return msp_err_set(err, ENOMEM, "out of memory");
        for (size_t i = 0; i < req->n_files; i++) {
                const mcp_file_in *f = &req->files[i];
                p->n_files = i + 1;
                p->files[i] = (mcp_plan_file){ .path = strdup(f->path),
                                               .data = memdup0(f->data, f->len),
                                               .len = f->len, .executable = f->executable };
                if (!p->files[i].path || !p->files[i].data)
                        return msp_err_set(err, ENOMEM, "out of memory");
        }
        p->n_args = req->n_args;
        p->n_env = req->n_env;
        if (copy_strv(req->args, req->n_args, &p->args) < 0 ||
            copy_strv(req->env, req->n_env, &p->env) < 0)
                return msp_err_set(err, ENOMEM, "out of memory");
        if (req->stdin_data && !(run->stdin_copy = memdup0(req->stdin_data, req->stdin_len)))
                return msp_err_set(err, ENOMEM, "out of memory");
        p->stdin_len = req->stdin_len;
        return 0;
}

/* What a session's run takes of the session (acquired or held): its ids, limits, network,
 * egress policy and rootfs view. */
static int
claim_session(mcp_run *run, const mcp_session_info *info, const char *ws_path,
              const mcp_limits *req_limits, msp_err *err)
{
        mcp_engine *e = run->engine;
        mcp_run_plan *p = &run->plan;
        int r;
        run->was_session = true;
        if (info->slice >= 0)
                mcp_slice_ref(e->slices, (unsigned) info->slice);
        run->slice = info->slice;
        run->id_base = info->id_base;
        run->id_count = info->id_count;
        snprintf(run->ws_path, sizeof run->ws_path, "%s", ws_path);
        p->lim = effective_limits(req_limits, &info->limits);
        p->lim = effective_limits(&p->lim, &e->cfg->defaults);
        p->network = info->network && e->cfg->allow_network;
        if (p->network && (r = mcp_usernet_check(e->cfg->usernet_path, err)) < 0)
                return r;
        if ((r = copy_policy(run, info->allow, err)) < 0)
                return r;
        if (info->rootfs && strcmp(info->rootfs, "host") != 0) {
                int i = find_rootfs(e, info->rootfs);
                if (i < 0)
                        return msp_err_set(err, ENOENT, "session rootfs '%s' is not configured",
                                           info->rootfs);
                if ((r = slice_view(run, i, err)) < 0)
                        return r;
                p->root_path = run->root_path;
                p->host_view = false;
                p->rootfs = &e->cfg->rootfs[i];
        }
        return 0;
}

int
mcp_run_claim_sandbox(mcp_run *run, const char *session_id, msp_err *err)
{
        mcp_engine *e = run->engine;
        mcp_run_plan *p = &run->plan;
        const char *path;
        mcp_session_info info;
        p->root_path = e->skeleton;
        p->host_view = true;
        int r = mcp_session_hold(e->sessions, session_id, &run->ws_fd, &path, &info, err);
        if (r < 0)
                return r;
        run->serve = true;
        static const mcp_limits none;
        return claim_session(run, &info, path, &none, err);
}

int
mcp_run_claim(mcp_run *run, const mcp_run_request *req, int lang_index, msp_err *err)
{
        mcp_engine *e = run->engine;
        mcp_run_plan *p = &run->plan;
        const mcp_language *lang = e->langs.langs[lang_index];
        p->lang = lang;
        snprintf(p->interp, sizeof p->interp, "%s", e->langs.interp[lang_index]);
        p->root_path = e->skeleton;
        p->host_view = true;
        snprintf(run->tenant, sizeof run->tenant, "%s", req->tenant ? req->tenant : "");
        int r;

        if (req->session_id) {
                const char *path;
                mcp_session_info info;
                r = mcp_session_acquire(e->sessions, req->session_id, &run->ws_fd, &path, &info,
                                        err);
                if (r == -EBUSY)
                        return -EAGAIN;         /* not the server's queue: err says why */
                if (r < 0)
                        return r;
                run->session_id = strdup(req->session_id);
                if (!run->session_id) {
                        mcp_session_release(e->sessions, req->session_id);
                        return msp_err_set(err, ENOMEM, "out of memory");
                }
                if ((r = claim_session(run, &info, path, &req->limits, err)) < 0)
                        return r;
                if (p->rootfs) {
                        _cleanup_close_ int rfd = open(p->root_path, O_PATH | O_DIRECTORY | O_CLOEXEC);
                        if (rfd < 0 || !mcp_language_resolve(lang, rfd, p->interp))
                                return msp_err_set(err, ENOENT,
                                                   "language: '%s' is not available in rootfs '%s' "
                                                   "(no %s in /usr/bin, /bin or /usr/local/bin)",
                                                   lang->name, info.rootfs, lang->prog);
                }
        } else {
                p->lim = effective_limits(&req->limits, &e->cfg->defaults);
                p->network = req->network == MCP_NET_FULL && e->cfg->allow_network;
                if (p->network && (r = mcp_usernet_check(e->cfg->usernet_path, err)) < 0)
                        return r;
                if (req->network == MCP_NET_ALLOW && (r = copy_policy(run, req->allow, err)) < 0)
                        return r;
        }
        if (p->host_view && !p->interp[0])
                return msp_err_set(err, ENOENT,
                                   "language: '%s' is not on this server's host view, only in a "
                                   "rootfs it serves: run it in a session created with that rootfs",
                                   lang->name);
        for (size_t i = 0; i < req->n_files; i++) {
                r = mcp_workspace_file_check(req->files[i].path, req->files[i].len, err);
                if (r < 0)
                        return msp_err_prefix(err, "files[%zu]", i);
        }
        run->on_network = req->on_network;
        return copy_request(run, req, err);
}

int
mcp_run_setup(mcp_run *run, msp_err *err)
{
        mcp_engine *e = run->engine;
        mcp_run_plan *p = &run->plan;
        int r;
        if (!run->was_session && ((r = take_slice(run, err)) < 0 ||
                                 (r = fresh_workspace(run, p->lim.workspace_bytes, err)) < 0))
                return r;
        mcp_run_ids ids = mcp_rootfs_ids(p->rootfs, run->id_base, run->id_count);
        if ((r = mcp_workspace_make_out(run->ws_fd, ids, err)) < 0)
                return r;
        for (size_t i = 0; i < p->n_files; i++) {
                const mcp_plan_file *f = &p->files[i];
                r = mcp_workspace_write_file(run->ws_fd, f->path, f->data, f->len, f->executable,
                                             ids, err);
                if (r < 0)
                        return msp_err_prefix(err, "files[%zu]", i);
        }
        if ((r = make_bundle(run, err)) < 0)
                return r;
        mcp_run_plan_done(p);

        mcp_runner *rn = &run->runner;
        snprintf(run->log_path, sizeof run->log_path, "%s/runtime.log", run->bundle);
        rn->log_path = run->log_path;
        rn->runtime = e->cfg->runtime_path;
        rn->runtime_root = e->runtime_root;
        rn->bundle = run->bundle;
        rn->id = run->id;
        if (run->serve) {
                /* Lives until closed; what pid 1 says (its own errors) is kept for why it
                 * stopped. */
                rn->timeout_ms = 0;
                rn->serve_fd = run->serve_fd;
                rn->out = (mcp_capture){ .limit = 4096, .log_fd = -1 };
                rn->err = (mcp_capture){ .limit = 4096, .log_fd = -1 };
                return 0;
        }
        rn->timeout_ms = p->lim.timeout_ms;
        rn->init_status = e->cfg->init_path != NULL;
        rn->out = (mcp_capture){ .limit = p->lim.output_bytes, .log_fd = -1 };
        rn->err = (mcp_capture){ .limit = p->lim.output_bytes, .log_fd = -1 };
        mcp_runlogs_open(&e->logs, run->id, &rn->out, &rn->err, &run->log_reserve);
        if (run->stdin_copy) {
                rn->stdin_data = run->stdin_copy;
                rn->stdin_len = p->stdin_len;
        }
        return 0;
}
