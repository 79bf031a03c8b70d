/* The tools' audit events (audit.h): runs, sessions and the egress proxy's decisions, each
 * naming who asked (transport, tenant, MCP session). */
#include "mcp/tools-audit.h"

#include <string.h>

#include "observe/observe.h"
#include "base/base.h"

static mcp_audit *
audit_of(const mcp_server *srv)
{
        return srv->log ? srv->log->audit : NULL;
}

static oci_jw *
begin_caller(mcp_audit *a, const char *event, bool http, const char *tenant,
             const char *mcp_session)
{
        oci_jw *w = mcp_audit_begin(a, event);
        mcp_audit_str(w, "transport", http ? "http" : "stdio");
        /* HTTP without authentication has no tenant. */
        mcp_audit_str(w, "tenant", !http ? "stdio" : tenant && *tenant ? tenant : NULL);
        mcp_audit_str(w, "mcp_session", mcp_session);
        return w;
}

oci_jw *
mcp_audit_begin_srv(mcp_server *srv, const char *event)
{
        return begin_caller(audit_of(srv), event, srv->http_session != NULL, srv->tenant,
                            srv->http_session);
}

static void
write_network(oci_jw *w, mcp_net_mode mode, const mcp_egress_policy *allow)
{
        if (!w)
                return;
        mcp_audit_str(w, "network", mode == MCP_NET_FULL ? "full" : mode == MCP_NET_ALLOW ? "allow" : "none");
        if (mode != MCP_NET_ALLOW || !allow)
                return;
        oci_jw_key(w, "network_allow");
        oci_jw_begin_array(w);
        for (size_t i = 0; i < allow->n; i++)
                oci_jw_string(w, allow->rules[i].text);
        oci_jw_end_array(w);
}

static oci_jw *
begin_run(mcp_server *srv, const mcp_run_audit *ra, const char *event)
{
        oci_jw *w = mcp_audit_begin_srv(srv, event);
        mcp_audit_str(w, "tool", "run_code");
        mcp_audit_str(w, "run_id", ra->run_id[0] ? ra->run_id : NULL);
        mcp_audit_str(w, "session_id", ra->session_id);
        mcp_audit_str(w, "language", ra->language);
        mcp_audit_str(w, "code_sha256", ra->code_sha256);
        mcp_audit_uint(w, "code_bytes", ra->code_bytes);
        return w;
}

void
mcp_audit_run_prepare(mcp_run_audit *ra, const mcp_run_request *req, const char *session_id)
{
        ra->language = req->language;
        ra->session_id = session_id;
        ra->code_bytes = req->code_len;
        (void) mcp_audit_sha256(req->code, req->code_len, ra->code_sha256);
        ra->start_usec = mcp_now_usec();
}

void
mcp_audit_run_start(mcp_server *srv, mcp_run_audit *ra, const mcp_run_request *req,
                    const char *run_id)
{
        if (ra->started)
                return;
        ra->started = true;
        snprintf(ra->run_id, sizeof ra->run_id, "%s", run_id ? run_id : "");
        oci_jw *w = begin_run(srv, ra, "run_start");
        if (!w)
                return;
        /* A session's runs have the session's network (its session_create line says which). */
        if (req->session_id)
                mcp_audit_str(w, "network", "session");
        else
                write_network(w, req->network, req->allow);
        const mcp_limits *l = &req->limits;
        if (l->timeout_ms)
                mcp_audit_uint(w, "timeout_ms", l->timeout_ms);
        if (l->memory_bytes)
                mcp_audit_uint(w, "memory_bytes", l->memory_bytes);
        if (srv->cfg->audit_code)
                mcp_audit_bytes(w, "code", req->code, req->code_len);
        mcp_audit_end(audit_of(srv), w);
}

void
mcp_audit_run_end(mcp_server *srv, mcp_run_audit *ra, mcp_outcome o, const mcp_run_result *res,
                  const char *reason)
{
        if (res && res->run_id && !ra->run_id[0])
                snprintf(ra->run_id, sizeof ra->run_id, "%s", res->run_id);
        oci_jw *w = begin_run(srv, ra, "run_end");
        if (!w)
                return;
        mcp_audit_str(w, "outcome", mcp_outcome_name(o));
        bool exited = res && !res->sandbox_failed && res->term_signal <= 0 && !res->timed_out;
        if (exited)
                mcp_audit_int(w, "exit_code", res->exit_code);
        if (res && res->term_signal > 0)
                mcp_audit_int(w, "signal", res->term_signal);
        mcp_audit_uint(w, "duration_ms", res ? res->duration_ms : (mcp_now_usec() - ra->start_usec) / 1000);
        /* Known with a cgroup (not for a server run by a user without one). */
        if (res && res->cpu_usec)
                mcp_audit_uint(w, "cpu_ms", res->cpu_usec / 1000);
        if (res && res->memory_peak_bytes)
                mcp_audit_uint(w, "memory_peak_bytes", res->memory_peak_bytes);
        if (res && res->network_bytes)
                mcp_audit_uint(w, "network_bytes", res->network_bytes);
        if (res && res->n_denied_hosts)
                mcp_audit_uint(w, "denied_hosts", res->n_denied_hosts);
        if (res && res->n_upstream_errors) {
                /* The hosts passed the run's allowlist; the reasons are the proxy's. */
                oci_jw_key(w, "upstream_errors");
                oci_jw_begin_array(w);
                for (size_t i = 0; i < res->n_upstream_errors; i++)
                        oci_jw_string(w, res->upstream_errors[i]);
                oci_jw_end_array(w);
        }
        mcp_audit_str(w, "reason", reason ? reason : res && res->sandbox_failed ? res->error : NULL);
        mcp_audit_end(audit_of(srv), w);
}

void
mcp_audit_egress(mcp_server *srv, const char *run_id, mcp_proxy_event ev, const char *host,
                 uint16_t port, const char *reason, uint64_t up, uint64_t down)
{
        static const char *const names[] = { [MCP_PROXY_ALLOWED] = "allowed",
                                             [MCP_PROXY_DENIED] = "denied",
                                             [MCP_PROXY_FAILED] = "failed",
                                             [MCP_PROXY_CLOSED] = "closed" };
        oci_jw *w = mcp_audit_begin_srv(srv, "egress");
        if (!w)
                return;
        mcp_audit_str(w, "run_id", run_id);
        mcp_audit_str(w, "host", host);
        mcp_audit_uint(w, "port", port);
        mcp_audit_str(w, "decision", names[ev]);
        /* allowed: the address connected to; denied, failed: why; closed: what ended it, if not
         * one side closing. */
        mcp_audit_str(w, ev == MCP_PROXY_ALLOWED ? "address" : "reason", reason);
        if (ev == MCP_PROXY_CLOSED) {
                mcp_audit_uint(w, "bytes_up", up);
                mcp_audit_uint(w, "bytes_down", down);
        }
        mcp_audit_end(audit_of(srv), w);
}

void
mcp_audit_refused(mcp_server *srv, const char *tool, const char *reason)
{
        oci_jw *w = mcp_audit_begin_srv(srv, "quota_refused");
        mcp_audit_str(w, "tool", tool);
        mcp_audit_str(w, "reason", reason);
        mcp_audit_end(audit_of(srv), w);
}

void
mcp_audit_session(mcp_server *srv, const char *event, const mcp_session_info *info,
                  const char *session_id, const char *reason)
{
        oci_jw *w = mcp_audit_begin_srv(srv, event);
        if (!w)
                return;
        mcp_audit_str(w, "session_id", info ? info->id : session_id);
        if (info) {
                mcp_audit_str(w, "rootfs", info->rootfs ? info->rootfs : "host");
                write_network(w, info->network ? MCP_NET_FULL : info->allow && info->allow->n ? MCP_NET_ALLOW : MCP_NET_NONE,
                              info->allow);
                mcp_audit_uint(w, "timeout_ms", info->limits.timeout_ms);
                mcp_audit_uint(w, "memory_bytes", info->limits.memory_bytes);
        }
        mcp_audit_str(w, "reason", reason);
        mcp_audit_end(audit_of(srv), w);
}

void
mcp_audit_process_kill(mcp_server *srv, const char *session_id, const char *process_id, int sig)
{
        oci_jw *w = mcp_audit_begin_srv(srv, "process_kill");
        if (!w)
                return;
        mcp_audit_str(w, "session_id", session_id);
        mcp_audit_str(w, "process_id", process_id);
        if (sig > 0)
                mcp_audit_int(w, "signal", sig);
        mcp_audit_end(audit_of(srv), w);
}

void
mcp_audit_session_expired(mcp_audit *a, bool http, const char *tenant, const char *session_id,
                          const char *why)
{
        oci_jw *w = begin_caller(a, "session_close", http, tenant, NULL);
        mcp_audit_str(w, "session_id", session_id);
        mcp_audit_str(w, "reason", why);
        mcp_audit_end(a, w);
}

void
mcp_audit_port(mcp_server *srv, const char *session_id, uint16_t port)
{
        oci_jw *w = mcp_audit_begin_srv(srv, "port_expose");
        if (!w)
                return;
        mcp_audit_str(w, "session_id", session_id);
        mcp_audit_uint(w, "port", port);
        mcp_audit_end(audit_of(srv), w);
}
