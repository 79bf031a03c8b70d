/* config.json "linux", except resources and seccomp (their own files). */
#include "oci/json.h"
#include "oci/spec.h"

#include <errno.h>
#include <string.h>

static int
fail_at_index(oci_jr *r, const char *key, size_t i, const char *sub, const char *msg,
              const char *value)
{
        char q[OCI_JR_VALUE_MAX * 2 + 16];
        oci_json_quote(value, q, sizeof q);
        size_t mark = oci_jr_push_key(r, key);
        oci_jr_push_index(r, i);
        if (sub)
                oci_jr_push_key(r, sub);
        int k = oci_jr_fail(r, EINVAL, "%s %s", msg, q);
        oci_jr_pop(r, mark);
        return k;
}

/* ---- namespaces and id mappings ---- */

static int
parse_namespace(oci_jr *r, const oci_json *v, void *elem)
{
        oci_namespace *ns = elem;
        int type = 0;
        int k = oci_jr_named(r, v, "type", oci_ns_type_from_name, "namespace type", &type);
        ns->type = (oci_ns_type) type;
        if (k >= 0)
                k = oci_jr_abs_path(r, v, "path", &ns->path);
        return k < 0 ? k : 0;
}

static int
parse_namespaces(oci_jr *r, const oci_json *v, oci_linux *l)
{
        int k = oci_jr_objects(r, v, "namespaces", sizeof(oci_namespace), parse_namespace,
                               (void **) &l->namespaces, &l->n_namespaces);
        unsigned seen = 0;
        for (size_t i = 0; k > 0 && i < l->n_namespaces; i++) {
                unsigned bit = 1u << l->namespaces[i].type;
                if (seen & bit)
                        return fail_at_index(r, "namespaces", i, "type",
                                             "duplicate namespace type",
                                             oci_ns_type_name(l->namespaces[i].type));
                seen |= bit;
        }
        return k;
}

static int
parse_mappings(oci_jr *r, const oci_json *v, oci_linux *l)
{
        const oci_json *arr;
        int k = oci_jr_array(r, v, "uidMappings", &arr);
        if (k > 0) {
                size_t mark = oci_jr_push_key(r, "uidMappings");
                k = oci_jr_val_id_mappings(r, arr, &l->uid_mappings, &l->n_uid_mappings);
                oci_jr_pop(r, mark);
        }
        if (k >= 0 && (k = oci_jr_array(r, v, "gidMappings", &arr)) > 0) {
                size_t mark = oci_jr_push_key(r, "gidMappings");
                k = oci_jr_val_id_mappings(r, arr, &l->gid_mappings, &l->n_gid_mappings);
                oci_jr_pop(r, mark);
        }
        return k;
}

/* ---- devices ---- */

static int
device_type(const char *name)
{
        if (name[0] && !name[1] && strchr("cbup", name[0]))
                return name[0];
        return -EINVAL;
}

static int
parse_device(oci_jr *r, const oci_json *v, void *elem)
{
        static const oci_jr_field fields[] = {
                OCI_JR_FH(oci_device, "fileMode", OCI_JR_U32, file_mode, has_file_mode),
                OCI_JR_FH(oci_device, "uid", OCI_JR_U32, uid, has_uid),
                OCI_JR_FH(oci_device, "gid", OCI_JR_U32, gid, has_gid),
        };
        oci_device *d = elem;
        int type = 0;
        int k = oci_jr_named(r, v, "type", device_type, "device type", &type);
        d->type = (char) type;
        if (k >= 0)
                k = oci_jr_require(r, oci_jr_abs_path(r, v, "path", &d->path), "path");
        if (k >= 0) {
                /* A FIFO has no device number. */
                k = oci_jr_i64(r, v, "major", &d->major);
                if (d->type != 'p')
                        k = oci_jr_require(r, k, "major");
        }
        if (k >= 0) {
                k = oci_jr_i64(r, v, "minor", &d->minor);
                if (d->type != 'p')
                        k = oci_jr_require(r, k, "minor");
        }
        if (k >= 0)
                k = oci_jr_fields(r, v, d, fields, ARRAY_SIZE(fields));
        return k < 0 ? k : 0;
}

/* ---- rootfsPropagation, intelRdt, personality ---- */

static int
parse_propagation(oci_jr *r, const oci_json *v, oci_linux *l)
{
        char *s = NULL;
        int k = oci_jr_str(r, v, "rootfsPropagation", &s);
        if (k <= 0 || !s[0])            /* "" means unset, as in runc */
                return k;
        if (oci_propagation_from_name(s, &l->rootfs_propagation) < 0) {
                size_t mark = oci_jr_push_key(r, "rootfsPropagation");
                char q[OCI_JR_VALUE_MAX * 2 + 16];
                oci_json_quote(s, q, sizeof q);
                k = oci_jr_fail(r, EINVAL, "unknown propagation %s", q);
                oci_jr_pop(r, mark);
                return k;
        }
        l->has_rootfs_propagation = true;
        return k;
}

static int
parse_intel_rdt(oci_jr *r, const oci_json *v, oci_linux *l)
{
        static const oci_jr_field fields[] = {
                OCI_JR_F(oci_intel_rdt, "closID", OCI_JR_STR, clos_id),
                OCI_JR_F(oci_intel_rdt, "l3CacheSchema", OCI_JR_STR, l3_cache_schema),
                OCI_JR_F(oci_intel_rdt, "memBwSchema", OCI_JR_STR, mem_bw_schema),
                OCI_JR_F(oci_intel_rdt, "schemata", OCI_JR_STRV, schemata),
                OCI_JR_F(oci_intel_rdt, "enableCMT", OCI_JR_BOOL, enable_cmt),
                OCI_JR_F(oci_intel_rdt, "enableMBM", OCI_JR_BOOL, enable_mbm),
                OCI_JR_F(oci_intel_rdt, "enableMonitoring", OCI_JR_BOOL, enable_monitoring),
        };
        const oci_json *o;
        int k = oci_jr_object(r, v, "intelRdt", &o);
        if (k <= 0)
                return k;
        l->intel_rdt = oci_arena_calloc(r->arena, 1, sizeof *l->intel_rdt);
        if (!l->intel_rdt)
                return oci_jr_oom(r);
        size_t mark = oci_jr_push_key(r, "intelRdt");
        k = oci_jr_fields(r, o, l->intel_rdt, fields, ARRAY_SIZE(fields));
        oci_jr_pop(r, mark);
        return k;
}

static int
personality_domain(const char *name)
{
        return strcmp(name, "LINUX") == 0 || strcmp(name, "LINUX32") == 0 ? 0 : -EINVAL;
}

static int
parse_personality(oci_jr *r, const oci_json *v, oci_linux *l)
{
        const oci_json *o;
        int k = oci_jr_object(r, v, "personality", &o);
        if (k <= 0)
                return k;
        oci_personality *p = oci_arena_calloc(r->arena, 1, sizeof *p);
        if (!p)
                return oci_jr_oom(r);
        int unused;
        size_t mark = oci_jr_push_key(r, "personality");
        k = oci_jr_named(r, o, "domain", personality_domain, "personality domain", &unused);
        if (k >= 0)
                k = oci_jr_str(r, o, "domain", &p->domain);
        if (k >= 0)
                k = oci_jr_strv(r, o, "flags", &p->flags);
        oci_jr_pop(r, mark);
        l->personality = p;
        return k;
}

/* ---- timeOffsets, netDevices, memoryPolicy ---- */

static int
parse_time_offset(oci_jr *r, const char *clock, const oci_json *v, void *elem)
{
        (void) elem;
        oci_linux *l = r->user;
        oci_time_offset *t;
        if (strcmp(clock, "boottime") == 0)
                t = &l->time_boottime;
        else if (strcmp(clock, "monotonic") == 0)
                t = &l->time_monotonic;
        else
                return oci_jr_fail(r, EINVAL, "unknown clock (expected boottime or monotonic)");
        if (oci_json_type_of(v) != OCI_JSON_OBJECT)
                return oci_jr_expected(r, v, "an object");
        uint64_t ns = 0;
        int k = oci_jr_i64(r, v, "secs", &t->secs);
        if (k >= 0)
                k = oci_jr_uint_range(r, v, "nanosecs", 999999999, &ns);
        t->nanosecs = (uint32_t) ns;
        t->present = k >= 0;
        return k < 0 ? k : 0;
}

/* Interface names as the kernel accepts them (dev_valid_name()). */
static bool
ifname_valid(const char *s)
{
        size_t n = strlen(s);
        if (n == 0 || n > 15 || strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
                return false;
        for (; *s; s++)
                if (*s == '/' || *s == ':' || *s == ' ' || (*s >= '\t' && *s <= '\r'))
                        return false;
        return true;
}

static int
parse_net_device(oci_jr *r, const char *host, const oci_json *v, void *elem)
{
        oci_net_device *d = elem;
        char q[OCI_JR_VALUE_MAX * 2 + 16];
        if (!ifname_valid(host)) {
                oci_json_quote(host, q, sizeof q);
                return oci_jr_fail(r, EINVAL, "invalid network interface name %s", q);
        }
        if (oci_json_type_of(v) != OCI_JSON_OBJECT)
                return oci_jr_expected(r, v, "an object");
        d->host_name = oci_arena_strdup(r->arena, host);
        if (!d->host_name)
                return oci_jr_oom(r);
        int k = oci_jr_str(r, v, "name", &d->name);
        if (k > 0 && !ifname_valid(d->name)) {
                size_t mark = oci_jr_push_key(r, "name");
                oci_json_quote(d->name, q, sizeof q);
                k = oci_jr_fail(r, EINVAL, "invalid network interface name %s", q);
                oci_jr_pop(r, mark);
        }
        return k < 0 ? k : 0;
}

static int
mpol_mode(const char *name)
{
        return oci_memory_policy_mode_valid(name) ? 0 : -EINVAL;
}

static int
parse_memory_policy(oci_jr *r, const oci_json *v, oci_linux *l)
{
        const oci_json *o;
        int k = oci_jr_object(r, v, "memoryPolicy", &o);
        if (k <= 0)
                return k;
        oci_memory_policy *mp = oci_arena_calloc(r->arena, 1, sizeof *mp);
        if (!mp)
                return oci_jr_oom(r);
        int unused;
        size_t mark = oci_jr_push_key(r, "memoryPolicy");
        k = oci_jr_named(r, o, "mode", mpol_mode, "memory policy mode", &unused);
        if (k >= 0)
                k = oci_jr_str(r, o, "mode", &mp->mode);
        if (k >= 0)
                k = oci_jr_str(r, o, "nodes", &mp->nodes);
        if (k >= 0)
                k = oci_jr_strv(r, o, "flags", &mp->flags);
        for (size_t i = 0; k > 0 && i < mp->flags.n; i++)
                if (!oci_memory_policy_flag_valid(mp->flags.v[i]))
                        k = fail_at_index(r, "flags", i, NULL, "unknown memory policy flag",
                                          mp->flags.v[i]);
        oci_jr_pop(r, mark);
        l->memory_policy = mp;
        return k;
}

static int
parse_misc(oci_jr *r, const oci_json *v, oci_linux *l)
{
        static const oci_jr_field fields[] = {
                OCI_JR_F(oci_linux, "cgroupsPath", OCI_JR_STR, cgroups_path),
                OCI_JR_F(oci_linux, "sysctl", OCI_JR_MAP, sysctl),
                OCI_JR_F(oci_linux, "maskedPaths", OCI_JR_STRV, masked_paths),
                OCI_JR_F(oci_linux, "readonlyPaths", OCI_JR_STRV, readonly_paths),
                OCI_JR_F(oci_linux, "mountLabel", OCI_JR_STR, mount_label),
        };
        return oci_jr_fields(r, v, l, fields, ARRAY_SIZE(fields));
}

static int
parse_devices(oci_jr *r, const oci_json *v, oci_linux *l)
{
        return oci_jr_objects(r, v, "devices", sizeof(oci_device), parse_device,
                              (void **) &l->devices, &l->n_devices);
}

static int
parse_maps(oci_jr *r, const oci_json *v, oci_linux *l)
{
        void *unused;
        size_t n_unused;
        void *saved = r->user;
        r->user = l;
        int k = oci_jr_members(r, v, "timeOffsets", 0, parse_time_offset, &unused, &n_unused);
        r->user = saved;
        if (k >= 0)
                k = oci_jr_members(r, v, "netDevices", sizeof(oci_net_device), parse_net_device,
                                   (void **) &l->net_devices, &l->n_net_devices);
        return k;
}

static int
parse_sub_objects(oci_jr *r, const oci_json *v, oci_linux *l)
{
        const oci_json *o;
        int k = oci_jr_object(r, v, "resources", &o);
        if (k > 0) {
                size_t mark = oci_jr_push_key(r, "resources");
                k = oci_parse_resources(r, o, &l->resources);
                oci_jr_pop(r, mark);
        }
        if (k >= 0 && (k = oci_jr_object(r, v, "seccomp", &o)) > 0) {
                size_t mark = oci_jr_push_key(r, "seccomp");
                k = oci_parse_seccomp(r, o, &l->seccomp);
                oci_jr_pop(r, mark);
        }
        return k;
}

typedef int (*linux_step)(oci_jr *r, const oci_json *v, oci_linux *l);

int
oci_parse_linux(oci_jr *r, const oci_json *v, oci_linux **ret)
{
        static const linux_step steps[] = {
                parse_namespaces,  parse_mappings,  parse_devices,       parse_misc,
                parse_sub_objects, parse_propagation, parse_intel_rdt,   parse_personality,
                parse_maps,        parse_memory_policy,
        };
        oci_linux *l = oci_arena_calloc(r->arena, 1, sizeof *l);
        if (!l)
                return oci_jr_oom(r);
        int k = 0;
        for (size_t i = 0; i < ARRAY_SIZE(steps) && k >= 0; i++)
                k = steps[i](r, v, l);
        if (k < 0)
                return k;
        *ret = l;
        return 0;
}
