/* Landlock from process.landlock, with raw syscalls (glibc has no wrappers).
 *
 * prepare() runs in the container's init after pivot_root, so "/" is the container root
 * and every rule path resolves inside it. It probes the ABI, fits the policy to it
 * (best effort) or refuses it (strict), creates the ruleset and adds the rules.
 * apply() is the last step before execve: it needs no_new_privs and calls
 * landlock_restrict_self(). Nothing here allocates after prepare(). */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lib/landlock-abi.h"
#include "lib/landlock.h"
#include "oci/oci.h"
#include "lib/pathres.h"

#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#endif
#ifndef __NR_landlock_add_rule
#define __NR_landlock_add_rule 445
#endif
#ifndef __NR_landlock_restrict_self
#define __NR_landlock_restrict_self 446
#endif


#define LL_FS_V1 ((1ULL << 13) - 1)     /* execute .. make_sym */
#define LL_NET_ALL (LANDLOCK_ACCESS_NET_BIND_TCP | LANDLOCK_ACCESS_NET_CONNECT_TCP)
#define LL_SCOPE_ALL (LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL)
#define LL_LOG_ALL                                                                      \
        (LANDLOCK_RESTRICT_SELF_LOG_SAME_EXEC_OFF | LANDLOCK_RESTRICT_SELF_LOG_NEW_EXEC_ON | \
         LANDLOCK_RESTRICT_SELF_LOG_SUBDOMAINS_OFF)

/* JSON paths named in messages (oci/spec-parse-process.c spells the keys). */
#define LL_JSON "process.landlock"
#define LL_JSON_FS LL_JSON ".handledAccess.handledAccessFS"
#define LL_JSON_NET LL_JSON ".handledAccess.handledAccessNetwork"
#define LL_JSON_SCOPED LL_JSON ".scoped"
#define LL_JSON_LOGGING LL_JSON ".logging"
#define LL_JSON_PATHS LL_JSON ".rules.pathBeneath"
#define LL_JSON_PORTS LL_JSON ".rules.networkPort"

struct rt_landlock {
        int ruleset_fd;                 /* owned; -1 when there is nothing to enforce */
        uint32_t restrict_flags;        /* LANDLOCK_RESTRICT_SELF_* */
};

static const char *const ll_log_names[] = {
        "logging.sameExecOff",
        "logging.newExecOn",
        "logging.subdomainsOff",
};

static inline long
ll_create_ruleset(const struct rt_landlock_ruleset_attr *attr, size_t size, uint32_t flags)
{
        return syscall(__NR_landlock_create_ruleset, attr, size, flags);
}

static inline long
ll_add_rule(int ruleset_fd, int type, const void *attr)
{
        return syscall(__NR_landlock_add_rule, ruleset_fd, type, attr, 0);
}

static inline long
ll_restrict_self(int ruleset_fd, uint32_t flags)
{
        return syscall(__NR_landlock_restrict_self, ruleset_fd, flags);
}

/* The ABI cannot change while the process lives, so one probe is enough. The cache is
 * the only mutable file-scope state: a racing second probe writes the same value. */
int
rt_landlock_abi(void)
{
        static int cached = -1;
        int abi = __atomic_load_n(&cached, __ATOMIC_RELAXED);

        if (abi >= 0)
                return abi;
        long r = ll_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
        /* ENOSYS: not built in; EOPNOTSUPP: built in but disabled at boot. */
        abi = r < 0 ? 0 : (int) r;
        __atomic_store_n(&cached, abi, __ATOMIC_RELAXED);
        return abi;
}

static uint64_t
ll_fs_for_abi(int abi)
{
        uint64_t m = 0;

        if (abi >= 1)
                m |= LL_FS_V1;
        if (abi >= 2)
                m |= LANDLOCK_ACCESS_FS_REFER;
        if (abi >= 3)
                m |= LANDLOCK_ACCESS_FS_TRUNCATE;
        if (abi >= 5)
                m |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
        return m;
}

static uint64_t
ll_net_for_abi(int abi)
{
        return abi >= 4 ? LL_NET_ALL : 0;
}

static uint64_t
ll_scope_for_abi(int abi)
{
        return abi >= 6 ? LL_SCOPE_ALL : 0;
}

static uint32_t
ll_log_for_abi(int abi)
{
        return abi >= 7 ? LL_LOG_ALL : 0;
}

static const char *
ll_log_name(unsigned bit)
{
        return bit < ARRAY_SIZE(ll_log_names) ? ll_log_names[bit] : NULL;
}

/* ---- text helpers: bounded appends that never fail (truncation is acceptable) ---- */

typedef struct ll_text {
        char *buf;                      /* borrowed; may be NULL */
        size_t size;
        size_t len;
} ll_text;

static void ll_text_add(ll_text *t, const char *fmt, ...) _printf_(2, 3);

static void
ll_text_add(ll_text *t, const char *fmt, ...)
{
        va_list ap;

        if (!t->buf || t->size == 0 || t->len >= t->size - 1)
                return;
        va_start(ap, fmt);
        int n = vsnprintf(t->buf + t->len, t->size - t->len, fmt, ap);
        va_end(ap);
        if (n > 0)
                t->len += (size_t) n;
        if (t->len >= t->size)
                t->len = t->size - 1;
}

/* Name of bit `bit` in one of the four kinds, or "bit N" for bits past the tables. */
typedef const char *(*ll_name_fn)(unsigned bit);

static void
ll_text_add_bits(ll_text *t, uint64_t bits, ll_name_fn name, bool *first)
{
        for (unsigned b = 0; b < 64; b++) {
                if (!(bits & (1ULL << b)))
                        continue;
                const char *n = name(b);
                if (n)
                        ll_text_add(t, "%s%s", *first ? "" : ", ", n);
                else
                        ll_text_add(t, "%sbit %u", *first ? "" : ", ", b);
                *first = false;
        }
}

static unsigned
ll_lowest_bit(uint64_t bits)
{
        return (unsigned) __builtin_ctzll(bits);
}

/* ---- fitting a policy to an ABI ---- */

static int
ll_strict_fail(int abi, uint64_t missing, ll_name_fn name, const char *where, msp_err *err)
{
        unsigned b = ll_lowest_bit(missing);
        const char *n = name(b);

        if (abi == 0)
                return msp_err_set(err, EOPNOTSUPP,
                                   "landlock: the kernel does not support Landlock (ABI 0) "
                                   "and %s.enableBestEffort is false", LL_JSON);
        if (n)
                return msp_err_set(err, EOPNOTSUPP,
                                   "landlock: the kernel (ABI %d) lacks '%s' requested by %s",
                                   abi, n, where);
        return msp_err_set(err, EOPNOTSUPP,
                           "landlock: the kernel (ABI %d) lacks bit %u requested by %s", abi, b,
                           where);
}

static uint32_t
ll_requested_log_flags(const oci_landlock *l)
{
        uint32_t f = 0;

        if (l->log_same_exec_off)
                f |= LANDLOCK_RESTRICT_SELF_LOG_SAME_EXEC_OFF;
        if (l->log_new_exec_on)
                f |= LANDLOCK_RESTRICT_SELF_LOG_NEW_EXEC_ON;
        if (l->log_subdomains_off)
                f |= LANDLOCK_RESTRICT_SELF_LOG_SUBDOMAINS_OFF;
        return f;
}

int
rt_landlock_effective_for_abi(const oci_landlock *l, int abi, rt_landlock_effective *ret,
                              char *dropped, size_t dropped_sz, msp_err *err)
{
        const uint32_t log_req = ll_requested_log_flags(l);
        const struct {
                uint64_t requested, supported;
                ll_name_fn name;
                const char *where;
        } kinds[] = {
                { l->handled_access_fs, ll_fs_for_abi(abi), oci_landlock_fs_right_name, LL_JSON_FS },
                { l->handled_access_net, ll_net_for_abi(abi), oci_landlock_net_right_name,
                  LL_JSON_NET },
                { l->scoped, ll_scope_for_abi(abi), oci_landlock_scope_name, LL_JSON_SCOPED },
                { log_req, ll_log_for_abi(abi), ll_log_name, LL_JSON_LOGGING },
        };
        ll_text t = { .buf = dropped, .size = dropped_sz };
        bool first = true;

        if (dropped && dropped_sz > 0)
                dropped[0] = '\0';
        for (size_t i = 0; i < ARRAY_SIZE(kinds); i++) {
                uint64_t missing = kinds[i].requested & ~kinds[i].supported;
                if (!missing)
                        continue;
                if (!l->enable_best_effort)
                        return ll_strict_fail(abi, missing, kinds[i].name, kinds[i].where, err);
                ll_text_add_bits(&t, missing, kinds[i].name, &first);
        }
        if (!first)
                ll_text_add(&t, " (kernel ABI %d)", abi);
        *ret = (rt_landlock_effective) {
                .fs = l->handled_access_fs & ll_fs_for_abi(abi),
                .net = l->handled_access_net & ll_net_for_abi(abi),
                .scoped = l->scoped & ll_scope_for_abi(abi),
                .restrict_flags = log_req & ll_log_for_abi(abi),
        };
        return 0;
}

/* ---- configuration checks that do not depend on the kernel ---- */

static int
ll_check_config(const oci_landlock *l, msp_err *err)
{
        for (size_t i = 0; i < l->n_path_beneath; i++) {
                /* refer is always handled by the kernel; a rule can only grant it when
                 * the ruleset handles it, and dropping it silently would deny renames
                 * the policy meant to allow. */
                if ((l->path_beneath[i].allowed_access & LANDLOCK_ACCESS_FS_REFER) &&
                    !(l->handled_access_fs & LANDLOCK_ACCESS_FS_REFER))
                        return msp_err_set(err, EINVAL,
                                           "landlock: %s[%zu].allowedAccess grants 'refer' "
                                           "but %s does not handle it", LL_JSON_PATHS, i,
                                           LL_JSON_FS);
        }
        for (size_t i = 0; i < l->n_network_port; i++)
                for (size_t j = 0; j < l->network_port[i].n_ports; j++)
                        if (l->network_port[i].ports[j] > 65535)
                                return msp_err_set(err, EINVAL,
                                                   "landlock: %s[%zu].ports[%zu]: %llu is not "
                                                   "a TCP port", LL_JSON_PORTS, i, j,
                                                   (unsigned long long) l->network_port[i].ports[j]);
        return 0;
}

/* ---- rules ---- */

/* A rule path names a place in the image, which the container controls: it is resolved
 * beneath the container root without following any symlink, so that a symlinked /tmp
 * cannot turn "write beneath /tmp" into "write beneath /". What a symlink points to is
 * covered by the rule of its target's own path (Landlock checks the resolved file).
 * Returns the O_PATH fd; -ENOENT when best effort skipped the path (noted); else -errno
 * with err set. */
static int
ll_open_rule_path(int rootfd, const char *path, bool best_effort, ll_text *notes, msp_err *err)
{
        int fd = rt_openat2(rootfd, path, O_PATH,
                            RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);

        if (fd >= 0)
                return fd;
        if ((fd == -ENOENT || fd == -ELOOP) && best_effort) {
                ll_text_add(notes, "%s%s path '%s' skipped", notes->len ? "; " : "",
                            fd == -ENOENT ? "missing" : "symlinked", path);
                return -ENOENT;
        }
        if (fd == -ELOOP)
                return msp_err_set(err, ELOOP, "landlock: %s: '%s' is or passes through a "
                                   "symlink in the container (rule paths never follow one)",
                                   LL_JSON_PATHS, path);
        return msp_err_sys(err, -fd, "landlock: %s: open '%s'", LL_JSON_PATHS, path);
}

static int
ll_add_path(int ruleset_fd, int rootfd, const char *path, uint64_t access, bool best_effort,
            ll_text *notes, msp_err *err)
{
        _cleanup_close_ int fd = -1;
        struct stat st;

        fd = ll_open_rule_path(rootfd, path, best_effort, notes, err);
        if (fd == -ENOENT && best_effort)
                return 0;
        if (fd < 0)
                return fd;
        if (fstat(fd, &st) < 0)
                return msp_err_sys(err, errno, "landlock: fstat '%s'", path);
        /* The kernel refuses directory-only rights on a file (EINVAL). */
        if (!S_ISDIR(st.st_mode))
                access &= RT_LL_ACCESS_FILE;
        if (access == 0)
                return 0;

        struct landlock_path_beneath_attr attr = {
                .allowed_access = access,
                .parent_fd = fd,
        };
        if (ll_add_rule(ruleset_fd, LANDLOCK_RULE_PATH_BENEATH, &attr) < 0)
                return msp_err_sys(err, errno, "landlock: add rule for '%s'", path);
        return 0;
}

static int
ll_add_path_rules(int ruleset_fd, const oci_landlock *l, uint64_t handled, ll_text *notes,
                  msp_err *err)
{
        _cleanup_close_ int rootfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);

        if (rootfd < 0)
                return msp_err_sys(err, errno, "landlock: open /");
        for (size_t i = 0; i < l->n_path_beneath; i++) {
                const oci_landlock_path_rule *r = &l->path_beneath[i];
                /* Rights the ruleset does not handle are allowed everywhere anyway, so
                 * masking them out of a rule changes nothing (refer is checked earlier). */
                uint64_t access = r->allowed_access & handled;

                if (access == 0)
                        continue;
                for (size_t j = 0; j < r->paths.n; j++) {
                        int ret = ll_add_path(ruleset_fd, rootfd, r->paths.v[j], access,
                                              l->enable_best_effort, notes, err);
                        if (ret < 0)
                                return ret;
                }
        }
        return 0;
}

static int
ll_add_port_rules(int ruleset_fd, const oci_landlock *l, uint64_t handled, msp_err *err)
{
        for (size_t i = 0; i < l->n_network_port; i++) {
                const oci_landlock_port_rule *r = &l->network_port[i];
                uint64_t access = r->allowed_access & handled;

                if (access == 0)
                        continue;
                for (size_t j = 0; j < r->n_ports; j++) {
                        struct rt_landlock_net_port_attr attr = {
                                .allowed_access = access,
                                .port = r->ports[j],
                        };
                        if (ll_add_rule(ruleset_fd, RT_LANDLOCK_RULE_NET_PORT, &attr) < 0)
                                return msp_err_sys(err, errno,
                                                   "landlock: add rule for TCP port %llu",
                                                   (unsigned long long) r->ports[j]);
                }
        }
        return 0;
}

static size_t
ll_attr_size(int abi)
{
        if (abi >= 6)
                return RT_LL_ATTR_SIZE_V6;
        if (abi >= 4)
                return RT_LL_ATTR_SIZE_V4;
        return RT_LL_ATTR_SIZE_V1;
}

static int
ll_create(const rt_landlock_effective *eff, int abi, msp_err *err)
{
        struct rt_landlock_ruleset_attr attr = {
                .handled_access_fs = eff->fs,
                .handled_access_net = eff->net,
                .scoped = eff->scoped,
        };
        long fd = ll_create_ruleset(&attr, ll_attr_size(abi), 0);

        if (fd < 0)
                return msp_err_sys(err, errno, "landlock: landlock_create_ruleset");
        return (int) fd;                /* the kernel sets O_CLOEXEC */
}

int
rt_landlock_prepare(const oci_landlock *l, rt_landlock **ret, char *dropped, size_t dropped_sz,
                    msp_err *err)
{
        _cleanup_(rt_landlock_freep) rt_landlock *ll = NULL;
        rt_landlock_effective eff;
        int abi = rt_landlock_abi();
        int r;

        r = ll_check_config(l, err);
        if (r < 0)
                return r;
        r = rt_landlock_effective_for_abi(l, abi, &eff, dropped, dropped_sz, err);
        if (r < 0)
                return r;
        ll = calloc(1, sizeof *ll);
        if (!ll)
                return msp_err_set(err, ENOMEM, "landlock: out of memory");
        ll->ruleset_fd = -1;
        ll->restrict_flags = eff.restrict_flags;
        /* Best effort on a kernel that can enforce none of it: nothing to restrict.
         * (The kernel refuses an empty ruleset with ENOMSG.) */
        if (eff.fs == 0 && eff.net == 0 && eff.scoped == 0) {
                *ret = TAKE_PTR(ll);
                return 0;
        }
        ll->ruleset_fd = ll_create(&eff, abi, err);
        if (ll->ruleset_fd < 0)
                return ll->ruleset_fd;

        ll_text notes = { .buf = dropped, .size = dropped_sz, .len = dropped ? strlen(dropped) : 0 };
        r = ll_add_path_rules(ll->ruleset_fd, l, eff.fs, &notes, err);
        if (r < 0)
                return r;
        r = ll_add_port_rules(ll->ruleset_fd, l, eff.net, err);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(ll);
        return 0;
}

int
rt_landlock_apply(rt_landlock *l, msp_err *err)
{
        int nnp = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0);

        /* Checked even when there is nothing to enforce, so that a config behaves the
         * same on every kernel. The kernel itself would return EPERM without it
         * (unless the caller has CAP_SYS_ADMIN), and the spec requires it. */
        if (nnp != 1)
                return msp_err_set(err, EPERM, "landlock requires process.noNewPrivileges");
        if (l->ruleset_fd < 0)
                return 0;
        if (ll_restrict_self(l->ruleset_fd, l->restrict_flags) < 0)
                return msp_err_sys(err, errno, "landlock: landlock_restrict_self");
        /* The ruleset lives on in the domain; our fd is no longer needed. */
        msp_closep(&l->ruleset_fd);
        l->ruleset_fd = -1;
        return 0;
}

rt_landlock *
rt_landlock_free(rt_landlock *l)
{
        if (!l)
                return NULL;
        msp_closep(&l->ruleset_fd);
        free(l);
        return NULL;
}

/* ---- features ---- */

static size_t
ll_names(uint64_t bits, ll_name_fn name, const char **ret, size_t n)
{
        size_t k = 0;

        if (n == 0)
                return 0;
        for (unsigned b = 0; b < 64 && k + 1 < n; b++)
                if ((bits & (1ULL << b)) && name(b))
                        ret[k++] = name(b);
        ret[k] = NULL;
        return k;
}

size_t
rt_landlock_fs_rights(int abi, const char **ret, size_t n)
{
        return ll_names(ll_fs_for_abi(abi), oci_landlock_fs_right_name, ret, n);
}

size_t
rt_landlock_net_rights(int abi, const char **ret, size_t n)
{
        return ll_names(ll_net_for_abi(abi), oci_landlock_net_right_name, ret, n);
}

size_t
rt_landlock_scopes(int abi, const char **ret, size_t n)
{
        return ll_names(ll_scope_for_abi(abi), oci_landlock_scope_name, ret, n);
}
