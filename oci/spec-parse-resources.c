/* LinuxResources: config.json "linux.resources" and the document of
 * `update --resources`. Values are checked for type and range only; what a cgroup
 * version can apply is the runtime's decision. */
#include "oci/json.h"
#include "oci/spec.h"

#include <errno.h>
#include <string.h>

/* ---- device cgroup rules ---- */

static int
cgroup_device_type(const char *name)
{
        if (name[0] && !name[1] && strchr("acb", name[0]))
                return name[0];
        return -EINVAL;
}

/* access: a subset of "rwm", each letter at most once. */
static bool
access_valid(const char *s)
{
        if (strlen(s) > 3)
                return false;
        for (const char *p = s; *p; p++)
                if (!strchr("rwm", *p) || strchr(p + 1, *p))
                        return false;
        return true;
}

static int
parse_device_rule(oci_jr *r, const oci_json *v, void *elem)
{
        oci_device_cgroup *d = elem;
        int k = oci_jr_require(r, oci_jr_bool(r, v, "allow", &d->allow), "allow");
        d->type = 'a';
        const oci_json *t = oci_json_get(v, "type");
        if (k >= 0 && t && oci_json_type_of(t) != OCI_JSON_NULL) {
                int type = 'a';
                k = oci_jr_named(r, v, "type", cgroup_device_type, "device type", &type);
                d->type = (char) type;
        }
        if (k >= 0)
                k = oci_jr_i64(r, v, "major", &d->major);
        d->has_major = k > 0;
        if (k >= 0)
                k = oci_jr_i64(r, v, "minor", &d->minor);
        d->has_minor = k > 0;
        const char *access = NULL;
        const oci_json *a = oci_json_get(v, "access");
        if (k >= 0 && a && oci_json_type_of(a) != OCI_JSON_NULL) {
                size_t mark = oci_jr_push_key(r, "access");
                k = oci_jr_val_cstr(r, a, &access);
                if (k >= 0 && !access_valid(access))
                        k = oci_jr_expected(r, a, "a combination of \"r\", \"w\" and \"m\"");
                if (k >= 0)
                        strcpy(d->access, access);
                oci_jr_pop(r, mark);
        }
        return k < 0 ? k : 0;
}

/* ---- memory, cpu, pids ---- */

static int
parse_memory(oci_jr *r, const oci_json *v, oci_resources *res)
{
        static const oci_jr_field fields[] = {
                OCI_JR_FH(oci_memory, "limit", OCI_JR_I64, limit, has_limit),
                OCI_JR_FH(oci_memory, "reservation", OCI_JR_I64, reservation, has_reservation),
                OCI_JR_FH(oci_memory, "swap", OCI_JR_I64, swap, has_swap),
                OCI_JR_FH(oci_memory, "kernel", OCI_JR_I64, kernel, has_kernel),
                OCI_JR_FH(oci_memory, "kernelTCP", OCI_JR_I64, kernel_tcp, has_kernel_tcp),
                OCI_JR_FH(oci_memory, "swappiness", OCI_JR_U64, swappiness, has_swappiness),
                OCI_JR_FH(oci_memory, "disableOOMKiller", OCI_JR_BOOL, disable_oom_killer,
                          has_disable_oom_killer),
                OCI_JR_FH(oci_memory, "useHierarchy", OCI_JR_BOOL, use_hierarchy,
                          has_use_hierarchy),
                OCI_JR_FH(oci_memory, "checkBeforeUpdate", OCI_JR_BOOL, check_before_update,
                          has_check_before_update),
        };
        const oci_json *o;
        int k = oci_jr_object(r, v, "memory", &o);
        if (k <= 0)
                return k;
        res->has_memory = true;
        size_t mark = oci_jr_push_key(r, "memory");
        k = oci_jr_fields(r, o, &res->memory, fields, ARRAY_SIZE(fields));
        oci_jr_pop(r, mark);
        return k;
}

static int
parse_cpu(oci_jr *r, const oci_json *v, oci_resources *res)
{
        static const oci_jr_field fields[] = {
                OCI_JR_FH(oci_cpu, "shares", OCI_JR_U64, shares, has_shares),
                OCI_JR_FH(oci_cpu, "quota", OCI_JR_I64, quota, has_quota),
                OCI_JR_FH(oci_cpu, "burst", OCI_JR_U64, burst, has_burst),
                OCI_JR_FH(oci_cpu, "period", OCI_JR_U64, period, has_period),
                OCI_JR_FH(oci_cpu, "realtimeRuntime", OCI_JR_I64, realtime_runtime,
                          has_realtime_runtime),
                OCI_JR_FH(oci_cpu, "realtimePeriod", OCI_JR_U64, realtime_period,
                          has_realtime_period),
                OCI_JR_F(oci_cpu, "cpus", OCI_JR_STR, cpus),
                OCI_JR_F(oci_cpu, "mems", OCI_JR_STR, mems),
                OCI_JR_FH(oci_cpu, "idle", OCI_JR_I64, idle, has_idle),
        };
        const oci_json *o;
        int k = oci_jr_object(r, v, "cpu", &o);
        if (k <= 0)
                return k;
        res->has_cpu = true;
        size_t mark = oci_jr_push_key(r, "cpu");
        k = oci_jr_fields(r, o, &res->cpu, fields, ARRAY_SIZE(fields));
        oci_jr_pop(r, mark);
        return k;
}

static int
parse_pids(oci_jr *r, const oci_json *v, oci_resources *res)
{
        const oci_json *o;
        int k = oci_jr_object(r, v, "pids", &o);
        if (k <= 0)
                return k;
        size_t mark = oci_jr_push_key(r, "pids");
        k = oci_jr_i64(r, o, "limit", &res->pids_limit);
        oci_jr_pop(r, mark);
        res->has_pids = k > 0;
        return k;
}

/* ---- blockIO ---- */

static int
parse_weight_device(oci_jr *r, const oci_json *v, void *elem)
{
        static const oci_jr_field fields[] = {
                OCI_JR_FR(oci_weight_device, "major", OCI_JR_I64, major),
                OCI_JR_FR(oci_weight_device, "minor", OCI_JR_I64, minor),
                OCI_JR_FH(oci_weight_device, "weight", OCI_JR_U16, weight, has_weight),
                OCI_JR_FH(oci_weight_device, "leafWeight", OCI_JR_U16, leaf_weight,
                          has_leaf_weight),
        };
        return oci_jr_fields(r, v, elem, fields, ARRAY_SIZE(fields));
}

static int
parse_throttle_device(oci_jr *r, const oci_json *v, void *elem)
{
        static const oci_jr_field fields[] = {
                OCI_JR_FR(oci_throttle_device, "major", OCI_JR_I64, major),
                OCI_JR_FR(oci_throttle_device, "minor", OCI_JR_I64, minor),
                OCI_JR_FR(oci_throttle_device, "rate", OCI_JR_U64, rate),
        };
        return oci_jr_fields(r, v, elem, fields, ARRAY_SIZE(fields));
}

static int
parse_throttle(oci_jr *r, const oci_json *o, const char *key, oci_throttle_list *l)
{
        return oci_jr_objects(r, o, key, sizeof(oci_throttle_device), parse_throttle_device,
                              (void **) &l->v, &l->n);
}

static int
parse_blockio(oci_jr *r, const oci_json *v, oci_resources *res)
{
        static const oci_jr_field fields[] = {
                OCI_JR_FH(oci_blockio, "weight", OCI_JR_U16, weight, has_weight),
                OCI_JR_FH(oci_blockio, "leafWeight", OCI_JR_U16, leaf_weight, has_leaf_weight),
        };
        const oci_json *o;
        int k = oci_jr_object(r, v, "blockIO", &o);
        if (k <= 0)
                return k;
        res->has_blockio = true;
        oci_blockio *b = &res->blockio;
        size_t mark = oci_jr_push_key(r, "blockIO");
        k = oci_jr_fields(r, o, b, fields, ARRAY_SIZE(fields));
        if (k >= 0)
                k = oci_jr_objects(r, o, "weightDevice", sizeof(oci_weight_device),
                                   parse_weight_device, (void **) &b->weight_device,
                                   &b->n_weight_device);
        if (k >= 0)
                k = parse_throttle(r, o, "throttleReadBpsDevice", &b->throttle_read_bps);
        if (k >= 0)
                k = parse_throttle(r, o, "throttleWriteBpsDevice", &b->throttle_write_bps);
        if (k >= 0)
                k = parse_throttle(r, o, "throttleReadIOPSDevice", &b->throttle_read_iops);
        if (k >= 0)
                k = parse_throttle(r, o, "throttleWriteIOPSDevice", &b->throttle_write_iops);
        oci_jr_pop(r, mark);
        return k;
}

/* ---- hugepageLimits, network, rdma, unified ---- */

static int
parse_hugepage(oci_jr *r, const oci_json *v, void *elem)
{
        static const oci_jr_field fields[] = {
                OCI_JR_FR(oci_hugepage_limit, "pageSize", OCI_JR_STR, page_size),
                OCI_JR_FR(oci_hugepage_limit, "limit", OCI_JR_U64, limit),
        };
        return oci_jr_fields(r, v, elem, fields, ARRAY_SIZE(fields));
}

static int
parse_net_priority(oci_jr *r, const oci_json *v, void *elem)
{
        static const oci_jr_field fields[] = {
                OCI_JR_FR(oci_net_priority, "name", OCI_JR_STR, name),
                OCI_JR_FR(oci_net_priority, "priority", OCI_JR_U32, priority),
        };
        return oci_jr_fields(r, v, elem, fields, ARRAY_SIZE(fields));
}

static int
parse_network(oci_jr *r, const oci_json *v, oci_resources *res)
{
        const oci_json *o;
        int k = oci_jr_object(r, v, "network", &o);
        if (k <= 0)
                return k;
        res->has_network = true;
        size_t mark = oci_jr_push_key(r, "network");
        k = oci_jr_u32(r, o, "classID", &res->net_class_id);
        res->has_net_class_id = k > 0;
        if (k >= 0)
                k = oci_jr_objects(r, o, "priorities", sizeof(oci_net_priority),
                                   parse_net_priority, (void **) &res->net_priorities,
                                   &res->n_net_priorities);
        oci_jr_pop(r, mark);
        return k;
}

static int
parse_rdma_entry(oci_jr *r, const char *device, const oci_json *v, void *elem)
{
        static const oci_jr_field fields[] = {
                OCI_JR_FH(oci_rdma_limit, "hcaHandles", OCI_JR_U32, hca_handles,
                          has_hca_handles),
                OCI_JR_FH(oci_rdma_limit, "hcaObjects", OCI_JR_U32, hca_objects,
                          has_hca_objects),
        };
        oci_rdma_limit *l = elem;
        if (oci_json_type_of(v) != OCI_JSON_OBJECT)
                return oci_jr_expected(r, v, "an object");
        l->device = oci_arena_strdup(r->arena, device);
        if (!l->device)
                return oci_jr_oom(r);
        return oci_jr_fields(r, v, l, fields, ARRAY_SIZE(fields));
}

static int
parse_lists(oci_jr *r, const oci_json *v, oci_resources *res)
{
        int k = oci_jr_objects(r, v, "devices", sizeof(oci_device_cgroup), parse_device_rule,
                               (void **) &res->devices, &res->n_devices);
        if (k >= 0)
                k = oci_jr_objects(r, v, "hugepageLimits", sizeof(oci_hugepage_limit),
                                   parse_hugepage, (void **) &res->hugepage_limits,
                                   &res->n_hugepage_limits);
        if (k >= 0)
                k = oci_jr_members(r, v, "rdma", sizeof(oci_rdma_limit), parse_rdma_entry,
                                   (void **) &res->rdma, &res->n_rdma);
        if (k >= 0)
                k = oci_jr_map(r, v, "unified", &res->unified);
        return k;
}

typedef int (*resources_step)(oci_jr *r, const oci_json *v, oci_resources *res);

int
oci_parse_resources(oci_jr *r, const oci_json *v, oci_resources **ret)
{
        static const resources_step steps[] = {
                parse_lists, parse_memory, parse_cpu, parse_pids, parse_blockio, parse_network,
        };
        oci_resources *res = oci_arena_calloc(r->arena, 1, sizeof *res);
        if (!res)
                return oci_jr_oom(r);
        int k = 0;
        for (size_t i = 0; i < ARRAY_SIZE(steps) && k >= 0; i++)
                k = steps[i](r, v, res);
        if (k < 0)
                return k;
        *ret = res;
        return 0;
}
