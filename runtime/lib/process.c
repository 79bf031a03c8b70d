/* rlimits, ioPriority, scheduler and personality of the container process.
 *
 * All of these may need privileges the container process will not keep
 * (CAP_SYS_RESOURCE to raise a hard limit, CAP_SYS_NICE for real-time policies and negative
 * nice values, CAP_SYS_ADMIN for the real-time I/O class), so the init applies them before
 * rt_user_switch() and rt_caps_apply(). */
#include <errno.h>
#include <inttypes.h>
#include <linux/sched.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lib/process.h"

/* The ioprio ABI (include/uapi/linux/ioprio.h); spelled out so that older headers do. */
#define RT_IOPRIO_CLASS_SHIFT 13
#define RT_IOPRIO_WHO_PROCESS 1
#define RT_IOPRIO_CLASS_MAX 3
#define RT_IOPRIO_PRIO_MAX 7

/* struct sched_attr (SCHED_ATTR_SIZE_VER0): <linux/sched/types.h> clashes with glibc's
 * struct sched_param, so the layout is spelled out here. */
struct rt_sched_attr {
        uint32_t size;
        uint32_t sched_policy;
        uint64_t sched_flags;
        int32_t sched_nice;
        uint32_t sched_priority;
        uint64_t sched_runtime;
        uint64_t sched_deadline;
        uint64_t sched_period;
};

static const char *
rlimit_name(int resource, char *buf, size_t bufsz)
{
        const char *name = oci_rlimit_name(resource);

        if (name)
                return name;
        snprintf(buf, bufsz, "RLIMIT(%d)", resource);
        return buf;
}

/* "unlimited" reads better than 18446744073709551615 in an error. */
static const char *
rlim_str(uint64_t v, char *buf, size_t bufsz)
{
        if (v == UINT64_MAX)
                return "unlimited";
        snprintf(buf, bufsz, "%" PRIu64, v);
        return buf;
}

int
rt_rlimits_apply(const oci_rlimit *rl, size_t n, msp_err *err)
{
        for (size_t i = 0; i < n; i++) {
                /* rlim_t is 64 bits on every Linux ABI we build for, and RLIM_INFINITY is
                 * all ones, so the OCI uint64 maps through unchanged. prlimit is used because
                 * glibc's setrlimit may translate values on 32-bit ABIs. */
                struct rlimit lim = { .rlim_cur = (rlim_t) rl[i].soft, .rlim_max = (rlim_t) rl[i].hard };
                struct rlimit cur;
                char nb[32], sb[32], hb[32];

                if (prlimit(0, (__rlimit_resource_t) rl[i].resource, &lim, NULL) == 0)
                        continue;
                /* Raising a hard limit needs CAP_SYS_RESOURCE, which a rootless
                 * container's user namespace does not give over the host's limits. */
                if (errno == EPERM &&
                    prlimit(0, (__rlimit_resource_t) rl[i].resource, NULL, &cur) == 0 &&
                    lim.rlim_max > cur.rlim_max)
                        return msp_err_set(err, EPERM, "process.rlimits: %s hard %s is above the "
                                           "hard limit %s the runtime got (raising it needs "
                                           "CAP_SYS_RESOURCE on the host)",
                                           rlimit_name(rl[i].resource, nb, sizeof nb),
                                           rlim_str(rl[i].hard, hb, sizeof hb),
                                           rlim_str(cur.rlim_max, sb, sizeof sb));
                return msp_err_sys(err, errno, "setrlimit %s soft=%s hard=%s",
                                   rlimit_name(rl[i].resource, nb, sizeof nb),
                                   rlim_str(rl[i].soft, sb, sizeof sb),
                                   rlim_str(rl[i].hard, hb, sizeof hb));
        }
        return 0;
}

static int
ioprio_apply(const oci_io_priority *io, msp_err *err)
{
        if (io->klass < 1 || io->klass > RT_IOPRIO_CLASS_MAX)
                return msp_err_set(err, EINVAL, "ioPriority: invalid class %d", io->klass);
        if (io->priority < 0 || io->priority > RT_IOPRIO_PRIO_MAX)
                return msp_err_set(err, EINVAL, "ioPriority: priority %" PRId32 " out of range 0-7",
                                   io->priority);

        int value = (io->klass << RT_IOPRIO_CLASS_SHIFT) | io->priority;
        if (syscall(SYS_ioprio_set, RT_IOPRIO_WHO_PROCESS, 0, value) < 0)
                return msp_err_sys(err, errno, "ioprio_set class=%d priority=%" PRId32,
                                   io->klass, io->priority);
        return 0;
}

static const char *
sched_policy_name(int policy)
{
        switch (policy) {
        case SCHED_OTHER: return "SCHED_OTHER";
        case SCHED_FIFO: return "SCHED_FIFO";
        case SCHED_RR: return "SCHED_RR";
        case SCHED_BATCH: return "SCHED_BATCH";
        case SCHED_IDLE: return "SCHED_IDLE";
        case SCHED_DEADLINE: return "SCHED_DEADLINE";
        default: return "unknown";
        }
}

static int
scheduler_apply(const oci_scheduler *s, msp_err *err)
{
        /* glibc 2.36 has no sched_setattr wrapper. */
        struct rt_sched_attr attr = {
                .size = sizeof attr,
                .sched_policy = (uint32_t) s->policy,
                .sched_flags = s->flags,
                .sched_nice = s->nice,
                .sched_priority = (uint32_t) s->priority,
                .sched_runtime = s->runtime,
                .sched_deadline = s->deadline,
                .sched_period = s->period,
        };

        if (syscall(SYS_sched_setattr, 0, &attr, 0) < 0) {
                int e = errno;
                if (s->policy == SCHED_DEADLINE)
                        return msp_err_sys(err, e, "sched_setattr %s runtime=%" PRIu64
                                           " deadline=%" PRIu64 " period=%" PRIu64 " flags=0x%" PRIx32,
                                           sched_policy_name(s->policy), s->runtime, s->deadline,
                                           s->period, s->flags);
                return msp_err_sys(err, e, "sched_setattr %s priority=%" PRId32 " nice=%" PRId32
                                   " flags=0x%" PRIx32, sched_policy_name(s->policy), s->priority,
                                   s->nice, s->flags);
        }
        return 0;
}

static int
personality_apply(const oci_personality *pers, msp_err *err)
{
        unsigned long persona;

        if (!pers->domain || strcmp(pers->domain, "LINUX") == 0)
                persona = PER_LINUX;
        else if (strcmp(pers->domain, "LINUX32") == 0)
                persona = PER_LINUX32;
        else
                return msp_err_set(err, EINVAL, "linux.personality.domain '%s' is not supported "
                                   "(LINUX or LINUX32)", pers->domain);
        /* The spec lists no flag values that any runtime implements; refuse rather than
         * silently run with a different personality than requested. */
        if (pers->flags.n > 0)
                return msp_err_set(err, EINVAL, "linux.personality.flags are not supported: '%s'",
                                   pers->flags.v[0]);
        if (personality(persona) < 0)
                return msp_err_sys(err, errno, "personality %s", pers->domain ? pers->domain : "LINUX");
        return 0;
}

int
rt_process_sched_apply(const oci_process *p, const oci_personality *pers, msp_err *err)
{
        int r;

        if (p && p->has_io_priority) {
                r = ioprio_apply(&p->io_priority, err);
                if (r < 0)
                        return r;
        }
        if (p && p->has_scheduler) {
                r = scheduler_apply(&p->scheduler, err);
                if (r < 0)
                        return r;
        }
        if (pers)
                return personality_apply(pers, err);
        return 0;
}

int
rt_process_apply_limits(const oci_process *p, const oci_linux *lx, msp_err *err)
{
        int r;

        /* The kernel refuses landlock_restrict_self without no_new_privs (or CAP_SYS_ADMIN,
         * which a container must not rely on): say so before anything is changed. */
        if (p->landlock && !p->no_new_privileges)
                return msp_err_set(err, EINVAL,
                                   "process.landlock requires process.noNewPrivileges to be true");
        r = rt_rlimits_apply(p->rlimits, p->n_rlimits, err);
        if (r < 0)
                return r;
        return rt_process_sched_apply(p, lx ? lx->personality : NULL, err);
}
