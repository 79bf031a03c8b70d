/* seccomp against the real kernel. Every filter is loaded in a forked child so the
 * runner stays unfiltered. Each check exercises the allowed path before the denied one,
 * so a filter that breaks everything cannot pass. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/rt-libseccomp.h"
#include "lib/seccomp.h"
#include "lib/seccomp-cache.h"
#include "lib/seccomp-int.h"
#include "tests/lib/tap.h"

/* In a child function whose result is its exit status: report and fail. */
#define CHILD_CHECK(cond, ...)                                                                \
        do {                                                                                  \
                if (!(cond)) {                                                                \
                        tap_diag("%s:%d: CHILD_CHECK(%s) failed", __FILE__, __LINE__, #cond); \
                        tap_diag(__VA_ARGS__);                                                \
                        return 1;                                                             \
                }                                                                             \
        } while (0)

/* ---- building profiles by hand ---- */

#define NAMES(...) ((oci_strv) { (char *[]) { __VA_ARGS__, NULL },                      \
                                 sizeof((char *[]) { __VA_ARGS__ }) / sizeof(char *) })
#define ARGS(...) (oci_seccomp_arg[]) { __VA_ARGS__ },                                  \
                  sizeof((oci_seccomp_arg[]) { __VA_ARGS__ }) / sizeof(oci_seccomp_arg)
#define RULES(...) (oci_seccomp_syscall[]) { __VA_ARGS__ },                             \
                   sizeof((oci_seccomp_syscall[]) { __VA_ARGS__ }) / sizeof(oci_seccomp_syscall)

typedef int (*child_fn)(void *);

static int
in_child(child_fn fn, void *arg)
{
        int status;
        fflush(stdout);
        pid_t pid = fork();
        if (pid < 0)
                return -1;
        if (pid == 0)
                _exit(fn(arg));
        if (waitpid(pid, &status, 0) < 0)
                return -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* The state root of the warm-cache pass (-1: the first pass, no cache). */
static int cache_root_fd = -1;

static bool
same_program(const rt_seccomp *a, const rt_seccomp *b)
{
        size_t na, nb;
        const struct sock_filter *pa = rt_seccomp_program(a, &na), *pb = rt_seccomp_program(b, &nb);

        return na == nb && na > 0 && memcmp(pa, pb, na * sizeof *pa) == 0;
}

/* With a cache: prepared through it until it hits, and the hit must be byte for byte
 * what a fresh compile gives. */
static int
prepare(const oci_seccomp *s, rt_seccomp **ret)
{
        msp_err err = { 0 };
        rt_seccomp *fresh = NULL;
        const rt_ctx ctx = { 0 };

        if (cache_root_fd < 0) {
                CHILD_CHECK(rt_seccomp_prepare(s, false, ret, &err) == 0, "prepare: %s", err.msg);
                return 0;
        }
        int r = rt_seccomp_prepare_cached(&ctx, cache_root_fd, s, ret, &err);
        CHILD_CHECK(r >= 0, "prepare_cached: %s", err.msg);
        if (r == 0) {
                rt_seccomp_free(*ret);
                r = rt_seccomp_prepare_cached(&ctx, cache_root_fd, s, ret, &err);
        }
        CHILD_CHECK(r == 1, "the second prepare_cached did not hit: %d %s", r, err.msg);
        CHILD_CHECK(rt_seccomp_prepare(s, false, &fresh, &err) == 0, "prepare: %s", err.msg);
        bool same = same_program(*ret, fresh);
        rt_seccomp_free(fresh);
        CHILD_CHECK(same, "the cached program differs from a fresh compile");
        return 0;
}

/* Build and load s with no_new_privs (as the container does). */
static int
load(const oci_seccomp *s, int *ret_listener)
{
        rt_seccomp *f = NULL;
        msp_err err = { 0 };

        if (prepare(s, &f))
                return 1;
        CHILD_CHECK(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0, "prctl: %s", strerror(errno));
        int r = rt_seccomp_load(f, ret_listener, &err);
        rt_seccomp_free(f);
        CHILD_CHECK(r == 0, "load: %s", err.msg);
        return 0;
}

/* A raw syscall's -errno, or its (non-negative) result. */
static long
sys(long nr, long a0, long a1)
{
        long r = syscall(nr, a0, a1, 0, 0, 0, 0);
        return r < 0 ? -errno : r;
}

/* ---- errno actions ---- */

static int
child_errno(void *arg)
{
        (void) arg;
        oci_seccomp s = {
                .default_action = OCI_SECCOMP_ALLOW,
                .syscalls = RULES(
                        { .names = NAMES("uname"), .action = OCI_SECCOMP_ERRNO,
                          .has_errno_ret = true, .errno_ret = ENOSYS },
                        { .names = NAMES("getpriority"), .action = OCI_SECCOMP_ERRNO }),
        };
        struct utsname u;

        if (load(&s, NULL))
                return 1;
        CHILD_CHECK(sys(SYS_getppid, 0, 0) > 0, "getppid is allowed");
        CHILD_CHECK(sys(SYS_uname, (long) &u, 0) == -ENOSYS, "uname: errnoRet ENOSYS");
        CHILD_CHECK(sys(SYS_getpriority, PRIO_PROCESS, 0) == -EPERM, "getpriority: default EPERM");
        return 0;
}

TEST(errno_ret_and_default_eperm)
{
        ASSERT_EQ_INT(in_child(child_errno, NULL), 0);
}

/* An allow-list: defaultAction ERRNO without defaultErrnoRet gives EPERM. */
static int
child_default_errno(void *arg)
{
        (void) arg;
        oci_seccomp s = {
                .default_action = OCI_SECCOMP_ERRNO,
                .syscalls = RULES({ .names = NAMES("getpid", "write", "exit_group", "exit",
                                                   "rt_sigreturn", "brk", "mmap", "munmap"),
                                    .action = OCI_SECCOMP_ALLOW }),
        };

        if (load(&s, NULL))
                return 1;
        bool ok = sys(SYS_getpid, 0, 0) == getpid() &&  /* allowed */
                  sys(SYS_getppid, 0, 0) == -EPERM;      /* not listed */
        /* exit at once: libc or sanitizer exit paths may need unlisted syscalls */
        syscall(SYS_exit_group, ok ? 0 : 1);
        return 1;
}

TEST(default_errno_is_eperm)
{
        ASSERT_EQ_INT(in_child(child_default_errno, NULL), 0);
}

/* ---- argument conditions ---- */

static int
child_personality(void *arg)
{
        (void) arg;
        /* podman's shape: only the query value (0xffffffff) is allowed */
        oci_seccomp s = {
                .default_action = OCI_SECCOMP_ALLOW,
                .syscalls = RULES({ .names = NAMES("personality"), .action = OCI_SECCOMP_ERRNO,
                                    .args = ARGS({ .index = 0, .value = 0xffffffff,
                                                   .op = OCI_SECCOMP_OP_NE }) }),
        };

        if (load(&s, NULL))
                return 1;
        CHILD_CHECK(sys(SYS_personality, 0xffffffff, 0) >= 0, "personality query allowed");
        CHILD_CHECK(sys(SYS_personality, PER_LINUX32, 0) == -EPERM, "personality(LINUX32) denied");
        return 0;
}

TEST(arg_personality_ne)
{
        ASSERT_EQ_INT(in_child(child_personality, NULL), 0);
}

/* One operator on getpriority's second argument: matched calls fail with E2BIG. */
typedef struct op_case {
        oci_seccomp_op op;
        uint64_t value, value_two;
        const char *match;              /* expected for who = 0, 99, 100, 101, 117 */
} op_case;

static const long op_inputs[] = { 0, 99, 100, 101, 117 };

static int
child_op(void *arg)
{
        const op_case *c = arg;
        oci_seccomp s = {
                .default_action = OCI_SECCOMP_ALLOW,
                .syscalls = RULES({ .names = NAMES("getpriority"), .action = OCI_SECCOMP_ERRNO,
                                    .has_errno_ret = true, .errno_ret = E2BIG,
                                    .args = ARGS({ .index = 1, .value = c->value,
                                                   .value_two = c->value_two, .op = c->op }) }),
        };

        if (load(&s, NULL))
                return 1;
        for (size_t i = 0; i < ARRAY_SIZE(op_inputs); i++) {
                bool matched = sys(SYS_getpriority, PRIO_PROCESS, op_inputs[i]) == -E2BIG;
                CHILD_CHECK(matched == (c->match[i] == 'y'), "%s who=%ld: matched %d",
                      oci_seccomp_op_name(c->op), op_inputs[i], matched);
        }
        return 0;
}

TEST(arg_every_operator)
{
        static const op_case cases[] = {
                { OCI_SECCOMP_OP_NE, 100, 0, "yynyy" },
                { OCI_SECCOMP_OP_LT, 100, 0, "yynnn" },
                { OCI_SECCOMP_OP_LE, 100, 0, "yyynn" },
                { OCI_SECCOMP_OP_EQ, 100, 0, "nnynn" },
                { OCI_SECCOMP_OP_GE, 100, 0, "nnyyy" },
                { OCI_SECCOMP_OP_GT, 100, 0, "nnnyy" },
                { OCI_SECCOMP_OP_MASKED_EQ, 0xf0, 0x60, "nyyyn" },
        };
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
                ASSERT_EQ_INT(in_child(child_op, (void *) &cases[i]), 0);
}

static int
child_and_or(void *arg)
{
        (void) arg;
        oci_seccomp s = {
                .default_action = OCI_SECCOMP_ALLOW,
                .syscalls = RULES(
                        /* distinct indexes: AND (podman's NETLINK_AUDIT rule) */
                        { .names = NAMES("socket"), .action = OCI_SECCOMP_ERRNO,
                          .has_errno_ret = true, .errno_ret = E2BIG,
                          .args = ARGS({ .index = 0, .value = AF_NETLINK, .op = OCI_SECCOMP_OP_EQ },
                                       { .index = 2, .value = 9, .op = OCI_SECCOMP_OP_EQ }) },
                        /* a repeated index: OR, as runc does */
                        { .names = NAMES("getpriority"), .action = OCI_SECCOMP_ERRNO,
                          .has_errno_ret = true, .errno_ret = E2BIG,
                          .args = ARGS({ .index = 1, .value = 5, .op = OCI_SECCOMP_OP_EQ },
                                       { .index = 1, .value = 7, .op = OCI_SECCOMP_OP_EQ }) }),
        };

        if (load(&s, NULL))
                return 1;
        int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, 0 /* NETLINK_ROUTE */);
        CHILD_CHECK(fd >= 0, "netlink route socket: %s", strerror(errno));
        close(fd);
        fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, 9 /* NETLINK_AUDIT */);
        CHILD_CHECK(fd < 0 && errno == E2BIG, "netlink audit socket: %d %s", fd, strerror(errno));
        CHILD_CHECK(sys(SYS_getpriority, PRIO_PROCESS, 6) != -E2BIG, "who=6 not matched");
        CHILD_CHECK(sys(SYS_getpriority, PRIO_PROCESS, 5) == -E2BIG, "who=5 matched");
        CHILD_CHECK(sys(SYS_getpriority, PRIO_PROCESS, 7) == -E2BIG, "who=7 matched");
        return 0;
}

TEST(args_and_within_rule_or_on_repeated_index)
{
        ASSERT_EQ_INT(in_child(child_and_or, NULL), 0);
}

static int
child_clone_masked(void *arg)
{
        (void) arg;
        /* the default profile's rule: clone allowed only without namespace flags */
        oci_seccomp s = {
                .default_action = OCI_SECCOMP_ALLOW,
                .syscalls = RULES({ .names = NAMES("clone"), .action = OCI_SECCOMP_ERRNO,
                                    .args = ARGS({ .index = 0, .value = CLONE_NEWUSER,
                                                   .value_two = CLONE_NEWUSER,
                                                   .op = OCI_SECCOMP_OP_MASKED_EQ }) }),
        };

        if (load(&s, NULL))
                return 1;
        pid_t pid = fork();             /* glibc: clone(CLONE_CHILD_SETTID|...|SIGCHLD) */
        if (pid == 0)
                _exit(0);
        CHILD_CHECK(pid > 0, "fork: %s", strerror(errno));
        (void) waitpid(pid, NULL, 0);
        long r = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0);
        if (r == 0)
                _exit(0);               /* the filter failed; the test fails below */
        CHILD_CHECK(r < 0 && errno == EPERM, "clone(CLONE_NEWUSER): %ld %s", r, strerror(errno));
        return 0;
}

TEST(arg_masked_eq_clone_flags)
{
        ASSERT_EQ_INT(in_child(child_clone_masked, NULL), 0);
}

/* ---- other actions ---- */

static int
child_kill(void *arg)
{
        oci_seccomp s = {
                .default_action = OCI_SECCOMP_ALLOW,
                .syscalls = RULES({ .names = NAMES("getppid"),
                                    .action = *(oci_seccomp_action *) arg }),
        };

        if (load(&s, NULL))
                return 1;
        CHILD_CHECK(sys(SYS_getpid, 0, 0) > 0, "getpid allowed");
        (void) sys(SYS_getppid, 0, 0);
        return 3;                       /* not reached when killed */
}

TEST(kill_process_and_kill_thread_sigsys)
{
        oci_seccomp_action a = OCI_SECCOMP_KILL_PROCESS;
        ASSERT_EQ_INT(in_child(child_kill, &a), 128 + SIGSYS);
        a = OCI_SECCOMP_KILL;           /* KILL_THREAD on the only thread */
        ASSERT_EQ_INT(in_child(child_kill, &a), 128 + SIGSYS);
}

static volatile sig_atomic_t trapped_nr = -1;

static void
on_sigsys(int sig, siginfo_t *si, void *uc)
{
        (void) sig;
        (void) uc;
        trapped_nr = si->si_syscall;
}

static int
child_trap_trace_log(void *arg)
{
        (void) arg;
        oci_seccomp s = {
                .default_action = OCI_SECCOMP_ALLOW,
                .syscalls = RULES(
                        { .names = NAMES("getppid"), .action = OCI_SECCOMP_TRAP },
                        { .names = NAMES("getpriority"), .action = OCI_SECCOMP_TRACE },
                        { .names = NAMES("getpgid"), .action = OCI_SECCOMP_LOG }),
        };
        struct sigaction sa = { .sa_sigaction = on_sigsys, .sa_flags = SA_SIGINFO };

        CHILD_CHECK(sigaction(SIGSYS, &sa, NULL) == 0, "sigaction");
        if (load(&s, NULL))
                return 1;
        CHILD_CHECK(sys(SYS_getpgid, 0, 0) == getpgrp(), "LOG allows the call");
        (void) sys(SYS_getppid, 0, 0);
        CHILD_CHECK(trapped_nr == SYS_getppid, "TRAP raised SIGSYS for getppid (%d)", trapped_nr);
        /* TRACE with no tracer attached: the kernel fails the call with ENOSYS */
        CHILD_CHECK(sys(SYS_getpriority, PRIO_PROCESS, 0) == -ENOSYS, "TRACE without a tracer");
        return 0;
}

TEST(trap_trace_log)
{
        ASSERT_EQ_INT(in_child(child_trap_trace_log, NULL), 0);
}

static int
child_unknown(void *arg)
{
        (void) arg;
        oci_seccomp s = {
                .default_action = OCI_SECCOMP_ALLOW,
                .syscalls = RULES({ .names = NAMES("msp_no_such_syscall", "uname"),
                                    .action = OCI_SECCOMP_ERRNO, .has_errno_ret = true,
                                    .errno_ret = ENOSYS }),
        };
        struct utsname u;

        if (load(&s, NULL))
                return 1;
        CHILD_CHECK(sys(SYS_uname, (long) &u, 0) == -ENOSYS, "uname still filtered");
        return 0;
}

TEST(unknown_syscall_names_skipped)
{
        ASSERT_EQ_INT(in_child(child_unknown, NULL), 0);
}

TEST(profile_errors)
{
        oci_seccomp s = { .default_action = OCI_SECCOMP_NOTIFY, .listener_path = "/x" };
        rt_seccomp *f = NULL;
        msp_err err = { 0 };

        ASSERT_EQ_INT(rt_seccomp_prepare(&s, false, &f, &err), -EINVAL);
        ASSERT_STREQ(err.msg, "seccomp: SCMP_ACT_NOTIFY cannot be the defaultAction");

        oci_seccomp n = { .default_action = OCI_SECCOMP_ALLOW,
                          .syscalls = RULES({ .names = NAMES("uname"),
                                              .action = OCI_SECCOMP_NOTIFY }) };
        ASSERT_EQ_INT(rt_seccomp_prepare(&n, false, &f, &err), -EINVAL);
        ASSERT_TRUE(strstr(err.msg, "listenerPath") != NULL);

        oci_seccomp w = { .default_action = OCI_SECCOMP_ALLOW, .listener_path = "/x",
                          .syscalls = RULES({ .names = NAMES("uname", "write"),
                                              .action = OCI_SECCOMP_NOTIFY }) };
        ASSERT_EQ_INT(rt_seccomp_prepare(&w, false, &f, &err), -EINVAL);
        ASSERT_TRUE(strstr(err.msg, "'write'") != NULL);

        oci_seccomp a = { .default_action = OCI_SECCOMP_ALLOW,
                          .syscalls = RULES({ .names = NAMES("uname"), .action = OCI_SECCOMP_ERRNO,
                                              .args = ARGS({ .index = 6 }) }) };
        ASSERT_EQ_INT(rt_seccomp_prepare(&a, false, &f, &err), -EINVAL);
        ASSERT_TRUE(strstr(err.msg, "syscalls[0]") && strstr(err.msg, "argument index 6"));

        oci_seccomp e = { .default_action = OCI_SECCOMP_ERRNO, .has_default_errno_ret = true,
                          .default_errno_ret = 70000 };
        ASSERT_EQ_INT(rt_seccomp_prepare(&e, false, &f, &err), -EINVAL);
        ASSERT_TRUE(strstr(err.msg, "defaultAction") && strstr(err.msg, "70000"));

        oci_seccomp ar = { .default_action = OCI_SECCOMP_ALLOW,
                           .architectures = NAMES("X86_64") };
        ASSERT_EQ_INT(rt_seccomp_prepare(&ar, false, &f, &err), -EINVAL);
        ASSERT_STREQ(err.msg, "seccomp: unknown architecture 'X86_64'");
        ASSERT_NULL(f);
}

TEST(features_lists)
{
        const char *flags[RT_SECCOMP_FLAGS_MAX];

        ASSERT_EQ_INT(rt_seccomp_supported_flags(flags, ARRAY_SIZE(flags)), 4);
        ASSERT_STREQ(flags[3], "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV");
        ASSERT_NULL(flags[4]);
        ASSERT_STREQ(rt_seccomp_known_flags()[0], "SECCOMP_FILTER_FLAG_TSYNC");
        ASSERT_STREQ(rt_seccomp_supported_actions()[0], "SCMP_ACT_ALLOW");
        ASSERT_STREQ(rt_seccomp_supported_operators()[5], "SCMP_CMP_MASKED_EQ");
        /* every arch we advertise resolves in libseccomp */
        for (const char *const *a = rt_seccomp_supported_archs(); *a; a++) {
                char lower[32];
                size_t i = 0;
                for (const char *p = *a + strlen("SCMP_ARCH_"); *p && i < 31; p++)
                        lower[i++] = (char) (*p >= 'A' && *p <= 'Z' ? *p + 32 : *p);
                lower[i] = '\0';
                if (seccomp_arch_resolve_name(lower) == 0)
                        TAP_FAIL_("%s does not resolve", *a);
        }
}

/* ---- NOTIFY: the listener hand-over and answering a notified syscall ---- */

static char sock_path[108];

static int
child_notify(void *arg)
{
        (void) arg;
        oci_seccomp s = {
                .default_action = OCI_SECCOMP_ALLOW,
                .flags = OCI_SECCOMP_FLAG_TSYNC | OCI_SECCOMP_FLAG_WAIT_KILLABLE_RECV,
                .listener_path = sock_path,
                .listener_metadata = "meta \"quoted\"\n",
                .syscalls = RULES({ .names = NAMES("getppid"), .action = OCI_SECCOMP_NOTIFY }),
        };
        msp_err err = { 0 };
        char state[256];
        int listener = -1;

        if (load(&s, &listener))
                return 1;
        CHILD_CHECK(listener >= 0, "no listener fd");
        CHILD_CHECK(fcntl(listener, F_GETFD) == FD_CLOEXEC, "listener is not O_CLOEXEC");
        /* an annotation named "pid" must not be taken for the state's pid */
        snprintf(state, sizeof state, "{\"ociVersion\":\"1.2.1\",\"id\":\"t\",\"status\":"
                 "\"creating\",\"annotations\":{\"pid\":\"1\"},\"pid\":%d,\"bundle\":\"/b\"}",
                 (int) getpid());
        CHILD_CHECK(rt_seccomp_send_listener(&s, listener, state, &err) == 0, "send: %s", err.msg);
        close(listener);
        /* blocks until the test's agent answers */
        CHILD_CHECK(sys(SYS_getppid, 0, 0) == 4242, "notified getppid answered by the agent");
        return 0;
}

/* The agent side: receive the fd and the ContainerProcessState. */
static int
agent_receive(int lsock, char *text, size_t size, int *ret_fd)
{
        union {
                char buf[CMSG_SPACE(sizeof(int))];
                struct cmsghdr align;
        } u;
        struct iovec iov = { .iov_base = text, .iov_len = size - 1 };
        struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
                              .msg_controllen = sizeof u.buf };
        int conn = accept4(lsock, NULL, NULL, SOCK_CLOEXEC);
        if (conn < 0)
                return -1;
        ssize_t n = recvmsg(conn, &msg, MSG_CMSG_CLOEXEC);
        close(conn);
        struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
        if (n <= 0 || !c || c->cmsg_type != SCM_RIGHTS)
                return -1;
        text[n] = '\0';
        memcpy(ret_fd, CMSG_DATA(c), sizeof(int));
        return 0;
}

static int
agent_answer(int notify_fd, pid_t expect_pid)
{
        struct seccomp_notif req = { 0 };
        struct seccomp_notif_resp resp = { 0 };

        CHILD_CHECK(ioctl(notify_fd, SECCOMP_IOCTL_NOTIF_RECV, &req) == 0, "NOTIF_RECV: %s",
              strerror(errno));
        CHILD_CHECK(req.data.nr == SYS_getppid && (pid_t) req.pid == expect_pid,
              "notification nr %d pid %u", req.data.nr, req.pid);
        resp.id = req.id;
        resp.val = 4242;
        CHILD_CHECK(ioctl(notify_fd, SECCOMP_IOCTL_NOTIF_SEND, &resp) == 0, "NOTIF_SEND: %s",
              strerror(errno));
        return 0;
}

TEST(notify_listener_handover)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        char text[4096], expect[512];
        int notify_fd = -1, status;

        snprintf(sock_path, sizeof sock_path, "/tmp/msp-test-seccomp-%d.sock", (int) getpid());
        strcpy(sa.sun_path, sock_path);
        int lsock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        ASSERT_TRUE(lsock >= 0);
        (void) unlink(sock_path);
        ASSERT_TRUE(bind(lsock, (struct sockaddr *) &sa, sizeof sa) == 0);
        ASSERT_TRUE(listen(lsock, 1) == 0);
        fflush(stdout);
        pid_t child = fork();
        if (child == 0)
                _exit(child_notify(NULL));
        int r = agent_receive(lsock, text, sizeof text, &notify_fd);
        close(lsock);
        (void) unlink(sock_path);
        if (r < 0)
                kill(child, SIGKILL);
        ASSERT_TRUE(r == 0);
        snprintf(expect, sizeof expect, "{\"ociVersion\":\"1.2.1\",\"fds\":[\"seccompFd\"],"
                 "\"pid\":%d,\"metadata\":\"meta \\\"quoted\\\"\\u000a\",\"state\":{", child);
        bool ok = strncmp(text, expect, strlen(expect)) == 0 &&
                  text[strlen(text) - 2] == '}' && text[strlen(text) - 1] == '}';
        r = agent_answer(notify_fd, child);
        close(notify_fd);
        waitpid(child, &status, 0);
        if (!ok)
                TAP_FAIL_("state JSON:\n  got:      %s\n  expected: %s...}}", text, expect);
        ASSERT_EQ_INT(r, 0);
        ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* ---- whole profiles: podman's and contrib/profiles/seccomp-default.json ---- */

/* tap_source_root(), set first thing in main() */
static const char *src_root;

static char *
read_text(const char *path)
{
        FILE *f = fopen(path, "re");
        char *buf = NULL;
        size_t n = 0;
        if (!f)
                return NULL;
        FILE *m = open_memstream(&buf, &n);
        for (int c; m && (c = fgetc(f)) != EOF;)
                fputc(c, m);
        fclose(f);
        if (m)
                fclose(m);
        return buf;
}

/* A config whose linux.seccomp is the file's object (contrib profiles are bare). */
static oci_spec *
spec_with_seccomp(const char *path, bool bare)
{
        oci_spec *spec = NULL;
        msp_err err = { 0 };
        char *text = read_text(path);
        if (!text)
                return NULL;
        char *doc = text;
        if (bare && asprintf(&doc, "{\"ociVersion\":\"1.2.1\",\"root\":{\"path\":\"rootfs\"},"
                             "\"linux\":{\"seccomp\":%s}}", text) < 0)
                doc = NULL;
        if (doc && oci_spec_parse_data(path, doc, strlen(doc), &spec, &err) < 0)
                tap_diag("%s", err.msg);
        if (doc != text)
                free(doc);
        free(text);
        return spec;
}

static int
child_podman(void *arg)
{
        if (load(arg, NULL))
                return 1;
        CHILD_CHECK(sys(SYS_getppid, 0, 0) > 0, "getppid allowed");
        CHILD_CHECK(sys(SYS_bpf, 0, 0) == -EPERM, "bpf: errnoRet 1");
        CHILD_CHECK(sys(SYS_kexec_load, 0, 0) == -EPERM, "kexec_load: errnoRet 1");
        CHILD_CHECK(sys(SYS_futex_waitv, 0, 0) == -ENOSYS, "unlisted: defaultErrnoRet 38");
        return 0;
}

TEST(podman_profile_loads)
{
        char path[600];
        snprintf(path, sizeof path, "%s/tests/fixtures/podman-limits.json", src_root);
        _cleanup_spec_ oci_spec *spec = spec_with_seccomp(path, false);
        ASSERT_NOT_NULL(spec);
        ASSERT_NOT_NULL(spec->linux_ && spec->linux_->seccomp ? spec : NULL);
        ASSERT_EQ_INT(in_child(child_podman, spec->linux_->seccomp), 0);
}

static int
child_default_profile(void *arg)
{
        if (load(arg, NULL))
                return 1;
        /* allowed paths first */
        pid_t pid = fork();
        if (pid == 0)
                _exit(0);
        CHILD_CHECK(pid > 0, "fork: %s", strerror(errno));
        (void) waitpid(pid, NULL, 0);
        CHILD_CHECK(sys(SYS_personality, 0xffffffff, 0) >= 0, "personality query");
        CHILD_CHECK(sys(SYS_unshare, CLONE_FILES, 0) == 0, "unshare(CLONE_FILES)");
        /* denied: new namespaces, clone3 (ENOSYS: glibc falls back to clone), io_uring,
         * keyrings, bpf, ptrace, mount, module loading, personality changes */
        long r = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0);
        if (r == 0)
                _exit(0);
        CHILD_CHECK(r < 0, "clone(CLONE_NEWUSER) must fail");
        CHILD_CHECK(sys(SYS_unshare, CLONE_NEWUSER, 0) < 0, "unshare(CLONE_NEWUSER)");
        CHILD_CHECK(sys(SYS_unshare, CLONE_NEWNET, 0) < 0, "unshare(CLONE_NEWNET)");
        CHILD_CHECK(sys(SYS_clone3, 0, 0) == -ENOSYS, "clone3 is ENOSYS");
        CHILD_CHECK(sys(SYS_io_uring_setup, 1, 0) < 0, "io_uring_setup");
        CHILD_CHECK(sys(SYS_keyctl, 0, 0) < 0 && sys(SYS_add_key, 0, 0) < 0, "keyrings");
        CHILD_CHECK(sys(SYS_bpf, 0, 0) == -EPERM, "bpf");
        CHILD_CHECK(sys(SYS_ptrace, PTRACE_TRACEME, 0) < 0, "ptrace");
        CHILD_CHECK(sys(SYS_setns, 0, 0) < 0 && sys(SYS_umount2, (long) "/", 0) < 0, "setns/umount");
        CHILD_CHECK(sys(SYS_personality, ADDR_NO_RANDOMIZE, 0) < 0, "personality(ADDR_NO_RANDOMIZE)");
        CHILD_CHECK(sys(SYS_userfaultfd, 0, 0) < 0 && sys(SYS_perf_event_open, 0, 0) < 0, "uffd/perf");
        /* native AIO charges the host-wide fs.aio-max-nr: ENOSYS, as if absent */
        CHILD_CHECK(sys(SYS_io_setup, 1, (long) &(unsigned long){ 0 }) == -ENOSYS, "io_setup");
        /* socket families: unix, inet, inet6, netlink; every other one EAFNOSUPPORT */
        static const int ok_family[][2] = { { AF_UNIX, SOCK_STREAM }, { AF_INET, SOCK_DGRAM },
                                            { AF_INET6, SOCK_DGRAM },
                                            { AF_NETLINK, NETLINK_ROUTE } };
        for (size_t i = 0; i < ARRAY_SIZE(ok_family); i++) {
                int type = ok_family[i][0] == AF_NETLINK ? SOCK_RAW : ok_family[i][1];
                int proto = ok_family[i][0] == AF_NETLINK ? ok_family[i][1] : 0;
                int fd = socket(ok_family[i][0], type | SOCK_CLOEXEC, proto);
                CHILD_CHECK(fd >= 0, "socket(%d): %s", ok_family[i][0], strerror(errno));
                close(fd);
        }
        static const int bad_family[] = { AF_UNSPEC, AF_PACKET, AF_BLUETOOTH, AF_VSOCK, AF_CAN,
                                          AF_XDP,    AF_ALG,    AF_APPLETALK, AF_TIPC, 255 };
        for (size_t i = 0; i < ARRAY_SIZE(bad_family); i++)
                CHILD_CHECK(sys(SYS_socket, bad_family[i], SOCK_DGRAM) == -EAFNOSUPPORT,
                      "socket(%d) is EAFNOSUPPORT", bad_family[i]);
        int sp[2];
        CHILD_CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) == 0, "socketpair(AF_UNIX)");
        close(sp[0]);
        close(sp[1]);
        CHILD_CHECK(sys(SYS_socketpair, AF_TIPC, SOCK_DGRAM) == -EAFNOSUPPORT, "socketpair(AF_TIPC)");
        /* netlink: route only; audit EINVAL as in podman, the others EPROTONOSUPPORT */
        CHILD_CHECK(syscall(SYS_socket, AF_NETLINK, SOCK_RAW, NETLINK_AUDIT) < 0 && errno == EINVAL,
              "socket(AF_NETLINK, NETLINK_AUDIT)");
        static const int bad_netlink[] = { NETLINK_SOCK_DIAG, NETLINK_KOBJECT_UEVENT,
                                           NETLINK_NETFILTER, NETLINK_GENERIC, 1, 31 };
        for (size_t i = 0; i < ARRAY_SIZE(bad_netlink); i++)
                CHILD_CHECK(syscall(SYS_socket, AF_NETLINK, SOCK_RAW, bad_netlink[i]) < 0 &&
                              errno == EPROTONOSUPPORT,
                      "socket(AF_NETLINK, %d) is EPROTONOSUPPORT", bad_netlink[i]);
        return 0;
}

TEST(default_profile_denies)
{
        char path[600];
        snprintf(path, sizeof path, "%s/contrib/profiles/seccomp-default.json", src_root);
        _cleanup_spec_ oci_spec *spec = spec_with_seccomp(path, true);
        ASSERT_NOT_NULL(spec);
        ASSERT_NOT_NULL(spec->linux_ && spec->linux_->seccomp ? spec : NULL);
        ASSERT_EQ_INT(in_child(child_default_profile, spec->linux_->seccomp), 0);
}


/* ---- the compiled-filter cache (seccomp-cache.h) ---- */

static int
make_root(char *path, size_t size)
{
        snprintf(path, size, "/tmp/msp-test-sccache-XXXXXX");
        if (!mkdtemp(path))
                return -1;
        int dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return -1;
        /* path is the state root's parent, where the cache lives */
        int fd = mkdirat(dfd, "state", 0700) == 0 ? openat(dfd, "state", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
                                                   : -1;
        close(dfd);
        return fd;
}

static void
remove_root(const char *path)
{
        char cmd[256];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
        if (system(cmd) != 0)
                tap_diag("could not remove %s", path);
}

/* The path of the only program file in root's cache, or "" when there is none. */
static void
cache_file(const char *root, char *out, size_t size)
{
        char dir[256];
        int n = 0;

        snprintf(dir, sizeof dir, "%s/%s", root, RT_SECCOMP_CACHE_DIR);
        out[0] = '\0';
        DIR *d = opendir(dir);
        for (struct dirent *de; d && (de = readdir(d));) {
                size_t len = strlen(de->d_name);
                if (len > 4 && strcmp(de->d_name + len - 4, ".bpf") == 0 && n++ == 0)
                        snprintf(out, size, "%s/%s", dir, de->d_name);
        }
        if (d)
                closedir(d);
        if (n != 1)
                out[0] = '\0';
}

/* prepare_cached's result (1 hit, 0 compiled); a compiled or cached program must equal
 * the fresh one. */
static int
cached(int rootfd, const oci_seccomp *s, const rt_seccomp *fresh, bool rootless)
{
        rt_ctx ctx = { .rootless = rootless };
        rt_seccomp *f = NULL;
        msp_err err = { 0 };
        int r = rt_seccomp_prepare_cached(&ctx, rootfd, s, &f, &err);

        if (r < 0) {
                tap_diag("prepare_cached: %s", err.msg);
                return r;
        }
        if (!same_program(f, fresh))
                r = -EBADMSG;
        rt_seccomp_free(f);
        return r;
}

/* A file we wrote: regular, ours, 0600, one link. */
static bool
sound_file(const char *path)
{
        struct stat st;
        return lstat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == 0 &&
               (st.st_mode & 07777) == 0600 && st.st_nlink == 1;
}

#define ARGS_PROFILE                                                                    \
        {                                                                               \
                .default_action = OCI_SECCOMP_ALLOW,                                    \
                .syscalls = RULES(                                                      \
                        { .names = NAMES("socket"), .action = OCI_SECCOMP_ERRNO,        \
                          .args = ARGS({ .index = 0, .value = AF_NETLINK,               \
                                         .op = OCI_SECCOMP_OP_EQ },                     \
                                       { .index = 2, .value = 9,                        \
                                         .op = OCI_SECCOMP_OP_EQ }) },                  \
                        { .names = NAMES("getpriority", "msp_no_such_syscall"),         \
                          .action = OCI_SECCOMP_ERRNO,                                  \
                          .args = ARGS({ .index = 1, .value = 5,                        \
                                         .op = OCI_SECCOMP_OP_EQ },                     \
                                       { .index = 1, .value = 7,                        \
                                         .op = OCI_SECCOMP_OP_EQ }) }),                 \
        }

TEST(cache_equals_fresh_compile)
{
        static char sock[] = "/nonexistent/agent.sock";
        oci_seccomp args = ARGS_PROFILE;
        oci_seccomp notify = {
                .default_action = OCI_SECCOMP_ALLOW, .listener_path = sock,
                .flags = OCI_SECCOMP_FLAG_TSYNC | OCI_SECCOMP_FLAG_WAIT_KILLABLE_RECV,
                .syscalls = RULES({ .names = NAMES("getppid", "mkdirat"),
                                    .action = OCI_SECCOMP_NOTIFY }),
        };
        char p1[600], p2[600];
        snprintf(p1, sizeof p1, "%s/tests/fixtures/podman-limits.json", src_root);
        snprintf(p2, sizeof p2, "%s/contrib/profiles/seccomp-default.json", src_root);
        _cleanup_spec_ oci_spec *podman = spec_with_seccomp(p1, false);
        _cleanup_spec_ oci_spec *contrib = spec_with_seccomp(p2, true);
        ASSERT_TRUE(podman && podman->linux_ && podman->linux_->seccomp);
        ASSERT_TRUE(contrib && contrib->linux_ && contrib->linux_->seccomp);
        const oci_seccomp *profiles[] = { podman->linux_->seccomp, contrib->linux_->seccomp,
                                          &notify, &args };
        char root[64];
        int rootfd = make_root(root, sizeof root);
        ASSERT_TRUE(rootfd >= 0);

        for (size_t i = 0; i < ARRAY_SIZE(profiles); i++) {
                rt_seccomp *fresh = NULL;
                msp_err err = { 0 };
                ASSERT_EQ_INT(rt_seccomp_prepare(profiles[i], false, &fresh, &err), 0);
                tap_check(cached(rootfd, profiles[i], fresh, false) == 0 &&
                                  cached(rootfd, profiles[i], fresh, false) == 1 &&
                                  cached(rootfd, profiles[i], fresh, false) == 1,
                          "profile %zu: compiled once, then the same program from the cache", i);
                rt_seccomp_free(fresh);
        }
        /* one file per profile, the directories 0700 */
        struct stat st;
        char path[256];
        int files = 0;
        snprintf(path, sizeof path, "%s/%s", root, RT_SECCOMP_CACHE_DIR);
        DIR *d = opendir(path);
        for (struct dirent *de; d && (de = readdir(d));)
                files += de->d_name[0] != '.';
        if (d)
                closedir(d);
        ASSERT_EQ_INT(files, 4);
        ASSERT_TRUE(stat(path, &st) == 0 && (st.st_mode & 07777) == 0700 && st.st_uid == 0);
        snprintf(path, sizeof path, "%s/%s", root, RT_SECCOMP_CACHE_TOP);
        ASSERT_TRUE(stat(path, &st) == 0 && (st.st_mode & 07777) == 0700 && st.st_uid == 0);
        close(rootfd);
        remove_root(root);
}

/* Each way a cache file can be wrong: ignored (compiled: 0), replaced by a sound file,
 * which the next create uses (1). */
TEST(cache_tampered_files_are_ignored_and_rewritten)
{
        oci_seccomp s = ARGS_PROFILE;
        oci_seccomp other = { .default_action = OCI_SECCOMP_ALLOW,
                              .syscalls = RULES({ .names = NAMES("uname"),
                                                  .action = OCI_SECCOMP_ERRNO }) };
        rt_seccomp *fresh = NULL;
        msp_err err = { 0 };
        char root[64], file[300], aside[300], cmd[700];
        int rootfd = make_root(root, sizeof root);

        ASSERT_TRUE(rootfd >= 0);
        ASSERT_EQ_INT(rt_seccomp_prepare(&s, false, &fresh, &err), 0);
        ASSERT_EQ_INT(cached(rootfd, &s, fresh, false), 0);
        cache_file(root, file, sizeof file);
        ASSERT_TRUE(file[0] && sound_file(file));
        ASSERT_EQ_INT(cached(rootfd, &s, fresh, false), 1);
        snprintf(aside, sizeof aside, "%s/aside.bpf", root);

        static const char *const cases[] = {
                "another profile's file (wrong key)", "truncated by 8 bytes", "empty",
                "one program byte flipped", "owned by uid 1000", "mode 0640",
                "a second hard link", "a symlink to a sound file", "a fifo", "a directory",
        };
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                int r = 0;
                switch (i) {
                case 0: {
                        /* the other profile's file, put under this profile's name */
                        char mine[300];
                        snprintf(mine, sizeof mine, "%s", file);
                        r = rename(file, aside);
                        rt_seccomp *o = NULL;
                        if (r == 0 && rt_seccomp_prepare(&other, false, &o, &err) == 0) {
                                (void) cached(rootfd, &other, o, false);
                                cache_file(root, file, sizeof file);
                                r = file[0] ? rename(file, mine) : -1;
                        }
                        rt_seccomp_free(o);
                        (void) unlink(aside);
                        snprintf(file, sizeof file, "%s", mine);
                        break;
                }
                case 1: {
                        struct stat st;
                        r = stat(file, &st) == 0 ? truncate(file, st.st_size - 8) : -1;
                        break;
                }
                case 2:
                        r = truncate(file, 0);
                        break;
                case 3: {
                        int fd = open(file, O_RDWR | O_CLOEXEC);
                        unsigned char b = 0;
                        r = fd >= 0 && pread(fd, &b, 1, lseek(fd, -1, SEEK_END)) == 1 &&
                            (b ^= 0x40, pwrite(fd, &b, 1, lseek(fd, -1, SEEK_END)) == 1) ? 0 : -1;
                        if (fd >= 0)
                                close(fd);
                        break;
                }
                case 4:
                        r = chown(file, 1000, 1000);
                        break;
                case 5:
                        r = chmod(file, 0640);
                        break;
                case 6:
                        r = link(file, aside);
                        break;
                case 7:
                        r = rename(file, aside) == 0 ? symlink(aside, file) : -1;
                        break;
                case 8:
                        r = unlink(file) == 0 ? mkfifo(file, 0600) : -1;
                        break;
                case 9:
                        r = unlink(file) == 0 ? mkdir(file, 0700) : -1;
                        break;
                }
                if (!tap_check(r == 0, "cache: set up '%s'", cases[i]))
                        continue;
                int first = cached(rootfd, &s, fresh, false);
                if (i == 9) {
                        /* a directory is not renamed over: ignored each time, still correct */
                        tap_check(first == 0 && cached(rootfd, &s, fresh, false) == 0,
                                  "cache: '%s' is ignored", cases[i]);
                        tap_check(rmdir(file) == 0 && cached(rootfd, &s, fresh, false) == 0 &&
                                          cached(rootfd, &s, fresh, false) == 1,
                                  "cache: rewritten once the directory is gone");
                        continue;
                }
                tap_check(first == 0 && sound_file(file) && cached(rootfd, &s, fresh, false) == 1,
                          "cache: '%s' is ignored and rewritten (%d)", cases[i], first);
                (void) unlink(aside);
        }
        /* loose or foreign directories: no cache at all (compiled every time) */
        snprintf(cmd, sizeof cmd, "%s/%s", root, RT_SECCOMP_CACHE_TOP);
        ASSERT_TRUE(chmod(cmd, 0755) == 0);
        tap_check(cached(rootfd, &s, fresh, false) == 0 && cached(rootfd, &s, fresh, false) == 0,
                  "cache: a msp-cache directory with mode 0755 is not used");
        ASSERT_TRUE(chmod(cmd, 0700) == 0 && chown(cmd, 1000, 0) == 0);
        tap_check(cached(rootfd, &s, fresh, false) == 0 && cached(rootfd, &s, fresh, false) == 0,
                  "cache: a msp-cache directory owned by uid 1000 is not used");
        ASSERT_TRUE(chown(cmd, 0, 0) == 0);
        ASSERT_EQ_INT(cached(rootfd, &s, fresh, false), 1);
        snprintf(aside, sizeof aside, "%s/elsewhere", root);
        ASSERT_TRUE(rename(cmd, aside) == 0 && symlink("elsewhere", cmd) == 0);
        tap_check(cached(rootfd, &s, fresh, false) == 0 && cached(rootfd, &s, fresh, false) == 0,
                  "cache: a msp-cache symlink (to a sound cache) is not followed");
        /* rootless: the caller's own cache beside its state root, as root's; no state
         * root: no cache, nothing created */
        char root2[64];
        int rootfd2 = make_root(root2, sizeof root2);
        ASSERT_TRUE(rootfd2 >= 0);
        tap_check(cached(rootfd2, &s, fresh, true) == 0 && cached(rootfd2, &s, fresh, true) == 1,
                  "cache: rootless, compiled once, then from the cache");
        close(rootfd2);
        remove_root(root2);
        rootfd2 = make_root(root2, sizeof root2);
        ASSERT_TRUE(rootfd2 >= 0);
        tap_check(cached(-1, &s, fresh, false) == 0 && cached(-1, &s, fresh, false) == 0 &&
                          faccessat(rootfd2, "../" RT_SECCOMP_CACHE_TOP, F_OK, 0) < 0,
                  "cache: without a state root nothing is cached");
        close(rootfd2);
        remove_root(root2);
        rt_seccomp_free(fresh);
        close(rootfd);
        remove_root(root);
}

/* An entry of the cache directory with the given type, owner and age (seconds). */
static int
make_entry(int dirfd, const char *name, mode_t type, uid_t uid, time_t age)
{
        struct timespec t[2];
        int r;

        if (type == S_IFREG) {
                int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
                r = fd >= 0 && write(fd, "partial", 7) == 7 ? 0 : -1;
                if (fd >= 0)
                        close(fd);
        } else if (type == S_IFDIR) {
                r = mkdirat(dirfd, name, 0700);
        } else {
                r = symlinkat("/etc/hostname", dirfd, name);
        }
        if (r < 0 || fchownat(dirfd, name, uid, uid, AT_SYMLINK_NOFOLLOW) < 0 ||
            clock_gettime(CLOCK_REALTIME, &t[0]) < 0)
                return -1;
        t[0].tv_sec -= age;
        t[1] = t[0];
        return utimensat(dirfd, name, t, AT_SYMLINK_NOFOLLOW);
}

/* A writer that died between write and rename leaves a .tmp-* file: the next write
 * removes it once it is a minute old, but only a regular file of ours. */
TEST(cache_stale_tmp_files_are_removed)
{
        oci_seccomp s = ARGS_PROFILE;
        oci_seccomp other = { .default_action = OCI_SECCOMP_ALLOW,
                              .syscalls = RULES({ .names = NAMES("uname"),
                                                  .action = OCI_SECCOMP_ERRNO }) };
        static const struct {
                const char *name;
                mode_t type;
                uid_t uid;
                time_t age;
                bool removed;
        } entries[] = {
                { ".tmp-1-0123456789abcdef.bpf", S_IFREG, 0, 120, true },
                { ".tmp-2-stale", S_IFREG, 0, 3600, true },
                { ".tmp-3-0123456789abcdef.bpf", S_IFREG, 0, 5, false },         /* young */
                { ".tmp-4-0123456789abcdef.bpf", S_IFREG, 1000, 120, false },    /* foreign */
                { ".tmp-5-link", S_IFLNK, 0, 120, false },
                { ".tmp-6-dir", S_IFDIR, 0, 120, false },
                { "tmp-7-not-ours.bpf.old", S_IFREG, 0, 120, false },
        };
        rt_seccomp *fresh = NULL, *fresh_o = NULL;
        msp_err err = { 0 };
        char root[64], dir[128];
        int rootfd = make_root(root, sizeof root);

        ASSERT_TRUE(rootfd >= 0);
        ASSERT_EQ_INT(rt_seccomp_prepare(&s, false, &fresh, &err), 0);
        ASSERT_EQ_INT(rt_seccomp_prepare(&other, false, &fresh_o, &err), 0);
        ASSERT_EQ_INT(cached(rootfd, &s, fresh, false), 0);
        snprintf(dir, sizeof dir, "%s/%s", root, RT_SECCOMP_CACHE_DIR);
        int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(dirfd >= 0);
        for (size_t i = 0; i < ARRAY_SIZE(entries); i++)
                ASSERT_EQ_INT(make_entry(dirfd, entries[i].name, entries[i].type, entries[i].uid,
                                         entries[i].age), 0);
        /* a hit writes nothing and removes nothing */
        ASSERT_EQ_INT(cached(rootfd, &s, fresh, false), 1);
        for (size_t i = 0; i < ARRAY_SIZE(entries); i++)
                tap_check(faccessat(dirfd, entries[i].name, F_OK, AT_SYMLINK_NOFOLLOW) == 0,
                          "tmp: '%s' is still there after a cache hit", entries[i].name);
        /* a miss writes, and first prunes */
        ASSERT_EQ_INT(cached(rootfd, &other, fresh_o, false), 0);
        for (size_t i = 0; i < ARRAY_SIZE(entries); i++) {
                bool there = faccessat(dirfd, entries[i].name, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
                tap_check(there == !entries[i].removed, "tmp: '%s' %s by the next write",
                          entries[i].name, entries[i].removed ? "removed" : "kept");
        }
        /* both programs still there and sound; the symlink's target untouched */
        ASSERT_EQ_INT(cached(rootfd, &s, fresh, false), 1);
        ASSERT_EQ_INT(cached(rootfd, &other, fresh_o, false), 1);
        ASSERT_TRUE(access("/etc/hostname", F_OK) == 0);
        rt_seccomp_free(fresh);
        rt_seccomp_free(fresh_o);
        close(dirfd);
        close(rootfd);
        remove_root(root);
}

/* A read-only cache (state root and its parent): compiled (correct) without a cache; an
 * existing cache is read. */
static int
child_read_only_root(void *arg)
{
        const char *root = arg;
        oci_seccomp s = ARGS_PROFILE, t = { .default_action = OCI_SECCOMP_ALLOW };
        rt_seccomp *fresh = NULL, *fresh_t = NULL;
        msp_err err = { 0 };

        CHILD_CHECK(rt_seccomp_prepare(&s, false, &fresh, &err) == 0, "prepare: %s", err.msg);
        CHILD_CHECK(rt_seccomp_prepare(&t, false, &fresh_t, &err) == 0, "prepare: %s", err.msg);
        CHILD_CHECK(unshare(CLONE_NEWNS) == 0, "unshare: %s", strerror(errno));
        CHILD_CHECK(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0, "private: %s",
              strerror(errno));
        CHILD_CHECK(mount(root, root, NULL, MS_BIND, NULL) == 0 &&
              mount(NULL, root, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL) == 0,
              "read-only bind: %s", strerror(errno));
        char state[128];
        snprintf(state, sizeof state, "%s/state", root);
        int fd = open(state, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        CHILD_CHECK(fd >= 0, "open: %s", strerror(errno));
        CHILD_CHECK(cached(fd, &s, fresh, false) == 1, "the cache written before is read");
        CHILD_CHECK(cached(fd, &t, fresh_t, false) == 0 && cached(fd, &t, fresh_t, false) == 0,
              "a new profile is compiled each time");
        return 0;
}

TEST(cache_read_only_state_root)
{
        oci_seccomp s = ARGS_PROFILE;
        rt_seccomp *fresh = NULL;
        msp_err err = { 0 };
        char root[64];
        int rootfd = make_root(root, sizeof root);

        ASSERT_TRUE(rootfd >= 0);
        ASSERT_EQ_INT(rt_seccomp_prepare(&s, false, &fresh, &err), 0);
        ASSERT_EQ_INT(cached(rootfd, &s, fresh, false), 0);
        rt_seccomp_free(fresh);
        ASSERT_EQ_INT(in_child(child_read_only_root, root), 0);
        close(rootfd);
        remove_root(root);
}

int
main(void)
{
        src_root = tap_source_root();
        RUN(errno_ret_and_default_eperm);
        RUN(default_errno_is_eperm);
        RUN(arg_personality_ne);
        RUN(arg_every_operator);
        RUN(args_and_within_rule_or_on_repeated_index);
        RUN(arg_masked_eq_clone_flags);
        RUN(kill_process_and_kill_thread_sigsys);
        RUN(trap_trace_log);
        RUN(unknown_syscall_names_skipped);
        RUN(profile_errors);
        RUN(features_lists);
        RUN(notify_listener_handover);
        RUN(podman_profile_loads);
        RUN(default_profile_denies);

        /* The same behaviour with every filter taken from a warm cache. */
        char root[64];
        cache_root_fd = make_root(root, sizeof root);
        if (cache_root_fd < 0) {
                tap_check(false, "warm cache: state root: %s", strerror(errno));
                return tap_done();
        }
        tap_run("warm cache: errno_ret_and_default_eperm", errno_ret_and_default_eperm);
        tap_run("warm cache: default_errno_is_eperm", default_errno_is_eperm);
        tap_run("warm cache: arg_personality_ne", arg_personality_ne);
        tap_run("warm cache: arg_every_operator", arg_every_operator);
        tap_run("warm cache: args_and_within_rule_or_on_repeated_index",
                args_and_within_rule_or_on_repeated_index);
        tap_run("warm cache: arg_masked_eq_clone_flags", arg_masked_eq_clone_flags);
        tap_run("warm cache: kill_process_and_kill_thread_sigsys",
                kill_process_and_kill_thread_sigsys);
        tap_run("warm cache: trap_trace_log", trap_trace_log);
        tap_run("warm cache: unknown_syscall_names_skipped", unknown_syscall_names_skipped);
        tap_run("warm cache: notify_listener_handover", notify_listener_handover);
        tap_run("warm cache: podman_profile_loads", podman_profile_loads);
        tap_run("warm cache: default_profile_denies", default_profile_denies);
        close(cache_root_fd);
        cache_root_fd = -1;
        remove_root(root);

        RUN(cache_equals_fresh_compile);
        RUN(cache_tampered_files_are_ignored_and_rewritten);
        RUN(cache_read_only_state_root);
        RUN(cache_stale_tmp_files_are_removed);
        return tap_done();
}
