/* The `events` and `ps --format json` documents (see stats.h). */
#include "oci/stats.h"

#include <errno.h>

#include "oci/json.h"

static void
write_memory_entry(oci_jw *w, const char *key, const oci_stats_memory_entry *e)
{
        oci_jw_key(w, key);
        oci_jw_begin_object(w);
        oci_jw_kv_uint64(w, "limit", e->limit);
        oci_jw_kv_uint64(w, "usage", e->usage);
        oci_jw_kv_uint64(w, "max", e->max);
        oci_jw_kv_uint64(w, "failcnt", e->failcnt);
        oci_jw_end_object(w);
}

static void
write_stats(oci_jw *w, const oci_stats *s)
{
        oci_jw_begin_object(w);

        oci_jw_key(w, "cpu");
        oci_jw_begin_object(w);
        oci_jw_key(w, "usage");
        oci_jw_begin_object(w);
        oci_jw_kv_uint64(w, "total", s->cpu.usage.total);
        oci_jw_kv_uint64(w, "kernel", s->cpu.usage.kernel);
        oci_jw_kv_uint64(w, "user", s->cpu.usage.user);
        oci_jw_end_object(w);
        oci_jw_key(w, "throttling");
        oci_jw_begin_object(w);
        oci_jw_kv_uint64(w, "periods", s->cpu.throttling.periods);
        oci_jw_kv_uint64(w, "throttledPeriods", s->cpu.throttling.throttled_periods);
        oci_jw_kv_uint64(w, "throttledTime", s->cpu.throttling.throttled_time);
        oci_jw_end_object(w);
        oci_jw_end_object(w);

        oci_jw_key(w, "memory");
        oci_jw_begin_object(w);
        oci_jw_kv_uint64(w, "cache", s->memory.cache);
        write_memory_entry(w, "usage", &s->memory.usage);
        if (s->memory.has_swap)
                write_memory_entry(w, "swap", &s->memory.swap);
        oci_jw_end_object(w);

        oci_jw_key(w, "pids");
        oci_jw_begin_object(w);
        oci_jw_kv_uint64(w, "current", s->pids.current);
        oci_jw_kv_uint64(w, "limit", s->pids.limit);
        oci_jw_end_object(w);

        oci_jw_end_object(w);
}

int
oci_stats_to_json(const oci_stats *s, char **ret, size_t *len, msp_err *err)
{
        _cleanup_jw_ oci_jw *w = oci_jw_new(false);

        if (!w)
                return msp_err_set(err, ENOMEM, "stats JSON: out of memory");
        oci_jw_begin_object(w);
        oci_jw_kv_string(w, "type", "stats");
        oci_jw_kv_string(w, "id", s->id);
        oci_jw_key(w, "data");
        write_stats(w, s);
        oci_jw_end_object(w);
        int r = oci_jw_finish(w, ret, len, err);
        return r < 0 ? msp_err_prefix(err, "stats of '%s'", s->id ? s->id : "?") : 0;
}

int
oci_event_to_json(const char *type, const char *id, char **ret, size_t *len, msp_err *err)
{
        _cleanup_jw_ oci_jw *w = oci_jw_new(false);

        if (!w)
                return msp_err_set(err, ENOMEM, "event JSON: out of memory");
        oci_jw_begin_object(w);
        oci_jw_kv_string(w, "type", type);
        oci_jw_kv_string(w, "id", id);
        oci_jw_end_object(w);
        return oci_jw_finish(w, ret, len, err);
}

int
oci_pid_list_to_json(const pid_t *pids, size_t n, char **ret, size_t *len, msp_err *err)
{
        _cleanup_jw_ oci_jw *w = oci_jw_new(false);

        if (!w)
                return msp_err_set(err, ENOMEM, "pid list JSON: out of memory");
        oci_jw_begin_array(w);
        for (size_t i = 0; i < n; i++)
                oci_jw_int64(w, pids[i]);
        oci_jw_end_array(w);
        return oci_jw_finish(w, ret, len, err);
}
