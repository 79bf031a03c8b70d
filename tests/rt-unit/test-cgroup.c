/* Cgroups against the real kernel: resources written and read back, the limits really
 * enforced (OOM kill, pids), devices (v1 list, v2 eBPF), destroy with processes inside,
 * error messages; the v2 backend also against a directory of plain files, since this
 * host's v2 hierarchy only has hugetlb. Test cgroups are /msp-unit-<pid>-<case>; the
 * last test checks that none is left in any hierarchy. One fork per test. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/bpf.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/cgroup/cgroup-internal.h"
#include "lib/cgroup/cgroup.h"
#include "tests/lib/cg-test.h"
#include "tests/lib/tap.h"

static pid_t runner;
static rt_cgroup_mode mode;

/* ---- helpers ---- */

static void
cg_name(char *buf, size_t sz, const char *tag)
{
        snprintf(buf, sz, "/msp-unit-%d-%s", (int) runner, tag);
}

static void
make_cg(char *path, size_t sz, const char *tag)
{
        msp_err e;
        bool created = false;

        cg_name(path, sz, tag);
        CHECK_OK(rt_cgroup_create(path, &created, &e), e);
        CHECK(created);
}

static void
need_v1(void)
{
        if (mode == RT_CGROUP_UNIFIED)
                SKIP("v1 files: this host is cgroup v2 (the v2 guest runs the v2 tests)");
}

/* The v2 hierarchy of this host, or NULL on a legacy host. */
static const char *
v2_hier(void)
{
        return mode == RT_CGROUP_UNIFIED ? CG_ROOT : mode == RT_CGROUP_HYBRID ? CG_HYBRID_UNIFIED : NULL;
}

/* Contents of <hier>/<path>/<file> without the trailing newline; "" when missing. */
static const char *
rd(const char *hier, const char *path, const char *file)
{
        static char buf[8192];
        char p[3 * PATH_MAX];

        snprintf(p, sizeof p, "%s%s/%s", hier, path, file);
        int fd = open(p, O_RDONLY | O_CLOEXEC);
        ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
        if (fd >= 0)
                close(fd);
        buf[n > 0 ? n : 0] = '\0';
        if (n > 0 && buf[n - 1] == '\n')
                buf[n - 1] = '\0';
        return buf;
}

static const char *
rd1(const char *ctrl, const char *path, const char *file)
{
        char hier[128];

        snprintf(hier, sizeof hier, CG_ROOT "/%s", ctrl);
        return rd(hier, path, file);
}

static void
destroy_cg(const char *path)
{
        msp_err e;

        CHECK_OK(rt_cgroup_destroy(path, &e), e);
}

/* A child that waits for a byte on the pipe, then runs fn; the parent puts it into the
 * cgroup first. Returns its wait status. */
static pid_t
spawn_in(const char *path, int (*fn)(void), int *ret_wfd)
{
        int p[2];
        msp_err e;

        CHECK(pipe2(p, O_CLOEXEC) == 0);
        fflush(stdout);
        pid_t pid = fork();
        CHECK(pid >= 0);
        if (pid == 0) {
                char c;
                close(p[1]);
                if (read(p[0], &c, 1) != 1)
                        _exit(99);
                _exit(fn());
        }
        close(p[0]);
        CHECK_OK(rt_cgroup_enter(path, pid, &e), e);
        if (ret_wfd)
                *ret_wfd = p[1];
        else {
                CHECK(write(p[1], "x", 1) == 1);
                close(p[1]);
        }
        return pid;
}

static int
wait_status(pid_t pid)
{
        int st = 0;

        CHECK(waitpid(pid, &st, 0) == pid);
        return st;
}

static bool
gone_everywhere(const char *path)
{
        DIR *d = opendir(CG_ROOT);
        struct dirent *de;
        bool gone = true;

        if (mode == RT_CGROUP_UNIFIED) {
                char p[PATH_MAX];
                snprintf(p, sizeof p, CG_ROOT "%s", path);
                closedir(d);
                return access(p, F_OK) < 0;
        }
        while (d && (de = readdir(d))) {
                char p[PATH_MAX];
                if (de->d_name[0] == '.')
                        continue;
                snprintf(p, sizeof p, CG_ROOT "/%s%s", de->d_name, path);
                if (access(p, F_OK) == 0) {
                        printf("# left behind: %s\n", p);
                        gone = false;
                }
        }
        if (d)
                closedir(d);
        return gone;
}

/* ---- pure parts ---- */

static void
test_conversions(void)
{
        CHECK(cg_shares_to_weight(2) == 1);
        CHECK(cg_shares_to_weight(1024) == 39);
        CHECK(cg_shares_to_weight(262144) == 10000);
        CHECK(cg_shares_to_weight(1) == 1);
        CHECK(cg_shares_to_weight(1000000) == 10000);
        CHECK(cg_blkio_to_io_weight(10) == 1);
        CHECK(cg_blkio_to_io_weight(500) == 4950);
        CHECK(cg_blkio_to_io_weight(1000) == 10000);
}

static void
test_unified_keys(void)
{
        static const char *const ok[] = { "memory.high", "hugetlb.2MB.max", "io.max", "cgroup.max.depth",
                                          "cgroup.max.descendants", "misc.max" };
        static const char *const bad[] = { "cgroup.procs", "cgroup.subtree_control", "cgroup.threads",
                                           "cgroup.type", "cgroup.kill", "cgroup.freeze", "../memory.max",
                                           "memory/../x", "a/b", "", "memory", ".memory.max",
                                           "memory..max", "memory.max\n" };
        msp_err e;

        for (size_t i = 0; i < ARRAY_SIZE(ok); i++)
                CHECK_OK(cg_unified_key_check(ok[i], &e), e);
        for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
                msp_err_clear(&e);
                CHECK(cg_unified_key_check(bad[i], &e) < 0);
                CHECK(strstr(e.msg, "linux.resources.unified[") == e.msg);
        }
        CHECK_ERR(cg_unified_key_check("cgroup.procs", &e), e, EPERM, "would move processes");
}

static void
test_path_and_size_checks(void)
{
        CHECK(!cg_path_is_safe("/"));
        CHECK(!cg_path_is_safe(""));
        CHECK(!cg_path_is_safe("//"));
        CHECK(!cg_path_is_safe("relative"));
        CHECK(!cg_path_is_safe("/a/../b"));
        CHECK(!cg_path_is_safe("/a/.."));
        CHECK(!cg_path_is_safe("/./"));
        CHECK(cg_path_is_safe("/a"));
        CHECK(cg_path_is_safe("/a/b/"));
        CHECK(cg_path_is_safe("/a..b"));
        CHECK(cg_hugepage_size_valid("2MB") && cg_hugepage_size_valid("1GB"));
        CHECK(cg_hugepage_size_valid("64KB"));
        CHECK(!cg_hugepage_size_valid("2M") && !cg_hugepage_size_valid("MB"));
        CHECK(!cg_hugepage_size_valid("2MB/x") && !cg_hugepage_size_valid("../2MB"));
        CHECK(!cg_hugepage_size_valid("2mb") && !cg_hugepage_size_valid(""));
}

#define RULE(al, t, maj, min, acc) { .allow = (al), .type = (t), .has_major = (maj) >= 0, \
        .major = (maj), .has_minor = (min) >= 0, .minor = (min), .access = acc }

static bool
same_rule(const oci_device_cgroup *a, const oci_device_cgroup *b)
{
        return a->allow == b->allow && a->type == b->type && a->has_major == b->has_major &&
               (!a->has_major || a->major == b->major) && a->has_minor == b->has_minor &&
               (!a->has_minor || a->minor == b->minor) && strcmp(a->access, b->access) == 0;
}

/* runc's list, exactly: the config's rules in order, then the implicit ones; a
 * linux.devices node adds no rule and replaces the implicit rule of its path. */
static void
test_device_rules(void)
{
        oci_device_cgroup config[] = { RULE(false, 'a', -1, -1, "rwm"), RULE(false, 'c', 1, 11, "rwm") };
        oci_resources res = { .devices = config, .n_devices = 2 };
        oci_device nodes[] = { { .path = (char *) "/dev/kmsg", .type = 'c', .major = 1, .minor = 11 },
                               { .path = (char *) "/dev/null", .type = 'c', .major = 1, .minor = 3 } };
        oci_linux lx = { .resources = &res, .devices = nodes, .n_devices = 2 };
        const oci_device_cgroup want[] = {
                config[0], config[1],
                RULE(true, 'c', -1, -1, "m"), RULE(true, 'b', -1, -1, "m"),
                /* no /dev/null: linux.devices lists it */
                RULE(true, 'c', 1, 8, "rwm"), RULE(true, 'c', 1, 7, "rwm"),
                RULE(true, 'c', 5, 0, "rwm"), RULE(true, 'c', 1, 5, "rwm"),
                RULE(true, 'c', 1, 9, "rwm"), RULE(true, 'c', 136, -1, "rwm"),
                RULE(true, 'c', 5, 2, "rwm"), RULE(true, 'c', 10, 200, "rwm"),
        };
        oci_device_cgroup *got = NULL;
        size_t n = 0;
        msp_err e;

        CHECK_OK(rt_cgroup_device_rules(&lx, &got, &n, &e), e);
        CHECK(n == ARRAY_SIZE(want));
        for (size_t i = 0; i < n && i < ARRAY_SIZE(want); i++)
                CHECK(same_rule(&got[i], &want[i]));
        free(got);
        /* no linux section: the implicit rules alone, /dev/null among them */
        CHECK_OK(rt_cgroup_device_rules(NULL, &got, &n, &e), e);
        CHECK(n == 11 && same_rule(&got[2], &(oci_device_cgroup) RULE(true, 'c', 1, 3, "rwm")));
        free(got);
}

static void
test_bpf_verifier_accepts(void)
{
        const oci_device_cgroup deny_all_null[] = { RULE(false, 'a', -1, -1, "rwm"),
                                                    RULE(true, 'c', 1, 3, "rwm") };
        const oci_device_cgroup mixed[] = { RULE(true, 'a', -1, -1, ""), RULE(false, 'c', 1, 7, "w"),
                                            RULE(true, 'b', 8, -1, "r"), RULE(false, 'a', 4, -1, "m"),
                                            RULE(true, 'c', 4294967295, 1048575, "rw") };
        size_t nd = 0;
        oci_device_cgroup *defs = NULL;
        msp_err e;

        CHECK_OK(rt_cgroup_device_rules(NULL, &defs, &nd, &e), e);
        struct { const oci_device_cgroup *r; size_t n; size_t insns; } sets[] = {
                { NULL, 0, 8 }, { deny_all_null, 2, 13 }, { mixed, 5, 0 }, { defs, nd, 0 },
        };

        for (size_t i = 0; i < ARRAY_SIZE(sets); i++) {
                struct bpf_insn *p = NULL;
                size_t n = 0;
                CHECK_OK(cg_devices_build_prog(sets[i].r, sets[i].n, &p, &n, &e), e);
                /* the catch-all deny becomes the default: prologue 6 + one rule 5 + 2 */
                CHECK(sets[i].insns == 0 || n == sets[i].insns);
                msp_err_clear(&e);
                int fd = cg_devices_load_prog(p, n, &e);
                if (fd < 0)
                        printf("# set %zu: %s\n", i, e.msg);
                CHECK(fd >= 0);
                CHECK(fcntl(fd, F_GETFD) & FD_CLOEXEC);
                close(fd);
                free(p);
        }
        oci_device_cgroup bad = RULE(true, 'x', 1, 3, "rwm");
        struct bpf_insn *p = NULL;
        size_t n = 0;
        CHECK_ERR(cg_devices_build_prog(&bad, 1, &p, &n, &e), e, EINVAL, "devices[0].type");
        free(defs);
}

/* ---- devices on the host's v2 hierarchy (eBPF) ---- */

static int
child_null_ok_full_denied(void)
{
        int a = open("/dev/null", O_RDWR | O_CLOEXEC);
        int b = open("/dev/full", O_RDONLY | O_CLOEXEC);
        return a >= 0 && b < 0 && errno == EPERM ? 0 : 1;
}

static int
child_null_ro_only_full_ok(void)
{
        int a = open("/dev/null", O_RDONLY | O_CLOEXEC);
        int b = open("/dev/null", O_WRONLY | O_CLOEXEC);
        int be = errno;
        int c = open("/dev/full", O_RDWR | O_CLOEXEC);
        return a >= 0 && b < 0 && be == EPERM && c >= 0 ? 0 : 1;
}

static uint32_t
attached_count(int dfd)
{
        union bpf_attr attr;
        uint32_t ids[16];

        memset(&attr, 0, sizeof attr);
        attr.query.target_fd = (uint32_t) dfd;
        attr.query.attach_type = BPF_CGROUP_DEVICE;
        attr.query.prog_ids = (uint64_t) (uintptr_t) ids;
        attr.query.prog_cnt = 16;
        CHECK(syscall(SYS_bpf, BPF_PROG_QUERY, &attr, sizeof attr) == 0);
        return attr.query.prog_cnt;
}

static void
test_bpf_device_filter(void)
{
        const oci_device_cgroup first[] = { RULE(false, 'a', -1, -1, "rwm"), RULE(true, 'c', 1, 3, "rwm") };
        const oci_device_cgroup second[] = { RULE(true, 'a', -1, -1, "rwm"), RULE(false, 'c', 1, 3, "w") };
        char path[128];
        msp_err e;

        if (!v2_hier())
                SKIP("no cgroup v2 hierarchy on this host");
        make_cg(path, sizeof path, "bpf");
        int dfd = cg_open_dir(v2_hier(), path, &e);
        CHECK(dfd >= 0);
        CHECK_OK(cg_devices_apply_v2(dfd, first, 2, &e), e);
        CHECK(attached_count(dfd) == 1);
        CHECK(wait_status(spawn_in(path, child_null_ok_full_denied, NULL)) == 0);
        /* update: the new program replaces the old one, never two at once for long */
        CHECK_OK(cg_devices_apply_v2(dfd, second, 2, &e), e);
        CHECK(attached_count(dfd) == 1);
        CHECK(wait_status(spawn_in(path, child_null_ro_only_full_ok, NULL)) == 0);
        close(dfd);
        destroy_cg(path);
}

/* ---- v1 resources read back ---- */

static void
test_v1_memory(void)
{
        oci_resources res = { .has_memory = true };
        char path[128];
        msp_err e;

        need_v1();
        make_cg(path, sizeof path, "mem");
        bool memsw = strcmp(rd1("memory", path, "memory.memsw.limit_in_bytes"), "") != 0;
        res.memory = (oci_memory) { .has_limit = true, .limit = 64 << 20, .has_swap = memsw,
                                    .swap = 128 << 20, .has_reservation = true, .reservation = 32 << 20,
                                    .has_swappiness = true, .swappiness = 10,
                                    .has_disable_oom_killer = true, .disable_oom_killer = true };
        CHECK_OK(rt_cgroup_apply_resources(path, &res, &e), e);
        CHECK_STR(rd1("memory", path, "memory.limit_in_bytes"), "67108864");
        if (memsw)
                CHECK_STR(rd1("memory", path, "memory.memsw.limit_in_bytes"), "134217728");
        CHECK_STR(rd1("memory", path, "memory.soft_limit_in_bytes"), "33554432");
        CHECK_STR(rd1("memory", path, "memory.swappiness"), "10");
        CHECK(strstr(rd1("memory", path, "memory.oom_control"), "oom_kill_disable 1"));
        if (memsw) {
                /* raising past the old memsw needs memsw first; lowering needs the limit first */
                res.memory = (oci_memory) { .has_limit = true, .limit = 256 << 20, .has_swap = true,
                                            .swap = 512 << 20 };
                CHECK_OK(rt_cgroup_apply_resources(path, &res, &e), e);
                CHECK_STR(rd1("memory", path, "memory.limit_in_bytes"), "268435456");
                CHECK_STR(rd1("memory", path, "memory.memsw.limit_in_bytes"), "536870912");
                res.memory.limit = res.memory.swap = 16 << 20;
                CHECK_OK(rt_cgroup_apply_resources(path, &res, &e), e);
                CHECK_STR(rd1("memory", path, "memory.limit_in_bytes"), "16777216");
                CHECK_STR(rd1("memory", path, "memory.memsw.limit_in_bytes"), "16777216");
                res.memory.limit = res.memory.swap = -1;
                CHECK_OK(rt_cgroup_apply_resources(path, &res, &e), e);
                char unlimited[64];
                snprintf(unlimited, sizeof unlimited, "%s", rd1("memory", "", "memory.limit_in_bytes"));
                CHECK_STR(rd1("memory", path, "memory.limit_in_bytes"), unlimited);
        }
        destroy_cg(path);
}

static void
test_v1_pids_cpu_cpuset(void)
{
        oci_resources res = { .has_pids = true, .pids_limit = 5, .has_cpu = true };
        char path[128];
        msp_err e;

        need_v1();
        make_cg(path, sizeof path, "cpu");
        res.cpu = (oci_cpu) { .has_shares = true, .shares = 512, .has_quota = true, .quota = 50000,
                              .has_period = true, .period = 100000, .cpus = "0", .mems = "0" };
        CHECK_OK(rt_cgroup_apply_resources(path, &res, &e), e);
        CHECK_STR(rd1("pids", path, "pids.max"), "5");
        CHECK_STR(rd1("cpu", path, "cpu.shares"), "512");
        CHECK_STR(rd1("cpu", path, "cpu.cfs_quota_us"), "50000");
        CHECK_STR(rd1("cpu", path, "cpu.cfs_period_us"), "100000");
        CHECK_STR(rd1("cpuset", path, "cpuset.cpus"), "0");
        CHECK_STR(rd1("cpuset", path, "cpuset.mems"), "0");
        /* a smaller period with the old quota still set; burst where the kernel has it */
        bool burst = strcmp(rd1("cpu", path, "cpu.cfs_burst_us"), "") != 0;
        res = (oci_resources) { .has_pids = true, .pids_limit = 0, .has_cpu = true };
        res.cpu = (oci_cpu) { .has_quota = true, .quota = 20000, .has_period = true, .period = 40000,
                              .has_burst = burst, .burst = 1000 };
        CHECK_OK(rt_cgroup_apply_resources(path, &res, &e), e);
        CHECK_STR(rd1("pids", path, "pids.max"), "max");
        CHECK_STR(rd1("cpu", path, "cpu.cfs_quota_us"), "20000");
        CHECK_STR(rd1("cpu", path, "cpu.cfs_period_us"), "40000");
        if (burst)
                CHECK_STR(rd1("cpu", path, "cpu.cfs_burst_us"), "1000");
        res.cpu = (oci_cpu) { .has_quota = true, .quota = -1 };
        CHECK_OK(rt_cgroup_apply_resources(path, &res, &e), e);
        CHECK_STR(rd1("cpu", path, "cpu.cfs_quota_us"), "-1");
        destroy_cg(path);
}

static void
test_v1_blkio(void)
{
        oci_resources res = { .has_blockio = true };
        oci_throttle_device t = { .major = 7, .minor = 0, .rate = 1048576 };
        char path[128];
        msp_err e;

        need_v1();
        make_cg(path, sizeof path, "blkio");
        const char *wf = strcmp(rd1("blkio", path, "blkio.weight"), "") ? "blkio.weight" :
                         strcmp(rd1("blkio", path, "blkio.bfq.weight"), "") ? "blkio.bfq.weight" : NULL;
        res.blockio = (oci_blockio) { .has_weight = wf != NULL, .weight = 500 };
        if (access("/sys/dev/block/7:0", F_OK) == 0)
                res.blockio.throttle_read_bps = (oci_throttle_list) { .v = &t, .n = 1 };
        CHECK_OK(rt_cgroup_apply_resources(path, &res, &e), e);
        if (wf) {
                const char *w = rd1("blkio", path, wf);
                printf("# %s: %s\n", wf, w);
                CHECK(strstr(w, "500"));
        }
        if (res.blockio.throttle_read_bps.n)
                CHECK_STR(rd1("blkio", path, "blkio.throttle.read_bps_device"), "7:0 1048576");
        destroy_cg(path);
        if (!wf)
                SKIP("neither blkio.weight nor blkio.bfq.weight on this kernel");
}

static void
test_v1_devices(void)
{
        const oci_device_cgroup rules[] = { RULE(false, 'a', -1, -1, "rwm"), RULE(true, 'c', 1, 3, "rwm"),
                                            RULE(true, 'c', 1, 5, "r"), RULE(true, 'a', 1, 9, "rw") };
        oci_resources res = { .devices = (oci_device_cgroup *) rules, .n_devices = 4 };
        char path[128];
        msp_err e;

        need_v1();
        make_cg(path, sizeof path, "dev");
        CHECK_OK(rt_cgroup_apply_resources(path, &res, &e), e);
        /* an "a" rule with a major is split into c and b, never read as "everything" */
        CHECK_STR(rd1("devices", path, "devices.list"), "c 1:3 rwm\nc 1:5 r\nc 1:9 rw\nb 1:9 rw");
        CHECK(wait_status(spawn_in(path, child_null_ok_full_denied, NULL)) == 0);
        destroy_cg(path);
}

/* ---- enforcement ---- */

static int
child_hog(void)
{
        size_t sz = 100u << 20;
        char *p = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
                return 2;
        for (size_t i = 0; i < sz; i += 4096)
                p[i] = 1;
        return 0;       /* not killed: the limit did not hold */
}

static void
test_oom_kill(void)
{
        oci_resources res = { .has_memory = true };
        char path[128];
        msp_err e;

        make_cg(path, sizeof path, "oom");
        res.memory = (oci_memory) { .has_limit = true, .limit = 32 << 20 };
        /* memory+swap = memory: no swapping out of the limit */
        if (mode == RT_CGROUP_UNIFIED || strcmp(rd1("memory", path, "memory.memsw.limit_in_bytes"), ""))
                res.memory.has_swap = true, res.memory.swap = 32 << 20;
        CHECK_OK(rt_cgroup_apply_resources(path, &res, &e), e);
        int st = wait_status(spawn_in(path, child_hog, NULL));
        printf("# wait status 0x%x\n", st);
        CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
        const char *oom = mode == RT_CGROUP_UNIFIED ? rd(CG_ROOT, path, "memory.events")
                                                   : rd1("memory", path, "memory.oom_control");
        const char *k = strstr(oom, "oom_kill ");
        CHECK(k && atoi(k + 9) >= 1);
        destroy_cg(path);
}

static int
child_forker(void)
{
        pid_t kids[20];
        int n = 0, err = 0;

        for (; n < 20; n++) {
                kids[n] = fork();
                if (kids[n] == 0) {
                        pause();
                        _exit(0);
                }
                if (kids[n] < 0) {
                        err = errno;
                        break;
                }
        }
        for (int i = 0; i < n; i++) {
                kill(kids[i], SIGKILL);
                waitpid(kids[i], NULL, 0);
        }
        return err == EAGAIN && n >= 1 && n <= 4 ? 0 : 10 + n;
}

static void
test_pids_limit(void)
{
        oci_resources res = { .has_pids = true, .pids_limit = 5 };
        char path[128];
        msp_err e;

        make_cg(path, sizeof path, "pids");
        CHECK_OK(rt_cgroup_apply_resources(path, &res, &e), e);
        int st = wait_status(spawn_in(path, child_forker, NULL));
        printf("# wait status 0x%x\n", st);
        CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
        destroy_cg(path);
}

/* ---- signal and destroy ---- */

static int
child_sleep(void)
{
        while (pause() < 0 || true)
                ;
        return 0;
}

static void
test_signal_all_kill(void)
{
        char path[128];
        msp_err e;

        make_cg(path, sizeof path, "kill");
        pid_t pid = spawn_in(path, child_sleep, NULL);
        CHECK_OK(rt_cgroup_signal_all(path, SIGKILL, &e), e);
        int st = wait_status(pid);
        CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
        destroy_cg(path);
        CHECK(gone_everywhere(path));
}

static void
test_destroy_with_processes(void)
{
        char path[128], sub[PATH_MAX];
        msp_err e;

        make_cg(path, sizeof path, "destroy");
        pid_t a = spawn_in(path, child_sleep, NULL);
        /* a sub-cgroup the container made, with a process of its own */
        pid_t b = spawn_in(path, child_sleep, NULL);
        const char *h = mode == RT_CGROUP_UNIFIED ? CG_ROOT : CG_ROOT "/memory";
        snprintf(sub, sizeof sub, "%s%s/sub", h, path);
        CHECK(mkdir(sub, 0755) == 0);
        strcat(sub, "/cgroup.procs");
        int fd = open(sub, O_WRONLY | O_CLOEXEC);
        CHECK(fd >= 0 && dprintf(fd, "%d", (int) b) > 0);
        close(fd);
        CHECK_OK(rt_cgroup_destroy(path, &e), e);
        int sa = wait_status(a), sb = wait_status(b);
        CHECK(WIFSIGNALED(sa) && WTERMSIG(sa) == SIGKILL);
        CHECK(WIFSIGNALED(sb) && WTERMSIG(sb) == SIGKILL);
        CHECK(gone_everywhere(path));
}

/* ---- error messages ---- */

static void
test_errors(void)
{
        oci_resources res = { .has_memory = true };
        oci_hugepage_limit hp = { .page_size = "3MB", .limit = 1 };
        oci_kv kv = { .key = "memory.high", .value = "1000000" };
        char path[128];
        msp_err e;

        need_v1();
        make_cg(path, sizeof path, "err");
        res.memory = (oci_memory) { .has_swappiness = true, .swappiness = 150 };
        CHECK_ERR(rt_cgroup_apply_resources(path, &res, &e), e, EINVAL,
                  "linux.resources.memory.swappiness: 150 is out of range 0-100");
        /* accepted and not applied, as runc does; the caller warns */
        res.memory = (oci_memory) { .has_kernel = true, .kernel = 1 << 20 };
        CHECK(rt_cgroup_apply_resources(path, &res, &e) == 0);
        CHECK(strstr(rt_cgroup_ignored_fields(&res), "memory.kernel: deprecated"));
        res.memory = (oci_memory) { .has_kernel = true, .kernel = 0, .has_kernel_tcp = true };
        CHECK(rt_cgroup_ignored_fields(&res) == NULL);
        res.memory = (oci_memory) { .has_limit = true, .limit = 2 << 20, .has_swap = true, .swap = 1 << 20 };
        CHECK_ERR(rt_cgroup_apply_resources(path, &res, &e), e, EINVAL, "linux.resources.memory.swap:");
        res = (oci_resources) { .has_cpu = true, .cpu = { .has_period = true, .period = 1 } };
        CHECK_ERR(rt_cgroup_apply_resources(path, &res, &e), e, EINVAL,
                  "cgroup: write 'cpu.cfs_period_us' = '1': Invalid argument");
        res = (oci_resources) { .has_cpu = true, .cpu = { .cpus = "4095" } };
        CHECK_ERR(rt_cgroup_apply_resources(path, &res, &e), e, ERANGE,
                  "cgroup: write 'cpuset.cpus' = '4095': Numerical result out of range");
        res = (oci_resources) { .hugepage_limits = &hp, .n_hugepage_limits = 1 };
        CHECK_ERR(rt_cgroup_apply_resources(path, &res, &e), e, EINVAL,
                  "linux.resources.hugepageLimits[0].pageSize: '3MB' is not a huge page size");
        hp.page_size = "2M";
        CHECK_ERR(rt_cgroup_apply_resources(path, &res, &e), e, EINVAL, "is not a size like '2MB'");
        res = (oci_resources) { .has_network = true, .has_net_class_id = true, .net_class_id = 1 };
        if (access(CG_ROOT "/net_cls", F_OK) < 0)
                CHECK_ERR(rt_cgroup_apply_resources(path, &res, &e), e, EOPNOTSUPP,
                          "linux.resources.network.classID: the 'net_cls' cgroup v1 controller is not mounted");
        res = (oci_resources) { .unified = { .v = &kv, .n = 1 } };
        CHECK_ERR(rt_cgroup_apply_resources(path, &res, &e), e, EOPNOTSUPP,
                  mode == RT_CGROUP_HYBRID ? "linux.resources.unified[\"memory.high\"]: the 'memory' "
                  "controller is not available on the cgroup v2 hierarchy" : "needs cgroup v2");
        kv.key = "cgroup.procs";
        CHECK_ERR(rt_cgroup_apply_resources(path, &res, &e), e, EPERM, "would move processes");
        destroy_cg(path);
}

/* ---- hybrid: hugetlb on the v2 hierarchy ---- */

static void
test_hybrid_hugetlb(void)
{
        oci_hugepage_limit hp = { .page_size = "2MB", .limit = 4 << 20 };
        oci_kv kv = { .key = "hugetlb.2MB.max", .value = "8388608" };
        oci_resources res = { .hugepage_limits = &hp, .n_hugepage_limits = 1 };
        char path[128];
        msp_err e;

        if (mode != RT_CGROUP_HYBRID || access(CG_ROOT "/hugetlb", F_OK) == 0)
                SKIP("needs a hybrid host whose hugetlb controller is on v2");
        if (access("/sys/kernel/mm/hugepages/hugepages-2048kB", F_OK) < 0)
                SKIP("no 2MB huge pages");
        make_cg(path, sizeof path, "hugetlb");
        /* create delegated hugetlb through the v2 ancestors */
        CHECK(strstr(rd(CG_HYBRID_UNIFIED, path, "cgroup.controllers"), "hugetlb"));
        CHECK_OK(rt_cgroup_apply_resources(path, &res, &e), e);
        CHECK_STR(rd(CG_HYBRID_UNIFIED, path, "hugetlb.2MB.max"), "4194304");
        res = (oci_resources) { .unified = { .v = &kv, .n = 1 } };
        CHECK_OK(rt_cgroup_apply_resources(path, &res, &e), e);
        CHECK_STR(rd(CG_HYBRID_UNIFIED, path, "hugetlb.2MB.max"), "8388608");
        destroy_cg(path);
}

/* ---- the v2 backend against plain files ---- */

static char fake[PATH_MAX];

static void
fake_file(const char *file, const char *content)
{
        char p[PATH_MAX + 64];

        snprintf(p, sizeof p, "%s/cg/%s", fake, file);
        int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        CHECK(fd >= 0 && write(fd, content, strlen(content)) == (ssize_t) strlen(content));
        close(fd);
}

static void
fake_reset(const char *controllers)
{
        static const char *const files[] = { "memory.max", "memory.swap.max", "memory.low", "memory.high",
                                             "pids.max", "cpu.weight", "cpu.max.burst", "cpu.idle",
                                             "cpuset.cpus", "cpuset.mems", "io.weight", "io.max",
                                             "hugetlb.2MB.max", "rdma.max" };
        char p[PATH_MAX + 8];

        snprintf(p, sizeof p, "%s/cg", fake);
        (void) mkdir(p, 0755);
        for (size_t i = 0; i < ARRAY_SIZE(files); i++)
                fake_file(files[i], "");
        fake_file("cpu.max", "max 100000\n");
        fake_file("memory.current", "1000\n");
        fake_file("cgroup.controllers", controllers);
}

#define ALL_CTRL "cpuset cpu io memory hugetlb pids rdma\n"

static void
test_v2_files(void)
{
        oci_resources res = { .has_memory = true, .has_pids = true, .pids_limit = 0, .has_cpu = true };
        oci_throttle_device rb = { 8, 0, 1000 }, wi = { 8, 0, 20 };
        oci_hugepage_limit hp = { .page_size = "2MB", .limit = 2 << 20 };
        oci_rdma_limit rdma = { .device = "mlx4_0", .has_hca_handles = true, .hca_handles = 2,
                                .has_hca_objects = true, .hca_objects = 2000 };
        oci_kv kv = { .key = "memory.high", .value = "1000000" };
        msp_err e;

        snprintf(fake, sizeof fake, "/tmp/msp-unit-%d-v2files", (int) runner);
        CHECK(mkdir(fake, 0755) == 0 || errno == EEXIST);
        fake_reset(ALL_CTRL);
        res.memory = (oci_memory) { .has_limit = true, .limit = 64 << 20, .has_swap = true,
                                    .swap = 128 << 20, .has_reservation = true, .reservation = 32 << 20 };
        res.cpu = (oci_cpu) { .has_shares = true, .shares = 1024, .has_quota = true, .quota = 50000,
                              .has_period = true, .period = 200000, .has_burst = true, .burst = 7,
                              .has_idle = true, .idle = 1, .cpus = "0-1", .mems = "0" };
        res.has_blockio = true;
        res.blockio = (oci_blockio) { .has_weight = true, .weight = 500,
                                      .throttle_read_bps = { &rb, 1 }, .throttle_write_iops = { &wi, 1 } };
        res.hugepage_limits = &hp, res.n_hugepage_limits = 1;
        res.rdma = &rdma, res.n_rdma = 1;
        res.unified = (oci_map) { &kv, 1 };
        CHECK_OK(cg_v2_apply(fake, "/cg", &res, &e), e);
        CHECK_STR(rd(fake, "/cg", "memory.max"), "67108864");
        CHECK_STR(rd(fake, "/cg", "memory.swap.max"), "67108864");
        CHECK_STR(rd(fake, "/cg", "memory.low"), "33554432");
        CHECK_STR(rd(fake, "/cg", "pids.max"), "max");
        CHECK_STR(rd(fake, "/cg", "cpu.weight"), "39");
        CHECK_STR(rd(fake, "/cg", "cpu.max"), "50000 200000");
        CHECK_STR(rd(fake, "/cg", "cpu.max.burst"), "7");
        CHECK_STR(rd(fake, "/cg", "cpu.idle"), "1");
        CHECK_STR(rd(fake, "/cg", "cpuset.cpus"), "0-1");
        CHECK_STR(rd(fake, "/cg", "io.weight"), "default 4950");
        CHECK_STR(rd(fake, "/cg", "io.max"), "8:0 rbps=1000 wiops=20");
        CHECK_STR(rd(fake, "/cg", "hugetlb.2MB.max"), "2097152");
        CHECK_STR(rd(fake, "/cg", "rdma.max"), "mlx4_0 hca_handle=2 hca_object=2000");
        CHECK_STR(rd(fake, "/cg", "memory.high"), "1000000");

        /* unlimited, a period alone keeps the quota, bfq takes the blkio scale */
        fake_reset(ALL_CTRL);
        fake_file("io.bfq.weight", "");
        res = (oci_resources) { .has_memory = true, .has_pids = true, .pids_limit = 42, .has_cpu = true,
                                .has_blockio = true, .blockio = { .has_weight = true, .weight = 500 } };
        res.memory = (oci_memory) { .has_limit = true, .limit = -1, .has_swap = true, .swap = -1 };
        res.cpu = (oci_cpu) { .has_period = true, .period = 250000 };
        CHECK_OK(cg_v2_apply(fake, "/cg", &res, &e), e);
        CHECK_STR(rd(fake, "/cg", "memory.max"), "max");
        CHECK_STR(rd(fake, "/cg", "memory.swap.max"), "max");
        CHECK_STR(rd(fake, "/cg", "pids.max"), "42");
        CHECK_STR(rd(fake, "/cg", "cpu.max"), "max 250000");
        CHECK_STR(rd(fake, "/cg", "io.bfq.weight"), "default 500");
        CHECK_STR(rd(fake, "/cg", "io.weight"), "");
        char cmd[PATH_MAX + 16];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", fake);
        CHECK(system(cmd) == 0);
}

static void
test_v2_refusals(void)
{
        oci_resources res = { .has_memory = true };
        oci_kv kv = { .key = "misc.max", .value = "x 1" };
        msp_err e;

        snprintf(fake, sizeof fake, "/tmp/msp-unit-%d-v2refuse", (int) runner);
        CHECK(mkdir(fake, 0755) == 0 || errno == EEXIST);
        fake_reset("cpu memory\n");
        res.memory = (oci_memory) { .has_swappiness = true, .swappiness = 10 };
        CHECK_ERR(cg_v2_apply(fake, "/cg", &res, &e), e, EOPNOTSUPP,
                  "linux.resources.memory.swappiness: not supported on cgroup v2");
        res.memory = (oci_memory) { .has_disable_oom_killer = true, .disable_oom_killer = true };
        CHECK_ERR(cg_v2_apply(fake, "/cg", &res, &e), e, EOPNOTSUPP,
                  "linux.resources.memory.disableOOMKiller: not supported on cgroup v2");
        res = (oci_resources) { .has_cpu = true, .cpu = { .has_realtime_runtime = true,
                                                          .realtime_runtime = 1000 } };
        CHECK_ERR(cg_v2_apply(fake, "/cg", &res, &e), e, EOPNOTSUPP,
                  "linux.resources.cpu.realtimeRuntime: not supported on cgroup v2");
        res = (oci_resources) { .has_network = true, .has_net_class_id = true, .net_class_id = 1 };
        CHECK_ERR(cg_v2_apply(fake, "/cg", &res, &e), e, EOPNOTSUPP,
                  "linux.resources.network: not supported on cgroup v2");
        res = (oci_resources) { .has_pids = true, .pids_limit = 5 };
        CHECK_ERR(cg_v2_apply(fake, "/cg", &res, &e), e, EOPNOTSUPP,
                  "linux.resources.pids: the 'pids' controller is not enabled");
        res = (oci_resources) { .has_memory = true, .memory = { .has_limit = true, .limit = 1 << 20,
                                                                .has_swap = true, .swap = 2 << 20 } };
        char swapmax[PATH_MAX + 32];
        snprintf(swapmax, sizeof swapmax, "%s/cg/memory.swap.max", fake);
        CHECK(unlink(swapmax) == 0);
        CHECK_ERR(cg_v2_apply(fake, "/cg", &res, &e), e, EOPNOTSUPP,
                  "linux.resources.memory.swap: swap accounting is not available");
        res.memory = (oci_memory) { .has_limit = true, .limit = 500, .has_check_before_update = true,
                                    .check_before_update = true };
        CHECK_ERR(cg_v2_apply(fake, "/cg", &res, &e), e, EBUSY, "below the current usage 1000");
        res = (oci_resources) { .unified = { &kv, 1 } };
        CHECK_ERR(cg_v2_apply(fake, "/cg", &res, &e), e, EOPNOTSUPP,
                  "linux.resources.unified[\"misc.max\"]: the 'misc' controller is not available");
        char cmd[PATH_MAX + 16];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", fake);
        CHECK(system(cmd) == 0);
}

/* The undo journal of an update: every write since begin is put back, last first; a
 * multi-line file cannot be and is counted; the failed write is named. */
static void
test_undo_journal(void)
{
        char dir[PATH_MAX], cmd[PATH_MAX + 16];
        msp_err e;

        snprintf(dir, sizeof dir, "/tmp/msp-unit-%d-undo", (int) runner);
        CHECK(mkdir(dir, 0755) == 0 || errno == EEXIST);
        int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        CHECK(dfd >= 0);
        static const char *const files[][2] = { { "a", "1\n" }, { "b", "x" }, { "multi", "l1\nl2\n" } };
        for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
                int fd = openat(dfd, files[i][0], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
                CHECK(fd >= 0 && write(fd, files[i][1], strlen(files[i][1])) > 0);
                close(fd);
        }
        /* no journal: nothing recorded, nothing to restore */
        char unrestored[64];
        CHECK(cg_undo_rollback(unrestored, sizeof unrestored) == 0);

        cg_undo_begin();
        CHECK_OK(cg_write(dfd, "a", "2", &e), e);
        CHECK_OK(cg_write(dfd, "b", "y", &e), e);
        CHECK_OK(cg_write(dfd, "a", "3", &e), e);
        CHECK(cg_write(dfd, "missing/x", "4", &e) < 0);
        CHECK(strcmp(cg_undo_failed_file(), "missing/x") == 0);
        CHECK(cg_undo_rollback(unrestored, sizeof unrestored) == 0);
        CHECK(strcmp(rd(dir, "", "a"), "1") == 0);
        CHECK(strcmp(rd(dir, "", "b"), "x") == 0);
        cg_undo_end();
        CHECK(cg_undo_failed_file()[0] == '\0');

        cg_undo_begin();
        CHECK_OK(cg_write(dfd, "a", "5", &e), e);
        CHECK_OK(cg_write(dfd, "multi", "z", &e), e);
        CHECK(cg_undo_rollback(unrestored, sizeof unrestored) == 1);
        CHECK(strcmp(rd(dir, "", "a"), "1") == 0);
        cg_undo_end();
        close(dfd);
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        CHECK(system(cmd) == 0);
}

/* ---- runner ---- */

static const tap_fork_test tests[] = {
        { "conversions", test_conversions },
        { "unified key checks", test_unified_keys },
        { "path and page size checks", test_path_and_size_checks },
        { "device rules: the config's then runc's implicit ones", test_device_rules },
        { "eBPF device program passes the verifier", test_bpf_verifier_accepts },
        { "eBPF device filter on the v2 hierarchy, replaced on update", test_bpf_device_filter },
        { "v1 memory limit/memsw/reservation/swappiness/oom (raise and lower)", test_v1_memory },
        { "v1 pids, cpu shares/quota/period/burst, cpuset", test_v1_pids_cpu_cpuset },
        { "v1 blkio weight and throttle", test_v1_blkio },
        { "v1 devices deny-all + allow list", test_v1_devices },
        { "memory limit 32 MiB: a 100 MiB hog is OOM-killed", test_oom_kill },
        { "pids.max 5: fork fails with EAGAIN", test_pids_limit },
        { "signal_all SIGKILL", test_signal_all_kill },
        { "destroy kills processes and removes sub-cgroups", test_destroy_with_processes },
        { "error messages name the field or the file and value", test_errors },
        { "hybrid: hugetlb and unified keys on the v2 hierarchy", test_hybrid_hugetlb },
        { "v2 backend writes (plain files)", test_v2_files },
        { "v2 backend refusals (plain files)", test_v2_refusals },
        { "update undo journal (plain files)", test_undo_journal },
};

int
main(void)
{
        return cg_test_main(tests, ARRAY_SIZE(tests), "msp-unit-", &runner, &mode);
}
