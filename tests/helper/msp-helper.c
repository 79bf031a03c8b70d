/* msp-helper: a small static program run INSIDE containers by the integration tests.
 * It reports what the process sees, one `key=value` line per fact, and tries things
 * (writes, syscalls, connects) printing `ok` or the errno name.
 *
 *   msp-helper ids -- caps -- write /etc/x -- syscall mount
 *
 * Subcommands are chained with `--`. Exit status: the highest status of the subcommands
 * run (0 all ok, 1 something was refused/failed, 2 usage error); `exit N` exits at once.
 * Test code: no libcap, no NSS, nothing that needs a shared library. */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/keyctl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stddef.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timex.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

typedef int (*cmd_fn)(int argc, char **argv);

typedef struct cmd {
        const char *name;
        int nargs;              /* required arguments; -1: any number */
        cmd_fn fn;
        const char *usage;
} cmd;

static const char *
errname(int e)
{
        const char *n = strerrorname_np(e);
        static char buf[16];

        if (n)
                return n;
        snprintf(buf, sizeof buf, "E%d", e);
        return buf;
}

/* Print "key=ok" or "key=ENAME"; the status for the exit code. */
static int
result(const char *key, int r)
{
        if (r >= 0) {
                printf("%s=ok\n", key);
                return 0;
        }
        printf("%s=%s\n", key, errname(errno));
        return 1;
}

static int
status_lines(const char *const *keys)
{
        char line[512];
        FILE *f = fopen("/proc/self/status", "re");

        if (!f)
                return result("status", -1);
        while (fgets(line, sizeof line, f)) {
                char *colon = strchr(line, ':');
                if (!colon)
                        continue;
                *colon = '\0';
                for (const char *const *k = keys; *k; k++) {
                        if (strcmp(line, *k) != 0)
                                continue;
                        char *v = colon + 1 + strspn(colon + 1, " \t");
                        v[strcspn(v, "\n")] = '\0';
                        printf("%s=%s\n", line, v);
                }
        }
        fclose(f);
        return 0;
}

static int
cmd_ids(int argc, char **argv)
{
        gid_t groups[NGROUPS_MAX];
        int n = getgroups(NGROUPS_MAX, groups);

        (void) argc, (void) argv;
        printf("uid=%u\ngid=%u\neuid=%u\negid=%u\ngroups=", getuid(), getgid(), geteuid(), getegid());
        for (int i = 0; i < n; i++)
                printf("%s%u", i ? "," : "", groups[i]);
        printf("\n");
        return 0;
}

static int
cmd_caps(int argc, char **argv)
{
        static const char *const keys[] = { "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb", NULL };
        (void) argc, (void) argv;
        return status_lines(keys);
}

static int
cmd_nnp(int argc, char **argv)
{
        (void) argc, (void) argv;
        printf("nnp=%d\n", prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0));
        return 0;
}

static int
cmd_seccomp(int argc, char **argv)
{
        static const char *const keys[] = { "Seccomp", "Seccomp_filters", NULL };
        (void) argc, (void) argv;
        return status_lines(keys);
}

static int
cmd_umask(int argc, char **argv)
{
        mode_t m = umask(0);

        (void) argc, (void) argv;
        umask(m);
        printf("umask=%04o\n", (unsigned) m);
        return 0;
}

static int
cmd_cwd(int argc, char **argv)
{
        char buf[PATH_MAX];

        (void) argc, (void) argv;
        if (!getcwd(buf, sizeof buf))
                return result("cwd", -1);
        printf("cwd=%s\n", buf);
        return 0;
}

static int
cmd_uname(int argc, char **argv)
{
        struct utsname u;

        (void) argc;
        if (uname(&u) < 0)
                return result(argv[0], -1);
        printf("%s=%s\n", argv[0], strcmp(argv[0], "hostname") == 0 ? u.nodename : u.domainname);
        return 0;
}

/* mountinfo: id parent maj:min root mountpoint opts [optional...] - fstype source superopts */
static int
cmd_mounts(int argc, char **argv)
{
        char line[4096];
        FILE *f = fopen("/proc/self/mountinfo", "re");

        (void) argc, (void) argv;
        if (!f)
                return result("mounts", -1);
        while (fgets(line, sizeof line, f)) {
                char *fld[6], *save = NULL, *p = line;
                int n = 0;
                for (; n < 6 && (fld[n] = strtok_r(p, " \n", &save)); n++)
                        p = NULL;
                char *sep = strstr(save ? save : "", "- ");
                if (n < 6 || !sep)
                        continue;
                char *type = strtok_r(sep + 2, " \n", &save);
                printf("mount=%s %s %s\n", fld[4], type ? type : "?", fld[5]);
        }
        fclose(f);
        return 0;
}

static int
cmd_ns(int argc, char **argv)
{
        static const char *const names[] = { "cgroup", "ipc", "mnt", "net", "pid", "pid_for_children",
                                             "time", "time_for_children", "user", "uts" };
        (void) argc, (void) argv;
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
                char p[64];
                struct stat st;
                snprintf(p, sizeof p, "/proc/self/ns/%s", names[i]);
                if (stat(p, &st) == 0)
                        printf("ns.%s=%lu\n", names[i], (unsigned long) st.st_ino);
        }
        return 0;
}

static int
cmd_fds(int argc, char **argv)
{
        DIR *d = opendir("/proc/self/fd");
        struct dirent *de;

        (void) argc, (void) argv;
        if (!d)
                return result("fds", -1);
        while ((de = readdir(d))) {
                int fd = atoi(de->d_name);
                char p[64], target[PATH_MAX];
                if (de->d_name[0] == '.' || fd <= 2 || fd == dirfd(d))
                        continue;
                snprintf(p, sizeof p, "/proc/self/fd/%d", fd);
                ssize_t n = readlink(p, target, sizeof target - 1);
                target[n < 0 ? 0 : n] = '\0';
                printf("fd.%d=%s\n", fd, target);
        }
        closedir(d);
        return 0;
}

static void
print_rlim(rlim_t v)
{
        if (v == RLIM_INFINITY)
                printf("unlimited");
        else
                printf("%llu", (unsigned long long) v);
}

static int
cmd_rlimits(int argc, char **argv)
{
        static const char *const names[] = { "CPU", "FSIZE", "DATA", "STACK", "CORE", "RSS", "NPROC",
                                             "NOFILE", "MEMLOCK", "AS", "LOCKS", "SIGPENDING",
                                             "MSGQUEUE", "NICE", "RTPRIO", "RTTIME" };
        (void) argc, (void) argv;
        for (int r = 0; r < (int) (sizeof names / sizeof names[0]); r++) {
                struct rlimit l;
                if (getrlimit((__rlimit_resource_t) r, &l) < 0)
                        continue;
                printf("RLIMIT_%s=", names[r]);
                print_rlim(l.rlim_cur);
                printf(" ");
                print_rlim(l.rlim_max);
                printf("\n");
        }
        return 0;
}

static int
cmd_tty(int argc, char **argv)
{
        (void) argc, (void) argv;
        for (int fd = 0; fd <= 2; fd++) {
                const char *name = ttyname(fd);
                printf("tty.%d=%d\nttyname.%d=%s\n", fd, isatty(fd), fd, name ? name : "");
        }
        return 0;
}

static int
cmd_env(int argc, char **argv)
{
        (void) argc, (void) argv;
        for (char **e = environ; e && *e; e++)
                printf("env.%s\n", *e);
        return 0;
}

static int
cmd_pid(int argc, char **argv)
{
        (void) argc, (void) argv;
        printf("pid=%d\nppid=%d\n", getpid(), getppid());
        return 0;
}

static int
cmd_write(int argc, char **argv)
{
        int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

        (void) argc;
        if (fd < 0)
                return result("write", -1);
        int r = write(fd, "msp-helper\n", 11) == 11 ? 0 : -1;
        int e = errno;
        close(fd);
        errno = e;
        return result("write", r);
}

static int
cmd_read(int argc, char **argv)
{
        char buf[512];
        int fd = open(argv[1], O_RDONLY | O_CLOEXEC);

        (void) argc;
        if (fd < 0)
                return result("read", -1);
        ssize_t n = read(fd, buf, sizeof buf - 1);
        int e = errno;
        close(fd);
        errno = e;
        if (n < 0)
                return result("read", -1);
        buf[n] = '\0';
        buf[strcspn(buf, "\n")] = '\0';
        printf("read=ok\ncontent=%s\n", buf);
        return 0;
}

static int
cmd_stat(int argc, char **argv)
{
        struct stat st;

        (void) argc;
        if (lstat(argv[1], &st) < 0)
                return result("stat", -1);
        printf("stat.mode=%06o\nstat.uid=%u\nstat.gid=%u\nstat.rdev=%u:%u\n", (unsigned) st.st_mode,
               st.st_uid, st.st_gid, major(st.st_rdev), minor(st.st_rdev));
        return 0;
}

/* exec PATH [ARGS...]: all the remaining words of this subcommand become argv. */
static int
cmd_exec(int argc, char **argv)
{
        (void) argc;
        fflush(stdout);
        execv(argv[1], argv + 1);
        return result("exec", -1);
}

static int
cmd_mknod(int argc, char **argv)
{
        (void) argc;
        if (strcmp(argv[2], "c") != 0 && strcmp(argv[2], "b") != 0) {
                fprintf(stderr, "mknod: type must be c or b\n");
                return 2;
        }
        mode_t type = argv[2][0] == 'c' ? S_IFCHR : S_IFBLK;
        dev_t dev = makedev((unsigned) atoi(argv[3]), (unsigned) atoi(argv[4]));
        return result("mknod", mknod(argv[1], type | 0600, dev));
}

static long
try_raw_socket(void)
{
        return socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_ICMP);
}

/* Each probe runs in a child (so that a success such as a new namespace or a traced
 * state does not change the helper) and is a no-op when the kernel permits it, because
 * mount state and the like are shared with the namespace, which may be the host's: the
 * arguments are chosen so that a permitted call fails later with EINVAL (or does
 * nothing), while a denied one fails with EPERM (capabilities) or the configured
 * errno (seccomp). Tests compare the errno, not "ok". */
static long
probe(const char *name)
{
        char zero[256] = { 0 };
        char hn[HOST_NAME_MAX + 1] = "";

        if (strcmp(name, "mount") == 0)
                return mount(NULL, "/", NULL, 0, NULL);         /* no fstype: EINVAL */
        if (strcmp(name, "umount") == 0)
                return umount2("/proc/self/fd", 0);             /* not a mount: EINVAL */
        if (strcmp(name, "ptrace") == 0)
                return ptrace(PTRACE_TRACEME, 0, NULL, NULL);
        if (strcmp(name, "unshare") == 0)
                return unshare(CLONE_NEWUSER);
        if (strcmp(name, "unshare-mnt") == 0)
                return unshare(CLONE_NEWNS);
        if (strcmp(name, "keyctl") == 0)
                return syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0);
        if (strcmp(name, "add_key") == 0)
                return syscall(SYS_add_key, "user", "msp-helper", "x", 1, KEY_SPEC_PROCESS_KEYRING);
        if (strcmp(name, "bpf") == 0)
                return syscall(SYS_bpf, 0 /* BPF_MAP_CREATE */, zero, 64);
        if (strcmp(name, "userfaultfd") == 0)
                return syscall(SYS_userfaultfd, O_CLOEXEC);
        if (strcmp(name, "perf_event_open") == 0)
                return syscall(SYS_perf_event_open, zero, 0, -1, -1, 0);
        if (strcmp(name, "io_uring_setup") == 0)
                return syscall(SYS_io_uring_setup, 1, zero);
        if (strcmp(name, "finit_module") == 0)
                return syscall(SYS_finit_module, -1, "", 0);
        if (strcmp(name, "kexec_load") == 0)
                return syscall(SYS_kexec_load, 0, 0, NULL, 0);
        if (strcmp(name, "settimeofday") == 0)
                return syscall(SYS_settimeofday, NULL, NULL);   /* sets nothing */
        if (strcmp(name, "raw_socket") == 0)
                return try_raw_socket();
        if (strcmp(name, "chroot") == 0)
                return chroot("/");
        if (strcmp(name, "open_by_handle_at") == 0) {
                /* a well-formed but stale handle (8 bytes, FILEID_INO32_GEN): the
                 * permission check comes before ESTALE */
                unsigned hdr[2] = { 8, 1 };
                memcpy(zero, hdr, sizeof hdr);
                return syscall(SYS_open_by_handle_at, AT_FDCWD, zero, O_RDONLY);
        }
        if (strcmp(name, "sethostname") == 0)
                return gethostname(hn, sizeof hn) < 0 ? -1 : sethostname(hn, strlen(hn));
        if (strcmp(name, "setuid0") == 0)
                return setuid(0);
        if (strcmp(name, "personality") == 0)
                return syscall(SYS_personality, 0xffffffff);
        errno = ENOENT;
        return -2;
}

static int
cmd_syscall(int argc, char **argv)
{
        char key[128];
        int st = 0;

        (void) argc;
        snprintf(key, sizeof key, "syscall.%s", argv[1]);
        fflush(stdout);
        pid_t pid = fork();
        if (pid < 0)
                return result(key, -1);
        if (pid == 0) {
                long r = probe(argv[1]);
                _exit(r == -2 ? 255 : r < 0 ? errno : 0);
        }
        if (waitpid(pid, &st, 0) < 0)
                return result(key, -1);
        if (WIFSIGNALED(st)) {
                printf("%s=SIG%s\n", key, sigabbrev_np(WTERMSIG(st)) ?: "?");
                return 1;
        }
        if (WEXITSTATUS(st) == 255) {
                fprintf(stderr, "syscall: unknown probe '%s'\n", argv[1]);
                return 2;
        }
        errno = WEXITSTATUS(st);
        return result(key, errno ? -1 : 0);
}

static int
connect_timeout(int fd, const struct sockaddr *sa, socklen_t len)
{
        int fl = fcntl(fd, F_GETFL);
        struct pollfd pfd = { .fd = fd, .events = POLLOUT };
        int soerr = 0;
        socklen_t sl = sizeof soerr;

        fcntl(fd, F_SETFL, fl | O_NONBLOCK);
        if (connect(fd, sa, len) == 0)
                return 0;
        if (errno != EINPROGRESS)
                return -1;
        if (poll(&pfd, 1, 3000) == 0) {
                errno = ETIMEDOUT;
                return -1;
        }
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl);
        errno = soerr;
        return soerr ? -1 : 0;
}

/* Numeric addresses only: a static binary has no NSS. */
static int
cmd_connect(int argc, char **argv)
{
        struct sockaddr_in6 s6 = { .sin6_family = AF_INET6, .sin6_port = htons((uint16_t) atoi(argv[2])) };
        struct sockaddr_in s4 = { .sin_family = AF_INET, .sin_port = htons((uint16_t) atoi(argv[2])) };
        bool v6 = strchr(argv[1], ':') != NULL;
        int r;

        (void) argc;
        if (v6 ? inet_pton(AF_INET6, argv[1], &s6.sin6_addr) != 1 : inet_pton(AF_INET, argv[1], &s4.sin_addr) != 1) {
                fprintf(stderr, "connect: '%s' is not a numeric address\n", argv[1]);
                return 2;
        }
        int fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return result("connect", -1);
        r = v6 ? connect_timeout(fd, (struct sockaddr *) &s6, sizeof s6)
               : connect_timeout(fd, (struct sockaddr *) &s4, sizeof s4);
        int e = errno;
        close(fd);
        errno = e;
        return result("connect", r);
}

static int
cmd_bind(int argc, char **argv)
{
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t) atoi(argv[1])) };
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        int r;

        (void) argc;
        if (fd < 0)
                return result("bind", -1);
        r = bind(fd, (struct sockaddr *) &sa, sizeof sa);
        if (r == 0)
                r = listen(fd, 1);
        int e = errno;
        close(fd);
        errno = e;
        return result("bind", r);
}

static int
cmd_abstract_connect(int argc, char **argv)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        size_t len = strlen(argv[1]);
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

        (void) argc;
        if (len > sizeof sa.sun_path - 1)
                len = sizeof sa.sun_path - 1;
        memcpy(sa.sun_path + 1, argv[1], len);
        if (fd < 0)
                return result("abstract-connect", -1);
        int r = connect(fd, (struct sockaddr *) &sa, (socklen_t) (offsetof(struct sockaddr_un, sun_path) + 1 + len));
        int e = errno;
        close(fd);
        errno = e;
        return result("abstract-connect", r);
}

static int
cmd_kill(int argc, char **argv)
{
        (void) argc;
        return result("kill", kill(atoi(argv[1]), atoi(argv[2])));
}

static void
on_signal(int sig)
{
        char msg[32];
        int n = snprintf(msg, sizeof msg, "signal=%d\n", sig);
        (void) !write(STDOUT_FILENO, msg, (size_t) n);
        _exit(128 + sig);
}

/* As pid 1 of a pid namespace a signal without a handler is ignored, so install one:
 * `kill` then works the same whether or not the helper is the init. */
static int
cmd_sleep_forever(int argc, char **argv)
{
        static const int sigs[] = { SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGUSR2, SIGQUIT };
        (void) argc, (void) argv;
        for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
                signal(sigs[i], on_signal);
        printf("ready=1\n");
        fflush(stdout);
        while (pause() < 0 || errno != 0)
                ;
        return 0;
}

static int
cmd_exit(int argc, char **argv)
{
        (void) argc;
        fflush(stdout);
        exit(atoi(argv[1]));
}

static int
cmd_oom(int argc, char **argv)
{
        size_t total = 0;

        (void) argc, (void) argv;
        for (;;) {
                char *p = malloc(16 << 20);
                if (!p) {
                        printf("oom=ENOMEM\nallocated_mib=%zu\n", total);
                        return 1;
                }
                memset(p, 0x5a, 16 << 20);
                total += 16;
        }
}

/* Fork until the kernel says no (pids.max), report, then clean up the children. */
static int
cmd_forkbomb(int argc, char **argv)
{
        int max = argc > 1 ? atoi(argv[1]) : 4096, n = 0;
        pid_t *kids = calloc((size_t) max, sizeof *kids);

        if (!kids)
                return result("fork", -1);
        fflush(stdout);
        for (; n < max; n++) {
                pid_t pid = fork();
                if (pid < 0)
                        break;
                if (pid == 0) {
                        for (;;)
                                pause();
                }
                kids[n] = pid;
        }
        int e = errno;
        printf("forks=%d\n", n);
        for (int i = 0; i < n; i++)
                kill(kids[i], SIGKILL);
        for (int i = 0; i < n; i++)
                waitpid(kids[i], NULL, 0);
        free(kids);
        errno = e;
        return result("fork", n < max ? -1 : 0);
}

static int
cmd_spin(int argc, char **argv)
{
        struct timespec t0, t;
        double secs = atof(argv[1]);
        volatile unsigned long x = 0;

        (void) argc;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        do {
                for (int i = 0; i < 1000000; i++)
                        x++;
                clock_gettime(CLOCK_MONOTONIC, &t);
        } while ((double) (t.tv_sec - t0.tv_sec) + (double) (t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
        printf("spin=ok\n");
        return 0;
}

/* ---- escape attacks (tests/integration/escape.bats) ---- */

static void
read_fifo_to_eof(const char *path)
{
        char buf[64];
        int fd = open(path, O_RDONLY | O_CLOEXEC);

        if (fd < 0)
                return;
        while (read(fd, buf, sizeof buf) > 0)
                ;
        close(fd);
}

/* overwrite-exe PID FIFO: CVE-2019-5736 from inside. Hold /proc/PID/exe as an O_PATH
 * fd while PID is the runtime, try to open it for writing, then wait (two rendezvous on
 * FIFO: "holding", then "the runtime is gone") and reopen the held fd for writing, as
 * the published exploit does, writing "pwned" at offset 0 if that works. Also tries
 * O_RDWR and a chmod (to the mode it has) while the runtime is there. */
static int
cmd_overwrite_exe(int argc, char **argv)
{
        char p[64], target[PATH_MAX];
        int worst = 0;

        (void) argc;
        snprintf(p, sizeof p, "/proc/%s/exe", argv[1]);
        int held = open(p, O_PATH | O_CLOEXEC);
        if (held < 0) {
                worst = result("exe.hold", -1);
        } else {
                printf("exe.hold=ok\n");
                snprintf(p, sizeof p, "/proc/self/fd/%d", held);
                ssize_t n = readlink(p, target, sizeof target - 1);
                target[n < 0 ? 0 : n] = '\0';
                printf("exe.link=%s\n", target);
                snprintf(p, sizeof p, "/proc/%s/exe", argv[1]);
                int w = open(p, O_WRONLY | O_CLOEXEC);
                if (w >= 0)
                        close(w);
                if (result("exe.write", w) == 0)
                        worst = 1;
                w = open(p, O_RDWR | O_CLOEXEC);
                if (w >= 0)
                        close(w);
                if (result("exe.rdwr", w) == 0)
                        worst = 1;
                /* chmod to the mode it has: needs the same rights as any change. */
                struct stat st;
                snprintf(p, sizeof p, "/proc/self/fd/%d", held);
                if (fstat(held, &st) == 0 && result("exe.chmod", chmod(p, st.st_mode & 07777)) == 0 &&
                    strncmp(target, "/memfd:", 7) != 0)
                        worst = 1;
        }
        fflush(stdout);
        read_fifo_to_eof(argv[2]);
        read_fifo_to_eof(argv[2]);
        if (held < 0)
                return worst;
        snprintf(p, sizeof p, "/proc/self/fd/%d", held);
        int w = open(p, O_WRONLY | O_CLOEXEC);
        if (result("exe.reopen", w) < 0)
                return worst;
        int r = pwrite(w, "pwned", 5, 0) == 5 ? 0 : -1;
        close(w);
        return result("exe.overwrite", r) ? worst : 1;
}

/* open-write PATH: open an existing file for writing (no create, no truncate). */
static int
cmd_open_write(int argc, char **argv)
{
        (void) argc;
        int fd = open(argv[1], O_WRONLY | O_CLOEXEC);
        if (fd >= 0)
                close(fd);
        return result("open-write", fd);
}

/* ptrace PID|child: PTRACE_SEIZE a pid (then detach), or a child of ours (the control). */
static int
cmd_ptrace(int argc, char **argv)
{
        pid_t child = -1, pid;

        (void) argc;
        if (strcmp(argv[1], "child") == 0) {
                fflush(stdout);
                child = fork();
                if (child < 0)
                        return result("ptrace", -1);
                if (child == 0) {
                        pause();
                        _exit(0);
                }
                pid = child;
        } else {
                pid = (pid_t) atoi(argv[1]);
        }
        long r = ptrace(PTRACE_SEIZE, pid, NULL, NULL);
        int e = errno;
        if (r == 0)
                (void) ptrace(PTRACE_DETACH, pid, NULL, NULL);
        if (child > 0) {
                kill(child, SIGKILL);
                waitpid(child, NULL, 0);
        }
        errno = e;
        return result("ptrace", r < 0 ? -1 : 0);
}

/* settime: clock_settime(CLOCK_REALTIME) to the time just read (a no-op if permitted),
 * and clock_adjtime with an out-of-range tick (EINVAL if permitted, EPERM if not). */
static int
cmd_settime(int argc, char **argv)
{
        struct timespec now;
        struct timex tx = { .modes = ADJ_TICK, .tick = 1 };

        (void) argc, (void) argv;
        clock_gettime(CLOCK_REALTIME, &now);
        int a = result("clock_settime", clock_settime(CLOCK_REALTIME, &now));
        int b = result("clock_adjtime", clock_adjtime(CLOCK_REALTIME, &tx));
        return a > b ? a : b;
}

/* init-module: init_module with no image and finit_module on a bad fd: EPERM without
 * CAP_SYS_MODULE, another error (nothing loads) with it. */
static int
cmd_init_module(int argc, char **argv)
{
        (void) argc, (void) argv;
        int a = result("init_module", (int) syscall(SYS_init_module, NULL, 0UL, ""));
        int b = result("finit_module", (int) syscall(SYS_finit_module, -1, "", 0));
        return a > b ? a : b;
}

/* add-key DESC: a "user" key in the session keyring; prints its serial. */
static int
cmd_add_key(int argc, char **argv)
{
        (void) argc;
        long k = syscall(SYS_add_key, "user", argv[1], "msp", 3, KEY_SPEC_SESSION_KEYRING);
        if (k < 0)
                return result("add-key", -1);
        printf("add-key=ok\nkey=%ld\n", k);
        return 0;
}

/* keyring: the serial of the session keyring, not created if there is none (then the
 * user session keyring's, as the kernel falls back to it). */
static int
cmd_keyring(int argc, char **argv)
{
        (void) argc, (void) argv;
        long k = syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0);
        if (k < 0)
                return result("keyring.session", -1);
        printf("keyring.session=%ld\n", k);
        return 0;
}

/* ---- seccomp and Landlock (tests/integration/seccomp.bats, landlock.bats) ---- */

/* nr N: syscall number N with all arguments 0, as a program from after the profile
 * would probe it (pick numbers whose zero call is harmless). */
static int
cmd_nr(int argc, char **argv)
{
        char key[32];

        (void) argc;
        snprintf(key, sizeof key, "nr.%s", argv[1]);
        return result(key, (int) syscall(strtol(argv[1], NULL, 10), 0, 0, 0, 0, 0, 0) < 0 ? -1 : 0);
}

static int
cmd_mkdir(int argc, char **argv)
{
        (void) argc;
        return result("mkdir", mkdir(argv[1], 0755));
}

/* DIR/NAME/NAME/... DEPTH levels deep, made (or found) one level at a time through fds
 * (no path, so deeper than PATH_MAX); returns an fd of the deepest, or -1. */
static int
nest(const char *dir, const char *name, long depth)
{
        int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        for (long i = 0; fd >= 0 && i < depth; i++) {
                if (mkdirat(fd, name, 0755) < 0 && errno != EEXIST) {
                        int e = errno;
                        close(fd);
                        errno = e;
                        return -1;
                }
                int sub = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                int e = errno;
                close(fd);
                errno = e;
                fd = sub;
        }
        return fd;
}

/* cgnest DIR NAME DEPTH: a chain of sub-cgroups (any directories) below DIR. */
static int
cmd_cgnest(int argc, char **argv)
{
        (void) argc;
        int fd = nest(argv[1], argv[2], atol(argv[3]));
        if (fd >= 0)
                close(fd);
        return result("cgnest", fd);
}

/* cgpark DIR NAME DEPTH: the same chain, then this process moves to its deepest cgroup
 * (for the rest of the chain of subcommands). */
static int
cmd_cgpark(int argc, char **argv)
{
        char pid[32];
        int fd = nest(argv[1], argv[2], atol(argv[3])), r = -1;

        (void) argc;
        if (fd >= 0) {
                int procs = openat(fd, "cgroup.procs", O_WRONLY | O_CLOEXEC);
                int n = snprintf(pid, sizeof pid, "%d", (int) getpid());
                r = procs >= 0 && write(procs, pid, (size_t) n) == n ? 0 : -1;
                int e = errno;
                if (procs >= 0)
                        close(procs);
                close(fd);
                errno = e;
        }
        return result("cgpark", r);
}

/* pidns-fork: unshare a new pid namespace and fork; the child (its pid 1) runs the rest
 * of the chain, this process waits for it and exits with its status. */
static int
cmd_pidns_fork(int argc, char **argv)
{
        int st = 0;

        (void) argc, (void) argv;
        if (unshare(CLONE_NEWPID) < 0)
                return result("pidns-fork", -1);
        fflush(stdout);
        pid_t pid = fork();
        if (pid < 0)
                return result("pidns-fork", -1);
        if (pid == 0)
                return 0;
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
                ;
        _exit(WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
}

/* tcp-listen PORT: listen on 127.0.0.1:PORT and keep the socket open for the rest of
 * the chain, so that a later `connect 127.0.0.1 PORT` completes (the backlog accepts). */
static int
cmd_tcp_listen(int argc, char **argv)
{
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t) atoi(argv[1])),
                                  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        int one = 1;

        (void) argc;
        if (fd < 0)
                return result("tcp-listen", -1);
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        int r = bind(fd, (struct sockaddr *) &sa, sizeof sa);
        if (r == 0)
                r = listen(fd, 8);
        if (r < 0) {
                int e = errno;
                close(fd);
                errno = e;
        }
        return result("tcp-listen", r);         /* fd kept open on success */
}

/* abstract-listen NAME: listen on the abstract unix socket @NAME, kept open likewise. */
static int
cmd_abstract_listen(int argc, char **argv)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        size_t len = strlen(argv[1]);
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

        (void) argc;
        if (len > sizeof sa.sun_path - 1)
                len = sizeof sa.sun_path - 1;
        memcpy(sa.sun_path + 1, argv[1], len);
        if (fd < 0)
                return result("abstract-listen", -1);
        int r = bind(fd, (struct sockaddr *) &sa, (socklen_t) (offsetof(struct sockaddr_un, sun_path) + 1 + len));
        if (r == 0)
                r = listen(fd, 8);
        if (r < 0) {
                int e = errno;
                close(fd);
                errno = e;
        }
        return result("abstract-listen", r);
}

/* unshare-files: unshare(CLONE_FILES), which a profile filtering unshare on its
 * namespace flags must still allow. */
static int
cmd_unshare_files(int argc, char **argv)
{
        (void) argc, (void) argv;
        return result("unshare-files", unshare(CLONE_FILES));
}

static int
cmd_rename(int argc, char **argv)
{
        (void) argc;
        return result("rename", rename(argv[1], argv[2]));
}

/* truncate PATH: truncate(2) to 0 bytes (the Landlock `truncate` right). */
static int
cmd_truncate(int argc, char **argv)
{
        (void) argc;
        return result("truncate", truncate(argv[1], 0));
}

/* ioctl-tcgets PATH: open PATH read-only and ask it TCGETS, a device ioctl (the Landlock
 * `ioctl_dev` right): ENOTTY on a device that is not a terminal, EACCES when denied. */
static int
cmd_ioctl_tcgets(int argc, char **argv)
{
        char buf[64];
        int fd = open(argv[1], O_RDONLY | O_CLOEXEC);

        (void) argc;
        if (fd < 0)
                return result("ioctl", -1);
        /* TCGETS is 0x5401 on x86, arm and riscv; through syscall() to need no header */
        int r = (int) syscall(SYS_ioctl, fd, 0x5401, buf);
        int e = errno;
        close(fd);
        errno = e;
        return result("ioctl", r);
}

/* tiocsti TEXT: push TEXT into the input of each terminal the process can reach (fds
 * 0-2, then its controlling terminal through /dev/tty) with TIOCSTI, as if typed; one
 * line per target: ok, or the errno (ENOTTY: not a terminal, EPERM: not ours, ENXIO:
 * no controlling terminal). Its exit status is 0 either way: the caller checks where
 * the text arrived. */
static int
tiocsti_fd(const char *key, int fd, const char *text)
{
        int r = 0;

        for (const char *p = text; *p && r == 0; p++)
                r = ioctl(fd, TIOCSTI, p);
        (void) result(key, r);
        return 0;
}

static int
cmd_tiocsti(int argc, char **argv)
{
        (void) argc;
        tiocsti_fd("tiocsti.0", 0, argv[1]);
        tiocsti_fd("tiocsti.1", 1, argv[1]);
        tiocsti_fd("tiocsti.2", 2, argv[1]);
        int fd = open("/dev/tty", O_RDWR | O_CLOEXEC);
        if (fd < 0)
                return result("tiocsti.devtty", -1), 0;
        tiocsti_fd("tiocsti.devtty", fd, argv[1]);
        close(fd);
        return 0;
}

static const cmd cmds[] = {
        { "ids", 0, cmd_ids, "" },
        { "caps", 0, cmd_caps, "" },
        { "cwd", 0, cmd_cwd, "" },
        { "hostname", 0, cmd_uname, "" },
        { "domainname", 0, cmd_uname, "" },
        { "mounts", 0, cmd_mounts, "" },
        { "ns", 0, cmd_ns, "" },
        { "fds", 0, cmd_fds, "" },
        { "rlimits", 0, cmd_rlimits, "" },
        { "umask", 0, cmd_umask, "" },
        { "nnp", 0, cmd_nnp, "" },
        { "seccomp", 0, cmd_seccomp, "" },
        { "tty", 0, cmd_tty, "" },
        { "env", 0, cmd_env, "" },
        { "pid", 0, cmd_pid, "" },
        { "write", 1, cmd_write, "PATH" },
        { "read", 1, cmd_read, "PATH" },
        { "stat", 1, cmd_stat, "PATH" },
        { "exec", -1, cmd_exec, "PATH [ARG...]" },
        { "mknod", 4, cmd_mknod, "PATH c|b MAJOR MINOR" },
        { "syscall", 1, cmd_syscall, "mount|umount|ptrace|unshare|unshare-mnt|keyctl|add_key|bpf|"
                                     "userfaultfd|perf_event_open|io_uring_setup|finit_module|"
                                     "kexec_load|settimeofday|raw_socket|chroot|open_by_handle_at|"
                                     "sethostname|setuid0|personality" },
        { "connect", 2, cmd_connect, "ADDR PORT" },
        { "bind", 1, cmd_bind, "PORT" },
        { "abstract-connect", 1, cmd_abstract_connect, "NAME" },
        { "kill", 2, cmd_kill, "PID SIG" },
        { "sleep-forever", 0, cmd_sleep_forever, "" },
        { "exit", 1, cmd_exit, "CODE" },
        { "oom", 0, cmd_oom, "" },
        { "forkbomb", -1, cmd_forkbomb, "[MAX]" },
        { "spin", 1, cmd_spin, "SECS" },
        { "overwrite-exe", 2, cmd_overwrite_exe, "PID FIFO" },
        { "open-write", 1, cmd_open_write, "PATH" },
        { "ptrace", 1, cmd_ptrace, "PID|child" },
        { "settime", 0, cmd_settime, "" },
        { "init-module", 0, cmd_init_module, "" },
        { "add-key", 1, cmd_add_key, "DESC" },
        { "keyring", 0, cmd_keyring, "" },
        { "nr", 1, cmd_nr, "NUMBER" },
        { "mkdir", 1, cmd_mkdir, "PATH" },
        { "cgnest", 3, cmd_cgnest, "DIR NAME DEPTH" },
        { "pidns-fork", 0, cmd_pidns_fork, "" },
        { "cgpark", 3, cmd_cgpark, "DIR NAME DEPTH" },
        { "tcp-listen", 1, cmd_tcp_listen, "PORT" },
        { "abstract-listen", 1, cmd_abstract_listen, "NAME" },
        { "unshare-files", 0, cmd_unshare_files, "" },
        { "rename", 2, cmd_rename, "OLD NEW" },
        { "truncate", 1, cmd_truncate, "PATH" },
        { "ioctl-tcgets", 1, cmd_ioctl_tcgets, "PATH" },
        { "tiocsti", 1, cmd_tiocsti, "TEXT" },
};

static int
usage(void)
{
        fprintf(stderr, "usage: msp-helper CMD [ARGS] [-- CMD [ARGS]]...\n");
        for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
                fprintf(stderr, "  %s %s\n", cmds[i].name, cmds[i].usage);
        return 2;
}

static int
dispatch(int argc, char **argv)
{
        for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
                if (strcmp(argv[0], cmds[i].name) != 0)
                        continue;
                if ((cmds[i].nargs >= 0 && argc - 1 != cmds[i].nargs) || (cmds[i].nargs < 0 && argc < 1)) {
                        fprintf(stderr, "%s: usage: %s %s\n", argv[0], cmds[i].name, cmds[i].usage);
                        return 2;
                }
                return cmds[i].fn(argc, argv);
        }
        fprintf(stderr, "msp-helper: unknown command '%s'\n", argv[0]);
        return usage();
}

int
main(int argc, char **argv)
{
        int worst = 0;

        setvbuf(stdout, NULL, _IOLBF, 0);
        if (argc < 2)
                return usage();
        for (int i = 1; i < argc;) {
                int j = i;
                while (j < argc && strcmp(argv[j], "--") != 0)
                        j++;
                if (j > i) {
                        argv[j < argc ? j : argc] = NULL;
                        int r = dispatch(j - i, argv + i);
                        worst = r > worst ? r : worst;
                }
                i = j + 1;
        }
        fflush(stdout);
        return worst;
}
