/* A trivial program per language in a real sandbox (langprobe.h). */
#include "langprobe.h"

#include <stdio.h>
#include <string.h>

#include "engine/engine.h"
#include "sandbox/sandbox.h"
#include "base/base.h"

typedef struct probing {
        mcp_loop *loop;
        size_t left;
} probing;

typedef struct one {
        probing *all;
        mcp_langprobe *p;
} one;

static void
done(mcp_run *run, const mcp_run_result *r, void *data)
{
        (void) run;
        one *o = data;
        mcp_langprobe *p = o->p;
        p->ms = r->duration_ms;
        /* As on the host: "ok", exit 0, and not a word on stderr (R without its
         * configuration still prints, with warnings). */
        p->ran = !r->sandbox_failed && !r->term_signal && !r->timed_out && r->exit_code == 0 &&
                 r->stdout_len == 3 && memcmp(r->stdout_buf, "ok\n", 3) == 0 && r->stderr_len == 0;
        p->conclusive = !r->sandbox_failed && !r->timed_out;
        if (r->sandbox_failed)
                snprintf(p->why, sizeof p->why, "%.1023s", r->error);
        else if (r->timed_out)
                snprintf(p->why, sizeof p->why, "no exit within %u ms", MCP_LANGPROBE_TIMEOUT_MS);
        else if (!p->ran)
                snprintf(p->why, sizeof p->why, "exit %d, signal %d, stdout %zu bytes, stderr: %.*s",
                         r->exit_code, r->term_signal, r->stdout_len,
                         (int) (r->stderr_len > 160 ? 160 : r->stderr_len),
                         r->stderr_buf ? r->stderr_buf : "");
        for (char *c = p->why; *c; c++)         /* one line of --check */
                if ((unsigned char) *c < ' ')
                        *c = ' ';
        if (--o->all->left == 0)
                mcp_loop_exit(o->all->loop, 0);
}

int
mcp_langprobe_run(const mcp_config *cfg, const mcp_host *host, mcp_langprobe *probes, size_t n,
                  msp_err *err)
{
        _cleanup_loop_ mcp_loop *loop = NULL;
        int r = mcp_loop_new(&loop);
        if (r < 0)
                return msp_err_set(err, -r, "event loop");
        mcp_engine *engine = NULL;
        if ((r = mcp_engine_new(loop, cfg, host, &engine, err)) < 0)
                return r;
        probing all = { .loop = loop };
        one ones[MCP_LANG_MAX];
        for (size_t i = 0; i < n && i < MCP_LANG_MAX; i++) {
                const mcp_language *lang = mcp_language_named(probes[i].name);
                snprintf(probes[i].why, sizeof probes[i].why, "not run");
                if (!lang || !lang->hello)
                        continue;
                ones[i] = (one){ .all = &all, .p = &probes[i] };
                mcp_run_request req = {
                        .language = lang->name,
                        .code = lang->hello,
                        .code_len = strlen(lang->hello),
                        .limits = { .timeout_ms = MCP_LANGPROBE_TIMEOUT_MS },
                };
                msp_err e = { 0 };
                mcp_run *run;
                if (mcp_engine_submit(engine, &req, NULL, done, &ones[i], &run, &e) < 0)
                        snprintf(probes[i].why, sizeof probes[i].why, "%.1023s", e.msg);
                else
                        all.left++;
        }
        if (all.left)
                r = mcp_loop_run(loop);
        mcp_engine_free(engine);
        return r < 0 ? msp_err_set(err, -r, "event loop") : 0;
}
