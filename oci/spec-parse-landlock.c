/* process.landlock, in the shape of runtime-spec PR 1241 (not merged upstream):
 *
 *   "landlock": {
 *     "handledAccess": { "handledAccessFS": ["execute", ...], "handledAccessNetwork": ["bind", "connect"] },
 *     "rules": {
 *       "pathBeneath": [ { "allowedAccess": ["execute", "read_file"], "paths": ["/usr"] } ],
 *       "networkPort": [ { "allowedAccess": ["connect"], "ports": ["443", 80] } ] },
 *     "enableBestEffort": true }
 *
 * Ports may be strings (as PR 1241's Go types have them) or integers, 0 to 65535.
 * enableBestEffort defaults to true. A rule's allowedAccess must be a non-empty subset of
 * the matching handled set.
 *
 * msp extensions (reported under linux.landlock in `features`):
 *   "scoped": ["abstract_unix_socket", "signal"]   -> LANDLOCK_SCOPE_* (ABI 6)
 *   "logging": { "sameExecOff": bool, "newExecOn": bool, "subdomainsOff": bool }
 *              -> landlock_restrict_self() LANDLOCK_RESTRICT_SELF_LOG_* flags (ABI 7) */
#include "oci/json.h"
#include "oci/spec.h"

#include <errno.h>

static int
parse_handled(oci_jr *r, const oci_json *v, oci_landlock *ll)
{
        static const oci_jr_names fs = { .lookup = oci_landlock_fs_right_from_name,
                                         .what = "filesystem access right" };
        static const oci_jr_names net = { .lookup = oci_landlock_net_right_from_name,
                                          .what = "network access right" };
        static const oci_jr_names scopes = { .lookup = oci_landlock_scope_from_name,
                                             .what = "scope" };
        const oci_json *h;
        int k = oci_jr_object(r, v, "handledAccess", &h);
        if (k > 0) {
                size_t mark = oci_jr_push_key(r, "handledAccess");
                k = oci_jr_bits(r, h, "handledAccessFS", &fs, &ll->handled_access_fs);
                if (k >= 0)
                        k = oci_jr_bits(r, h, "handledAccessNetwork", &net,
                                        &ll->handled_access_net);
                oci_jr_pop(r, mark);
        }
        if (k >= 0)
                k = oci_jr_bits(r, v, "scoped", &scopes, &ll->scoped);
        if (k >= 0 && !ll->handled_access_fs && !ll->handled_access_net && !ll->scoped)
                k = oci_jr_fail(r, EINVAL, "nothing to restrict: handledAccess and scoped are "
                                "empty or absent");
        return k;
}

static int
parse_logging(oci_jr *r, const oci_json *v, oci_landlock *ll)
{
        const oci_json *lg;
        int k = oci_jr_object(r, v, "logging", &lg);
        if (k <= 0)
                return k;
        size_t mark = oci_jr_push_key(r, "logging");
        k = oci_jr_bool(r, lg, "sameExecOff", &ll->log_same_exec_off);
        if (k >= 0)
                k = oci_jr_bool(r, lg, "newExecOn", &ll->log_new_exec_on);
        if (k >= 0)
                k = oci_jr_bool(r, lg, "subdomainsOff", &ll->log_subdomains_off);
        oci_jr_pop(r, mark);
        return k;
}

static int
allowed_access(oci_jr *r, const oci_json *v, const oci_jr_names *names, uint64_t *ret)
{
        int k = oci_jr_require(r, oci_jr_bits(r, v, "allowedAccess", names, ret),
                               "allowedAccess");
        if (k > 0 && *ret == 0) {
                size_t mark = oci_jr_push_key(r, "allowedAccess");
                k = oci_jr_fail(r, EINVAL, "must not be empty");
                oci_jr_pop(r, mark);
        }
        return k;
}

static int
parse_path_rule(oci_jr *r, const oci_json *v, void *elem)
{
        const oci_landlock *ll = r->user;
        oci_landlock_path_rule *rule = elem;
        oci_jr_names names = {
                .lookup = oci_landlock_fs_right_from_name,
                .what = "filesystem access right",
                .allowed = ll->handled_access_fs,
                .allowed_what = "handledAccess.handledAccessFS",
        };
        int k = allowed_access(r, v, &names, &rule->allowed_access);
        if (k >= 0)
                k = oci_jr_require(r, oci_jr_strv(r, v, "paths", &rule->paths), "paths");
        return k < 0 ? k : 0;
}

/* A port as a string of digits ("443") or an integer. */
static int
port_value(oci_jr *r, const oci_json *v, uint64_t *ret)
{
        const char *s = oci_json_string(v);
        if (!s)
                return oci_jr_val_uint(r, v, 65535, ret);
        uint64_t port = 0;
        size_t i = 0;
        for (; s[i] >= '0' && s[i] <= '9' && i < 6; i++)
                port = port * 10 + (uint64_t) (s[i] - '0');
        if (i == 0 || s[i] || port > 65535)
                return oci_jr_expected(r, v, "a port number from 0 to 65535");
        *ret = port;
        return 0;
}

static int
parse_port_rule(oci_jr *r, const oci_json *v, void *elem)
{
        const oci_landlock *ll = r->user;
        oci_landlock_port_rule *rule = elem;
        oci_jr_names names = {
                .lookup = oci_landlock_net_right_from_name,
                .what = "network access right",
                .allowed = ll->handled_access_net,
                .allowed_what = "handledAccess.handledAccessNetwork",
        };
        int k = allowed_access(r, v, &names, &rule->allowed_access);
        const oci_json *ports = NULL;
        if (k >= 0)
                k = oci_jr_require(r, oci_jr_array(r, v, "ports", &ports), "ports");
        if (k < 0)
                return k;
        size_t n = oci_json_len(ports);
        rule->ports = oci_arena_calloc(r->arena, n, sizeof *rule->ports);
        if (!rule->ports)
                return oci_jr_oom(r);
        rule->n_ports = n;
        size_t mark = oci_jr_push_key(r, "ports");
        for (size_t i = 0; i < n && k >= 0; i++) {
                size_t m2 = oci_jr_push_index(r, i);
                k = port_value(r, oci_json_value_at(ports, i), &rule->ports[i]);
                oci_jr_pop(r, m2);
        }
        oci_jr_pop(r, mark);
        return k < 0 ? k : 0;
}

static int
parse_rules(oci_jr *r, const oci_json *v, oci_landlock *ll)
{
        const oci_json *rules;
        int k = oci_jr_object(r, v, "rules", &rules);
        if (k <= 0)
                return k;
        void *saved = r->user;
        r->user = ll;
        size_t mark = oci_jr_push_key(r, "rules");
        k = oci_jr_objects(r, rules, "pathBeneath", sizeof(oci_landlock_path_rule),
                           parse_path_rule, (void **) &ll->path_beneath, &ll->n_path_beneath);
        if (k >= 0)
                k = oci_jr_objects(r, rules, "networkPort", sizeof(oci_landlock_port_rule),
                                   parse_port_rule, (void **) &ll->network_port,
                                   &ll->n_network_port);
        oci_jr_pop(r, mark);
        r->user = saved;
        return k;
}

int
oci_parse_landlock(oci_jr *r, const oci_json *v, oci_landlock **ret)
{
        oci_landlock *ll = oci_arena_calloc(r->arena, 1, sizeof *ll);
        if (!ll)
                return oci_jr_oom(r);
        ll->enable_best_effort = true;
        int k = parse_handled(r, v, ll);
        if (k >= 0)
                k = parse_logging(r, v, ll);
        if (k >= 0)
                k = parse_rules(r, v, ll);
        if (k >= 0)
                k = oci_jr_bool(r, v, "enableBestEffort", &ll->enable_best_effort);
        if (k < 0)
                return k;
        *ret = ll;
        return 0;
}
