/* update [--resources FILE|-] [per-field flags] ID: change the cgroup limits of a live
 * container (podman update passes --resources=<file> with a LinuxResources object).
 * The flags are runc's; given together with --resources they override the file's
 * fields. Memory sizes take runc's binary suffixes: 64k, 512m, 1.5g, 2GiB, -1. */
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "fileio.h"

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

/* The LinuxResources document of --resources (a path, or "-" for stdin). */
static int
load_resources(const char *path, oci_spec **ret, msp_err *err)
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
        return oci_resources_parse_data(name, buf, len, ret, err);
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
        const char *file = NULL, *id;
        oci_resources flags_res = { 0 }, *res = &flags_res;
        given_flag given[64];
        size_t n_given = 0;
        msp_err err = { 0 };
        int opt, idx;

        while ((opt = getopt_long(argc, argv, "+r:", opts, &idx)) != -1) {
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
                if (load_resources(file, &doc, &err) < 0) {
                        msp_err_prefix(&err, "cannot update container '%s'", id);
                        return cmd_fail(ctx, &err);
                }
                res = doc->linux_->resources;
        }
        for (size_t i = 0; i < n_given; i++)
                if (set_flag(res, given[i].opt, given[i].value) < 0)
                        return cmd_usage_error(ctx, "update", "--%s: invalid value '%s'", given[i].name,
                                               given[i].value);
        if (rt_container_load(ctx, id, true, &c, &err) < 0 || rt_container_update(ctx, c, res, &err) < 0)
                return cmd_fail(ctx, &err);
        return 0;
}
