/* The `network` argument of run_code (and its schema), the egress proxy's decisions in
 * the log, and the denied hosts and upstream errors of a run's result. */
#include "mcp/tools-network.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/base.h"

#define ALLOW_MAX 64

/* `given`: the value as the call spelled it (true, "full"). */
static int
want_full(targs *a, const mcp_config *cfg, const char *given, mcp_net_mode *mode)
{
        if (!cfg->allow_network)
                return mcp_arg_bad(a, "network: %s is not allowed by this server (start msp-mcp with "
                               "--allow-network)%s", given,
                            cfg->network_allow.n ? "; an {\"allow\": [...]} list is" : "");
        *mode = MCP_NET_FULL;
        return 1;
}

static int
want_allow(targs *a, const mcp_config *cfg, const oci_json *list, mcp_net_mode *mode,
           mcp_egress_policy *allow)
{
        if (cfg->network_allow.n == 0)
                return mcp_arg_bad(a, "network: allowlists are not enabled on this server (start "
                               "msp-mcp with --network-allow PATTERN)");
        if (!list || oci_json_type_of(list) != OCI_JSON_ARRAY || oci_json_len(list) == 0 ||
            oci_json_len(list) > ALLOW_MAX)
                return mcp_arg_bad(a, "network.allow: expected an array of 1 to %d host patterns",
                            ALLOW_MAX);
        msp_err err = { 0 };
        for (size_t i = 0; i < oci_json_len(list); i++) {
                const char *p = oci_json_string(oci_json_value_at(list, i));
                if (!p)
                        return mcp_arg_bad(a, "network.allow[%zu]: expected a string", i);
                if (mcp_egress_policy_add(allow, p, &err) < 0)
                        return mcp_arg_bad(a, "network.allow[%zu]: %s", i, err.msg);
        }
        if (mcp_egress_narrows(&cfg->network_allow, allow, &err) < 0)
                return mcp_arg_bad(a, "%s", err.msg);
        *mode = MCP_NET_ALLOW;
        return 1;
}

int
mcp_arg_network(targs *a, const mcp_config *cfg, mcp_net_mode *mode, mcp_egress_policy *allow)
{
        const oci_json *v = a->obj ? oci_json_get(a->obj, "network") : NULL;
        *mode = MCP_NET_NONE;
        switch (v ? oci_json_type_of(v) : OCI_JSON_NULL) {
        case OCI_JSON_NULL:
                return 0;
        case OCI_JSON_BOOL:
                /* The boolean of earlier versions: true is "full". */
                return oci_json_bool(v) ? want_full(a, cfg, "true", mode) : 1;
        case OCI_JSON_STRING:
                if (strcmp(oci_json_string(v), "none") == 0)
                        return 1;
                if (strcmp(oci_json_string(v), "full") == 0)
                        return want_full(a, cfg, "\"full\"", mode);
                break;
        case OCI_JSON_OBJECT:
                if (oci_json_len(v) == 1 && strcmp(oci_json_key_at(v, 0), "allow") == 0)
                        return want_allow(a, cfg, oci_json_value_at(v, 0), mode, allow);
                break;
        case OCI_JSON_NUMBER:
        case OCI_JSON_ARRAY:
        default:
                break;
        }
        return mcp_arg_bad(a, "network: expected \"none\", \"full\" or {\"allow\": [\"HOST[:PORT]\", ...]}");
}

void
mcp_schema_network(oci_jw *w, const mcp_config *cfg)
{
        char desc[1024];
        size_t n = (size_t) snprintf(desc, sizeof desc,
                                     "\"none\" (default: loopback only)%s%s",
                                     cfg->allow_network ? "; \"full\": outbound network" : "",
                                     cfg->network_allow.n
                                             ? "; {\"allow\": [patterns]}: HTTP(S) through this "
                                               "server's egress proxy to those hosts only "
                                               "(HOST, *.SUFFIX, optional :PORT; default ports "
                                               "80 and 443), within: "
                                             : "");
        for (size_t i = 0; i < cfg->network_allow.n && n < sizeof desc; i++)
                n += (size_t) snprintf(desc + n, sizeof desc - n, "%s%s", i ? ", " : "",
                                       cfg->network_allow.rules[i].text);
        mcp_jw_obj(w, "network");
        oci_jw_kv_string(w, "description", desc);
        oci_jw_key(w, "anyOf");
        oci_jw_begin_array(w);
        oci_jw_begin_object(w);
        oci_jw_kv_string(w, "type", "string");
        oci_jw_kv_strlist(w, "enum", cfg->allow_network ? (const char *const[]){ "none", "full", NULL }
                                                        : (const char *const[]){ "none", NULL });
        oci_jw_end_object(w);
        oci_jw_begin_object(w);
        oci_jw_kv_string(w, "type", "boolean");
        oci_jw_end_object(w);
        if (cfg->network_allow.n) {
                oci_jw_begin_object(w);
                oci_jw_kv_string(w, "type", "object");
                oci_jw_key(w, "properties");
                oci_jw_begin_object(w);
                mcp_jw_obj(w, "allow");
                oci_jw_kv_string(w, "type", "array");
                oci_jw_kv_uint64(w, "minItems", 1);
                oci_jw_kv_uint64(w, "maxItems", ALLOW_MAX);
                mcp_jw_obj(w, "items");
                oci_jw_kv_string(w, "type", "string");
                oci_jw_end_object(w);
                oci_jw_end_object(w);
                oci_jw_end_object(w);
                oci_jw_kv_strlist(w, "required", (const char *const[]){ "allow", NULL });
                oci_jw_kv_bool(w, "additionalProperties", false);
                oci_jw_end_object(w);
        }
        oci_jw_end_array(w);
        oci_jw_end_object(w);
}

void
mcp_network_log(mcp_logger *log, const char *run_id, mcp_proxy_event ev, const char *host,
                uint16_t port, const char *reason, uint64_t bytes)
{
        switch (ev) {
        case MCP_PROXY_ALLOWED:
                mcp_log(log, MCP_LOG_INFO, "egress %s: allowed %s:%u (%s)", run_id, host, port,
                        reason);
                break;
        case MCP_PROXY_DENIED:
                if (!host[0])   /* before any request: a connection to the proxy */
                        mcp_log(log, MCP_LOG_WARNING, "egress %s: closed a new connection: %s",
                                run_id, reason);
                else
                        mcp_log(log, MCP_LOG_WARNING, "egress %s: denied %s:%u: %s", run_id,
                                host, port, reason);
                break;
        case MCP_PROXY_FAILED:
                mcp_log(log, MCP_LOG_WARNING, "egress %s: failed %s:%u: %s", run_id, host, port,
                        reason);
                break;
        case MCP_PROXY_CLOSED:
        default:
                mcp_log(log, MCP_LOG_INFO, "egress %s: closed %s:%u after %" PRIu64 " bytes%s%s",
                        run_id, host, port, bytes, reason ? ": " : "", reason ? reason : "");
                break;
        }
}

static void
write_list(oci_jw *w, const char *key, const char *const *list, size_t n)
{
        oci_jw_key(w, key);
        oci_jw_begin_array(w);
        for (size_t i = 0; i < n; i++)
                oci_jw_string(w, list[i]);
        oci_jw_end_array(w);
}

void
mcp_write_egress(oci_jw *w, const mcp_run_result *res)
{
        write_list(w, "denied_hosts", res->denied_hosts, res->n_denied_hosts);
        write_list(w, "upstream_errors", res->upstream_errors, res->n_upstream_errors);
}

/* "; the egress proxy refused a:443 (...); upstream connections failed: b:443 (name not
 * resolved), ..." */
size_t
mcp_egress_text(const mcp_run_result *res, char *buf, size_t size)
{
        size_t n = 0;
        if (size == 0)
                return 0;
        buf[0] = '\0';
        if (res->n_denied_hosts) {
                n += (size_t) snprintf(buf, size, "; the egress proxy refused ");
                for (size_t i = 0; i < res->n_denied_hosts && n < size; i++)
                        n += (size_t) snprintf(buf + n, size - n, "%s%s", i ? ", " : "",
                                               res->denied_hosts[i]);
                if (n < size)
                        n += (size_t) snprintf(buf + n, size - n,
                                               " (the response it sent says why; ask the user "
                                               "to allow a host if the task needs it)");
        }
        if (res->n_upstream_errors && n < size)
                n += (size_t) snprintf(buf + n, size - n, "; upstream connections failed: ");
        for (size_t i = 0; i < res->n_upstream_errors && n < size; i++) {
                /* "host:port: reason": a host name has no ": " */
                const char *e = res->upstream_errors[i], *sep = strstr(e, ": ");
                int hl = sep ? (int) (sep - e) : (int) strlen(e);
                n += (size_t) snprintf(buf + n, size - n, "%s%.*s (%s)", i ? ", " : "", hl, e,
                                       sep ? sep + 2 : "?");
        }
        return n < size ? n : size - 1;
}
