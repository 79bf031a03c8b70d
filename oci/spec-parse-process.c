/* config.json "process" (also the whole document of `exec --process`). */
#include "oci/json.h"
#include "oci/spec.h"

#include <errno.h>
#include <string.h>

static int
parse_console_size(oci_jr *r, const oci_json *v, oci_process *p)
{
        const oci_json *cs;
        int k = oci_jr_object(r, v, "consoleSize", &cs);
        if (k <= 0)
                return k;
        size_t mark = oci_jr_push_key(r, "consoleSize");
        k = oci_jr_require(r, oci_jr_u32(r, cs, "height", &p->console_height), "height");
        if (k >= 0)
                k = oci_jr_require(r, oci_jr_u32(r, cs, "width", &p->console_width), "width");
        oci_jr_pop(r, mark);
        p->has_console_size = k > 0;
        return k;
}

static int
parse_gids(oci_jr *r, const oci_json *user, oci_user *u)
{
        const oci_json *arr;
        int k = oci_jr_array(r, user, "additionalGids", &arr);
        if (k <= 0)
                return k;
        size_t n = oci_json_len(arr);
        u->additional_gids = oci_arena_calloc(r->arena, n, sizeof(uint32_t));
        if (!u->additional_gids)
                return oci_jr_oom(r);
        size_t mark = oci_jr_push_key(r, "additionalGids");
        for (size_t i = 0; i < n && k >= 0; i++) {
                size_t m2 = oci_jr_push_index(r, i);
                k = oci_jr_val_u32(r, oci_json_value_at(arr, i), &u->additional_gids[i]);
                oci_jr_pop(r, m2);
        }
        oci_jr_pop(r, mark);
        u->n_additional_gids = n;
        return k;
}

/* "user" is optional (root when absent, as runc does); uid and gid are required in it. */
static int
parse_user(oci_jr *r, const oci_json *v, oci_process *p)
{
        static const oci_jr_field fields[] = {
                OCI_JR_FR(oci_user, "uid", OCI_JR_U32, uid),
                OCI_JR_FR(oci_user, "gid", OCI_JR_U32, gid),
                OCI_JR_FH(oci_user, "umask", OCI_JR_U32, umask, has_umask),
                OCI_JR_F(oci_user, "username", OCI_JR_STR, username),
        };
        const oci_json *user;
        int k = oci_jr_object(r, v, "user", &user);
        if (k <= 0)
                return k;
        size_t mark = oci_jr_push_key(r, "user");
        k = oci_jr_fields(r, user, &p->user, fields, ARRAY_SIZE(fields));
        if (k >= 0)
                k = parse_gids(r, user, &p->user);
        oci_jr_pop(r, mark);
        return k;
}

static int
parse_args(oci_jr *r, const oci_json *v, oci_process *p)
{
        int k = oci_jr_require(r, oci_jr_strv(r, v, "args", &p->args), "args");
        if (k > 0 && p->args.n == 0) {
                size_t mark = oci_jr_push_key(r, "args");
                k = oci_jr_fail(r, EINVAL, "must not be empty");
                oci_jr_pop(r, mark);
        }
        if (k >= 0)
                k = oci_jr_str(r, v, "commandLine", &p->command_line);
        return k;
}

/* Every entry must be NAME=value with a non-empty NAME (execve passes it verbatim). */
static int
parse_env(oci_jr *r, const oci_json *v, oci_process *p)
{
        int k = oci_jr_strv(r, v, "env", &p->env);
        for (size_t i = 0; k > 0 && i < p->env.n; i++) {
                const char *e = p->env.v[i];
                const char *eq = strchr(e, '=');
                if (eq && eq != e)
                        continue;
                size_t mark = oci_jr_push_key(r, "env");
                oci_jr_push_index(r, i);
                char q[OCI_JR_VALUE_MAX * 2 + 16];
                oci_json_quote(e, q, sizeof q);
                k = oci_jr_fail(r, EINVAL, "expected \"NAME=value\", got %s", q);
                oci_jr_pop(r, mark);
        }
        return k;
}

static int
parse_cwd(oci_jr *r, const oci_json *v, oci_process *p)
{
        return oci_jr_require(r, oci_jr_abs_path(r, v, "cwd", &p->cwd), "cwd");
}

static int
parse_capabilities(oci_jr *r, const oci_json *v, oci_process *p)
{
        static const oci_jr_names caps = { .lookup = oci_cap_from_name, .what = "capability" };
        const oci_json *c;
        int k = oci_jr_object(r, v, "capabilities", &c);
        if (k <= 0)
                return k;
        p->has_capabilities = true;
        oci_capabilities *set = &p->capabilities;
        size_t mark = oci_jr_push_key(r, "capabilities");
        k = oci_jr_bits(r, c, "bounding", &caps, &set->bounding);
        if (k >= 0)
                k = oci_jr_bits(r, c, "effective", &caps, &set->effective);
        if (k >= 0)
                k = oci_jr_bits(r, c, "inheritable", &caps, &set->inheritable);
        if (k >= 0)
                k = oci_jr_bits(r, c, "permitted", &caps, &set->permitted);
        if (k >= 0)
                k = oci_jr_bits(r, c, "ambient", &caps, &set->ambient);
        oci_jr_pop(r, mark);
        return k;
}

static int
parse_rlimit(oci_jr *r, const oci_json *v, void *elem)
{
        oci_rlimit *rl = elem;
        int k = oci_jr_named(r, v, "type", oci_rlimit_from_name, "rlimit", &rl->resource);
        if (k >= 0)
                k = oci_jr_require(r, oci_jr_u64(r, v, "hard", &rl->hard), "hard");
        if (k >= 0)
                k = oci_jr_require(r, oci_jr_u64(r, v, "soft", &rl->soft), "soft");
        if (k >= 0 && rl->soft > rl->hard) {
                size_t mark = oci_jr_push_key(r, "soft");
                k = oci_jr_fail(r, EINVAL, "soft limit %llu exceeds hard limit %llu",
                                (unsigned long long) rl->soft, (unsigned long long) rl->hard);
                oci_jr_pop(r, mark);
        }
        return k < 0 ? k : 0;
}

static int
parse_rlimits(oci_jr *r, const oci_json *v, oci_process *p)
{
        int k = oci_jr_objects(r, v, "rlimits", sizeof(oci_rlimit), parse_rlimit,
                               (void **) &p->rlimits, &p->n_rlimits);
        for (size_t i = 1; k > 0 && i < p->n_rlimits; i++)
                for (size_t j = 0; j < i; j++) {
                        if (p->rlimits[i].resource != p->rlimits[j].resource)
                                continue;
                        size_t mark = oci_jr_push_key(r, "rlimits");
                        oci_jr_push_index(r, i);
                        oci_jr_push_key(r, "type");
                        k = oci_jr_fail(r, EINVAL, "duplicate rlimit \"%s\"",
                                        oci_rlimit_name(p->rlimits[i].resource));
                        oci_jr_pop(r, mark);
                        break;
                }
        return k;
}

static int
parse_security(oci_jr *r, const oci_json *v, oci_process *p)
{
        int64_t adj = 0;
        int k = oci_jr_bool(r, v, "noNewPrivileges", &p->no_new_privileges);
        if (k >= 0)
                k = oci_jr_str(r, v, "apparmorProfile", &p->apparmor_profile);
        if (k >= 0)
                k = oci_jr_str(r, v, "selinuxLabel", &p->selinux_label);
        if (k >= 0)
                k = oci_jr_int_range(r, v, "oomScoreAdj", -1000, 1000, &adj);
        if (k > 0) {
                p->has_oom_score_adj = true;
                p->oom_score_adj = (int32_t) adj;
        }
        return k;
}

static int
parse_io_priority(oci_jr *r, const oci_json *v, oci_process *p)
{
        const oci_json *io;
        int k = oci_jr_object(r, v, "ioPriority", &io);
        if (k <= 0)
                return k;
        int64_t prio = 0;
        size_t mark = oci_jr_push_key(r, "ioPriority");
        k = oci_jr_named(r, io, "class", oci_ioprio_class_from_name, "I/O priority class",
                         &p->io_priority.klass);
        if (k >= 0)
                k = oci_jr_int_range(r, io, "priority", 0, 7, &prio);
        oci_jr_pop(r, mark);
        p->io_priority.priority = (int32_t) prio;
        p->has_io_priority = k >= 0;
        return k;
}

static int
parse_scheduler(oci_jr *r, const oci_json *v, oci_process *p)
{
        static const oci_jr_names flags = { .lookup = oci_sched_flag_from_name,
                                            .what = "scheduler flag" };
        static const oci_jr_field fields[] = {
                OCI_JR_F(oci_scheduler, "priority", OCI_JR_I32, priority),
                OCI_JR_F(oci_scheduler, "runtime", OCI_JR_U64, runtime),
                OCI_JR_F(oci_scheduler, "deadline", OCI_JR_U64, deadline),
                OCI_JR_F(oci_scheduler, "period", OCI_JR_U64, period),
        };
        const oci_json *s;
        int k = oci_jr_object(r, v, "scheduler", &s);
        if (k <= 0)
                return k;
        oci_scheduler *sc = &p->scheduler;
        int64_t nice = 0;
        uint64_t bits = 0;
        size_t mark = oci_jr_push_key(r, "scheduler");
        k = oci_jr_named(r, s, "policy", oci_sched_policy_from_name, "scheduler policy",
                         &sc->policy);
        if (k >= 0)
                k = oci_jr_int_range(r, s, "nice", -20, 19, &nice);
        if (k >= 0)
                k = oci_jr_fields(r, s, sc, fields, ARRAY_SIZE(fields));
        if (k >= 0)
                k = oci_jr_bits(r, s, "flags", &flags, &bits);
        oci_jr_pop(r, mark);
        sc->nice = (int32_t) nice;
        sc->flags = (uint32_t) bits;
        p->has_scheduler = k >= 0;
        return k;
}

static int
parse_affinity_landlock(oci_jr *r, const oci_json *v, oci_process *p)
{
        const oci_json *o;
        int k = oci_jr_object(r, v, "execCPUAffinity", &o);
        if (k > 0) {
                size_t mark = oci_jr_push_key(r, "execCPUAffinity");
                k = oci_jr_str(r, o, "initial", &p->exec_cpu_affinity_initial);
                if (k >= 0)
                        k = oci_jr_str(r, o, "final", &p->exec_cpu_affinity_final);
                oci_jr_pop(r, mark);
        }
        if (k >= 0 && (k = oci_jr_object(r, v, "landlock", &o)) > 0) {
                size_t mark = oci_jr_push_key(r, "landlock");
                k = oci_parse_landlock(r, o, &p->landlock);
                oci_jr_pop(r, mark);
        }
        return k;
}

typedef int (*process_step)(oci_jr *r, const oci_json *v, oci_process *p);

int
oci_parse_process(oci_jr *r, const oci_json *v, oci_process **ret)
{
        static const process_step steps[] = {
                parse_console_size, parse_user,   parse_args,        parse_env,
                parse_cwd,          parse_capabilities, parse_rlimits, parse_security,
                parse_io_priority,  parse_scheduler, parse_affinity_landlock,
        };
        oci_process *p = oci_arena_calloc(r->arena, 1, sizeof *p);
        if (!p)
                return oci_jr_oom(r);
        int k = oci_jr_bool(r, v, "terminal", &p->terminal);
        for (size_t i = 0; i < ARRAY_SIZE(steps) && k >= 0; i++)
                k = steps[i](r, v, p);
        if (k < 0)
                return k;
        *ret = p;
        return 0;
}
