/* config.json "linux.seccomp". Action, operator and flag names are checked here;
 * architecture names are kept as written ("SCMP_ARCH_X86_64") for the runtime to map. */
#include "oci/json.h"
#include "oci/spec.h"

#include <errno.h>

static int
parse_arg(oci_jr *r, const oci_json *v, void *elem)
{
        oci_seccomp_arg *a = elem;
        uint64_t index = 0;
        int op = 0;
        int k = oci_jr_require(r, oci_jr_uint_range(r, v, "index", 5, &index), "index");
        if (k >= 0)
                k = oci_jr_require(r, oci_jr_u64(r, v, "value", &a->value), "value");
        if (k >= 0)
                k = oci_jr_u64(r, v, "valueTwo", &a->value_two);
        if (k >= 0)
                k = oci_jr_named(r, v, "op", oci_seccomp_op_from_name, "seccomp operator", &op);
        a->index = (uint32_t) index;
        a->op = (oci_seccomp_op) op;
        return k < 0 ? k : 0;
}

static int
parse_syscall(oci_jr *r, const oci_json *v, void *elem)
{
        oci_seccomp_syscall *s = elem;
        int action = 0;
        int k = oci_jr_require(r, oci_jr_strv(r, v, "names", &s->names), "names");
        if (k > 0 && s->names.n == 0) {
                size_t mark = oci_jr_push_key(r, "names");
                k = oci_jr_fail(r, EINVAL, "must not be empty");
                oci_jr_pop(r, mark);
        }
        if (k >= 0)
                k = oci_jr_named(r, v, "action", oci_seccomp_action_from_name, "seccomp action",
                                 &action);
        s->action = (oci_seccomp_action) action;
        if (k >= 0)
                k = oci_jr_u32(r, v, "errnoRet", &s->errno_ret);
        s->has_errno_ret = k > 0;
        if (k >= 0)
                k = oci_jr_objects(r, v, "args", sizeof(oci_seccomp_arg), parse_arg,
                                   (void **) &s->args, &s->n_args);
        return k < 0 ? k : 0;
}

static bool
uses_notify(const oci_seccomp *sc)
{
        if (sc->default_action == OCI_SECCOMP_NOTIFY)
                return true;
        for (size_t i = 0; i < sc->n_syscalls; i++)
                if (sc->syscalls[i].action == OCI_SECCOMP_NOTIFY)
                        return true;
        return false;
}

int
oci_parse_seccomp(oci_jr *r, const oci_json *v, oci_seccomp **ret)
{
        static const oci_jr_names flags = { .lookup = oci_seccomp_flag_from_name,
                                            .what = "seccomp flag" };
        oci_seccomp *sc = oci_arena_calloc(r->arena, 1, sizeof *sc);
        if (!sc)
                return oci_jr_oom(r);
        int action = 0;
        uint64_t bits = 0;
        int k = oci_jr_named(r, v, "defaultAction", oci_seccomp_action_from_name,
                             "seccomp action", &action);
        sc->default_action = (oci_seccomp_action) action;
        if (k >= 0)
                k = oci_jr_u32(r, v, "defaultErrnoRet", &sc->default_errno_ret);
        sc->has_default_errno_ret = k > 0;
        if (k >= 0)
                k = oci_jr_strv(r, v, "architectures", &sc->architectures);
        if (k >= 0)
                k = oci_jr_bits(r, v, "flags", &flags, &bits);
        sc->flags = (uint32_t) bits;
        if (k >= 0)
                k = oci_jr_str(r, v, "listenerPath", &sc->listener_path);
        if (k >= 0)
                k = oci_jr_str(r, v, "listenerMetadata", &sc->listener_metadata);
        if (k >= 0)
                k = oci_jr_objects(r, v, "syscalls", sizeof(oci_seccomp_syscall), parse_syscall,
                                   (void **) &sc->syscalls, &sc->n_syscalls);
        if (k >= 0 && uses_notify(sc) && !sc->listener_path)
                k = oci_jr_missing(r, "listenerPath");
        if (k < 0)
                return k;
        *ret = sc;
        return 0;
}
