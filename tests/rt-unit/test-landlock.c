/* Landlock against the real kernel. Every restriction happens in a forked child so the
 * runner stays unrestricted; each check tries the denied access before the allowed one,
 * so a policy that denies everything cannot pass. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/landlock-abi.h"
#include "lib/landlock.h"
#include "tests/lib/tap.h"

#define FS_ALL_V5 ((1ULL << 16) - 1)
#define FS_READ_EXEC \
        (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR)

/* In a child: report and fail. */
#define CHILD_CHECK(cond, ...)                                                                \
        do {                                                                                  \
                if (!(cond)) {                                                                \
                        tap_diag("%s:%d: CHILD_CHECK(%s) failed", __FILE__, __LINE__, #cond); \
                        tap_diag(__VA_ARGS__);                                                \
                        return 1;                                                             \
                }                                                                             \
        } while (0)

static int abi;

#define RUN_ABI(min, name)                                                      \
        do {                                                                    \
                if (abi >= (min))                                               \
                        RUN(name);                                              \
                else                                                            \
                        tap_skip(#name, "needs Landlock ABI " #min);            \
        } while (0)
static char tmpdir[] = "/tmp/msp-test-landlock-XXXXXX";

/* Run fn in a child; the child's exit status is the result. */
static int
in_child(int (*fn)(void *), void *arg)
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

/* Restrict the calling process with l (NNP first, as the init sequence does). */
static int
restrict_with(const oci_landlock *l)
{
        rt_landlock *ll = NULL;
        msp_err err = { 0 };
        char dropped[256];

        CHILD_CHECK(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0, "prctl: %s", strerror(errno));
        CHILD_CHECK(rt_landlock_prepare(l, &ll, dropped, sizeof dropped, &err) == 0, "prepare: %s",
              err.msg);
        int r = rt_landlock_apply(ll, &err);
        rt_landlock_free(ll);
        CHILD_CHECK(r == 0, "apply: %s", err.msg);
        return 0;
}

/* ---- fitting to an ABI (no kernel involved) ---- */

TEST(strict_names_missing_right)
{
        oci_landlock l = { .handled_access_fs = LANDLOCK_ACCESS_FS_READ_FILE |
                                                LANDLOCK_ACCESS_FS_TRUNCATE };
        rt_landlock_effective eff;
        msp_err err = { 0 };

        ASSERT_EQ_INT(rt_landlock_effective_for_abi(&l, 2, &eff, NULL, 0, &err), -EOPNOTSUPP);
        ASSERT_STREQ(err.msg, "landlock: the kernel (ABI 2) lacks 'truncate' requested by "
                              "process.landlock.handledAccess.handledAccessFS");
        l.handled_access_fs = 0;
        l.handled_access_net = LANDLOCK_ACCESS_NET_CONNECT_TCP;
        ASSERT_EQ_INT(rt_landlock_effective_for_abi(&l, 3, &eff, NULL, 0, &err), -EOPNOTSUPP);
        ASSERT_STREQ(err.msg, "landlock: the kernel (ABI 3) lacks 'connect' requested by "
                              "process.landlock.handledAccess.handledAccessNetwork");
        l.handled_access_net = 0;
        l.scoped = LANDLOCK_SCOPE_SIGNAL;
        ASSERT_EQ_INT(rt_landlock_effective_for_abi(&l, 5, &eff, NULL, 0, &err), -EOPNOTSUPP);
        ASSERT_STREQ(err.msg, "landlock: the kernel (ABI 5) lacks 'signal' requested by "
                              "process.landlock.scoped");
        l.scoped = 0;
        l.log_new_exec_on = true;
        l.handled_access_fs = LANDLOCK_ACCESS_FS_READ_FILE;
        ASSERT_EQ_INT(rt_landlock_effective_for_abi(&l, 6, &eff, NULL, 0, &err), -EOPNOTSUPP);
        ASSERT_STREQ(err.msg, "landlock: the kernel (ABI 6) lacks 'logging.newExecOn' "
                              "requested by process.landlock.logging");
        /* The same policy fits ABI 7 exactly. */
        ASSERT_OK_ERR(rt_landlock_effective_for_abi(&l, 7, &eff, NULL, 0, &err), err);
        ASSERT_EQ_U64(eff.restrict_flags, LANDLOCK_RESTRICT_SELF_LOG_NEW_EXEC_ON);
}

TEST(strict_future_bit_and_abi0)
{
        /* A right beyond every ABI this build knows (a future kernel's bit). */
        oci_landlock l = { .handled_access_fs = LANDLOCK_ACCESS_FS_READ_FILE | (1ULL << 20) };
        rt_landlock_effective eff;
        msp_err err = { 0 };

        ASSERT_EQ_INT(rt_landlock_effective_for_abi(&l, 7, &eff, NULL, 0, &err), -EOPNOTSUPP);
        ASSERT_STREQ(err.msg, "landlock: the kernel (ABI 7) lacks bit 20 requested by "
                              "process.landlock.handledAccess.handledAccessFS");
        l.handled_access_fs = LANDLOCK_ACCESS_FS_READ_FILE;
        ASSERT_EQ_INT(rt_landlock_effective_for_abi(&l, 0, &eff, NULL, 0, &err), -EOPNOTSUPP);
        ASSERT_TRUE(strstr(err.msg, "does not support Landlock (ABI 0)") != NULL);
}

TEST(best_effort_dropped_list)
{
        oci_landlock l = {
                .handled_access_fs = LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_TRUNCATE |
                                     LANDLOCK_ACCESS_FS_IOCTL_DEV,
                .enable_best_effort = true,
        };
        rt_landlock_effective eff;
        msp_err err = { 0 };
        char dropped[256] = "junk";

        ASSERT_OK_ERR(rt_landlock_effective_for_abi(&l, 2, &eff, dropped, sizeof dropped, &err),
                      err);
        ASSERT_STREQ(dropped, "truncate, ioctl_dev (kernel ABI 2)");
        ASSERT_EQ_U64(eff.fs, LANDLOCK_ACCESS_FS_WRITE_FILE);

        l.handled_access_net = LANDLOCK_ACCESS_NET_BIND_TCP | LANDLOCK_ACCESS_NET_CONNECT_TCP;
        l.scoped = LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL;
        l.log_same_exec_off = true;
        ASSERT_OK_ERR(rt_landlock_effective_for_abi(&l, 3, &eff, dropped, sizeof dropped, &err),
                      err);
        ASSERT_STREQ(dropped, "ioctl_dev, bind, connect, abstract_unix_socket, signal, "
                              "logging.sameExecOff (kernel ABI 3)");
        ASSERT_EQ_U64(eff.net, 0);
        ASSERT_EQ_U64(eff.scoped, 0);
        ASSERT_EQ_U64(eff.restrict_flags, 0);

        /* Nothing dropped: empty text. A tiny buffer truncates instead of overflowing. */
        ASSERT_OK_ERR(rt_landlock_effective_for_abi(&l, 7, &eff, dropped, sizeof dropped, &err),
                      err);
        ASSERT_STREQ(dropped, "");
        char tiny[8];
        ASSERT_OK_ERR(rt_landlock_effective_for_abi(&l, 1, &eff, tiny, sizeof tiny, &err), err);
        ASSERT_STREQ(tiny, "truncat");
}

TEST(features_names)
{
        const char *names[RT_LANDLOCK_NAMES_MAX];

        ASSERT_EQ_INT(rt_landlock_fs_rights(1, names, ARRAY_SIZE(names)), 13);
        ASSERT_STREQ(names[12], "make_sym");
        ASSERT_NULL(names[13]);
        ASSERT_EQ_INT(rt_landlock_fs_rights(7, names, ARRAY_SIZE(names)), 16);
        ASSERT_STREQ(names[15], "ioctl_dev");
        ASSERT_EQ_INT(rt_landlock_net_rights(3, names, ARRAY_SIZE(names)), 0);
        ASSERT_EQ_INT(rt_landlock_net_rights(4, names, ARRAY_SIZE(names)), 2);
        ASSERT_STREQ(names[0], "bind");
        ASSERT_EQ_INT(rt_landlock_scopes(6, names, ARRAY_SIZE(names)), 2);
        ASSERT_STREQ(names[1], "signal");
}

/* ---- filesystem ---- */

static char *
path_in(const char *sub)
{
        static char buf[4][256];
        static int i;
        char *p = buf[i++ % 4];
        snprintf(p, sizeof buf[0], "%s/%s", tmpdir, sub);
        return p;
}

static int
child_fs(void *arg)
{
        (void) arg;
        char *rw_paths[] = { path_in("rw"), NULL };
        char *ro_paths[] = { path_in("ro"), NULL };
        char *root_paths[] = { "/", NULL };
        oci_landlock_path_rule rules[] = {
                { .allowed_access = FS_READ_EXEC, .paths = { root_paths, 1 } },
                { .allowed_access = FS_ALL_V5, .paths = { rw_paths, 1 } },
                { .allowed_access = FS_READ_EXEC, .paths = { ro_paths, 1 } },
        };
        oci_landlock l = { .handled_access_fs = FS_ALL_V5, .path_beneath = rules,
                           .n_path_beneath = 3 };

        if (restrict_with(&l))
                return 1;
        /* denied first: a new file outside the writable dir, and writing in the ro dir */
        int fd = open(path_in("outside"), O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
        CHILD_CHECK(fd < 0 && errno == EACCES, "create outside: fd %d, %s", fd, strerror(errno));
        fd = open(path_in("ro/new"), O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
        CHILD_CHECK(fd < 0 && errno == EACCES, "create in ro: fd %d, %s", fd, strerror(errno));
        fd = open(path_in("ro/file"), O_WRONLY | O_CLOEXEC);
        CHILD_CHECK(fd < 0 && errno == EACCES, "write ro/file: fd %d, %s", fd, strerror(errno));
        CHILD_CHECK(mkdir(path_in("ro/d"), 0700) < 0 && errno == EACCES, "mkdir ro: %s",
              strerror(errno));
        /* allowed: reading the ro dir, and everything in rw */
        fd = open(path_in("ro/file"), O_RDONLY | O_CLOEXEC);
        CHILD_CHECK(fd >= 0, "read ro/file: %s", strerror(errno));
        close(fd);
        fd = open(path_in("rw/new"), O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
        CHILD_CHECK(fd >= 0, "create in rw: %s", strerror(errno));
        CHILD_CHECK(write(fd, "x", 1) == 1, "write rw/new: %s", strerror(errno));
        close(fd);
        CHILD_CHECK(unlink(path_in("rw/new")) == 0, "unlink rw/new: %s", strerror(errno));
        return 0;
}

TEST(fs_write_denied_outside_allowed_inside)
{
        ASSERT_EQ_INT(in_child(child_fs, NULL), 0);
}

static int
child_file_rule_and_missing(void *arg)
{
        (void) arg;
        char *file_paths[] = { path_in("ro/file"), path_in("missing"), NULL };
        oci_landlock_path_rule rules[] = {
                /* read_dir on a file would be EINVAL in the kernel: masked to file rights */
                { .allowed_access = FS_READ_EXEC, .paths = { file_paths, 2 } },
        };
        oci_landlock l = { .handled_access_fs = FS_READ_EXEC, .path_beneath = rules,
                           .n_path_beneath = 1 };
        rt_landlock *ll = NULL;
        msp_err err = { 0 };
        char dropped[256];

        /* strict: the missing path is an error naming it */
        CHILD_CHECK(rt_landlock_prepare(&l, &ll, dropped, sizeof dropped, &err) == -ENOENT,
              "strict prepare: %s", err.msg);
        CHILD_CHECK(strstr(err.msg, path_in("missing")) != NULL, "message: %s", err.msg);
        /* best effort: skipped with a note */
        l.enable_best_effort = true;
        CHILD_CHECK(rt_landlock_prepare(&l, &ll, dropped, sizeof dropped, &err) == 0,
              "best effort prepare: %s", err.msg);
        rt_landlock_free(ll);
        CHILD_CHECK(strstr(dropped, "missing path") && strstr(dropped, path_in("missing")),
              "dropped: '%s'", dropped);
        return 0;
}

TEST(fs_file_rule_masked_missing_path)
{
        ASSERT_EQ_INT(in_child(child_file_rule_and_missing, NULL), 0);
}

static int
child_needs_nnp(void *arg)
{
        (void) arg;
        oci_landlock l = { .handled_access_fs = LANDLOCK_ACCESS_FS_MAKE_DIR,
                           .enable_best_effort = true };
        rt_landlock *ll = NULL;
        msp_err err = { 0 };

        CHILD_CHECK(rt_landlock_prepare(&l, &ll, NULL, 0, &err) == 0, "prepare: %s", err.msg);
        int r = rt_landlock_apply(ll, &err);
        rt_landlock_free(ll);
        CHILD_CHECK(r == -EPERM, "apply without NNP: %d", r);
        CHILD_CHECK(strcmp(err.msg, "landlock requires process.noNewPrivileges") == 0, "%s", err.msg);
        return 0;
}

TEST(apply_requires_nnp)
{
        ASSERT_EQ_INT(in_child(child_needs_nnp, NULL), 0);
}

/* ---- network ---- */

static int
tcp_listener(uint16_t *ret_port)
{
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t len = sizeof sa;
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

        if (fd < 0 || bind(fd, (struct sockaddr *) &sa, sizeof sa) < 0 || listen(fd, 4) < 0 ||
            getsockname(fd, (struct sockaddr *) &sa, &len) < 0)
                return -1;
        *ret_port = ntohs(sa.sin_port);
        return fd;
}

static int
tcp_connect(uint16_t port)
{
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port),
                                  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        int r = connect(fd, (struct sockaddr *) &sa, sizeof sa);
        int e = errno;
        close(fd);
        errno = e;
        return r;
}

static uint16_t ports[2];               /* [0] allowed, [1] not listed */

static int
child_net(void *arg)
{
        (void) arg;
        uint64_t allowed[] = { ports[0] };
        oci_landlock_port_rule rules[] = {
                { .allowed_access = LANDLOCK_ACCESS_NET_CONNECT_TCP, .ports = allowed,
                  .n_ports = 1 },
        };
        oci_landlock l = { .handled_access_net = LANDLOCK_ACCESS_NET_BIND_TCP |
                                                 LANDLOCK_ACCESS_NET_CONNECT_TCP,
                           .network_port = rules, .n_network_port = 1 };

        if (restrict_with(&l))
                return 1;
        CHILD_CHECK(tcp_connect(ports[1]) < 0 && errno == EACCES, "connect unlisted: %s",
              strerror(errno));
        CHILD_CHECK(tcp_connect(ports[0]) == 0, "connect allowed port %u: %s", ports[0],
              strerror(errno));
        uint16_t p;
        int fd = tcp_listener(&p);
        CHILD_CHECK(fd < 0 && errno == EACCES, "bind: fd %d, %s", fd, strerror(errno));
        return 0;
}

TEST(net_connect_and_bind)
{
        int a = tcp_listener(&ports[0]);
        int b = tcp_listener(&ports[1]);
        ASSERT_TRUE(a >= 0 && b >= 0);
        int r = in_child(child_net, NULL);
        close(a);
        close(b);
        ASSERT_EQ_INT(r, 0);
}

/* ---- IPC scopes ---- */

static struct sockaddr_un
abstract_addr(const char *tag, socklen_t *len)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int n = snprintf(sa.sun_path + 1, sizeof sa.sun_path - 1, "msp-test-ll-%s-%d", tag,
                         (int) getpid());
        *len = (socklen_t) (offsetof(struct sockaddr_un, sun_path) + 1 + (size_t) n);
        return sa;
}

static int
abstract_listener(const char *tag)
{
        socklen_t len;
        struct sockaddr_un sa = abstract_addr(tag, &len);
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0 || bind(fd, (struct sockaddr *) &sa, len) < 0 || listen(fd, 4) < 0)
                return -1;
        return fd;
}

static int
abstract_connect(const char *tag, pid_t owner)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int n = snprintf(sa.sun_path + 1, sizeof sa.sun_path - 1, "msp-test-ll-%s-%d", tag,
                         (int) owner);
        socklen_t len = (socklen_t) (offsetof(struct sockaddr_un, sun_path) + 1 + (size_t) n);
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        int r = connect(fd, (struct sockaddr *) &sa, len);
        int e = errno;
        close(fd);
        errno = e;
        return r;
}

static int
child_scope_unix(void *arg)
{
        pid_t parent = *(pid_t *) arg;
        oci_landlock l = { .scoped = LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET };

        if (restrict_with(&l))
                return 1;
        CHILD_CHECK(abstract_connect("outer", parent) < 0 && errno == EPERM,
              "connect to the outside listener: %s", strerror(errno));
        /* a listener inside the same domain is reachable */
        int fd = abstract_listener("inner");
        CHILD_CHECK(fd >= 0, "inner listener: %s", strerror(errno));
        CHILD_CHECK(abstract_connect("inner", getpid()) == 0, "connect inside: %s", strerror(errno));
        close(fd);
        return 0;
}

TEST(scope_abstract_unix_socket)
{
        pid_t self = getpid();
        int fd = abstract_listener("outer");
        ASSERT_TRUE(fd >= 0);
        int r = in_child(child_scope_unix, &self);
        close(fd);
        ASSERT_EQ_INT(r, 0);
}

static int
child_scope_signal(void *arg)
{
        pid_t outsider = *(pid_t *) arg;
        oci_landlock l = { .scoped = LANDLOCK_SCOPE_SIGNAL };

        if (restrict_with(&l))
                return 1;
        CHILD_CHECK(kill(outsider, SIGTERM) < 0 && errno == EPERM, "signal outside: %s",
              strerror(errno));
        pid_t inner = fork();
        if (inner == 0) {
                pause();
                _exit(0);
        }
        CHILD_CHECK(inner > 0, "fork: %s", strerror(errno));
        CHILD_CHECK(kill(inner, SIGTERM) == 0, "signal inside: %s", strerror(errno));
        (void) waitpid(inner, NULL, 0);
        return 0;
}

TEST(scope_signal)
{
        pid_t outsider = fork();
        if (outsider == 0) {
                pause();
                _exit(0);
        }
        ASSERT_TRUE(outsider > 0);
        int r = in_child(child_scope_signal, &outsider);
        int status;
        kill(outsider, SIGKILL);
        waitpid(outsider, &status, 0);
        ASSERT_EQ_INT(r, 0);
        /* the outsider died from our SIGKILL, not the child's SIGTERM */
        ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
}

/* ---- contrib/profiles/landlock-default.json on the host ---- */

/* tap_source_root(), set first thing in main() */
static const char *src_root;

static oci_spec *
default_profile_spec(void)
{
        char path[600], *text = NULL, *doc = NULL;
        size_t n = 0;
        oci_spec *spec = NULL;
        msp_err err = { 0 };

        snprintf(path, sizeof path, "%s/contrib/profiles/landlock-default.json", src_root);
        FILE *f = fopen(path, "re");
        if (!f)
                return NULL;
        FILE *m = open_memstream(&text, &n);
        for (int c; m && (c = fgetc(f)) != EOF;)
                fputc(c, m);
        fclose(f);
        if (m)
                fclose(m);
        if (text && asprintf(&doc, "{\"ociVersion\":\"1.2.1\",\"root\":{\"path\":\"rootfs\"},"
                             "\"process\":{\"args\":[\"/bin/true\"],\"cwd\":\"/\",\"user\":"
                             "{\"uid\":0,\"gid\":0},\"noNewPrivileges\":true,\"landlock\":%s}}",
                             text) < 0)
                doc = NULL;
        if (doc && oci_spec_parse_data(path, doc, strlen(doc), &spec, &err) < 0)
                tap_diag("%s", err.msg);
        free(doc);
        free(text);
        return spec;
}

static int
child_default_profile(void *arg)
{
        const oci_landlock *l = arg;
        uint16_t port;

        if (restrict_with(l))
                return 1;
        /* allowed first: read /etc, write /tmp, /dev/null, exec from /usr */
        int fd = open("/etc/passwd", O_RDONLY | O_CLOEXEC);
        CHILD_CHECK(fd >= 0, "read /etc/passwd: %s", strerror(errno));
        close(fd);
        fd = open(path_in("rw/profile"), O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0600);
        CHILD_CHECK(fd >= 0, "write under /tmp: %s", strerror(errno));
        close(fd);
        fd = open("/dev/null", O_WRONLY | O_TRUNC | O_CLOEXEC);
        CHILD_CHECK(fd >= 0, "write /dev/null: %s", strerror(errno));
        close(fd);
        CHILD_CHECK(system("exec /bin/true") == 0, "exec /bin/true");
        /* denied: writes to the system, TCP, abstract sockets to the outside, signals */
        fd = open("/etc/msp-test-landlock", O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
        CHILD_CHECK(fd < 0 && errno == EACCES, "create in /etc: %s", strerror(errno));
        fd = open("/etc/passwd", O_WRONLY | O_CLOEXEC);
        CHILD_CHECK(fd < 0 && errno == EACCES, "write /etc/passwd: %s", strerror(errno));
        CHILD_CHECK(tcp_connect(ports[0]) < 0 && errno == EACCES, "TCP connect: %s", strerror(errno));
        fd = tcp_listener(&port);
        CHILD_CHECK(fd < 0 && errno == EACCES, "TCP bind: %s", strerror(errno));
        CHILD_CHECK(abstract_connect("outer", getppid()) < 0 && errno == EPERM,
              "abstract connect: %s", strerror(errno));
        CHILD_CHECK(kill(getppid(), 0) < 0 && errno == EPERM, "signal the runner: %s",
              strerror(errno));
        return 0;
}

TEST(default_profile_on_host)
{
        _cleanup_spec_ oci_spec *spec = default_profile_spec();
        ASSERT_NOT_NULL(spec);
        ASSERT_NOT_NULL(spec->process && spec->process->landlock ? spec : NULL);
        int a = tcp_listener(&ports[0]);
        int u = abstract_listener("outer");
        ASSERT_TRUE(a >= 0 && u >= 0);
        int r = in_child(child_default_profile, spec->process->landlock);
        close(a);
        close(u);
        ASSERT_EQ_INT(r, 0);
}

static int
setup_tmp(void)
{
        char p[256];
        if (!mkdtemp(tmpdir))
                return -1;
        snprintf(p, sizeof p, "%s/rw", tmpdir);
        if (mkdir(p, 0700) < 0)
                return -1;
        snprintf(p, sizeof p, "%s/ro", tmpdir);
        if (mkdir(p, 0700) < 0)
                return -1;
        snprintf(p, sizeof p, "%s/ro/file", tmpdir);
        int fd = open(p, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
        if (fd < 0)
                return -1;
        close(fd);
        return 0;
}

static void
cleanup_tmp(void)
{
        char cmd[512];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
        if (system(cmd) != 0)
                tap_diag("could not remove %s", tmpdir);
}

int
main(void)
{
        src_root = tap_source_root();
        abi = rt_landlock_abi();
        tap_diag("Landlock ABI %d", abi);
        if (setup_tmp() < 0) {
                tap_diag("setup: %s", strerror(errno));
                return 1;
        }
        RUN(strict_names_missing_right);
        RUN(strict_future_bit_and_abi0);
        RUN(best_effort_dropped_list);
        RUN(features_names);
        RUN(apply_requires_nnp);
        RUN_ABI(5, fs_write_denied_outside_allowed_inside);
        RUN_ABI(1, fs_file_rule_masked_missing_path);
        RUN_ABI(4, net_connect_and_bind);
        RUN_ABI(6, scope_abstract_unix_socket);
        RUN_ABI(6, scope_signal);
        RUN_ABI(6, default_profile_on_host);
        cleanup_tmp();
        return tap_done();
}
