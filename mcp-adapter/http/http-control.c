/* The HTTP transport's controls from outside its requests (http-control.h): draining on
 * SIGTERM, reloading the token and key files on SIGHUP, the --check lines. */
#include <inttypes.h>
#include <microhttpd.h>
#include <stdio.h>
#include <unistd.h>

#include "http/auth.h"
#include "http/http-control.h"
#include "http/http-stream.h"
#include "http/http-types.h"
#include "http/oauth.h"
#include "observe/observe.h"
#include "base/base.h"

/* Drained: no request left (every answer written), or the bound passed. */
static int
on_drain_check(mcp_loop *loop, void *data)
{
        mcp_http *h = data;
        h->drain_timer = NULL;
        if (h->n_exchanges == 0 || mcp_now_usec() >= h->drain_deadline) {
                if (h->n_exchanges)
                        mcp_log(h->log, MCP_LOG_WARNING, "%zu HTTP requests still open after --drain-timeout: their runs are cancelled",
                                h->n_exchanges);
                h->drained(h->drained_data);
                return 0;
        }
        (void) mcp_loop_add_timer(loop, 50000, on_drain_check, h, &h->drain_timer);
        return 0;
}

void
mcp_http_drain(mcp_http *h, void (*drained)(void *data), void *data)
{
        if (h->draining)
                return;
        h->draining = true;
        h->drained = drained;
        h->drained_data = data;
        h->drain_deadline = mcp_now_usec() + h->cfg->drain_timeout_s * 1000000;
        /* No new connections; the socket file goes at once, so clients fail fast. */
        MHD_socket fd = MHD_quiesce_daemon(h->main.d);
        if (fd != MHD_INVALID_SOCKET)
                close(fd);
        if (h->unix_path)
                (void) unlink(h->unix_path);
        /* The GET streams never finish by themselves: they end now. */
        mcp_http_streams_drain(h);
        mcp_log(h->log, MCP_LOG_INFO, "draining: %zu HTTP requests open, at most %" PRIu64 " s",
                h->n_exchanges, h->cfg->drain_timeout_s);
        (void) on_drain_check(h->loop, h);
}

static void
on_keys_reloaded(mcp_oauth *o, const msp_err *err, void *data)
{
        mcp_http *h = data;
        h->oauth_reload = NULL;
        if (!o) {
                mcp_log(h->log, MCP_LOG_ERROR, "OAuth keys not reloaded, the old ones stay: %s", err->msg);
                return;
        }
        mcp_oauth_free(h->oauth);
        h->oauth = o;
        mcp_log(h->log, MCP_LOG_INFO, "OAuth keys reloaded from %s: %zu", h->cfg->oauth_jwks,
                mcp_oauth_key_count(o));
}

/* SIGHUP: the token file and the JWKS are read again, each kept as it was until a new one
 * is read and right. A JWKS URL is fetched while the loop serves (with the old keys); a
 * fetch still running gives way to this newer one. */
void
mcp_http_reload(mcp_http *h)
{
        msp_err err = { 0 };
        mcp_auth *a = NULL;
        if (h->cfg->auth_tokens && mcp_auth_load(h->cfg->auth_tokens, &a, &err) < 0) {
                mcp_log(h->log, MCP_LOG_ERROR, "tokens not reloaded, the old ones stay: %s", err.msg);
        } else if (a) {
                mcp_auth_free(h->auth);
                h->auth = a;
                mcp_log(h->log, MCP_LOG_INFO, "tokens reloaded from %s: %zu", h->cfg->auth_tokens,
                        mcp_auth_count(a));
        }
        if (!h->oauth)
                return;
        mcp_oauth_reload_cancel(h->oauth_reload);
        mcp_oauth_reload_start(h->loop, h->cfg, on_keys_reloaded, h, &h->oauth_reload);
}

void
mcp_http_check(const mcp_config *cfg, FILE *out)
{
        if (!cfg->listen)
                return;
        if (!cfg->auth_tokens && !cfg->oauth_issuer && !cfg->oauth_jwks && !cfg->resource) {
                fprintf(out, "%-8s %-14s --listen %s without --auth-tokens or --oauth-*: whoever can connect runs code (refused unless loopback or a unix socket)\n",
                        "warning", "http auth", cfg->listen);
                return;
        }
        msp_err err = { 0 };
        mcp_auth *a = NULL;
        if (cfg->auth_tokens && mcp_auth_load(cfg->auth_tokens, &a, &err) < 0)
                fprintf(out, "%-8s %-14s %s\n", "MISSING", "http auth", err.msg);
        else if (cfg->auth_tokens)
                fprintf(out, "%-8s %-14s %zu bearer tokens in %s\n", "ok", "http auth", mcp_auth_count(a),
                        cfg->auth_tokens);
        mcp_auth_free(a);
        mcp_oauth *o = NULL;
        if (mcp_oauth_load(cfg, &o, &err) < 0)
                fprintf(out, "%-8s %-14s %s\n", "MISSING", "http oauth", err.msg);
        else if (o)
                fprintf(out, "%-8s %-14s OAuth access tokens of %s for %s: %zu keys in %s, tenant from claim %s\n",
                        "ok", "http oauth", cfg->oauth_issuer, cfg->resource, mcp_oauth_key_count(o),
                        cfg->oauth_jwks, cfg->oauth_tenant_claim);
        mcp_oauth_free(o);
}
