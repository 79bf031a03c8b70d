/* update [--resources FILE|-] [per-field flags] ID: change the cgroup limits of a live
 * container (podman update passes --resources=<file> with a LinuxResources object).
 * The flags are runc's; given together with --resources they override the file's
 * fields. Memory sizes take runc's binary suffixes: 64k, 512m, 1.5g, 2GiB, -1. As in
 * runc, a zero (or an empty cpuset list) leaves a field unchanged: the containerd shim
 * sends every field it knows, zeros for those the user did not give. */
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "lib/rt.h"
#include "oci/oci.h"

enum {
        OPT_MEMORY = 256,
        OPT_MEMORY_RESERVATION,
        OPT_MEMORY_SWAP,
        OPT_KERNEL_MEMORY,
        OPT_KERNEL_MEMORY_TCP,
        OPT_PIDS_LIMIT,
        OPT_CPU_SHARES,
        OPT_CPU_QUOTA,
        OPT_CPU_PERIOD,
        OPT_CPU_BURST,
        OPT_CPU_RT_PERIOD,
        OPT_CPU_RT_RUNTIME,
        OPT_CPU_IDLE,
        OPT_CPUSET_CPUS,
        OPT_CPUSET_MEMS,
        OPT_BLKIO_WEIGHT,
};

/* runc's RAMInBytes: digits with an optional fraction, an optional space, then an
 * optional binary unit (k m g t p, any case) with an optional "i" and "b". "-1" is
 * unlimited. */
static int
parse_bytes(const char *s, int64_t *ret)
{
        static const char units[] = "kmgtp";
        const char *p = s;
        uint64_t whole, mult = 1, frac_num = 0, frac_den = 1;
        char *end;

        if (strcmp(s, "-1") == 0) {
                *ret = -1;
                return 0;
        }
        if (*p < '0' || *p > '9')
                return -EINVAL;
        errno = 0;
        whole = strtoull(p, &end, 10);
        if (errno)
                return -ERANGE;
        p = end;
        if (*p == '.') {
                if (p[1] < '0' || p[1] > '9')
                        return -EINVAL;
                /* Up to 9 decimals are kept; more precision than a byte is noise. */
                for (p++; *p >= '0' && *p <= '9'; p++)
                        if (frac_den < 1000000000) {
                                frac_num = frac_num * 10 + (uint64_t) (*p - '0');
                                frac_den *= 10;
                        }
        }
        if (*p == ' ')
                p++;
        if (*p) {
                const char *u = strchr(units, *p | 0x20);
                if (!u)
                        return -EINVAL;
                for (const char *k = units; k <= u; k++)
                        mult *= 1024;
                p++;
                if ((*p | 0x20) == 'i')
                        p++;
                if ((*p | 0x20) == 'b')
                        p++;
        }
        if (*p)
                return -EINVAL;
        if (whole > ((uint64_t) INT64_MAX - mult) / mult)
                return -ERANGE;
        *ret = (int64_t) (whole * mult + (uint64_t) ((long double) frac_num * mult / frac_den));
        return 0;
}

static int
parse_i64(const char *s, int64_t *ret)
{
        char *end;

        errno = 0;
        long long v = strtoll(s, &end, 10);
        if (!*s || *end || errno)
                return -EINVAL;
        *ret = v;
        return 0;
}

static int
parse_u64(const char *s, uint64_t *ret)
{
        char *end;

        if (*s < '0' || *s > '9')
                return -EINVAL;
        errno = 0;
        unsigned long long v = strtoull(s, &end, 10);
        if (*end || errno)
                return -EINVAL;
        *ret = v;
        return 0;
}

/* The LinuxResources document of --resources (a path, or "-" for stdin), parsed and as
 * a JSON tree (merged into the config copy afterwards). */
static int
load_resources(const char *path, oci_spec **ret, oci_json_doc **ret_doc, msp_err *err)
{
        bool from_stdin = strcmp(path, "-") == 0;
        const char *name = from_stdin ? "<stdin>" : path;
        _cleanup_free_ char *buf = NULL;
        size_t len = 0;
        int r = from_stdin ? rt_read_fd_all(STDIN_FILENO, name, OCI_CONFIG_MAX_BYTES, &buf, &len, err)
                           : rt_read_file_at(AT_FDCWD, path, false, OCI_CONFIG_MAX_BYTES, &buf, &len,
                                             err);
        if (r < 0)
                return r;
        r = oci_resources_parse_data(name, buf, len, ret, err);
        if (r < 0)
                return r;
        return oci_json_parse(name, buf, len, ret_doc, err);
}

/* Apply one flag to res; returns -EINVAL for a bad value. */
static int
set_flag(oci_resources *res, int opt, const char *v)
{
        oci_memory *m = &res->memory;
        oci_cpu *c = &res->cpu;
        uint64_t u;
        int r = 0;

        if (opt >= OPT_MEMORY && opt <= OPT_KERNEL_MEMORY_TCP)
                res->has_memory = true;
        else if (opt >= OPT_CPU_SHARES && opt <= OPT_CPUSET_MEMS)
                res->has_cpu = true;
        switch (opt) {
        case OPT_MEMORY: m->has_limit = true; return parse_bytes(v, &m->limit);
        case OPT_MEMORY_RESERVATION: m->has_reservation = true; return parse_bytes(v, &m->reservation);
        case OPT_MEMORY_SWAP: m->has_swap = true; return parse_bytes(v, &m->swap);
        case OPT_KERNEL_MEMORY: m->has_kernel = true; return parse_bytes(v, &m->kernel);
        case OPT_KERNEL_MEMORY_TCP: m->has_kernel_tcp = true; return parse_bytes(v, &m->kernel_tcp);
        case OPT_PIDS_LIMIT: res->has_pids = true; return parse_i64(v, &res->pids_limit);
        case OPT_CPU_SHARES: c->has_shares = true; return parse_u64(v, &c->shares);
        case OPT_CPU_QUOTA: c->has_quota = true; return parse_i64(v, &c->quota);
        case OPT_CPU_PERIOD: c->has_period = true; return parse_u64(v, &c->period);
        case OPT_CPU_BURST: c->has_burst = true; return parse_u64(v, &c->burst);
        case OPT_CPU_RT_PERIOD: c->has_realtime_period = true; return parse_u64(v, &c->realtime_period);
        case OPT_CPU_RT_RUNTIME:
                c->has_realtime_runtime = true;
                return parse_i64(v, &c->realtime_runtime);
        case OPT_CPU_IDLE: c->has_idle = true; return parse_i64(v, &c->idle);
        case OPT_CPUSET_CPUS: c->cpus = (char *) v; return 0;
        case OPT_CPUSET_MEMS: c->mems = (char *) v; return 0;
        case OPT_BLKIO_WEIGHT:
                r = parse_u64(v, &u);
                if (r < 0 || u > UINT16_MAX)
                        return -EINVAL;
                res->has_blockio = true;
                res->blockio.has_weight = true;
                res->blockio.weight = (uint16_t) u;
                return 0;
        }
        return -EINVAL;
}

/* The fields whose zero means "leave it as it is", per object of LinuxResources. */
static const struct {
        const char *object, *key;
} unchanged_if_zero[] = {
        { "memory", "limit" }, { "memory", "reservation" }, { "memory", "swap" },
        { "memory", "kernel" }, { "memory", "kernelTCP" },
        { "cpu", "shares" }, { "cpu", "quota" }, { "cpu", "period" },
        { "cpu", "realtimePeriod" }, { "cpu", "realtimeRuntime" },
        { "cpu", "cpus" }, { "cpu", "mems" },
        { "blockIO", "weight" }, { "pids", "limit" },
};

#define GIVEN(o) given[(o) - OPT_MEMORY]

static void
drop_i64(bool *has, int64_t v, bool given[], int opt)
{
        if (*has && v == 0)
                *has = GIVEN(opt) = false;
}

static void
drop_u64(bool *has, uint64_t v, bool given[], int opt)
{
        if (*has && v == 0)
                *has = GIVEN(opt) = false;
}

static void
drop_list(char **list, bool given[], int opt)
{
        if (*list && !**list) {
                *list = NULL;
                GIVEN(opt) = false;
        }
}

/* res without the fields unchanged_if_zero lists at zero (from the file or a flag). */
static void
drop_unchanged(oci_resources *res, bool given[])
{
        oci_memory *m = &res->memory;
        oci_cpu *c = &res->cpu;

        drop_i64(&m->has_limit, m->limit, given, OPT_MEMORY);
        drop_i64(&m->has_reservation, m->reservation, given, OPT_MEMORY_RESERVATION);
        drop_i64(&m->has_swap, m->swap, given, OPT_MEMORY_SWAP);
        drop_i64(&m->has_kernel, m->kernel, given, OPT_KERNEL_MEMORY);
        drop_i64(&m->has_kernel_tcp, m->kernel_tcp, given, OPT_KERNEL_MEMORY_TCP);
        drop_u64(&c->has_shares, c->shares, given, OPT_CPU_SHARES);
        drop_i64(&c->has_quota, c->quota, given, OPT_CPU_QUOTA);
        drop_u64(&c->has_period, c->period, given, OPT_CPU_PERIOD);
        drop_u64(&c->has_realtime_period, c->realtime_period, given, OPT_CPU_RT_PERIOD);
        drop_i64(&c->has_realtime_runtime, c->realtime_runtime, given, OPT_CPU_RT_RUNTIME);
        drop_list(&c->cpus, given, OPT_CPUSET_CPUS);
        drop_list(&c->mems, given, OPT_CPUSET_MEMS);
        drop_u64(&res->blockio.has_weight, res->blockio.weight, given, OPT_BLKIO_WEIGHT);
        drop_i64(&res->has_pids, res->pids_limit, given, OPT_PIDS_LIMIT);
}

static bool
unchanged_value(const char *object, const char *key, const oci_json *v)
{
        for (size_t i = 0; i < ARRAY_SIZE(unchanged_if_zero); i++) {
                if (strcmp(object, unchanged_if_zero[i].object) != 0 ||
                    strcmp(key, unchanged_if_zero[i].key) != 0)
                        continue;
                if (oci_json_type_of(v) == OCI_JSON_NUMBER)
                        return strtod(oci_json_number_text(v), NULL) == 0;
                return oci_json_type_of(v) == OCI_JSON_STRING && !*oci_json_string(v);
        }
        return false;
}

/* ---- persisting the update in the config copy ----
 * runc keeps what `update` set in its state so that a later update or exec starts from
 * it; msp's equivalent is the config copy in the state dir (the lifecycle's config
 * reader, rt_container_load_config). Its linux.resources is deep-merged with the update
 * (oci_json_merge): objects key by key, anything else replaced, "devices" left out
 * (update does not change device rules). CONFIG_COPY prefixes the merge's messages. */

#define CONFIG_COPY "config copy"

/* The --resources document without the values that leave a field unchanged, so that
 * the config copy keeps the field's value. */
static int
file_overlay(const oci_json *root, char **ret, size_t *ret_len, msp_err *err)
{
        _cleanup_jw_ oci_jw *w = oci_jw_new(false);
        int r;

        if (!w)
                return msp_err_set(err, ENOMEM, "out of memory");
        oci_jw_begin_object(w);
        for (size_t i = 0; i < oci_json_len(root); i++) {
                const char *key = oci_json_key_at(root, i);
                const oci_json *v = oci_json_value_at(root, i);
                oci_jw_key(w, key);
                if (oci_json_type_of(v) != OCI_JSON_OBJECT) {
                        r = oci_json_copy(w, CONFIG_COPY, v, err);
                        if (r < 0)
                                return r;
                        continue;
                }
                oci_jw_begin_object(w);
                for (size_t j = 0; j < oci_json_len(v); j++) {
                        const char *k = oci_json_key_at(v, j);
                        if (unchanged_value(key, k, oci_json_value_at(v, j)))
                                continue;
                        oci_jw_key(w, k);
                        r = oci_json_copy(w, CONFIG_COPY, oci_json_value_at(v, j), err);
                        if (r < 0)
                                return r;
                }
                oci_jw_end_object(w);
        }
        oci_jw_end_object(w);
        return oci_jw_finish(w, ret, ret_len, err);
}

/* The config copy with linux.resources merged with the overlays (LinuxResources
 * objects, later ones win). */
static int
merge_config(const oci_json *cfg, const oci_json *const *ov, size_t n, char **ret, size_t *ret_len,
             msp_err *err)
{
        _cleanup_jw_ oci_jw *w = oci_jw_new(false);
        const oci_json *lx = oci_json_get(cfg, "linux");
        int r;

        if (!w)
                return msp_err_set(err, ENOMEM, "out of memory");
        if (lx && oci_json_type_of(lx) != OCI_JSON_OBJECT)
                lx = NULL;
        oci_jw_begin_object(w);
        for (size_t i = 0; i < oci_json_len(cfg); i++) {
                const char *key = oci_json_key_at(cfg, i);
                if (strcmp(key, "linux") == 0)
                        continue;
                oci_jw_key(w, key);
                r = oci_json_copy(w, CONFIG_COPY, oci_json_value_at(cfg, i), err);
                if (r < 0)
                        return r;
        }
        oci_jw_key(w, "linux");
        oci_jw_begin_object(w);
        for (size_t i = 0; lx && i < oci_json_len(lx); i++) {
                const char *key = oci_json_key_at(lx, i);
                if (strcmp(key, "resources") == 0)
                        continue;
                oci_jw_key(w, key);
                r = oci_json_copy(w, CONFIG_COPY, oci_json_value_at(lx, i), err);
                if (r < 0)
                        return r;
        }
        oci_jw_key(w, "resources");
        r = oci_json_merge(w, CONFIG_COPY, lx ? oci_json_get(lx, "resources") : NULL, ov, n, "devices",
                           err);
        if (r < 0)
                return r;
        oci_jw_end_object(w);
        oci_jw_end_object(w);
        return oci_jw_finish(w, ret, ret_len, err);
}

/* The per-field flags as a LinuxResources object (their values already parsed into res). */
static int
flags_json(const oci_resources *res, const bool given[], char **ret, size_t *ret_len, msp_err *err)
{
        _cleanup_jw_ oci_jw *w = oci_jw_new(false);
        const oci_memory *m = &res->memory;
        const oci_cpu *c = &res->cpu;

        if (!w)
                return msp_err_set(err, ENOMEM, "out of memory");
        oci_jw_begin_object(w);
        if (res->has_memory) {
                oci_jw_key(w, "memory");
                oci_jw_begin_object(w);
                if (GIVEN(OPT_MEMORY))
                        oci_jw_kv_int64(w, "limit", m->limit);
                if (GIVEN(OPT_MEMORY_RESERVATION))
                        oci_jw_kv_int64(w, "reservation", m->reservation);
                if (GIVEN(OPT_MEMORY_SWAP))
                        oci_jw_kv_int64(w, "swap", m->swap);
                if (GIVEN(OPT_KERNEL_MEMORY))
                        oci_jw_kv_int64(w, "kernel", m->kernel);
                if (GIVEN(OPT_KERNEL_MEMORY_TCP))
                        oci_jw_kv_int64(w, "kernelTCP", m->kernel_tcp);
                oci_jw_end_object(w);
        }
        if (GIVEN(OPT_PIDS_LIMIT)) {
                oci_jw_key(w, "pids");
                oci_jw_begin_object(w);
                oci_jw_kv_int64(w, "limit", res->pids_limit);
                oci_jw_end_object(w);
        }
        if (res->has_cpu) {
                oci_jw_key(w, "cpu");
                oci_jw_begin_object(w);
                if (GIVEN(OPT_CPU_SHARES))
                        oci_jw_kv_uint64(w, "shares", c->shares);
                if (GIVEN(OPT_CPU_QUOTA))
                        oci_jw_kv_int64(w, "quota", c->quota);
                if (GIVEN(OPT_CPU_PERIOD))
                        oci_jw_kv_uint64(w, "period", c->period);
                if (GIVEN(OPT_CPU_BURST))
                        oci_jw_kv_uint64(w, "burst", c->burst);
                if (GIVEN(OPT_CPU_RT_PERIOD))
                        oci_jw_kv_uint64(w, "realtimePeriod", c->realtime_period);
                if (GIVEN(OPT_CPU_RT_RUNTIME))
                        oci_jw_kv_int64(w, "realtimeRuntime", c->realtime_runtime);
                if (GIVEN(OPT_CPU_IDLE))
                        oci_jw_kv_int64(w, "idle", c->idle);
                if (GIVEN(OPT_CPUSET_CPUS))
                        oci_jw_kv_string(w, "cpus", c->cpus);
                if (GIVEN(OPT_CPUSET_MEMS))
                        oci_jw_kv_string(w, "mems", c->mems);
                oci_jw_end_object(w);
        }
        if (GIVEN(OPT_BLKIO_WEIGHT)) {
                oci_jw_key(w, "blockIO");
                oci_jw_begin_object(w);
                oci_jw_kv_uint64(w, "weight", res->blockio.weight);
                oci_jw_end_object(w);
        }
        oci_jw_end_object(w);
        return oci_jw_finish(w, ret, ret_len, err);
}

/* Rewrite the config copy (the state dir is flock()ed by rt_container_load). */
static int
persist_update(rt_container *c, const oci_json_doc *file_doc, const oci_resources *res,
               const bool given[], bool any_flag, msp_err *err)
{
        _cleanup_free_ char *buf = NULL, *fl = NULL, *out = NULL, *fo = NULL;
        _cleanup_json_doc_ oci_json_doc *cfg = NULL, *fdoc = NULL, *odoc = NULL;
        _cleanup_spec_ oci_spec *check = NULL;
        size_t len = 0, fl_len = 0, out_len = 0, fo_len = 0;
        const oci_json *ov[2];
        size_t n = 0;

        int r = rt_read_file_at(c->dirfd, RT_CONFIG_NAME, true, OCI_CONFIG_MAX_BYTES, &buf, &len, err);
        if (r < 0)
                return r;
        r = oci_json_parse(RT_CONFIG_NAME, buf, len, &cfg, err);
        if (r < 0)
                return r;
        if (file_doc) {
                r = file_overlay(oci_json_doc_root(file_doc), &fo, &fo_len, err);
                if (r < 0)
                        return r;
                r = oci_json_parse("--resources", fo, fo_len, &odoc, err);
                if (r < 0)
                        return r;
                ov[n++] = oci_json_doc_root(odoc);
        }
        if (any_flag) {
                r = flags_json(res, given, &fl, &fl_len, err);
                if (r < 0)
                        return r;
                r = oci_json_parse("update flags", fl, fl_len, &fdoc, err);
                if (r < 0)
                        return r;
                ov[n++] = oci_json_doc_root(fdoc);
        }
        r = merge_config(oci_json_doc_root(cfg), ov, n, &out, &out_len, err);
        if (r < 0)
                return r;
        /* The result must still be a config msp can load. */
        r = oci_spec_parse_data(RT_CONFIG_NAME, out, out_len, &check, err);
        if (r < 0)
                return r;
        return rt_write_file_atomic(c->dirfd, RT_CONFIG_NAME, out, out_len, 0600, err);
}

typedef struct given_flag {
        int opt;
        const char *value;
        const char *name;
} given_flag;

int
cmd_update(rt_ctx *ctx, int argc, char **argv)
{
        static const struct option opts[] = {
                { "resources", required_argument, NULL, 'r' },
                { "memory", required_argument, NULL, OPT_MEMORY },
                { "memory-reservation", required_argument, NULL, OPT_MEMORY_RESERVATION },
                { "memory-swap", required_argument, NULL, OPT_MEMORY_SWAP },
                { "kernel-memory", required_argument, NULL, OPT_KERNEL_MEMORY },
                { "kernel-memory-tcp", required_argument, NULL, OPT_KERNEL_MEMORY_TCP },
                { "pids-limit", required_argument, NULL, OPT_PIDS_LIMIT },
                { "cpu-shares", required_argument, NULL, OPT_CPU_SHARES },
                { "cpu-share", required_argument, NULL, OPT_CPU_SHARES },      /* runc's spelling */
                { "cpu-quota", required_argument, NULL, OPT_CPU_QUOTA },
                { "cpu-period", required_argument, NULL, OPT_CPU_PERIOD },
                { "cpu-burst", required_argument, NULL, OPT_CPU_BURST },
                { "cpu-rt-period", required_argument, NULL, OPT_CPU_RT_PERIOD },
                { "cpu-rt-runtime", required_argument, NULL, OPT_CPU_RT_RUNTIME },
                { "cpu-idle", required_argument, NULL, OPT_CPU_IDLE },
                { "cpuset-cpus", required_argument, NULL, OPT_CPUSET_CPUS },
                { "cpuset-mems", required_argument, NULL, OPT_CPUSET_MEMS },
                { "blkio-weight", required_argument, NULL, OPT_BLKIO_WEIGHT },
                {},
        };
        _cleanup_container_ rt_container *c = NULL;
        _cleanup_spec_ oci_spec *doc = NULL;
        _cleanup_json_doc_ oci_json_doc *file_doc = NULL;
        bool flag_given[OPT_BLKIO_WEIGHT - OPT_MEMORY + 1] = { false };
        const char *file = NULL, *id;
        oci_resources flags_res = { 0 }, *res = &flags_res;
        given_flag given[64];
        size_t n_given = 0;
        msp_err err = { 0 };
        int opt, idx;

        while ((opt = getopt_long(argc, argv, "r:", opts, &idx)) != -1) {
                if (opt == 'r') {
                        file = optarg;
                        continue;
                }
                if (opt < OPT_MEMORY || n_given == ARRAY_SIZE(given))
                        return cmd_usage_error(ctx, "update", "invalid option");
                given[n_given++] = (given_flag) { opt, optarg, opts[idx].name };
        }
        if (cmd_one_id(ctx, "update", argc, argv, optind, &id) < 0)
                return 1;
        if (!file && n_given == 0)
                return cmd_usage_error(ctx, "update", "nothing to update: give --resources FILE or "
                                                      "a limit flag such as --memory");
        if (file) {
                if (load_resources(file, &doc, &file_doc, &err) < 0) {
                        msp_err_prefix(&err, "cannot update container '%s'", id);
                        return cmd_fail(ctx, &err);
                }
                res = doc->linux_->resources;
        }
        for (size_t i = 0; i < n_given; i++) {
                if (set_flag(res, given[i].opt, given[i].value) < 0)
                        return cmd_usage_error(ctx, "update", "--%s: invalid value '%s'", given[i].name,
                                               given[i].value);
                flag_given[given[i].opt - OPT_MEMORY] = true;
        }
        drop_unchanged(res, flag_given);
        if (rt_container_load(ctx, id, true, &c, &err) < 0 || rt_container_update(ctx, c, res, &err) < 0)
                return cmd_fail(ctx, &err);
        if (persist_update(c, file_doc, res, flag_given, n_given > 0, &err) < 0) {
                msp_err_prefix(&err, "container '%s': the limits are applied but not recorded in "
                                     "its config copy", id);
                return cmd_fail(ctx, &err);
        }
        return 0;
}
