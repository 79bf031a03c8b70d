/* msp-mcp's configuration: built-in defaults, then an optional JSON file (--config FILE,
 * the same keys as the long flags without "--"), then the flags. One table drives the
 * flags, the file and --help so that they cannot disagree. */
#include "config.h"
#include "sandbox/sandbox.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"
#include "image/image.h"
#include "host/host.h"
#include "oci/oci.h"

#define MIB ((uint64_t) 1024 * 1024)

typedef enum opt_kind {
        K_SIZE,         /* bytes: 512M */
        K_COUNT,        /* uint64 */
        K_UINT,         /* unsigned */
        K_CPUS,         /* 1.5 -> 1500 millis */
        K_MSEC,         /* duration into milliseconds: 30s, 500ms, 2m; bare: seconds */
        K_SEC,          /* duration into seconds: 1h, 30m; bare: seconds */
        K_STR,
        K_BOOL,
        K_ROOTFS,
        K_IMAGE,
        K_LEVEL,
        K_NETALLOW,     /* repeatable; an array in the file */
        K_RESOLVE,      /* repeatable; an array in the file */
} opt_kind;

typedef struct opt {
        const char *name;
        opt_kind kind;
        size_t offset;
        const char *help;
        const char *arg;                /* what the value is, for --help; NULL: by kind */
} opt;

#define O(name, kind, member, help) { name, kind, offsetof(mcp_config, member), help, NULL }
/* A string option whose value is no file path: its kind named for --help. */
#define OA(name, kind, member, arg, help) { name, kind, offsetof(mcp_config, member), help, arg }

static const opt opts[] = {
        O("runtime", K_STR, runtime_path, "OCI runtime binary (msp or runc)"),
        O("sandbox-init", K_STR, init_path, "pid 1 of the sandboxes (msp-sandbox-init)"),
        OA("state-dir", K_STR, state_dir, "DIR", "directory for instances and sessions"),
        O("memory", K_SIZE, defaults.memory_bytes, "memory of a run (no swap)"),
        O("pids", K_COUNT, defaults.pids, "processes of a run"),
        O("cpus", K_CPUS, defaults.cpu_millis, "CPU quota of a run, in CPUs"),
        O("timeout", K_MSEC, defaults.timeout_ms, "wall clock of a run (bare number: seconds)"),
        O("output-limit", K_SIZE, defaults.output_bytes, "stdout and stderr kept, each"),
        O("tmp-size", K_SIZE, defaults.tmp_bytes, "size of /tmp"),
        O("workspace-size", K_SIZE, defaults.workspace_bytes, "size of a fresh /workspace"),
        O("max-memory", K_SIZE, maxima.memory_bytes, "largest memory a call may ask for"),
        O("max-pids", K_COUNT, maxima.pids, "largest pids a call may ask for"),
        O("max-cpus", K_CPUS, maxima.cpu_millis, "largest cpus a call may ask for"),
        O("max-timeout", K_MSEC, maxima.timeout_ms, "largest timeout a call may ask for"),
        O("max-output-limit", K_SIZE, maxima.output_bytes, "largest output limit"),
        O("max-tmp-size", K_SIZE, maxima.tmp_bytes, "largest /tmp"),
        O("max-workspace-size", K_SIZE, maxima.workspace_bytes, "largest fresh /workspace"),
        O("sandbox-ids", K_UINT, sandbox_ids,
          "as root: the first of the 65536 host ids sandboxes run as (no account or subuid "
          "range may hold any)"),
        O("max-concurrent", K_UINT, max_concurrent, "runs at once"),
        O("max-queue", K_UINT, max_queue, "runs waiting beyond which calls fail"),
        O("max-sessions", K_UINT, max_sessions, "live sessions"),
        O("session-ttl", K_SEC, session_ttl_s, "default lifetime of a session"),
        O("session-max-ttl", K_SEC, session_max_ttl_s, "longest lifetime a session may ask for"),
        O("session-idle-pause", K_SEC, session_idle_pause_s,
          "a session whose sandbox used no CPU this long, with no call running, is frozen until "
          "its next call (0: never)"),
        O("allow-network", K_BOOL, allow_network, "sessions may ask for network access"),
        O("network-allow", K_NETALLOW, network_allow,
          "HOST, *.SUFFIX or IP literal, with optional :PORT: what a call's network allowlist "
          "may name (repeatable)"),
        O("resolve", K_RESOLVE, resolve, "HOST=ADDR: the egress proxy connects HOST to ADDR (repeatable)"),
        O("network-max-conns", K_UINT, network_max_conns, "connections the egress proxy makes for a run"),
        O("network-max-bytes", K_SIZE, network_max_bytes, "bytes the egress proxy relays for a run"),
        O("network-idle", K_MSEC, network_idle_ms, "a proxied connection idle this long is closed"),
        O("run-fds", K_UINT, run_fds,
          "file descriptors the egress proxy may hold for one run (0: 512, within the budget)"),
        O("tenant-fds", K_UINT, tenant_fds,
          "the same for one tenant's runs together (0: half the egress budget with --listen, all on stdio)"),
        O("slirp4netns", K_STR, usernet_path, "user-mode networking of network sessions (default: in PATH)"),
        O("require-cgroups", K_BOOL, require_cgroups,
          "run by a user: refuse to start without cgroup limits"),
        O("allow-weak-policy", K_BOOL, weak_policy,
          "start even when the kernel cannot enforce the default policy"),
        OA("seccomp-profile", K_STR, seccomp_profile, "FILE", "seccomp profile (default: built in)"),
        OA("landlock-profile", K_STR, landlock_profile, "FILE", "Landlock profile (default: built in)"),
        OA("seed-dir", K_STR, seed_dir, "DIR", "lower layer of new session workspaces"),
        O("rootfs", K_ROOTFS, rootfs, "NAME=DIR: a prepared rootfs calls may name (repeatable)"),
        O("image", K_IMAGE, rootfs, "NAME=REF: an OCI image as a rootfs calls may name (repeatable)"),
        OA("image-cache", K_STR, image_cache, "DIR", "where images are unpacked"),
        O("image-max-size", K_SIZE, image_max_bytes, "unpacked size of one image"),
        O("max-message-bytes", K_SIZE, max_message_bytes, "one JSON-RPC message"),
        O("max-image-bytes", K_SIZE, max_image_bytes, "one image returned as content"),
        O("run-log-keep", K_UINT, run_log_keep, "full logs of the last N runs kept as resources"),
        O("kept-files-size", K_SIZE, kept_files_bytes,
          "small out/ files of fresh runs kept as resources, all together (the oldest go first)"),
        O("kept-files-tenant-size", K_SIZE, kept_files_tenant_bytes, "the same for one tenant's"),
        O("log-level", K_LEVEL, log_level, "debug, info, notice, warning, error, ..."),
        OA("audit-log", K_STR, audit_log, "PATH|-",
          "JSON lines of runs, HTTP requests, egress decisions, sessions (- : stderr; reopened on SIGHUP)"),
        O("audit-code", K_BOOL, audit_code, "the audit log's run_start lines carry the code"),
        OA("listen", K_STR, listen, "ADDR", "HOST:PORT or unix:PATH: serve Streamable HTTP there, not stdio"),
        OA("allow-origin", K_STR, allow_origins, "ORIGINS", "Origins (comma-separated) HTTP clients may send"),
        OA("auth-tokens", K_STR, auth_tokens, "FILE", "HTTP bearer tokens: TOKEN TENANT lines (reloaded on SIGHUP)"),
        OA("oauth-issuer", K_STR, oauth_issuer, "URL", "HTTP OAuth: the authorization server whose JWT access tokens are accepted"),
        OA("oauth-jwks", K_STR, oauth_jwks, "FILE|URL", "HTTP OAuth: the issuer's keys, a JWKS file or https:// URL (read again on SIGHUP)"),
        OA("oauth-jwks-ca", K_STR, oauth_jwks_ca, "FILE", "HTTP OAuth: PEM CA certificates for an https:// --oauth-jwks (default: the system's)"),
        OA("resource", K_STR, resource, "URI", "HTTP OAuth: this server's resource URI, the tokens' audience"),
        OA("oauth-tenant-claim", K_STR, oauth_tenant_claim, "CLAIM", "HTTP OAuth: the claim naming the tenant"),
        OA("tls-cert", K_STR, tls_cert, "FILE", "with --listen: serve HTTPS with this PEM certificate (chain)"),
        OA("tls-key", K_STR, tls_key, "FILE", "with --listen: the PEM private key of --tls-cert"),
        O("drain-timeout", K_SEC, drain_timeout_s, "SIGTERM with --listen: how long open requests may finish"),
        O("http-timeout", K_SEC, http_timeout_s, "an HTTP connection that sends and takes nothing this long is closed"),
        O("http-session-idle", K_SEC, http_session_idle_s, "an HTTP session unused this long ends"),
        O("http-head-timeout", K_SEC, http_head_timeout_s,
          "an HTTP request's line and headers must arrive within this of the connection's "
          "accept or its previous request's end"),
        O("http-max-connections", K_UINT, http_max_connections, "HTTP connections at once"),
        O("http-max-per-address", K_UINT, http_max_per_address,
          "HTTP connections at once from one client address"),
        O("http-tenant-sessions", K_UINT, http_tenant_sessions,
          "MCP sessions of a tenant whose token line names no mcp_sessions="),
        OA("probe-listen", K_STR, probe_listen, "ADDR",
          "HOST:PORT or PORT: serve /healthz, /readyz and /metrics there too, on connections of "
          "their own"),
};

static const char root_state_dir[] = "/run/msp-mcp";
static const char root_image_cache[] = "/var/cache/msp-mcp/images";

static const char *const levels[] = { "debug", "info", "notice", "warning", "error",
                                      "critical", "alert", "emergency", NULL };

static void
set_defaults(mcp_config *c)
{
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        unsigned cpus = n > 0 ? (unsigned) n : 1;

        *c = (mcp_config) {
                .state_dir = root_state_dir,
                .sandbox_ids = MCP_SANDBOX_ROOT_BASE,
                .defaults = { .memory_bytes = 512 * MIB, .pids = 256, .cpu_millis = 1000,
                              .timeout_ms = 30000, .output_bytes = 128 * 1024,
                              .tmp_bytes = 64 * MIB, .workspace_bytes = 256 * MIB },
                .maxima = { .memory_bytes = 4096 * MIB, .pids = 4096,
                            .cpu_millis = 1000ull * cpus, .timeout_ms = 600000,
                            .output_bytes = 16 * MIB, .tmp_bytes = 1024 * MIB,
                            .workspace_bytes = 4096 * MIB },
                .max_concurrent = cpus,
                .max_queue = 64,
                .max_sessions = 16,
                .session_ttl_s = 3600,
                .http_timeout_s = 30,
                .drain_timeout_s = 30,
                .http_session_idle_s = 1800,
                .http_head_timeout_s = 10,
                .http_max_connections = 1024,
                .http_tenant_sessions = 256,
                .oauth_tenant_claim = "sub",
                .session_max_ttl_s = 86400,
                .max_message_bytes = 16 * MIB,
                .max_image_bytes = MIB,
                .run_log_keep = 32,
                .kept_files_bytes = 64 * MIB,
                .kept_files_tenant_bytes = 16 * MIB,
                .log_level = "info",
                .network_max_conns = 256,
                .network_max_bytes = 1024 * MIB,
                .network_idle_ms = 60000,
                .image_cache = root_image_cache,
                .image_max_bytes = 8192 * MIB,
        };
}

static const char *
keep(mcp_config *c, const char *s)
{
        char *d = strdup(s);
        if (!d)
                return NULL;
        char **p = realloc(c->owned_, (c->n_owned_ + 1) * sizeof(*p));
        if (!p) {
                free(d);
                return NULL;
        }
        p[c->n_owned_++] = d;
        c->owned_ = p;
        return d;
}

int
mcp_parse_size(const char *s, uint64_t *ret)
{
        if (!s || *s < '0' || *s > '9')
                return -EINVAL;
        errno = 0;
        char *end;
        unsigned long long v = strtoull(s, &end, 10);
        if (errno)
                return -ERANGE;
        unsigned shift = 0;
        switch (*end) {
        case 'k': case 'K': shift = 10; end++; break;
        case 'm': case 'M': shift = 20; end++; break;
        case 'g': case 'G': shift = 30; end++; break;
        case 't': case 'T': shift = 40; end++; break;
        default: break;
        }
        if (shift && *end == 'i')
                end++;
        if (*end == 'B' || (shift && *end == 'b'))
                end++;
        if (*end)
                return -EINVAL;
        if (shift && v > (UINT64_MAX >> shift))
                return -ERANGE;
        *ret = (uint64_t) v << shift;
        return 0;
}

int
mcp_parse_cpus(const char *s, uint64_t *ret)
{
        if (*s < '0' || *s > '9')
                return -EINVAL;
        char *end;
        errno = 0;
        unsigned long long whole = strtoull(s, &end, 10);
        if (errno || whole > 1000000)
                return -ERANGE;
        uint64_t frac = 0, scale = 100;
        if (*end == '.') {
                end++;
                if (*end < '0' || *end > '9')
                        return -EINVAL;
                for (; *end >= '0' && *end <= '9'; end++) {
                        if (scale == 0 && *end != '0')
                                return -EINVAL;
                        frac += (uint64_t) (*end - '0') * scale;
                        scale /= 10;
                }
        }
        if (*end)
                return -EINVAL;
        *ret = whole * 1000 + frac;
        return 0;
}

/* A duration with ms/s/m/h/d; a bare number counts units of bare_usec... in ms. */
static int
parse_duration_ms(const char *s, uint64_t bare_ms, uint64_t *ret)
{
        if (*s < '0' || *s > '9')
                return -EINVAL;
        char *end;
        errno = 0;
        unsigned long long v = strtoull(s, &end, 10);
        if (errno)
                return -ERANGE;
        uint64_t mult = bare_ms;
        if (strcmp(end, "ms") == 0)
                mult = 1;
        else if (strcmp(end, "s") == 0)
                mult = 1000;
        else if (strcmp(end, "m") == 0 || strcmp(end, "min") == 0)
                mult = 60000;
        else if (strcmp(end, "h") == 0)
                mult = 3600000;
        else if (strcmp(end, "d") == 0)
                mult = 86400000;
        else if (*end)
                return -EINVAL;
        if (v > UINT64_MAX / mult)
                return -ERANGE;
        *ret = v * mult;
        return 0;
}

static int
parse_bool(const char *s, bool *ret)
{
        if (strcmp(s, "true") == 0 || strcmp(s, "yes") == 0 || strcmp(s, "1") == 0)
                *ret = true;
        else if (strcmp(s, "false") == 0 || strcmp(s, "no") == 0 || strcmp(s, "0") == 0)
                *ret = false;
        else
                return -EINVAL;
        return 0;
}

static int
add_rootfs(mcp_config *c, const char *spec, bool image, msp_err *err)
{
        const char *flag = image ? "--image" : "--rootfs", *what = image ? "REF" : "DIR";
        const char *eq = strchr(spec, '=');
        if (!eq || eq == spec || !eq[1])
                return msp_err_set(err, EINVAL, "%s \"%s\": expected NAME=%s", flag, spec, what);
        _cleanup_free_ char *name = strndup(spec, (size_t) (eq - spec));
        if (!name)
                return msp_err_set(err, ENOMEM, "out of memory");
        for (const char *p = name; *p; p++)
                if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                      (*p >= '0' && *p <= '9') || *p == '-' || *p == '_' || *p == '.'))
                        return msp_err_set(err, EINVAL,
                                           "%s \"%s\": NAME may only hold letters, digits, '-', '_' and '.'",
                                           flag, spec);
        if (!image && eq[1] != '/')
                return msp_err_set(err, EINVAL, "--rootfs \"%s\": DIR must be an absolute path", spec);
        if (image && strncmp(eq + 1, "oci:/", 5) != 0 &&
            strncmp(eq + 1, "containers-storage:", 19) != 0)
                return msp_err_set(err, EINVAL, "--image \"%s\": expected NAME=oci:/DIR[:TAG] or "
                                   "NAME=containers-storage:IMAGE", spec);
        for (size_t i = 0; i < c->n_rootfs; i++)
                if (strcmp(c->rootfs[i].name, name) == 0)
                        return msp_err_set(err, EINVAL, "%s \"%s\": the name \"%s\" is already taken",
                                           flag, spec, name);
        struct stat st;
        if (!image && (stat(eq + 1, &st) < 0 || !S_ISDIR(st.st_mode)))
                return msp_err_set(err, ENOENT, "--rootfs \"%s\": \"%s\" is not a directory", spec,
                                   eq + 1);
        mcp_rootfs *p = realloc(c->rootfs, (c->n_rootfs + 1) * sizeof(*p));
        if (!p)
                return msp_err_set(err, ENOMEM, "out of memory");
        c->rootfs = p;
        const char *kn = keep(c, name), *kp = keep(c, eq + 1);
        if (!kn || !kp)
                return msp_err_set(err, ENOMEM, "out of memory");
        c->rootfs[c->n_rootfs++] = image ? (mcp_rootfs) { .name = kn, .image = kp } :
                                           (mcp_rootfs) { .name = kn, .path = kp };
        return 0;
}

static int
set_opt(mcp_config *c, const opt *o, const char *val, const char *where, msp_err *err)
{
        void *field = (char *) c + o->offset;
        uint64_t v = 0;
        int r = 0;

        switch (o->kind) {
        case K_SIZE:
                r = mcp_parse_size(val, &v);
                if (r == 0 && v == 0)
                        r = -EINVAL;
                if (r < 0)
                        return msp_err_set(err, EINVAL, "%s%s \"%s\": expected a size such as 512M (> 0)",
                                           where, o->name, val);
                *(uint64_t *) field = v;
                return 0;
        case K_COUNT:
        case K_UINT: {
                char *end;
                errno = 0;
                unsigned long long n = strtoull(val, &end, 10);
                if (errno || *end || !*val || *val == '-' || n == 0 ||
                    (o->kind == K_UINT && n > UINT_MAX))
                        return msp_err_set(err, EINVAL, "%s%s \"%s\": expected a positive integer",
                                           where, o->name, val);
                if (o->kind == K_UINT)
                        *(unsigned *) field = (unsigned) n;
                else
                        *(uint64_t *) field = n;
                return 0;
        }
        case K_CPUS:
                r = mcp_parse_cpus(val, &v);
                if (r < 0 || v < MCP_CPU_MILLIS_MIN)
                        return msp_err_set(err, EINVAL,
                                           "%s%s \"%s\": expected a number of CPUs such as 1.5 "
                                           "(at least 0.01: the kernel's minimum quota)",
                                           where, o->name, val);
                *(uint64_t *) field = v;
                return 0;
        case K_MSEC:
        case K_SEC:
                r = parse_duration_ms(val, 1000, &v);
                if (r == 0 && o->kind == K_SEC)
                        v /= 1000;
                if (r < 0 || v == 0)
                        return msp_err_set(err, EINVAL, "%s%s \"%s\": expected a duration such as 30s, 500ms, 2m (> 0)",
                                           where, o->name, val);
                *(uint64_t *) field = v;
                return 0;
        case K_STR: {
                if (!*val)
                        return msp_err_set(err, EINVAL, "%s%s: empty value", where, o->name);
                const char *k = keep(c, val);
                if (!k)
                        return msp_err_set(err, ENOMEM, "out of memory");
                *(const char **) field = k;
                return 0;
        }
        case K_BOOL:
                if (parse_bool(val, (bool *) field) < 0)
                        return msp_err_set(err, EINVAL, "%s%s \"%s\": expected true or false", where,
                                           o->name, val);
                return 0;
        case K_LEVEL:
                for (size_t i = 0; levels[i]; i++)
                        if (strcmp(levels[i], val) == 0) {
                                *(const char **) field = levels[i];
                                return 0;
                        }
                return msp_err_set(err, EINVAL, "%s%s \"%s\": expected one of debug, info, notice, warning, error, critical, alert, emergency",
                                   where, o->name, val);
        case K_NETALLOW:
                r = mcp_egress_policy_add(&c->network_allow, val, err);
                return r < 0 ? msp_err_prefix(err, "%s%s", where, o->name) : 0;
        case K_RESOLVE: {
                mcp_proxy_pin pin;
                if ((r = mcp_proxy_pin_parse(val, &pin, err)) < 0)
                        return strcmp(where, "--") != 0 && strlen(where) > 2
                                       ? msp_err_prefix(err, "%.*s", (int) strlen(where) - 2, where)
                                       : r;
                mcp_proxy_pin *pins = realloc(c->resolve, (c->n_resolve + 1) * sizeof(*pins));
                if (!pins)
                        return msp_err_set(err, ENOMEM, "out of memory");
                pins[c->n_resolve++] = pin;
                c->resolve = pins;
                return 0;
        }
        case K_ROOTFS:
        case K_IMAGE:
                r = add_rootfs(c, val, o->kind == K_IMAGE, err);
                /* From the file: "FILE: --rootfs ..." (where is "FILE: " then). */
                if (r < 0 && strcmp(where, "--") != 0 && strlen(where) > 2)
                        msp_err_prefix(err, "%.*s", (int) strlen(where) - 2, where);
                return r;
        default:
                return -EINVAL;
        }
}

static const opt *
find_opt(const char *name, size_t len)
{
        for (size_t i = 0; i < ARRAY_SIZE(opts); i++)
                if (strlen(opts[i].name) == len && strncmp(opts[i].name, name, len) == 0)
                        return &opts[i];
        return NULL;
}

static int
load_file(mcp_config *c, const char *path, msp_err *err)
{
        _cleanup_fclose_ FILE *f = fopen(path, "re");
        if (!f)
                return msp_err_sys(err, errno, "--config \"%s\"", path);
        _cleanup_free_ char *buf = malloc(OCI_CONFIG_MAX_BYTES + 1);
        if (!buf)
                return msp_err_set(err, ENOMEM, "out of memory");
        size_t n = fread(buf, 1, OCI_CONFIG_MAX_BYTES + 1, f);
        if (ferror(f))
                return msp_err_sys(err, EIO, "--config \"%s\"", path);
        char name[PATH_MAX + 16];
        snprintf(name, sizeof name, "%s", path);
        _cleanup_json_doc_ oci_json_doc *doc = NULL;
        int r = oci_json_parse(name, buf, n, &doc, err);
        if (r < 0)
                return r;
        const oci_json *root = oci_json_doc_root(doc);
        if (oci_json_type_of(root) != OCI_JSON_OBJECT)
                return msp_err_set(err, EINVAL, "%s: expected a JSON object", path);
        for (size_t i = 0; i < oci_json_len(root); i++) {
                char key[64];
                snprintf(key, sizeof key, "%s", oci_json_key_at(root, i));
                for (char *p = key; *p; p++)
                        if (*p == '_')
                                *p = '-';
                const opt *o = find_opt(key, strlen(key));
                char where[PATH_MAX + 16];
                snprintf(where, sizeof where, "%s: ", path);
                if (!o)
                        return msp_err_set(err, EINVAL, "%s: unknown key \"%s\"", path, key);
                const oci_json *v = oci_json_value_at(root, i);
                if ((o->kind == K_ROOTFS || o->kind == K_IMAGE) &&
                    oci_json_type_of(v) == OCI_JSON_OBJECT) {
                        for (size_t j = 0; j < oci_json_len(v); j++) {
                                const char *dir = oci_json_string(oci_json_value_at(v, j));
                                if (!dir)
                                        return msp_err_set(err, EINVAL, "%s: rootfs.%s: expected a directory",
                                                           path, oci_json_key_at(v, j));
                                _cleanup_free_ char *spec = NULL;
                                if (asprintf(&spec, "%s=%s", oci_json_key_at(v, j), dir) < 0)
                                        return msp_err_set(err, ENOMEM, "out of memory");
                                r = set_opt(c, o, spec, where, err);
                                if (r < 0)
                                        return r;
                        }
                        continue;
                }
                if ((o->kind == K_NETALLOW || o->kind == K_RESOLVE) &&
                    oci_json_type_of(v) == OCI_JSON_ARRAY) {
                        for (size_t j = 0; j < oci_json_len(v); j++) {
                                const char *item = oci_json_string(oci_json_value_at(v, j));
                                if (!item)
                                        return msp_err_set(err, EINVAL, "%s: %s[%zu]: expected a string",
                                                           path, key, j);
                                if ((r = set_opt(c, o, item, where, err)) < 0)
                                        return r;
                        }
                        continue;
                }
                const char *text;
                switch (oci_json_type_of(v)) {
                case OCI_JSON_STRING:
                        text = oci_json_string(v);
                        break;
                case OCI_JSON_NUMBER:
                        text = oci_json_number_text(v);
                        break;
                case OCI_JSON_BOOL:
                        text = oci_json_bool(v) ? "true" : "false";
                        break;
                case OCI_JSON_NULL:
                case OCI_JSON_OBJECT:
                case OCI_JSON_ARRAY:
                default:
                        return msp_err_set(err, EINVAL, "%s: %s: expected a string, number or boolean",
                                           path, key);
                }
                /* In the file a bare number of milliseconds is more natural for timeouts. */
                r = set_opt(c, o, text, where, err);
                if (r < 0)
                        return r;
        }
        return 0;
}

static const char *
self_dir_file(char *buf, size_t size, const char *rel)
{
        char self[PATH_MAX];
        ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
        if (n <= 0)
                return NULL;
        self[n] = '\0';
        char *slash = strrchr(self, '/');
        if (!slash)
                return NULL;
        *slash = '\0';
        snprintf(buf, size, "%s/%s", self, rel);
        return buf;
}

static int
default_runtime(mcp_config *c, msp_err *err)
{
        char buf[PATH_MAX + 32];
        /* Installed side by side; then the build tree (build/mcp-adapter/msp-mcp and
         * build/runtime/msp). */
        static const char *const rels[] = { "msp", "../runtime/msp" };
        for (size_t i = 0; i < ARRAY_SIZE(rels); i++) {
                const char *p = self_dir_file(buf, sizeof buf, rels[i]);
                if (p && access(p, X_OK) == 0) {
                        char *real = realpath(p, NULL);
                        c->runtime_path = keep(c, real ? real : p);
                        free(real);
                        return c->runtime_path ? 0 : msp_err_set(err, ENOMEM, "out of memory");
                }
        }
        return msp_err_set(err, ENOENT,
                           "--runtime: no msp binary beside msp-mcp (or in ../runtime/); name one with --runtime PATH");
}

/* A helper program (msp-sandbox-init, msp-sandbox-hook, msp-mcp-unpack) beside msp-mcp (the build tree:
 * all in <build>/mcp-adapter/), then where meson installs it. Not found: *ret stays NULL
 * and what needs it says so (the engine at start, an image when unpacked). */
static int
default_beside(mcp_config *c, const char *name, const char *installed, const char **ret,
               msp_err *err)
{
        char buf[PATH_MAX + 32];
        const char *p = self_dir_file(buf, sizeof buf, name);
        if (!p || access(p, X_OK) < 0)
                p = access(installed, X_OK) == 0 ? installed : NULL;
        if (!p)
                return 0;
        *ret = keep(c, p);
        return *ret ? 0 : msp_err_set(err, ENOMEM, "out of memory");
}

/* slirp4netns in PATH (an absolute path: the runtime runs the hook that starts it with its
 * own environment). Not found: usernet_path stays NULL and network sessions are refused. */
static int
default_usernet(mcp_config *c, msp_err *err)
{
        const char *env = getenv("PATH");
        _cleanup_free_ char *dirs = strdup(env && *env ? env : "/usr/local/bin:/usr/bin:/bin");
        if (!dirs)
                return msp_err_set(err, ENOMEM, "out of memory");
        char *save = NULL;
        for (char *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
                char buf[PATH_MAX + 32];
                struct stat st;
                snprintf(buf, sizeof buf, "%s/slirp4netns", d);
                if (d[0] == '/' && stat(buf, &st) == 0 && S_ISREG(st.st_mode) &&
                    access(buf, X_OK) == 0)
                        return (c->usernet_path = keep(c, buf)) ? 0
                                                                : msp_err_set(err, ENOMEM, "out of memory");
        }
        return 0;
}

/* The user's own private directory (as pam_systemd makes $XDG_RUNTIME_DIR): a directory,
 * not a symlink, owned by the user, mode 0700. */
static bool
private_dir(const char *path)
{
        struct stat st;
        return path && path[0] == '/' && mcp_own_dir(path, 0077, &st) == 0;
}

/* A directory of the user's own that the sandbox's root can reach: made 0711 when
 * missing (`make`; else a missing one would be made), refused when it is anything else
 * (another user's, a symlink, writable by others). For /tmp/msp-mcp-UID, the last default:
 * squatting it only refuses the start. */
static bool
own_tmp_dir(const char *path, bool make)
{
        struct stat st;
        if (!make && lstat(path, &st) < 0 && errno == ENOENT)
                return true;
        if (make && mkdir(path, 0711) < 0 && errno != EEXIST)
                return false;
        return mcp_own_dir(path, 0022, &st) == 0;
}

/* Run by a user, in this order: $XDG_RUNTIME_DIR/msp-mcp when that is the user's private
 * directory; /run/user/UID/msp-mcp when that is (an MCP client often passes no
 * XDG_RUNTIME_DIR: the SDK's stdio transport passes HOME, LOGNAME, PATH, SHELL, TERM, USER);
 * $XDG_STATE_HOME/msp-mcp or ~/.local/state/msp-mcp when the sandbox's root can reach it
 * (mcp_rootless_reachable: not when ~/.local is 0700, as rootless podman leaves it);
 * else /tmp/msp-mcp-UID, the user's own. rootless.c verifies the directory itself. */
static int
default_state_dir(mcp_config *c, bool make, msp_err *err)
{
        const char *xdg = getenv("XDG_RUNTIME_DIR"), *state = getenv("XDG_STATE_HOME");
        const char *home = getenv("HOME");
        char buf[PATH_MAX], run_user[64];
        msp_err why = { 0 };
        if (geteuid() == 0)
                return 0;
        snprintf(run_user, sizeof run_user, "/run/user/%u", (unsigned) geteuid());
        bool private = true;            /* one of the user's private directories */
        buf[0] = '\0';
        if (private_dir(xdg))
                snprintf(buf, sizeof buf, "%s/msp-mcp", xdg);
        else if (private_dir(run_user))
                snprintf(buf, sizeof buf, "%s/msp-mcp", run_user);
        else {
                private = false;
                if (state && state[0] == '/')
                        snprintf(buf, sizeof buf, "%s/msp-mcp", state);
                else if (home && home[0] == '/')
                        snprintf(buf, sizeof buf, "%s/.local/state/msp-mcp", home);
        }
        /* Which one was taken, not a prefix: an XDG_RUNTIME_DIR that is empty or "/home"
         * would match any path. */
        if (buf[0] && !private && mcp_rootless_reachable(buf, &why) < 0)
                buf[0] = '\0';
        if (!buf[0]) {
                snprintf(buf, sizeof buf, "/tmp/msp-mcp-%u", (unsigned) geteuid());
                if (!own_tmp_dir(buf, make))
                        return msp_err_set(err, EACCES,
                                           "no state dir: %s%s'%s' is not this user's own "
                                           "directory; name one with --state-dir",
                                           why.msg, why.msg[0] ? "; and " : "", buf);
        }
        return (c->state_dir = keep(c, buf)) ? 0 : msp_err_set(err, ENOMEM, "out of memory");
}

bool
mcp_config_has_image(const mcp_config *c)
{
        for (size_t i = 0; i < c->n_rootfs; i++)
                if (c->rootfs[i].image)
                        return true;
        return false;
}

/* Run by a user: images are unpacked under $XDG_CACHE_HOME/msp-mcp/images or
 * ~/.cache/msp-mcp/images (root's /var/cache/msp-mcp/images is not theirs). */
static int
default_image_cache(mcp_config *c, msp_err *err)
{
        const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
        char buf[PATH_MAX];
        if (geteuid() == 0)
                return 0;
        if (xdg && xdg[0] == '/')
                snprintf(buf, sizeof buf, "%s/msp-mcp/images", xdg);
        else if (home && home[0] == '/')
                snprintf(buf, sizeof buf, "%s/.cache/msp-mcp/images", home);
        else
                return mcp_config_has_image(c) ? msp_err_set(err, ENOENT, "no image cache: XDG_CACHE_HOME and "
                                                 "HOME are unset; name one with --image-cache")
                                   : 0;
        return (c->image_cache = keep(c, buf)) ? 0 : msp_err_set(err, ENOMEM, "out of memory");
}

/* The defaults that differ for an ordinary user, where no flag or file set them; `make`:
 * the fallback state dir is made (a start), not only named (--help). */
static int
user_defaults(mcp_config *c, bool make, msp_err *err)
{
        int r = 0;
        if (c->state_dir == root_state_dir)
                r = default_state_dir(c, make, err);
        if (r >= 0 && c->image_cache == root_image_cache)
                r = default_image_cache(c, err);
        return r;
}

static void default_text(const mcp_config *d, const opt *o, char *buf, size_t size);

/* "--timeout 5m is above --max-timeout 1m": both in the units a user writes them in. */
static int
above(const mcp_config *c, const char *flag, const char *max_flag, msp_err *err)
{
        char v[64] = "", m[64] = "";
        const opt *of = find_opt(flag + 2, strlen(flag + 2));
        const opt *om = find_opt(max_flag + 2, strlen(max_flag + 2));
        if (of)
                default_text(c, of, v, sizeof v);
        if (om)
                default_text(c, om, m, sizeof m);
        return msp_err_set(err, EINVAL, "%s %s is above %s %s", flag, v, max_flag, m);
}

static int
check(mcp_config *c, msp_err *err)
{
        static const struct { const char *what, *flag, *max; size_t off; } lims[] = {
                { "memory", "--memory", "--max-memory", offsetof(mcp_limits, memory_bytes) },
                { "pids", "--pids", "--max-pids", offsetof(mcp_limits, pids) },
                { "cpus", "--cpus", "--max-cpus", offsetof(mcp_limits, cpu_millis) },
                { "timeout", "--timeout", "--max-timeout", offsetof(mcp_limits, timeout_ms) },
                { "output", "--output-limit", "--max-output-limit", offsetof(mcp_limits, output_bytes) },
                { "tmp", "--tmp-size", "--max-tmp-size", offsetof(mcp_limits, tmp_bytes) },
                { "workspace", "--workspace-size", "--max-workspace-size",
                  offsetof(mcp_limits, workspace_bytes) },
        };
        for (size_t i = 0; i < ARRAY_SIZE(lims); i++) {
                uint64_t d = *(uint64_t *) ((char *) &c->defaults + lims[i].off);
                uint64_t m = *(uint64_t *) ((char *) &c->maxima + lims[i].off);
                if (d > m)
                        return above(c, lims[i].flag, lims[i].max, err);
        }
        if (c->session_ttl_s > c->session_max_ttl_s)
                return above(c, "--session-ttl", "--session-max-ttl", err);
        if (c->max_message_bytes < 4096)
                return msp_err_set(err, EINVAL, "--max-message-bytes (%" PRIu64 ") must be at least 4096",
                                   c->max_message_bytes);
        if (c->probe_listen && !c->listen)
                return msp_err_set(err, EINVAL, "--probe-listen %s needs --listen", c->probe_listen);
        if (c->state_dir[0] != '/')
                return msp_err_set(err, EINVAL, "--state-dir \"%s\": must be an absolute path",
                                   c->state_dir);
        /* an image's rootfs becomes an overlay lowerdir: absolute, no ':', ',' or '\\' */
        if (c->image_cache[0] != '/' || strpbrk(c->image_cache, ":,\\"))
                return msp_err_set(err, EINVAL, "--image-cache \"%s\": must be an absolute path "
                                   "without ':', ',' or '\\'", c->image_cache);
        return 0;
}

int
mcp_config_load(mcp_config *c, int argc, char **argv, mcp_config_action *ret_action,
                msp_err *err)
{
        set_defaults(c);
        *ret_action = MCP_ACTION_SERVE;

        /* "host" is always rootfs[0]. */
        c->rootfs = calloc(1, sizeof(*c->rootfs));
        if (!c->rootfs)
                return msp_err_set(err, ENOMEM, "out of memory");
        c->rootfs[0] = (mcp_rootfs) { .name = "host", .path = NULL };
        c->n_rootfs = 1;

        /* --config first, so that flags win whatever their order. */
        for (int i = 1; i < argc; i++) {
                const char *a = argv[i], *file = NULL;
                if (strcmp(a, "--config") == 0) {
                        if (i + 1 >= argc)
                                return msp_err_set(err, EINVAL, "--config: FILE missing");
                        file = argv[++i];
                } else if (strncmp(a, "--config=", 9) == 0) {
                        file = a + 9;
                } else if (strcmp(a, "--") == 0) {
                        break;
                }
                if (file) {
                        int r = load_file(c, file, err);
                        if (r < 0)
                                return r;
                }
        }

        for (int i = 1; i < argc; i++) {
                const char *a = argv[i];
                if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
                        *ret_action = MCP_ACTION_HELP;
                        return 0;
                }
                if (strcmp(a, "--version") == 0) {
                        *ret_action = MCP_ACTION_VERSION;
                        return 0;
                }
                if (strcmp(a, "--man") == 0) {
                        *ret_action = MCP_ACTION_MAN;
                        return 0;
                }
                if (strcmp(a, "--check") == 0) {
                        *ret_action = MCP_ACTION_CHECK;
                        continue;
                }
                if (strcmp(a, "--config") == 0) {
                        i++;
                        continue;
                }
                if (strncmp(a, "--config=", 9) == 0)
                        continue;
                if (strncmp(a, "--", 2) != 0)
                        return msp_err_set(err, EINVAL, "unexpected argument \"%s\" (see --help)", a);
                const char *name = a + 2, *eq = strchr(name, '=');
                size_t nlen = eq ? (size_t) (eq - name) : strlen(name);
                const opt *o = find_opt(name, nlen);
                if (!o)
                        return msp_err_set(err, EINVAL, "unknown option \"%s\" (see --help)", a);
                const char *val;
                if (eq)
                        val = eq + 1;
                else if (o->kind == K_BOOL)
                        val = "true";
                else if (i + 1 < argc)
                        val = argv[++i];
                else
                        return msp_err_set(err, EINVAL, "--%s: value missing", o->name);
                int r = set_opt(c, o, val, "--", err);
                if (r < 0)
                        return r;
        }

        if (!c->runtime_path) {
                int r = default_runtime(c, err);
                if (r < 0)
                        return r;
        }
        if (!c->init_path) {
                int r = default_beside(c, "msp-sandbox-init", MCP_SANDBOX_INIT_INSTALLED,
                                       &c->init_path, err);
                if (r < 0)
                        return r;
        }
        int ur = default_beside(c, "msp-mcp-unpack", MCP_UNPACK_INSTALLED, &c->unpack_path, err);
        if (ur < 0)
                return ur;
        int hr = default_beside(c, "msp-sandbox-hook", MCP_HOOK_INSTALLED, &c->userns_hook, err);
        if (hr < 0)
                return hr;
        if (!c->usernet_path) {
                int r = default_usernet(c, err);
                if (r < 0)
                        return r;
        }
        int r = user_defaults(c, true, err);
        if (r < 0)
                return r;
        return check(c, err);
}

void
mcp_config_done(mcp_config *c)
{
        for (size_t i = 0; i < c->n_owned_; i++)
                free(c->owned_[i]);
        free(c->owned_);
        free(c->rootfs);
        mcp_egress_policy_done(&c->network_allow);
        free(c->resolve);
        *c = (mcp_config) { 0 };
}

/* A duration in the largest unit --timeout and the others take that holds it exactly
 * (1h, 5m, 30s, 500ms): as a user would write it. */
static void
time_text(uint64_t ms, char *buf, size_t size)
{
        if (ms && ms % 3600000 == 0)
                snprintf(buf, size, "%" PRIu64 "h", ms / 3600000);
        else if (ms && ms % 60000 == 0)
                snprintf(buf, size, "%" PRIu64 "m", ms / 60000);
        else if (ms % 1000 == 0)
                snprintf(buf, size, "%" PRIu64 "s", ms / 1000);
        else
                snprintf(buf, size, "%" PRIu64 "ms", ms);
}

/* What an option's value is ("" for a switch), for --help and the manual page. */
static const char *
opt_arg(const opt *o)
{
        if (o->arg)
                return o->arg;
        switch (o->kind) {
        case K_SIZE: return "SIZE";
        case K_BOOL: return "";
        case K_MSEC:
        case K_SEC: return "TIME";
        case K_ROOTFS: return "NAME=DIR";
        case K_IMAGE: return "NAME=REF";
        case K_NETALLOW: return "PATTERN";
        case K_RESOLVE: return "HOST=ADDR";
        case K_CPUS: return "N.N";
        case K_STR: return "PATH";
        case K_LEVEL: return "LEVEL";
        case K_COUNT:
        case K_UINT: return "N";
        }
        return "VALUE";
}

static void
default_text(const mcp_config *d, const opt *o, char *buf, size_t size)
{
        const void *field = (const char *) d + o->offset;
        uint64_t v;
        switch (o->kind) {
        case K_SIZE:
                v = *(const uint64_t *) field;
                if (v % MIB == 0)
                        snprintf(buf, size, "%" PRIu64 "M", v / MIB);
                else if (v % 1024 == 0)
                        snprintf(buf, size, "%" PRIu64 "K", v / 1024);
                else
                        snprintf(buf, size, "%" PRIu64, v);
                return;
        case K_COUNT:
                snprintf(buf, size, "%" PRIu64, *(const uint64_t *) field);
                return;
        case K_UINT:
                snprintf(buf, size, "%u", *(const unsigned *) field);
                return;
        case K_CPUS:
                v = *(const uint64_t *) field;
                snprintf(buf, size, "%" PRIu64 ".%03" PRIu64, v / 1000, v % 1000);
                return;
        case K_MSEC:
                time_text(*(const uint64_t *) field, buf, size);
                return;
        case K_SEC:
                time_text(*(const uint64_t *) field * 1000, buf, size);
                return;
        case K_BOOL:
                snprintf(buf, size, "%s", *(const bool *) field ? "on" : "off");
                return;
        case K_STR:
        case K_LEVEL:
                snprintf(buf, size, "%s", *(const char *const *) field ? *(const char *const *) field : "");
                return;
        case K_ROOTFS:
        case K_NETALLOW:
        case K_RESOLVE:
        default:
                buf[0] = '\0';
                return;
        }
}

void
mcp_config_help(FILE *out)
{
        mcp_config d;
        msp_err ignored = { 0 };
        set_defaults(&d);
        (void) user_defaults(&d, false, &ignored);      /* the defaults of the user asking */
        fputs("Usage: msp-mcp [OPTION...]\n"
              "An MCP server (JSON-RPC over stdio) that runs code in a fresh msp sandbox per call.\n\n"
              "  --help                     this text\n"
              "  --version                  print the version\n"
              "  --man                      print the manual page, msp-mcp(1), in roff\n"
              "  --check                    print what the default policy needs and what this host\n"
              "                             has; exit 0 when it can be enforced, 1 otherwise\n"
              "  --config FILE              JSON object with the options below as keys (\"memory\":\n"
              "                             \"1G\", \"allow-network\": true, \"rootfs\": {\"NAME\": \"DIR\"});\n"
              "                             flags win\n",
              out);
        for (size_t i = 0; i < ARRAY_SIZE(opts); i++) {
                const opt *o = &opts[i];
                char def[64], flag[64];
                default_text(&d, o, def, sizeof def);
                const char *arg = opt_arg(o);
                snprintf(flag, sizeof flag, "--%s%s%s", o->name, *arg ? " " : "", arg);
                if (strcmp(o->name, "runtime") == 0)
                        snprintf(def, sizeof def, "msp beside msp-mcp");
                if (strcmp(o->name, "http-max-per-address") == 0)
                        snprintf(def, sizeof def, "64; none on loopback or a unix socket");
                if (strcmp(o->name, "max-concurrent") == 0 || strcmp(o->name, "max-cpus") == 0)
                        snprintf(def + strlen(def), sizeof def - strlen(def), ": the CPUs here");
                if (def[0])
                        fprintf(out, "  %-26s %s (default %s)\n", flag, o->help, def);
                else
                        fprintf(out, "  %-26s %s\n", flag, o->help);
        }
        fputs("\nSIZE: bytes with an optional K, M, G or T suffix (binary). TIME: 30s, 500ms, 2m, 1h;\n"
              "a bare number is seconds. The host rootfs (\"host\") is always available.\n"
              "REF: oci:/DIR[:TAG] (an OCI image layout) or containers-storage:IMAGE (podman's store).\n",
              out);
        mcp_config_done(&d);
}


void
mcp_config_man(FILE *out)
{
        mcp_config d;
        set_defaults(&d);
        fprintf(out, ".TH MSP\\-MCP 1 \"\" \"msp-mcp %s\" \"User Commands\"\n", MSP_VERSION);
        fputs(".SH NAME\nmsp\\-mcp \\- an MCP server that runs AI agents' code in msp sandboxes\n"
              ".SH SYNOPSIS\n.B msp\\-mcp\n[\\fIOPTION\\fR...]\n"
              ".SH DESCRIPTION\n"
              "An MCP client (Claude Desktop, Claude Code, VS Code, any client) starts msp\\-mcp "
              "over stdio, or it serves Streamable HTTP with \\fB\\-\\-listen\\fR. Every "
              "\\fBrun_code\\fR call runs in a fresh sandbox made by the msp runtime: its own "
              "namespaces, a read\\-only view of the host's system directories, an empty "
              "/workspace, no network unless allowed, seccomp, Landlock, limits and a timeout; "
              "sessions keep a /workspace across calls. It runs as the user the client runs it "
              "as; no root is needed.\n"
              ".PP\nRun by an ordinary user the defaults of two options differ from the ones "
              "below: the state dir is $XDG_RUNTIME_DIR/msp\\-mcp, else /run/user/UID/msp\\-mcp, "
              "else $XDG_STATE_HOME/msp\\-mcp or ~/.local/state/msp\\-mcp when the sandboxes "
              "can reach it, else /tmp/msp\\-mcp\\-UID; images are unpacked under "
              "$XDG_CACHE_HOME/msp\\-mcp/images or ~/.cache/msp\\-mcp/images. "
              "\\fBmsp\\-mcp \\-\\-help\\fR shows the defaults of the user running it.\n"
              ".SH OPTIONS\n"
              ".TP\n.B \\-\\-help\nprint the options and their defaults\n"
              ".TP\n.B \\-\\-version\nprint the version\n"
              ".TP\n.B \\-\\-man\nprint this manual page in roff\n"
              ".TP\n.B \\-\\-check\nprint what the default policy needs and what this host "
              "has, and how each limit holds; exit 0 when it can be enforced, 1 otherwise\n"
              ".TP\n.B \\-\\-config \\fIFILE\\fR\na JSON object with the options below as keys; "
              "flags win\n", out);
        for (size_t i = 0; i < ARRAY_SIZE(opts); i++) {
                const opt *o = &opts[i];
                char def[64];
                default_text(&d, o, def, sizeof def);
                const char *arg = opt_arg(o);
                fputs(".TP\n.B \\-\\-", out);
                oci_roff_text(out, o->name);
                if (*arg) {
                        fputs(" \\fI", out);
                        oci_roff_text(out, arg);
                        fputs("\\fR", out);
                }
                fputc('\n', out);
                oci_roff_text(out, o->help);
                if (def[0] && strcmp(o->name, "runtime") != 0) {
                        fputs(" (default ", out);
                        oci_roff_text(out, def);
                        fputc(')', out);
                }
                fputc('\n', out);
        }
        fputs(".SH VALUES\nSIZE: bytes with an optional K, M, G or T suffix (binary). TIME: 30s, "
              "500ms, 2m, 1h; a bare number is seconds. REF: oci:/DIR[:TAG] (an OCI image "
              "layout) or containers\\-storage:IMAGE (podman's store).\n"
              ".SH EXIT STATUS\n0 after a clean stop (end of input, SIGTERM, SIGINT); 1 when it "
              "cannot start (on stdio every request is then answered with the reason); 2 for a "
              "bad command line.\n"
              ".SH SEE ALSO\n.BR msp (8)\n", out);
        mcp_config_done(&d);
}
