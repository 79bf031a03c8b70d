/* The state JSON: public form for `state`, `list` and hook stdin; private form (an "msp"
 * sub-object) for msp's state directory. */
#include "oci/json.h"
#include "oci/state.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- writing ---- */

static void
write_private(oci_jw *w, const oci_state *st)
{
        oci_jw_key(w, "msp");
        oci_jw_begin_object(w);
        oci_jw_kv_uint64(w, "pidStartTime", st->pid_start_time);
        if (st->cgroup_path)
                oci_jw_kv_string(w, "cgroupPath", st->cgroup_path);
        oci_jw_kv_bool(w, "cgroupOwned", st->cgroup_owned);
        oci_jw_kv_bool(w, "systemdCgroup", st->systemd_cgroup);
        oci_jw_kv_bool(w, "detached", st->detached);
        oci_jw_kv_bool(w, "noNewKeyring", st->no_new_keyring);
        oci_jw_end_object(w);
}

static void
write_state(oci_jw *w, const oci_state *st, unsigned flags)
{
        oci_jw_begin_object(w);
        oci_jw_kv_string(w, "ociVersion", st->oci_version ? st->oci_version : OCI_SPEC_VERSION);
        oci_jw_kv_string(w, "id", st->id);
        oci_jw_kv_string(w, "status", st->status);
        oci_jw_kv_int64(w, "pid", st->pid);     /* always present; 0 when not running */
        oci_jw_kv_string(w, "bundle", st->bundle);
        if (st->rootfs)
                oci_jw_kv_string(w, "rootfs", st->rootfs);
        if (st->created)
                oci_jw_kv_string(w, "created", st->created);
        oci_jw_kv_string(w, "owner", st->owner ? st->owner : "");
        if (st->annotations.n > 0) {
                oci_jw_key(w, "annotations");
                oci_jw_begin_object(w);
                for (size_t i = 0; i < st->annotations.n; i++)
                        oci_jw_kv_string(w, st->annotations.v[i].key,
                                         st->annotations.v[i].value);
                oci_jw_end_object(w);
        }
        if (flags & OCI_STATE_JSON_PRIVATE)
                write_private(w, st);
        oci_jw_end_object(w);
}

int
oci_state_to_json(const oci_state *st, unsigned flags, char **ret_json, size_t *ret_len,
                  msp_err *err)
{
        _cleanup_jw_ oci_jw *w = oci_jw_new(flags & OCI_STATE_JSON_PRETTY);
        if (!w)
                return msp_err_set(err, ENOMEM, "state JSON: out of memory");
        write_state(w, st, flags);
        int k = oci_jw_finish(w, ret_json, ret_len, err);
        return k < 0 ? msp_err_prefix(err, "state of '%s'", st->id ? st->id : "?") : 0;
}

int
oci_state_list_to_json(const oci_state *const *states, size_t n, char **ret_json,
                       size_t *ret_len, msp_err *err)
{
        _cleanup_jw_ oci_jw *w = oci_jw_new(false);
        if (!w)
                return msp_err_set(err, ENOMEM, "state JSON: out of memory");
        oci_jw_begin_array(w);
        for (size_t i = 0; i < n; i++)
                write_state(w, states[i], 0);
        oci_jw_end_array(w);
        return oci_jw_finish(w, ret_json, ret_len, err);
}

/* ---- reading ---- */

static int
status_check(const char *s)
{
        static const char *const valid[] = { "creating", "created", "running", "stopped",
                                             "paused" };
        for (size_t i = 0; i < ARRAY_SIZE(valid); i++)
                if (strcmp(s, valid[i]) == 0)
                        return 0;
        return -EINVAL;
}

static int
parse_private(oci_jr *r, const oci_json *top, oci_state *st)
{
        static const oci_jr_field fields[] = {
                OCI_JR_F(oci_state, "pidStartTime", OCI_JR_U64, pid_start_time),
                OCI_JR_F(oci_state, "cgroupPath", OCI_JR_STR, cgroup_path),
                OCI_JR_F(oci_state, "cgroupOwned", OCI_JR_BOOL, cgroup_owned),
                OCI_JR_F(oci_state, "systemdCgroup", OCI_JR_BOOL, systemd_cgroup),
                OCI_JR_F(oci_state, "detached", OCI_JR_BOOL, detached),
                OCI_JR_F(oci_state, "noNewKeyring", OCI_JR_BOOL, no_new_keyring),
        };
        const oci_json *o;
        int k = oci_jr_object(r, top, "msp", &o);
        if (k <= 0)
                return k;
        size_t mark = oci_jr_push_key(r, "msp");
        k = oci_jr_fields(r, o, st, fields, ARRAY_SIZE(fields));
        oci_jr_pop(r, mark);
        return k;
}

static int
parse_state(oci_jr *r, const oci_json *top, oci_state *st)
{
        static const oci_jr_field fields[] = {
                OCI_JR_FR(oci_state, "ociVersion", OCI_JR_STR, oci_version),
                OCI_JR_FR(oci_state, "id", OCI_JR_STR, id),
                OCI_JR_FR(oci_state, "bundle", OCI_JR_STR, bundle),
                OCI_JR_F(oci_state, "rootfs", OCI_JR_STR, rootfs),
                OCI_JR_F(oci_state, "created", OCI_JR_STR, created),
                OCI_JR_F(oci_state, "owner", OCI_JR_STR, owner),
                OCI_JR_F(oci_state, "annotations", OCI_JR_MAP, annotations),
        };
        int unused;
        int k = oci_jr_fields(r, top, st, fields, ARRAY_SIZE(fields));
        if (k >= 0)
                k = oci_jr_named(r, top, "status", status_check, "status", &unused);
        if (k >= 0)
                k = oci_jr_str(r, top, "status", &st->status);
        int64_t pid = 0;
        if (k >= 0)
                k = oci_jr_int_range(r, top, "pid", 0, INT32_MAX, &pid);
        st->pid = (pid_t) pid;
        if (k >= 0)
                k = parse_private(r, top, st);
        return k;
}

int
oci_state_parse_data(const char *name, const char *data, size_t len, oci_state **ret_state,
                     msp_err *err)
{
        _cleanup_json_doc_ oci_json_doc *doc = NULL;
        int k = oci_json_parse(name, data, len, &doc, err);
        if (k < 0)
                return k;
        _cleanup_arena_ oci_arena *arena = oci_arena_new();
        oci_state *st = arena ? oci_arena_calloc(arena, 1, sizeof *st) : NULL;
        if (!st)
                return msp_err_set(err, ENOMEM, "%s: out of memory", name);
        st->arena = arena;
        oci_jr r;
        oci_jr_init(&r, name, arena, err);
        const oci_json *top = oci_json_doc_root(doc);
        if (oci_json_type_of(top) != OCI_JSON_OBJECT)
                return oci_jr_expected(&r, top, "an object");
        k = parse_state(&r, top, st);
        if (k < 0)
                return k;
        arena = NULL;                   /* owned by st */
        *ret_state = st;
        return 0;
}

/* A parsed state lives inside its own arena, which owns the strings. A state with
 * arena == NULL was malloc'd by the caller with borrowed strings: only the struct is
 * freed. (Never pass a state that lives on the stack.) */
oci_state *
oci_state_free(oci_state *st)
{
        if (!st)
                return NULL;
        if (st->arena)
                oci_arena_free(st->arena);
        else
                free(st);
        return NULL;
}
