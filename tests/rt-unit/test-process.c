/* rt_rlimits_apply and rt_process_sched_apply against the real kernel, one fork each. */
#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/process.h"

#include "tests/lib/tap.h"

static void
test_rlimits_exact(void)
{
        oci_rlimit rl[] = {
                { .resource = RLIMIT_NOFILE, .soft = 1024, .hard = 4096 },
                { .resource = RLIMIT_CORE, .soft = UINT64_MAX, .hard = UINT64_MAX },
                { .resource = RLIMIT_NPROC, .soft = 12345, .hard = 12346 },
        };
        struct rlimit got;
        msp_err e;

        CHECK_OK(rt_rlimits_apply(rl, ARRAY_SIZE(rl), &e), e);
        CHECK(getrlimit(RLIMIT_NOFILE, &got) == 0);
        CHECK(got.rlim_cur == 1024 && got.rlim_max == 4096);
        CHECK(getrlimit(RLIMIT_CORE, &got) == 0);
        CHECK(got.rlim_cur == RLIM_INFINITY && got.rlim_max == RLIM_INFINITY);
        CHECK(getrlimit(RLIMIT_NPROC, &got) == 0);
        CHECK(got.rlim_cur == 12345 && got.rlim_max == 12346);
}

static void
drop_to_nobody(void)
{
        CHECK(setresgid(65534, 65534, 65534) == 0);
        CHECK(setresuid(65534, 65534, 65534) == 0);
}

static void
test_rlimit_error_names_resource(void)
{
        oci_rlimit low = { .resource = RLIMIT_NOFILE, .soft = 10, .hard = 20 };
        oci_rlimit high = { .resource = RLIMIT_NOFILE, .soft = 10, .hard = 30 };
        oci_rlimit inf = { .resource = RLIMIT_NOFILE, .soft = UINT64_MAX, .hard = UINT64_MAX };
        msp_err e;

        CHECK_OK(rt_rlimits_apply(&low, 1, &e), e);
        drop_to_nobody();
        /* above the hard limit: the message names the rlimit, both values and why */
        CHECK_ERR(rt_rlimits_apply(&high, 1, &e), e, EPERM,
                  "process.rlimits: RLIMIT_NOFILE hard 30 is above the hard limit 20 the "
                  "runtime got (raising it needs CAP_SYS_RESOURCE on the host)");
        CHECK_ERR(rt_rlimits_apply(&inf, 1, &e), e, EPERM,
                  "process.rlimits: RLIMIT_NOFILE hard unlimited is above the hard limit 20");
}

static void
test_soft_above_hard(void)
{
        oci_rlimit bad = { .resource = RLIMIT_STACK, .soft = 100000, .hard = 50000 };
        msp_err e;

        CHECK_ERR(rt_rlimits_apply(&bad, 1, &e), e, EINVAL, "setrlimit RLIMIT_STACK");
}

static int
ioprio_get_self(void)
{
        return (int) syscall(SYS_ioprio_get, 1 /* IOPRIO_WHO_PROCESS */, 0);
}

static void
test_ioprio(void)
{
        oci_process p = { .has_io_priority = true, .io_priority = { .klass = 2, .priority = 3 } };
        msp_err e;

        CHECK_OK(rt_process_sched_apply(&p, NULL, &e), e);
        CHECK(ioprio_get_self() == ((2 << 13) | 3));
        p.io_priority.klass = 3;
        p.io_priority.priority = 0;
        CHECK_OK(rt_process_sched_apply(&p, NULL, &e), e);
        CHECK(ioprio_get_self() == (3 << 13));
        p.io_priority.klass = 7;
        CHECK_ERR(rt_process_sched_apply(&p, NULL, &e), e, EINVAL, "invalid class 7");
        p.io_priority.klass = 2;
        p.io_priority.priority = 8;
        CHECK_ERR(rt_process_sched_apply(&p, NULL, &e), e, EINVAL, "priority 8 out of range");
}

static void
test_sched_batch_nice(void)
{
        oci_process p = { .has_scheduler = true, .scheduler = { .policy = SCHED_BATCH, .nice = 5 } };
        msp_err e;

        CHECK_OK(rt_process_sched_apply(&p, NULL, &e), e);
        CHECK(sched_getscheduler(0) == SCHED_BATCH);
        errno = 0;
        CHECK(getpriority(PRIO_PROCESS, 0) == 5 && errno == 0);
}

static void
test_sched_fifo(void)
{
        oci_process p = { .has_scheduler = true, .scheduler = { .policy = SCHED_FIFO, .priority = 10 } };
        struct sched_param sp;
        msp_err e;

        if (rt_process_sched_apply(&p, NULL, &e) < 0) {
                printf("# %s\n", e.msg);
                if (e.errnum == EPERM)
                        SKIP("real-time scheduling not allowed here");
                CHECK(0);
        }
        CHECK(sched_getscheduler(0) == SCHED_FIFO);
        CHECK(sched_getparam(0, &sp) == 0 && sp.sched_priority == 10);
}

static void
test_sched_deadline(void)
{
        oci_process p = { .has_scheduler = true,
                          .scheduler = { .policy = SCHED_DEADLINE, .runtime = 10000000,
                                         .deadline = 30000000, .period = 30000000 } };
        msp_err e;

        if (rt_process_sched_apply(&p, NULL, &e) < 0) {
                printf("# %s\n", e.msg);
                CHECK(strstr(e.msg, "sched_setattr SCHED_DEADLINE runtime=10000000 deadline=30000000 "
                                    "period=30000000") != NULL);
                if (e.errnum == EPERM || e.errnum == EBUSY)
                        SKIP("SCHED_DEADLINE not admitted here");
                CHECK(0);
        }
        CHECK(sched_getscheduler(0) == SCHED_DEADLINE);
        /* deadline > period is invalid: the error says what was asked */
        p.scheduler.deadline = 40000000;
        CHECK_ERR(rt_process_sched_apply(&p, NULL, &e), e, EINVAL, "deadline=40000000");
}

static void
test_personality(void)
{
        oci_personality pers = { .domain = (char *) "LINUX32" };
        char *flags[] = { (char *) "ADDR_NO_RANDOMIZE", NULL };
        msp_err e;

        CHECK_OK(rt_process_sched_apply(NULL, &pers, &e), e);
        CHECK((personality(0xffffffff) & PER_MASK) == PER_LINUX32);
        pers.domain = (char *) "LINUX";
        CHECK_OK(rt_process_sched_apply(NULL, &pers, &e), e);
        CHECK((personality(0xffffffff) & PER_MASK) == PER_LINUX);
        pers.flags = (oci_strv) { .v = flags, .n = 1 };
        CHECK_ERR(rt_process_sched_apply(NULL, &pers, &e), e, EINVAL,
                  "personality.flags are not supported: 'ADDR_NO_RANDOMIZE'");
        pers = (oci_personality) { .domain = (char *) "SUNOS" };
        CHECK_ERR(rt_process_sched_apply(NULL, &pers, &e), e, EINVAL, "domain 'SUNOS'");
}

int
main(void)
{
        static const tap_fork_test tests[] = {
                { "rlimits exact, including 2^64-1", test_rlimits_exact },
                { "rlimit error names the resource and values", test_rlimit_error_names_resource },
                { "rlimit soft above hard fails", test_soft_above_hard },
                { "ioPriority classes and range checks", test_ioprio },
                { "scheduler SCHED_BATCH with nice", test_sched_batch_nice },
                { "scheduler SCHED_FIFO priority", test_sched_fifo },
                { "scheduler SCHED_DEADLINE", test_sched_deadline },
                { "personality LINUX32/LINUX, flags refused", test_personality },
        };
        if (geteuid() != 0) {
                printf("1..0 # SKIP needs root\n");
                return 0;
        }
        return tap_run_table(tests, ARRAY_SIZE(tests));
}
