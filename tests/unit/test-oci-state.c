/* State, features and default-spec round trips: the JSON written is parsed back and
 * checked; '/' is never escaped. Uses the internal json.h to inspect generic JSON. */
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "oci/json.h"
#include "oci/spec.h"
#include "oci/state.h"
#include "tests/lib/tap.h"

static const oci_kv annotations[] = {
        { "org.example/path", "/var/lib/x" },
        { "quote", "say \"hi\"\n\ttab \xc3\xa9" },
};

static oci_state
sample_state(void)
{
        return (oci_state){
                .oci_version = "1.2.0",
                .id = "web-1",
                .status = "running",
                .pid = 4242,
                .bundle = "/run/bundles/web-1",
                .rootfs = "/run/bundles/web-1/rootfs",
                .created = "2026-11-22T00:00:00.123456789Z",
                .owner = "root",
                .annotations = { (oci_kv *) annotations, 2 },
                .pid_start_time = UINT64_MAX,
                .cgroup_path = "/sys/fs/cgroup/msp/web-1",
                .cgroup_owned = true,
                .systemd_cgroup = false,
                .detached = true,
                .no_new_keyring = true,
        };
}

static bool
starts_with(const char *s, const char *prefix)
{
        return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Parses any JSON text with the library's own reader. */
static oci_json_doc *
parse_any(const char *json)
{
        msp_err err = { 0 };
        oci_json_doc *doc = NULL;
        if (oci_json_parse("out", json, strlen(json), &doc, &err) < 0)
                tap_diag("%s\n%s", err.msg, json);
        return doc;
}

static const oci_json *
path_get(const oci_json *v, const char *a, const char *b, const char *c)
{
        const char *keys[] = { a, b, c };
        for (size_t i = 0; i < 3 && v && keys[i]; i++)
                v = oci_json_get(v, keys[i]);
        return v;
}

TEST(state_public_form)
{
        oci_state st = sample_state();
        msp_err err = { 0 };
        _cleanup_free_ char *json = NULL;
        size_t len = 0;
        ASSERT_OK_ERR(oci_state_to_json(&st, 0, &json, &len, &err), err);
        ASSERT_EQ_INT(len, strlen(json));
        ASSERT_NULL(strstr(json, "\\/"));
        ASSERT_NULL(strchr(json, '\n'));
        ASSERT_NULL(strstr(json, "\"msp\""));
        ASSERT_NULL(strstr(json, "pidStartTime"));
        ASSERT_TRUE(starts_with(json, "{\"ociVersion\":\"1.2.0\",\"id\":\"web-1\",\"status\":"
                                "\"running\",\"pid\":4242,\"bundle\":\"/run/bundles/web-1\","));

        _cleanup_state_ oci_state *back = NULL;
        ASSERT_OK_ERR(oci_state_parse_data("state.json", json, len, &back, &err), err);
        ASSERT_STREQ(back->id, "web-1");
        ASSERT_STREQ(back->status, "running");
        ASSERT_EQ_INT(back->pid, 4242);
        ASSERT_STREQ(back->bundle, st.bundle);
        ASSERT_STREQ(back->rootfs, st.rootfs);
        ASSERT_STREQ(back->created, st.created);
        ASSERT_STREQ(back->owner, "root");
        ASSERT_EQ_INT(back->annotations.n, 2);
        ASSERT_STREQ(back->annotations.v[0].key, "org.example/path");
        ASSERT_STREQ(back->annotations.v[1].value, annotations[1].value);
        ASSERT_EQ_U64(back->pid_start_time, 0);
        ASSERT_NULL(back->cgroup_path);
        ASSERT_NOT_NULL(back->arena);
}

TEST(state_private_round_trip)
{
        oci_state st = sample_state();
        msp_err err = { 0 };
        _cleanup_free_ char *json = NULL;
        size_t len = 0;
        ASSERT_OK_ERR(oci_state_to_json(&st, OCI_STATE_JSON_PRIVATE, &json, &len, &err), err);
        ASSERT_NOT_NULL(strstr(json, "\"msp\":{\"pidStartTime\":18446744073709551615,"
                                     "\"cgroupPath\":\"/sys/fs/cgroup/msp/web-1\","));
        _cleanup_state_ oci_state *back = NULL;
        ASSERT_OK_ERR(oci_state_parse_data("state.json", json, len, &back, &err), err);
        ASSERT_EQ_U64(back->pid_start_time, UINT64_MAX);
        ASSERT_STREQ(back->cgroup_path, st.cgroup_path);
        ASSERT_TRUE(back->cgroup_owned);
        ASSERT_FALSE(back->systemd_cgroup);
        ASSERT_TRUE(back->detached);
        ASSERT_TRUE(back->no_new_keyring);
        ASSERT_STREQ(back->oci_version, "1.2.0");
}

/* A state directory written before msp recorded noNewKeyring: exec joins a new keyring. */
TEST(state_private_without_no_new_keyring)
{
        static const char json[] = "{\"ociVersion\":\"1.2.0\",\"id\":\"c\",\"status\":"
                                   "\"running\",\"pid\":7,\"bundle\":\"/b\",\"msp\":"
                                   "{\"pidStartTime\":5,\"cgroupOwned\":true,"
                                   "\"systemdCgroup\":false,\"detached\":true}}";
        msp_err err = { 0 };
        _cleanup_state_ oci_state *st = NULL;
        ASSERT_OK_ERR(oci_state_parse_data("state.json", json, sizeof json - 1, &st, &err), err);
        ASSERT_EQ_U64(st->pid_start_time, 5);
        ASSERT_TRUE(st->detached);
        ASSERT_FALSE(st->no_new_keyring);
}

TEST(state_stopped_minimal)
{
        oci_state st = { .id = "c", .status = "stopped", .bundle = "/b" };
        msp_err err = { 0 };
        _cleanup_free_ char *json = NULL;
        ASSERT_OK_ERR(oci_state_to_json(&st, 0, &json, NULL, &err), err);
        /* pid always present (0 when not running, as crun does); no annotations key */
        ASSERT_STREQ(json, "{\"ociVersion\":\"" OCI_SPEC_VERSION "\",\"id\":\"c\",\"status\":"
                           "\"stopped\",\"pid\":0,\"bundle\":\"/b\",\"owner\":\"\"}");
}

TEST(state_free_caller_allocated)
{
        /* A state the runtime calloc()s with borrowed strings: only the struct is freed
         * (ASan/LSan check both halves). */
        static char id[] = "borrowed";
        oci_state *st = calloc(1, sizeof *st);
        ASSERT_NOT_NULL(st);
        st->id = id;
        ASSERT_NULL(oci_state_free(st));
        ASSERT_STREQ(id, "borrowed");
        ASSERT_NULL(oci_state_free(NULL));
        ASSERT_NULL(oci_spec_free(NULL));
        ASSERT_NULL(oci_spec_free(calloc(1, sizeof(oci_spec))));
}

TEST(state_pretty)
{
        oci_state st = sample_state();
        msp_err err = { 0 };
        _cleanup_free_ char *json = NULL;
        size_t len = 0;
        ASSERT_OK_ERR(oci_state_to_json(&st, OCI_STATE_JSON_PRETTY | OCI_STATE_JSON_PRIVATE,
                                        &json, &len, &err), err);
        ASSERT_TRUE(starts_with(json, "{\n\t\"ociVersion\": \"1.2.0\",\n"));
        ASSERT_TRUE(json[len - 1] == '}');
        ASSERT_NULL(strstr(json, "\\/"));
        _cleanup_state_ oci_state *back = NULL;
        ASSERT_OK_ERR(oci_state_parse_data("state.json", json, len, &back, &err), err);
        ASSERT_EQ_U64(back->pid_start_time, UINT64_MAX);
}

TEST(state_list)
{
        oci_state a = sample_state();
        oci_state b = { .id = "other", .status = "created", .pid = 7, .bundle = "/x/y" };
        const oci_state *list[] = { &a, &b };
        msp_err err = { 0 };
        _cleanup_free_ char *json = NULL;
        ASSERT_OK_ERR(oci_state_list_to_json(list, 2, &json, NULL, &err), err);
        ASSERT_NULL(strstr(json, "\\/"));
        ASSERT_NULL(strstr(json, "pidStartTime"));
        _cleanup_json_doc_ oci_json_doc *doc = parse_any(json);
        ASSERT_NOT_NULL(doc);
        const oci_json *root = oci_json_doc_root(doc);
        ASSERT_EQ_INT(oci_json_type_of(root), OCI_JSON_ARRAY);
        ASSERT_EQ_INT(oci_json_len(root), 2);
        ASSERT_STREQ(oci_json_string(oci_json_get(oci_json_value_at(root, 1), "id")), "other");
        ASSERT_STREQ(oci_json_number_text(oci_json_get(oci_json_value_at(root, 1), "pid")), "7");

        _cleanup_free_ char *empty = NULL;
        ASSERT_OK_ERR(oci_state_list_to_json(NULL, 0, &empty, NULL, &err), err);
        ASSERT_STREQ(empty, "[]");
}

TEST(state_bad_utf8)
{
        oci_state st = { .id = "bad\xff", .status = "running", .bundle = "/b" };
        msp_err err = { 0 };
        char *json = NULL;
        ASSERT_EQ_INT(oci_state_to_json(&st, 0, &json, NULL, &err), -EINVAL);
        ASSERT_NULL(json);
        ASSERT_NOT_NULL(strstr(err.msg, "writing JSON: string is not valid UTF-8"));
}

TEST(features_document)
{
        static const char *const hooks[] = { "prestart", "poststop", NULL };
        static const char *const ns[] = { "pid", "network", NULL };
        static const char *const empty[] = { NULL };
        static const char *const acts[] = { "SCMP_ACT_ALLOW", NULL };
        static const char *const fs[] = { "execute", "read_file", NULL };
        static const char *const ann[] = { "io.github.seccomp.libseccomp.version", "2.5.4",
                                           "org.msp.landlock/abi", "6", NULL };
        static const char *const unsafe[] = { "org.msp.", NULL };
        oci_features f = {
                .hooks = hooks,
                .namespaces = ns,
                .capabilities = empty,
                .cgroup_v2 = true,
                .seccomp_enabled = true,
                .seccomp_actions = acts,
                .idmap_mounts_enabled = true,
                .landlock_enabled = true,
                .landlock_abi = 6,
                .landlock_fs_rights = fs,
                .landlock_net_rights = empty,
                .annotation_keys = ann,
                .potentially_unsafe_annotations = unsafe,
        };
        msp_err err = { 0 };
        _cleanup_free_ char *json = NULL;
        ASSERT_OK_ERR(oci_features_to_json(&f, &json, NULL, &err), err);
        ASSERT_NULL(strstr(json, "\\/"));
        _cleanup_json_doc_ oci_json_doc *doc = parse_any(json);
        ASSERT_NOT_NULL(doc);
        const oci_json *root = oci_json_doc_root(doc);
        ASSERT_STREQ(oci_json_string(oci_json_get(root, "ociVersionMin")), OCI_VERSION_MIN);
        ASSERT_STREQ(oci_json_string(oci_json_get(root, "ociVersionMax")), OCI_VERSION_MAX);
        ASSERT_EQ_INT(oci_json_len(oci_json_get(root, "hooks")), 2);
        ASSERT_NULL(oci_json_get(root, "mountOptions"));        /* NULL list: omitted */
        const oci_json *lx = oci_json_get(root, "linux");
        ASSERT_NOT_NULL(lx);
        ASSERT_STREQ(oci_json_string(oci_json_value_at(oci_json_get(lx, "namespaces"), 1)),
                     "network");
        const oci_json *caps = oci_json_get(lx, "capabilities");
        ASSERT_NOT_NULL(caps);                                  /* empty list: [] */
        ASSERT_EQ_INT(oci_json_type_of(caps), OCI_JSON_ARRAY);
        ASSERT_EQ_INT(oci_json_len(caps), 0);
        ASSERT_TRUE(oci_json_bool(path_get(lx, "cgroup", "v2", NULL)));
        ASSERT_FALSE(oci_json_bool(path_get(lx, "cgroup", "v1", NULL)));
        ASSERT_TRUE(oci_json_bool(path_get(lx, "seccomp", "enabled", NULL)));
        ASSERT_EQ_INT(oci_json_len(path_get(lx, "seccomp", "actions", NULL)), 1);
        ASSERT_NULL(path_get(lx, "seccomp", "archs", NULL));
        ASSERT_FALSE(oci_json_bool(path_get(lx, "apparmor", "enabled", NULL)));
        ASSERT_TRUE(oci_json_bool(path_get(lx, "mountExtensions", "idmap", "enabled")));
        ASSERT_NOT_NULL(path_get(lx, "netDevices", "enabled", NULL));
        ASSERT_NULL(oci_json_get(lx, "memoryPolicy"));
        ASSERT_TRUE(oci_json_bool(path_get(lx, "landlock", "enabled", NULL)));
        ASSERT_STREQ(oci_json_number_text(path_get(lx, "landlock", "abi", NULL)), "6");
        ASSERT_EQ_INT(oci_json_len(path_get(lx, "landlock", "handledAccessFS", NULL)), 2);
        ASSERT_EQ_INT(oci_json_len(path_get(lx, "landlock", "handledAccessNetwork", NULL)), 0);
        ASSERT_NULL(path_get(lx, "landlock", "scoped", NULL));
        ASSERT_STREQ(oci_json_string(path_get(root, "annotations", "org.msp.landlock/abi", NULL)),
                     "6");
        ASSERT_EQ_INT(oci_json_len(oci_json_get(root, "potentiallyUnsafeConfigAnnotations")), 1);
}

TEST(features_minimal)
{
        oci_features f = { .oci_version_min = "1.0.0", .oci_version_max = "1.2.0",
                           .annotation_keys = (const char *const[]){ NULL } };
        msp_err err = { 0 };
        _cleanup_free_ char *json = NULL;
        ASSERT_OK_ERR(oci_features_to_json(&f, &json, NULL, &err), err);
        _cleanup_json_doc_ oci_json_doc *doc = parse_any(json);
        ASSERT_NOT_NULL(doc);
        const oci_json *root = oci_json_doc_root(doc);
        ASSERT_STREQ(oci_json_string(oci_json_get(root, "ociVersionMax")), "1.2.0");
        ASSERT_NULL(oci_json_get(root, "hooks"));
        ASSERT_EQ_INT(oci_json_type_of(oci_json_get(root, "annotations")), OCI_JSON_OBJECT);
        ASSERT_EQ_INT(oci_json_len(oci_json_get(root, "annotations")), 0);
        ASSERT_NULL(oci_json_get(root, "potentiallyUnsafeConfigAnnotations"));
}

TEST(default_spec_rootful)
{
        msp_err err = { 0 };
        _cleanup_free_ char *json = NULL;
        size_t len = 0;
        ASSERT_OK_ERR(oci_spec_default_json(false, &json, &len, &err), err);
        ASSERT_TRUE(starts_with(json, "{\n\t\"ociVersion\": \"1.2.0\",\n\t\"process\": {\n"));
        ASSERT_NULL(strstr(json, "\\/"));
        ASSERT_TRUE(json[len - 1] == '}');
        _cleanup_spec_ oci_spec *s = NULL;
        ASSERT_OK_ERR(oci_spec_parse_data("default.json", json, len, &s, &err), err);
        ASSERT_STREQ(s->oci_version, OCI_SPEC_VERSION);
        ASSERT_TRUE(s->process->terminal);
        ASSERT_EQ_INT(s->process->args.n, 1);
        ASSERT_STREQ(s->process->args.v[0], "sh");
        ASSERT_STREQ(s->process->cwd, "/");
        ASSERT_TRUE(s->process->no_new_privileges);
        ASSERT_EQ_U64(s->process->capabilities.bounding,
                      (UINT64_C(1) << 29) | (UINT64_C(1) << 5) | (UINT64_C(1) << 10));
        ASSERT_EQ_U64(s->process->capabilities.ambient, 0);
        ASSERT_EQ_INT(s->process->n_rlimits, 1);
        ASSERT_STREQ(s->root_path, "rootfs");
        ASSERT_TRUE(s->root_readonly);
        ASSERT_EQ_INT(s->n_mounts, 7);
        ASSERT_STREQ(s->mounts[5].type, "sysfs");
        ASSERT_EQ_INT(s->linux_->n_namespaces, 5);
        ASSERT_EQ_INT(s->linux_->namespaces[1].type, OCI_NS_NETWORK);
        ASSERT_NOT_NULL(s->linux_->resources);
        ASSERT_EQ_INT(s->linux_->resources->n_devices, 1);
        ASSERT_FALSE(s->linux_->resources->devices[0].allow);
        ASSERT_EQ_INT(s->linux_->n_uid_mappings, 0);
        ASSERT_EQ_INT(s->linux_->masked_paths.n, 11);
        ASSERT_EQ_INT(s->linux_->readonly_paths.n, 5);
}

TEST(default_spec_rootless)
{
        msp_err err = { 0 };
        _cleanup_free_ char *json = NULL;
        size_t len = 0;
        ASSERT_OK_ERR(oci_spec_default_json(true, &json, &len, &err), err);
        _cleanup_spec_ oci_spec *s = NULL;
        ASSERT_OK_ERR(oci_spec_parse_data("default.json", json, len, &s, &err), err);
        const oci_linux *l = s->linux_;
        ASSERT_NULL(l->resources);
        ASSERT_EQ_INT(l->n_uid_mappings, 1);
        ASSERT_EQ_INT(l->uid_mappings[0].host_id, geteuid());
        ASSERT_EQ_INT(l->n_gid_mappings, 1);
        ASSERT_EQ_INT(l->gid_mappings[0].host_id, getegid());
        ASSERT_EQ_INT(l->n_namespaces, 5);
        for (size_t i = 0; i < l->n_namespaces; i++)
                ASSERT_TRUE(l->namespaces[i].type != OCI_NS_NETWORK);
        ASSERT_EQ_INT(l->namespaces[4].type, OCI_NS_USER);
        ASSERT_STREQ(s->mounts[5].source, "/sys");
        ASSERT_STREQ(s->mounts[5].options.v[0], "rbind");
        for (size_t i = 0; i < s->mounts[2].options.n; i++)
                ASSERT_TRUE(strncmp(s->mounts[2].options.v[i], "gid=", 4) != 0);
}

TEST(writer_escapes)
{
        _cleanup_jw_ oci_jw *w = oci_jw_new(false);
        ASSERT_NOT_NULL(w);
        oci_jw_begin_object(w);
        oci_jw_kv_string(w, "path", "/a/b");
        oci_jw_kv_string(w, "ctl", "q\"\\\n\x01");
        oci_jw_kv_int64(w, "min", INT64_MIN);
        oci_jw_kv_uint64(w, "max", UINT64_MAX);
        oci_jw_key(w, "nil");
        oci_jw_string(w, NULL);
        oci_jw_end_object(w);
        msp_err err = { 0 };
        _cleanup_free_ char *json = NULL;
        ASSERT_OK_ERR(oci_jw_finish(w, &json, NULL, &err), err);
        ASSERT_STREQ(json, "{\"path\":\"/a/b\",\"ctl\":\"q\\\"\\\\\\n\\u0001\","
                           "\"min\":-9223372036854775808,\"max\":18446744073709551615,\"nil\":null}");
}

int
main(void)
{
        RUN(state_public_form);
        RUN(state_private_round_trip);
        RUN(state_private_without_no_new_keyring);
        RUN(state_stopped_minimal);
        RUN(state_free_caller_allocated);
        RUN(state_pretty);
        RUN(state_list);
        RUN(state_bad_utf8);
        RUN(features_document);
        RUN(features_minimal);
        RUN(default_spec_rootful);
        RUN(default_spec_rootless);
        RUN(writer_escapes);
        return tap_done();
}
