/* seccomp from linux.seccomp, built with libseccomp and loaded with seccomp(2).
 *
 * rt_seccomp_prepare() runs during create: it checks the profile against libseccomp and
 * the kernel (actions, flags), builds the filter and exports it as classic BPF. `create`
 * goes through seccomp-cache.c, which replaces the build and export (rt_seccomp_compile)
 * with a cached program when it has one (seccomp-int.h).
 * rt_seccomp_load() runs in the container's init right before execve and is a single
 * seccomp(SECCOMP_SET_MODE_FILTER) call on that program. Loading the exported BPF
 * ourselves, instead of seccomp_load(), has two reasons:
 *  - libseccomp 2.5.4 has no attribute for SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, and
 *    TSYNC with a listener needs TSYNC_ESRCH; we pass the kernel flags directly;
 *  - load allocates nothing and calls no library code, so it is safe in a child of
 *    clone() and after the process has dropped everything else.
 * libseccomp's own flag attributes (CTL_TSYNC, CTL_LOG, CTL_SSB) only affect its
 * seccomp_load(), which we never call; CTL_NNP is cleared for the same reason: whether
 * no_new_privs is set is process.noNewPrivileges's business, not the filter's. */
#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include "lib/rt-libseccomp.h"        /* libseccomp, see there */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "lib/log.h"
#include "oci/oci.h"
#include "lib/seccomp.h"
#include "lib/seccomp-int.h"

#ifndef SECCOMP_FILTER_FLAG_TSYNC_ESRCH
#define SECCOMP_FILTER_FLAG_TSYNC_ESRCH (1UL << 4)
#endif
#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif

/* Version written as ContainerProcessState.ociVersion (runtime-spec seccomp notify). */
#define SC_OCI_VERSION "1.2.1"
#define SC_MAX_ERRNO 0xffffu            /* SECCOMP_RET_DATA */

struct rt_seccomp {
        struct sock_filter *insns;      /* owned */
        unsigned short n_insns;
        unsigned int flags;             /* SECCOMP_FILTER_FLAG_* for seccomp(2) */
        bool notify;                    /* has SCMP_ACT_NOTIFY rules: load returns a listener */
};

static void
sc_releasep(scmp_filter_ctx *ctx)
{
        if (*ctx)
                seccomp_release(*ctx);
}
#define _cleanup_scmp_ _cleanup_(sc_releasep)

static inline long
sc_syscall(unsigned int op, unsigned int flags, void *args)
{
        return syscall(SYS_seccomp, op, flags, args);
}

/* OCI flag bit i (OCI_SECCOMP_FLAG_*) -> kernel flag and name. */
static const struct {
        uint32_t oci;
        unsigned long kernel;
        const char *name;
} sc_flags[] = {
        { OCI_SECCOMP_FLAG_TSYNC, SECCOMP_FILTER_FLAG_TSYNC, "SECCOMP_FILTER_FLAG_TSYNC" },
        { OCI_SECCOMP_FLAG_LOG, SECCOMP_FILTER_FLAG_LOG, "SECCOMP_FILTER_FLAG_LOG" },
        { OCI_SECCOMP_FLAG_SPEC_ALLOW, SECCOMP_FILTER_FLAG_SPEC_ALLOW,
          "SECCOMP_FILTER_FLAG_SPEC_ALLOW" },
        { OCI_SECCOMP_FLAG_WAIT_KILLABLE_RECV, SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV,
          "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV" },
};

/* ---- actions ---- */

static const char *
sc_action_name(oci_seccomp_action a)
{
        const char *n = oci_seccomp_action_name(a);
        return n ? n : "?";
}

static int
sc_action(oci_seccomp_action a, bool has_errno, uint32_t errno_ret, uint32_t *ret, msp_err *err)
{
        /* runc's defaults: EPERM for ERRNO, and for TRACE as the tracer's message. */
        uint32_t data = has_errno ? errno_ret : EPERM;

        if ((a == OCI_SECCOMP_ERRNO || a == OCI_SECCOMP_TRACE) && data > SC_MAX_ERRNO)
                return msp_err_set(err, EINVAL, "seccomp: errnoRet %u is out of range (0-%u)",
                                   data, SC_MAX_ERRNO);
        switch (a) {
        case OCI_SECCOMP_KILL:
        case OCI_SECCOMP_KILL_THREAD:
                *ret = SCMP_ACT_KILL_THREAD;
                return 0;
        case OCI_SECCOMP_KILL_PROCESS:
                *ret = SCMP_ACT_KILL_PROCESS;
                return 0;
        case OCI_SECCOMP_TRAP:
                *ret = SCMP_ACT_TRAP;
                return 0;
        case OCI_SECCOMP_ERRNO:
                *ret = SCMP_ACT_ERRNO(data);
                return 0;
        case OCI_SECCOMP_TRACE:
                *ret = SCMP_ACT_TRACE(data);
                return 0;
        case OCI_SECCOMP_ALLOW:
                *ret = SCMP_ACT_ALLOW;
                return 0;
        case OCI_SECCOMP_LOG:
                *ret = SCMP_ACT_LOG;
                return 0;
        case OCI_SECCOMP_NOTIFY:
                *ret = SCMP_ACT_NOTIFY;
                return 0;
        }
        return msp_err_set(err, EINVAL, "seccomp: unknown action %d", (int) a);
}

/* SECCOMP_GET_ACTION_AVAIL: KILL_PROCESS (4.14), LOG (4.14), USER_NOTIF (5.0) are the
 * ones an older kernel may lack; the others have existed since seccomp filters did. */
static int
sc_check_action_avail(uint32_t action, const char *name, msp_err *err)
{
        uint32_t a = action & SECCOMP_RET_ACTION_FULL;

        if (sc_syscall(SECCOMP_GET_ACTION_AVAIL, 0, &a) == 0)
                return 0;
        if (errno == EOPNOTSUPP)
                return msp_err_set(err, EOPNOTSUPP,
                                   "seccomp: the kernel does not support action %s", name);
        return msp_err_sys(err, errno, "seccomp: checking action %s", name);
}

static int
sc_check_actions(const oci_seccomp *s, msp_err *err)
{
        uint32_t seen = 1u << s->default_action;

        for (size_t i = 0; i < s->n_syscalls; i++)
                seen |= 1u << s->syscalls[i].action;
        for (unsigned a = 0; a < 32; a++) {
                if (!(seen & (1u << a)))
                        continue;
                uint32_t act = 0;
                int r = sc_action((oci_seccomp_action) a, true, 0, &act, err);
                if (r < 0)
                        return r;
                r = sc_check_action_avail(act, sc_action_name((oci_seccomp_action) a), err);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Between rt_seccomp_load() and execve the init hands the listener to the parent over
 * the sync socket. Notifying those syscalls would block the init on an agent that has
 * not got the listener yet: a deadlock, so such profiles are refused (runc refuses
 * NOTIFY on write for the same reason). */
static const char *const sc_notify_forbidden[] = { "write", "sendmsg", "recvmsg" };

static int
sc_check_notify(const oci_seccomp *s, bool *ret_notify, msp_err *err)
{
        bool notify = false;

        if (s->default_action == OCI_SECCOMP_NOTIFY)
                return msp_err_set(err, EINVAL,
                                   "seccomp: SCMP_ACT_NOTIFY cannot be the defaultAction");
        for (size_t i = 0; i < s->n_syscalls; i++) {
                const oci_seccomp_syscall *sc = &s->syscalls[i];
                if (sc->action != OCI_SECCOMP_NOTIFY)
                        continue;
                notify = true;
                for (size_t j = 0; j < sc->names.n; j++)
                        for (size_t k = 0; k < ARRAY_SIZE(sc_notify_forbidden); k++)
                                if (strcmp(sc->names.v[j], sc_notify_forbidden[k]) == 0)
                                        return msp_err_set(err, EINVAL,
                                                           "seccomp: SCMP_ACT_NOTIFY cannot be "
                                                           "used for '%s' (the runtime needs it "
                                                           "to hand over the listener)",
                                                           sc->names.v[j]);
        }
        if (notify && !s->listener_path)
                return msp_err_set(err, EINVAL,
                                   "seccomp: SCMP_ACT_NOTIFY rules need linux.seccomp.listenerPath");
        *ret_notify = notify;
        return 0;
}

/* ---- flags ---- */

/* A flag is known to the kernel when seccomp(SET_MODE_FILTER, flag, NULL) fails with
 * EFAULT (the program pointer) rather than EINVAL (the flags): nothing is loaded. */
static bool
sc_kernel_has_flag(unsigned long flag)
{
        unsigned int f = (unsigned int) flag;

        /* WAIT_KILLABLE_RECV is only valid together with NEW_LISTENER. */
        if (flag == SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV)
                f |= SECCOMP_FILTER_FLAG_NEW_LISTENER;
        return sc_syscall(SECCOMP_SET_MODE_FILTER, f, NULL) < 0 && errno == EFAULT;
}

static int
sc_kernel_flags(const rt_ctx *ctx, const oci_seccomp *s, bool notify, unsigned int *ret,
                msp_err *err)
{
        unsigned int flags = 0;

        for (size_t i = 0; i < ARRAY_SIZE(sc_flags); i++) {
                if (!(s->flags & sc_flags[i].oci))
                        continue;
                if (sc_flags[i].oci == OCI_SECCOMP_FLAG_WAIT_KILLABLE_RECV && !notify) {
                        /* It only changes how notifications wait; the kernel refuses it
                         * without a listener, and without NOTIFY rules it means nothing. */
                        rt_debug(ctx, "seccomp: %s ignored: no SCMP_ACT_NOTIFY rules",
                                 sc_flags[i].name);
                        continue;
                }
                if (!sc_kernel_has_flag(sc_flags[i].kernel))
                        return msp_err_set(err, EOPNOTSUPP,
                                           "seccomp: the kernel does not support flag %s",
                                           sc_flags[i].name);
                flags |= (unsigned int) sc_flags[i].kernel;
        }
        if (notify) {
                flags |= SECCOMP_FILTER_FLAG_NEW_LISTENER;
                /* The kernel refuses TSYNC with NEW_LISTENER unless failures are reported
                 * as ESRCH instead of a thread id (which would look like an fd). */
                if (flags & SECCOMP_FILTER_FLAG_TSYNC)
                        flags |= SECCOMP_FILTER_FLAG_TSYNC_ESRCH;
        }
        *ret = flags;
        return 0;
}

/* ---- architectures ---- */

static int
sc_add_arches(scmp_filter_ctx ctx, const oci_strv *arches, FILE *notes, msp_err *err)
{
        static const char prefix[] = "SCMP_ARCH_";

        for (size_t i = 0; i < arches->n; i++) {
                const char *name = arches->v[i];
                char lower[32];
                size_t len;

                if (strncmp(name, prefix, sizeof prefix - 1) != 0)
                        return msp_err_set(err, EINVAL, "seccomp: unknown architecture '%s'",
                                           name);
                len = strlen(name + sizeof prefix - 1);
                if (len == 0 || len >= sizeof lower)
                        return msp_err_set(err, EINVAL, "seccomp: unknown architecture '%s'",
                                           name);
                for (size_t k = 0; k <= len; k++)
                        lower[k] = (char) tolower((unsigned char) name[sizeof prefix - 1 + k]);
                uint32_t arch = seccomp_arch_resolve_name(lower);
                if (arch == 0) {
                        /* Fail closed: a syscall from an arch not in the filter hits the
                         * bad-arch action (kill), so skipping it weakens nothing. */
                        if (notes)
                                fprintf(notes, "msp: seccomp: architecture '%s' unknown to "
                                        "libseccomp %u.%u, skipped\n", name,
                                        seccomp_version()->major, seccomp_version()->minor);
                        continue;
                }
                int r = seccomp_arch_add(ctx, arch);
                if (r < 0 && r != -EEXIST)      /* the native arch is already there */
                        return msp_err_sys(err, -r, "seccomp: adding architecture '%s'", name);
        }
        return 0;
}

/* ---- rules ---- */

/* Indexed by oci_seccomp_op. */
static const enum scmp_compare sc_ops[] = {
        [OCI_SECCOMP_OP_NE] = SCMP_CMP_NE,
        [OCI_SECCOMP_OP_LT] = SCMP_CMP_LT,
        [OCI_SECCOMP_OP_LE] = SCMP_CMP_LE,
        [OCI_SECCOMP_OP_EQ] = SCMP_CMP_EQ,
        [OCI_SECCOMP_OP_GE] = SCMP_CMP_GE,
        [OCI_SECCOMP_OP_GT] = SCMP_CMP_GT,
        [OCI_SECCOMP_OP_MASKED_EQ] = SCMP_CMP_MASKED_EQ,
};

/* The conditions of one rule; `repeated` says whether an argument index occurs twice. */
static int
sc_conditions(const oci_seccomp_syscall *sc, struct scmp_arg_cmp *cmp, bool *repeated,
              msp_err *err)
{
        unsigned seen = 0;

        *repeated = false;
        for (size_t i = 0; i < sc->n_args; i++) {
                const oci_seccomp_arg *a = &sc->args[i];
                if (a->index >= 6)
                        return msp_err_set(err, EINVAL, "seccomp: '%s': argument index %u "
                                           "(syscalls have 6 arguments: 0-5)", sc->names.v[0],
                                           a->index);
                if ((unsigned) a->op >= ARRAY_SIZE(sc_ops))
                        return msp_err_set(err, EINVAL, "seccomp: unknown operator %d",
                                           (int) a->op);
                if (seen & (1u << a->index))
                        *repeated = true;
                seen |= 1u << a->index;
                /* MASKED_EQ: (arg & value) == valueTwo, as in runc and libseccomp. */
                cmp[i] = (struct scmp_arg_cmp) { .arg = a->index, .op = sc_ops[a->op],
                                                 .datum_a = a->value, .datum_b = a->value_two };
        }
        return 0;
}

static int
sc_rule_add(scmp_filter_ctx ctx, uint32_t action, int nr, const char *name,
            const struct scmp_arg_cmp *cmp, unsigned n, msp_err *err)
{
        int r = seccomp_rule_add_array(ctx, action, nr, n, cmp);

        if (r < 0)
                return msp_err_sys(err, -r, "seccomp: adding a rule for '%s'", name);
        return 0;
}

/* All names of one syscalls[] entry. Conditions on distinct arguments are ANDed in one
 * rule. When one argument index appears more than once, each condition becomes its own
 * rule (OR), because libseccomp cannot AND two conditions on one argument; this is
 * runc's behaviour, which profiles in the wild rely on. */
static int
sc_add_entry(scmp_filter_ctx ctx, const oci_seccomp_syscall *sc, uint32_t action, FILE *notes,
             msp_err *err)
{
        struct scmp_arg_cmp cmp[6 * 8];
        bool repeated;
        int r;

        if (sc->names.n == 0)
                return 0;
        if (sc->n_args > ARRAY_SIZE(cmp))
                return msp_err_set(err, EINVAL, "seccomp: '%s': too many argument conditions "
                                   "(%zu)", sc->names.v[0], sc->n_args);
        r = sc_conditions(sc, cmp, &repeated, err);
        if (r < 0)
                return r;
        for (size_t i = 0; i < sc->names.n; i++) {
                const char *name = sc->names.v[i];
                int nr = seccomp_syscall_resolve_name(name);

                if (nr == __NR_SCMP_ERROR) {
                        if (notes)
                                fprintf(notes, "msp: seccomp: unknown syscall '%s', skipped\n",
                                        name);
                        continue;
                }
                if (!repeated) {
                        r = sc_rule_add(ctx, action, nr, name, cmp, (unsigned) sc->n_args, err);
                        if (r < 0)
                                return r;
                        continue;
                }
                for (size_t k = 0; k < sc->n_args; k++) {
                        r = sc_rule_add(ctx, action, nr, name, &cmp[k], 1, err);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

static int
sc_add_syscalls(scmp_filter_ctx ctx, const oci_seccomp *s, uint32_t default_action, FILE *notes,
                msp_err *err)
{
        for (size_t i = 0; i < s->n_syscalls; i++) {
                const oci_seccomp_syscall *sc = &s->syscalls[i];
                uint32_t action;
                int r = sc_action(sc->action, sc->has_errno_ret, sc->errno_ret, &action, err);

                if (r < 0)
                        return msp_err_prefix(err, "linux.seccomp.syscalls[%zu]", i);
                /* libseccomp refuses a rule that repeats the default; it is a no-op. */
                if (action == default_action) {
                        if (notes)
                                fprintf(notes, "msp: seccomp: syscalls[%zu] has the default "
                                        "action, skipped\n", i);
                        continue;
                }
                r = sc_add_entry(ctx, sc, action, notes, err);
                if (r < 0)
                        return msp_err_prefix(err, "linux.seccomp.syscalls[%zu]", i);
        }
        return 0;
}

/* ---- export ---- */

static int
sc_export(scmp_filter_ctx ctx, rt_seccomp *f, msp_err *err)
{
        _cleanup_close_ int fd = -1;
        struct stat st;
        int r;

        fd = memfd_create("msp-seccomp-bpf", MFD_CLOEXEC);
        if (fd < 0)
                return msp_err_sys(err, errno, "seccomp: memfd_create");
        r = seccomp_export_bpf(ctx, fd);
        if (r < 0)
                return msp_err_sys(err, -r, "seccomp: exporting the filter");
        if (fstat(fd, &st) < 0)
                return msp_err_sys(err, errno, "seccomp: fstat");
        size_t n = (size_t) st.st_size / sizeof(struct sock_filter);
        if (n == 0 || (size_t) st.st_size % sizeof(struct sock_filter) != 0)
                return msp_err_set(err, EIO, "seccomp: libseccomp exported %lld bytes of BPF",
                                   (long long) st.st_size);
        if (n > BPF_MAXINSNS)
                return msp_err_set(err, E2BIG, "seccomp: the filter has %zu instructions, the "
                                   "kernel accepts at most %d", n, BPF_MAXINSNS);
        f->insns = calloc(n, sizeof(struct sock_filter));
        if (!f->insns)
                return msp_err_set(err, ENOMEM, "seccomp: out of memory");
        ssize_t got = pread(fd, f->insns, (size_t) st.st_size, 0);
        if (got != st.st_size)
                return msp_err_sys(err, got < 0 ? errno : EIO, "seccomp: reading the filter");
        f->n_insns = (unsigned short) n;
        return 0;
}

/* ---- public ---- */

uint32_t
rt_seccomp_badarch_action(void)
{
        uint32_t kp = SECCOMP_RET_KILL_PROCESS;

        return sc_syscall(SECCOMP_GET_ACTION_AVAIL, 0, &kp) == 0 ? SCMP_ACT_KILL_PROCESS
                                                                   : SCMP_ACT_KILL_THREAD;
}

static int
sc_build(const oci_seccomp *s, FILE *notes, scmp_filter_ctx *ret, msp_err *err)
{
        _cleanup_scmp_ scmp_filter_ctx ctx = NULL;
        uint32_t def;
        int r;

        r = sc_action(s->default_action, s->has_default_errno_ret, s->default_errno_ret, &def,
                      err);
        if (r < 0)
                return msp_err_prefix(err, "linux.seccomp.defaultAction");
        ctx = seccomp_init(def);
        if (!ctx)
                return msp_err_set(err, EINVAL, "seccomp: seccomp_init failed");
        r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
        if (r < 0)
                return msp_err_sys(err, -r, "seccomp: clearing SCMP_FLTATR_CTL_NNP");
        /* A syscall made through an ABI the profile does not list is an escape attempt
         * more often than not; kill the whole process, not one thread (4.14+). */
        r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, rt_seccomp_badarch_action());
        if (r < 0)
                return msp_err_sys(err, -r, "seccomp: setting the bad-arch action");
        r = sc_add_arches(ctx, &s->architectures, notes, err);
        if (r < 0)
                return r;
        r = sc_add_syscalls(ctx, s, def, notes, err);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(ctx);
        return 0;
}

int
rt_seccomp_check(const rt_ctx *ctx, const oci_seccomp *s, rt_seccomp **ret, msp_err *err)
{
        _cleanup_(rt_seccomp_freep) rt_seccomp *f = NULL;
        int r;

        assert(s && ret);
        f = calloc(1, sizeof *f);
        if (!f)
                return msp_err_set(err, ENOMEM, "seccomp: out of memory");
        r = sc_check_notify(s, &f->notify, err);
        if (r < 0)
                return r;
        r = sc_check_actions(s, err);
        if (r < 0)
                return r;
        r = sc_kernel_flags(ctx, s, f->notify, &f->flags, err);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(f);
        return 0;
}

int
rt_seccomp_compile(const oci_seccomp *s, rt_seccomp *f, FILE *notes, msp_err *err)
{
        _cleanup_scmp_ scmp_filter_ctx ctx = NULL;
        int r;

        assert(s && f && !f->insns);
        size_t n;

        r = sc_build(s, notes, &ctx, err);
        if (r < 0)
                return r;
        r = sc_export(ctx, f, err);
        if (r < 0)
                return r;
        n = f->n_insns;
        r = rt_seccomp_enosys_prepend(s, &f->insns, &n, err);
        f->n_insns = (unsigned short) n;
        return r;
}

const struct sock_filter *
rt_seccomp_program(const rt_seccomp *f, size_t *ret_n)
{
        *ret_n = f->n_insns;
        return f->insns;
}

void
rt_seccomp_set_program(rt_seccomp *f, struct sock_filter *insns, size_t n)
{
        assert(!f->insns && n > 0 && n <= BPF_MAXINSNS);
        f->insns = insns;
        f->n_insns = (unsigned short) n;
}

int
rt_seccomp_prepare(const oci_seccomp *s, bool debug, rt_seccomp **ret, msp_err *err)
{
        /* The debug lines of a command without --log: on stderr. */
        const rt_ctx ctx = { .log_fd = -1, .debug = debug };
        _cleanup_(rt_seccomp_freep) rt_seccomp *f = NULL;
        int r;

        r = rt_seccomp_check(&ctx, s, &f, err);
        if (r < 0)
                return r;
        r = rt_seccomp_compile(s, f, debug ? stderr : NULL, err);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(f);
        return 0;
}

int
rt_seccomp_load(rt_seccomp *f, int *ret_listener, msp_err *err)
{
        struct sock_fprog prog = { .len = f->n_insns, .filter = f->insns };
        long r = sc_syscall(SECCOMP_SET_MODE_FILTER, f->flags, &prog);

        if (r < 0 && errno == EACCES)
                return msp_err_set(err, EACCES, "seccomp: loading the filter needs "
                                   "no_new_privs or CAP_SYS_ADMIN");
        if (r < 0)
                return msp_err_sys(err, errno, "seccomp: loading the filter");
        /* Without TSYNC_ESRCH a positive value is the thread that could not be synced. */
        if (r > 0 && !f->notify)
                return msp_err_set(err, ESRCH, "seccomp: TSYNC failed for thread %ld", r);
        if (ret_listener)
                *ret_listener = f->notify ? (int) r : -1;       /* O_CLOEXEC from the kernel */
        else if (f->notify)
                (void) close((int) r);
        return 0;
}

rt_seccomp *
rt_seccomp_free(rt_seccomp *f)
{
        if (!f)
                return NULL;
        free(f->insns);
        free(f);
        return NULL;
}

/* ---- the listener hand-over (runtime-spec seccomp.md, "Seccomp notify") ---- */

/* Append s to out as the body of a JSON string. out has room for 6 bytes per input
 * byte; bytes >= 0x80 pass through (the spec's strings are UTF-8). */
static size_t
sc_json_escape(char *out, const char *s)
{
        static const char hex[] = "0123456789abcdef";
        size_t k = 0;

        for (const unsigned char *p = (const unsigned char *) s; *p; p++) {
                if (*p == '"' || *p == '\\') {
                        out[k++] = '\\';
                        out[k++] = (char) *p;
                } else if (*p < 0x20) {
                        memcpy(out + k, "\\u00", 4);
                        out[k + 4] = hex[*p >> 4];
                        out[k + 5] = hex[*p & 15];
                        k += 6;
                } else {
                        out[k++] = (char) *p;
                }
        }
        out[k] = '\0';
        return k;
}

/* The top-level "pid" member of a state JSON object, or -1. Strings and nested values
 * are skipped properly, so an annotation named "pid" cannot be taken for it. */
static long
sc_state_pid(const char *json)
{
        int depth = 0;
        bool expect_key = false, is_pid = false;

        for (const char *p = json; *p; p++) {
                if (*p == '"') {
                        const char *start = ++p;
                        while (*p && *p != '"')
                                p += (*p == '\\' && p[1]) ? 2 : 1;
                        if (!*p)
                                return -1;
                        if (depth == 1 && expect_key)
                                is_pid = p - start == 3 && memcmp(start, "pid", 3) == 0;
                        expect_key = false;
                } else if (*p == '{' || *p == '[') {
                        depth++;
                        expect_key = depth == 1;
                } else if (*p == '}' || *p == ']') {
                        depth--;
                } else if (*p == ',' && depth == 1) {
                        expect_key = true;
                } else if (*p == ':' && depth == 1 && is_pid) {
                        char *end;
                        errno = 0;
                        long pid = strtol(p + 1, &end, 10);
                        return errno == 0 && end != p + 1 && pid > 0 ? pid : -1;
                }
        }
        return -1;
}

/* ContainerProcessState: {"ociVersion","fds":["seccompFd"],"pid","metadata","state"}. */
static char *
sc_process_state_json(const oci_seccomp *s, pid_t pid, const char *state_json)
{
        const char *meta = s->listener_metadata ? s->listener_metadata : "";
        size_t size = strlen(state_json) + 6 * strlen(meta) + 128;
        _cleanup_free_ char *esc = malloc(6 * strlen(meta) + 1);
        char *out = malloc(size);

        if (!esc || !out) {
                free(out);
                return NULL;
        }
        sc_json_escape(esc, meta);
        (void) snprintf(out, size,
                        "{\"ociVersion\":\"%s\",\"fds\":[\"seccompFd\"],\"pid\":%ld,"
                        "\"metadata\":\"%s\",\"state\":%s}",
                        SC_OCI_VERSION, (long) pid, esc, state_json);
        return out;
}

static int
sc_connect(const char *path, msp_err *err)
{
        _cleanup_close_ int fd = -1;
        struct sockaddr_un sa = { .sun_family = AF_UNIX };

        if (strlen(path) >= sizeof sa.sun_path)
                return msp_err_set(err, ENAMETOOLONG, "seccomp: listenerPath '%s' is too long",
                                   path);
        strcpy(sa.sun_path, path);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return msp_err_sys(err, errno, "seccomp: socket");
        if (connect(fd, (struct sockaddr *) &sa, sizeof sa) < 0)
                return msp_err_sys(err, errno, "seccomp: connect to listenerPath '%s'", path);
        return TAKE_FD(fd);
}

/* One sendmsg carries the fd and the start of the text; the rest follows if the
 * stream accepted only part of it. */
static int
sc_send_fd_and_text(int sock, int fd, const char *text, msp_err *err)
{
        size_t len = strlen(text);
        union {
                char buf[CMSG_SPACE(sizeof(int))];
                struct cmsghdr align;
        } u = { 0 };
        struct iovec iov = { .iov_base = (void *) text, .iov_len = len };
        struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
                              .msg_control = u.buf, .msg_controllen = sizeof u.buf };
        struct cmsghdr *c = CMSG_FIRSTHDR(&msg);

        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &fd, sizeof fd);

        ssize_t n = sendmsg(sock, &msg, MSG_NOSIGNAL);
        if (n < 0)
                return msp_err_sys(err, errno, "seccomp: sending the listener fd");
        for (size_t done = (size_t) n; done < len; done += (size_t) n) {
                n = send(sock, text + done, len - done, MSG_NOSIGNAL);
                if (n < 0 && errno == EINTR) {
                        n = 0;
                        continue;
                }
                if (n < 0)
                        return msp_err_sys(err, errno, "seccomp: sending the container state");
        }
        return 0;
}

bool
rt_seccomp_needs_listener(const oci_seccomp *s)
{
        if (!s)
                return false;
        for (size_t i = 0; i < s->n_syscalls; i++)
                if (s->syscalls[i].action == OCI_SECCOMP_NOTIFY)
                        return true;
        return false;
}

int
rt_seccomp_listener_connect(const oci_seccomp *s, msp_err *err)
{
        bool notify = false;
        int r;

        if (!rt_seccomp_needs_listener(s))
                return -1;
        /* The profile's own mistakes first, so they are not reported as a connect error. */
        r = sc_check_notify(s, &notify, err);
        if (r < 0)
                return r;
        return sc_connect(s->listener_path, err);
}

int
rt_seccomp_send_listener_on(int sock, const oci_seccomp *s, int listener, pid_t pid,
                            const char *state_json, msp_err *err)
{
        _cleanup_free_ char *text = NULL;

        if (!state_json || state_json[0] != '{')
                return msp_err_set(err, EINVAL, "seccomp: the container state is not a "
                                   "JSON object");
        text = sc_process_state_json(s, pid, state_json);
        if (!text)
                return msp_err_set(err, ENOMEM, "seccomp: out of memory");
        return sc_send_fd_and_text(sock, listener, text, err);
}

int
rt_seccomp_send_listener_pid(const oci_seccomp *s, int listener, pid_t pid,
                             const char *state_json, msp_err *err)
{
        _cleanup_close_ int sock = -1;

        if (!s->listener_path)
                return msp_err_set(err, EINVAL, "seccomp: no linux.seccomp.listenerPath");
        if (!state_json || state_json[0] != '{')
                return msp_err_set(err, EINVAL, "seccomp: the container state is not a "
                                   "JSON object");
        sock = sc_connect(s->listener_path, err);
        if (sock < 0)
                return sock;
        return rt_seccomp_send_listener_on(sock, s, listener, pid, state_json, err);
}

int
rt_seccomp_send_listener(const oci_seccomp *s, int listener, const char *state_json,
                         msp_err *err)
{
        long pid = state_json ? sc_state_pid(state_json) : -1;

        if (pid <= 0)
                return msp_err_set(err, EINVAL, "seccomp: the container state has no pid");
        return rt_seccomp_send_listener_pid(s, listener, (pid_t) pid, state_json, err);
}

/* ---- features ---- */

const char *const *
rt_seccomp_supported_actions(void)
{
        static const char *const actions[] = {
                "SCMP_ACT_ALLOW",       "SCMP_ACT_ERRNO",       "SCMP_ACT_KILL",
                "SCMP_ACT_KILL_PROCESS", "SCMP_ACT_KILL_THREAD", "SCMP_ACT_LOG",
                "SCMP_ACT_NOTIFY",      "SCMP_ACT_TRACE",       "SCMP_ACT_TRAP",
                NULL,
        };
        return actions;
}

const char *const *
rt_seccomp_supported_operators(void)
{
        static const char *const ops[] = {
                "SCMP_CMP_EQ", "SCMP_CMP_GE", "SCMP_CMP_GT", "SCMP_CMP_LE",
                "SCMP_CMP_LT", "SCMP_CMP_MASKED_EQ", "SCMP_CMP_NE", NULL,
        };
        return ops;
}

/* The architectures of the libseccomp we are built with. */
const char *const *
rt_seccomp_supported_archs(void)
{
        static const char *const archs[] = {
                "SCMP_ARCH_AARCH64", "SCMP_ARCH_ARM", "SCMP_ARCH_MIPS", "SCMP_ARCH_MIPS64",
                "SCMP_ARCH_MIPS64N32", "SCMP_ARCH_MIPSEL", "SCMP_ARCH_MIPSEL64",
                "SCMP_ARCH_MIPSEL64N32", "SCMP_ARCH_PARISC", "SCMP_ARCH_PARISC64",
                "SCMP_ARCH_PPC", "SCMP_ARCH_PPC64", "SCMP_ARCH_PPC64LE",
#ifdef SCMP_ARCH_RISCV64
                "SCMP_ARCH_RISCV64",
#endif
#ifdef SCMP_ARCH_LOONGARCH64
                "SCMP_ARCH_LOONGARCH64",
#endif
#ifdef SCMP_ARCH_M68K
                "SCMP_ARCH_M68K",
#endif
#ifdef SCMP_ARCH_SH
                "SCMP_ARCH_SH", "SCMP_ARCH_SHEB",
#endif
                "SCMP_ARCH_S390", "SCMP_ARCH_S390X", "SCMP_ARCH_X32", "SCMP_ARCH_X86",
                "SCMP_ARCH_X86_64", NULL,
        };
        return archs;
}

const char *const *
rt_seccomp_known_flags(void)
{
        static const char *const flags[] = {
                "SECCOMP_FILTER_FLAG_TSYNC", "SECCOMP_FILTER_FLAG_LOG",
                "SECCOMP_FILTER_FLAG_SPEC_ALLOW", "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV",
                NULL,
        };
        _Static_assert(ARRAY_SIZE(flags) == ARRAY_SIZE(sc_flags) + 1, "flag tables differ");
        return flags;
}

size_t
rt_seccomp_supported_flags(const char **ret, size_t n)
{
        size_t k = 0;

        if (n == 0)
                return 0;
        for (size_t i = 0; i < ARRAY_SIZE(sc_flags) && k + 1 < n; i++)
                if (sc_kernel_has_flag(sc_flags[i].kernel))
                        ret[k++] = sc_flags[i].name;
        ret[k] = NULL;
        return k;
}
