/* A live session's kernels (live.h): for each language with a Jupyter kernelspec in the
 * session's root (the host's, or its image's), one kernel started inside the sandbox by
 * its pid 1 on the session's first cell in that language (kernel/kernel.h), its sockets in
 * the sandbox's kernel dir. A call of that language (not fresh, not background) is a cell
 * of it: variables, imports and definitions persist across calls; its rich output
 * (text/plain of the last expression, images) comes back in the result. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/engine-int.h"
#include "engine/engine.h"
#include "engine/live.h"
#include "kernel/kernel.h"
#include "base/base.h"

/* The kernel entry of language, looked up once per live session (NULL: none). */
static mcp_live_kernel *
kernel_of(mcp_live *l, const char *language)
{
        for (unsigned i = 0; i < l->n_kernels; i++)
                if (strcmp(l->kernels[i].language, language) == 0)
                        return l->kernels[i].spec ? &l->kernels[i] : NULL;
        if (l->n_kernels >= MCP_LIVE_KERNELS_MAX)
                return NULL;
        mcp_live_kernel *k = &l->kernels[l->n_kernels++];
        snprintf(k->language, sizeof k->language, "%s", language);
        _cleanup_close_ int root = open(l->root_path, O_PATH | O_DIRECTORY | O_CLOEXEC);
        msp_err err = { 0 };
        if (root < 0 || mcp_kernelspec_find(root, language, &k->spec, &err) < 0)
                k->spec = NULL;
        return k->spec ? k : NULL;
}

bool
mcp_live_kernel_wanted(mcp_live *l, const char *language, bool fresh, bool background)
{
        return !fresh && !background &&
               (mcp_live_repl_language(language) || kernel_of(l, language) != NULL);
}

/* Its sockets' directory: <kernel dir>/<name>, the sandbox user's. The sandbox writes in
 * the kernel dir: what is at <name> may be its symlink to a host path, never followed
 * (the kernel client opens it O_NOFOLLOW too). */
static int
kernel_dirs(mcp_live *l, const mcp_live_kernel *k, char *host, size_t host_size, char *inside,
            size_t inside_size, msp_err *err)
{
        snprintf(host, host_size, "%s/%s", l->kernel_dir, k->spec->name);
        snprintf(inside, inside_size, MCP_KERNEL_DIR "/%s", k->spec->name);
        _cleanup_close_ int kfd = open(l->kernel_dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (kfd < 0)
                return msp_err_sys(err, errno, "kernel dir '%s'", l->kernel_dir);
        if (mkdirat(kfd, k->spec->name, 0700) < 0 && errno != EEXIST)
                return msp_err_sys(err, errno, "kernel dir '%s'", host);
        _cleanup_close_ int dfd = openat(kfd, k->spec->name,
                                         O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dfd < 0)
                return msp_err_sys(err, errno, "kernel dir '%s' (not a directory of its own)", host);
        if (fchownat(dfd, "", l->host_uid, l->host_gid, AT_EMPTY_PATH) < 0)
                return msp_err_sys(err, errno, "chown '%s'", host);
        return 0;
}

/* ipykernel's Python adds the user site (~/.local, where `pip install` puts packages: HOME
 * is /workspace) to sys.path only when it exists at start, and a path that did not exist
 * is never looked at again: a kernel started before the session's first `pip install`
 * would not import what it installed. So the kernel makes it first (empty), as the
 * session's next pip would. */
static const char ipython_user_site[] =
        "--InteractiveShellApp.exec_lines=import os as _o, site as _s; "
        "_o.makedirs(_s.getusersitepackages(), exist_ok=True); "
        "_s.addsitedir(_s.getusersitepackages()); del _o, _s";

static bool
is_ipykernel(const mcp_kernelspec *spec)
{
        if (strcasecmp(spec->language, "python") != 0)
                return false;
        for (size_t i = 0; spec->argv[i]; i++)
                if (strstr(spec->argv[i], "ipykernel"))
                        return true;
        return false;
}

static int
kernel_start(mcp_live *l, mcp_live_kernel *k, msp_err *err)
{
        char host[4400], inside[256];
        int r = kernel_dirs(l, k, host, sizeof host, inside, sizeof inside, err);
        if (r < 0)
                return r;
        /* The sandbox's env, then the kernelspec's. */
        size_t n = 0, m = 0;
        while (l->env && l->env[n])
                n++;
        while (k->spec->env && k->spec->env[m])
                m++;
        _cleanup_free_ const char **envp = calloc(n + m + 1, sizeof *envp);
        if (!envp)
                return msp_err_set(err, ENOMEM, "out of memory");
        for (size_t i = 0; i < n; i++)
                envp[i] = l->env[i];
        for (size_t i = 0; i < m; i++)
                envp[n + i] = k->spec->env[i];
        size_t n_argv = 0;
        while (k->spec->argv[n_argv])
                n_argv++;
        _cleanup_free_ const char **argv = calloc(n_argv + 2, sizeof *argv);
        if (!argv)
                return msp_err_set(err, ENOMEM, "out of memory");
        for (size_t i = 0; i < n_argv; i++)
                argv[i] = k->spec->argv[i];
        if (is_ipykernel(k->spec))
                argv[n_argv] = ipython_user_site;
        mcp_kernel_proc_spec spec = {
                .spawn_socket = l->sock_path,
                .host_dir = host,
                .sandbox_dir = inside,
                .argv = argv,
                .envp = envp,
                .cwd = l->cwd,
                .interrupt_mode = k->spec->interrupt_mode,
        };
        return mcp_kernel_proc_new(l->engine->loop, &spec, NULL, &k->proc, err);
}

void
mcp_live_kernels_stop(mcp_live *l)
{
        mcp_live_repl_stop(l);
        for (unsigned i = 0; i < l->n_kernels; i++)
                l->kernels[i].proc = l->kernels[i].proc ? mcp_kernel_proc_free(l->kernels[i].proc)
                                                        : NULL;
}

void
mcp_live_kernels_free(mcp_live *l)
{
        mcp_live_kernels_stop(l);
        for (unsigned i = 0; i < l->n_kernels; i++)
                l->kernels[i].spec = l->kernels[i].spec ? mcp_kernelspec_free(l->kernels[i].spec)
                                                        : NULL;
        l->n_kernels = 0;
}

void
mcp_live_kernel_kill(mcp_live *l, mcp_kernel_proc *p)
{
        for (unsigned i = 0; i < l->n_kernels; i++)
                if (l->kernels[i].proc == p)
                        l->kernels[i].proc = mcp_kernel_proc_free(p);
}

bool
mcp_live_kernel_running(const mcp_live *l)
{
        if (mcp_live_repl_running(l))
                return true;
        for (unsigned i = 0; i < l->n_kernels; i++)
                if (l->kernels[i].proc && mcp_kernel_proc_running(l->kernels[i].proc))
                        return true;
        return false;
}

/* A cell's images as artifacts (PNG decoded from the base64 it came in). */
static size_t
cell_images(const mcp_kernel_cell *cell, mcp_artifact *arts, size_t max)
{
        size_t n = 0;
        for (size_t i = 0; i < cell->n_images && n < max; i++) {
                const mcp_kernel_image *img = &cell->images[i];
                unsigned char *data = NULL;
                size_t len = 0;
                if (!img->data.data)
                        continue;
                if (strcmp(img->mime, "image/png") == 0) {
                        /* Kernels wrap and end their base64 with newlines. */
                        _cleanup_free_ char *b64 = malloc(img->data.len + 1);
                        size_t k = 0;
                        for (size_t j = 0; b64 && j < img->data.len; j++)
                                if (!strchr(" \t\r\n", img->data.data[j]))
                                        b64[k++] = img->data.data[j];
                        if (!b64 || mcp_base64_decode(b64, k, &data, &len) < 0)
                                continue;
                } else {
                        data = malloc(img->data.len + 1);
                        if (!data)
                                continue;
                        memcpy(data, img->data.data, img->data.len);
                        len = img->data.len;
                }
                char path[64];
                snprintf(path, sizeof path, "display/%zu.%s", i + 1,
                         strcmp(img->mime, "image/png") == 0 ? "png" : "svg");
                arts[n++] = (mcp_artifact){ .path = strdup(path), .mime_type = strdup(img->mime),
                                            .size = len, .data = data };
        }
        return n;
}

static void
add_buf(mcp_capture *c, const mcp_kernel_buf *b)
{
        if (b->data && b->len)
                mcp_capture_add(c, b->data, b->len);
}

/* A traceback without its colours: kernels colour it with ANSI escapes (CSI ... final
 * byte), which are noise to an agent reading the text. */
static void
add_plain(mcp_capture *c, const mcp_kernel_buf *b)
{
        const char *s = b->data, *end = b->data + b->len;
        while (s && s < end) {
                const char *esc = memchr(s, '\033', (size_t) (end - s));
                const char *stop = esc ? esc : end;
                if (stop > s)
                        mcp_capture_add(c, s, (size_t) (stop - s));
                if (!esc)
                        break;
                s = esc + 1;
                if (s < end && *s == '[') {
                        s++;
                        while (s < end && !(*s >= 0x40 && *s <= 0x7e))
                                s++;
                        if (s < end)
                                s++;
                }
        }
}

static void
cell_done(mcp_kernel_proc *p, const mcp_kernel_outcome *o, void *data)
{
        mcp_run *run = data;
        mcp_engine *e = run->engine;
        mcp_live *l = run->live;
        mcp_call *c = &run->call;
        const mcp_kernel_cell *cell = o->cell;
        (void) p;
        if (l->call == run)
                l->call = NULL;
        run->state = RUN_EXITED;
        e->n_running--;

        mcp_run_result res = { .run_id = run->id };
        mcp_artifact arts[MCP_KERNEL_IMAGES_MAX];
        size_t n_arts = 0;
        if (cell) {
                add_buf(&run->runner.out, &cell->out);
                add_buf(&run->runner.out, &cell->display);
                add_buf(&run->runner.err, &cell->err);
                if (strcmp(cell->status, "error") == 0) {
                        res.kernel_error = true;
                        /* The traceback names the error (ename, evalue) in its last line. */
                        if (cell->traceback.data)
                                add_plain(&run->runner.err, &cell->traceback);
                        else {
                                add_buf(&run->runner.err, &cell->ename);
                                mcp_capture_add(&run->runner.err, ": ", 2);
                                add_buf(&run->runner.err, &cell->evalue);
                        }
                        mcp_capture_add(&run->runner.err, "\n", 1);
                }
                res.value_text = cell->result.data;
                res.value_len = cell->result.len;
                n_arts = cell_images(cell, arts, MCP_KERNEL_IMAGES_MAX);
        }
        if (o->error < 0) {
                res.sandbox_failed = true;
                snprintf(res.error, sizeof res.error, "the session's %s kernel: %s", run->plan.lang->name,
                         o->message);
        }
        uint64_t oom = 0;
        mcp_live_usage(l, NULL, NULL, &oom);
        res.oom_killed = oom > c->oom_before;
        res.exit_code = res.kernel_error || o->died || o->killed ? 1 : 0;
        res.timed_out = c->timed_out || o->interrupted || o->killed;
        res.kernel_note = o->note && o->note[0] ? o->note : NULL;
        res.stdout_truncated = run->runner.out.truncated || (cell && cell->truncated);
        res.stderr_truncated = run->runner.err.truncated;
        res.stdout_buf = run->runner.out.buf ? run->runner.out.buf : "";
        res.stdout_len = run->runner.out.len;
        res.stderr_buf = run->runner.err.buf ? run->runner.err.buf : "";
        res.stderr_len = run->runner.err.len;
        res.duration_ms = (mcp_now_usec() - c->start_usec) / 1000;
        res.artifacts = arts;
        res.n_artifacts = n_arts;
        mcp_run_finish(run, &res);
        for (size_t i = 0; i < n_arts; i++) {
                free(arts[i].path);
                free(arts[i].mime_type);
                free(arts[i].data);
        }
        mcp_live_call_free(run);
}

int
mcp_live_kernel_call_start(mcp_run *run, msp_err *err)
{
        mcp_engine *e = run->engine;
        mcp_live *l = run->live;
        mcp_run_plan *p = &run->plan;
        mcp_call *c = &run->call;
        if (mcp_live_repl_language(p->lang->name))
                return mcp_live_repl_call_start(run, err);
        mcp_live_kernel *k = kernel_of(l, p->lang->name);
        if (!k)
                return msp_err_set(err, ENOENT, "language: no %s kernel in this session's root",
                                   p->lang->name);
        if (!k->proc && (kernel_start(l, k, err)) < 0)
                return msp_err_prefix(err, "the session's %s kernel", p->lang->name);
        run->runner.out = (mcp_capture){ .limit = p->lim.output_bytes, .log_fd = -1 };
        run->runner.err = (mcp_capture){ .limit = p->lim.output_bytes, .log_fd = -1 };
        mcp_runlogs_open(&e->logs, run->id, &run->runner.out, &run->runner.err, &run->log_reserve);
        mcp_live_usage(l, NULL, NULL, &c->oom_before);
        c->start_usec = mcp_now_usec();
        _cleanup_free_ char *code = malloc(p->code_len + 1);
        if (!code)
                return msp_err_set(err, ENOMEM, "out of memory");
        memcpy(code, p->code ? p->code : "", p->code_len);
        code[p->code_len] = '\0';
        int r = mcp_kernel_proc_execute(k->proc, code, p->lim.timeout_ms * 1000, cell_done, run, err);
        if (r < 0)
                return r;
        c->kernel = k->proc;
        l->call = run;
        return 0;
}

void
mcp_live_kernel_call_lost(mcp_run *run)
{
        if (run->call.repl) {
                mcp_live_repl_call_lost(run);
                return;
        }
        /* Its kernel goes with the sandbox: the cell's callback will not come. */
        mcp_kernel_outcome o = { .error = -ECHILD, .died = true,
                                 .message = "the session's sandbox stopped while the cell ran",
                                 .note = "died: its sandbox stopped" };
        cell_done(NULL, &o, run);
}
