/* LSM labels (lsm.h): which LSMs are active, the refusal of a label whose LSM is not,
 * and the exec-label write, which reaches the kernel's attr file through the trusted
 * procfs handle and never a look-alike directory (CVE-2019-16884). */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/lsm.h"
#include "oci/macros.h"
#include "lib/procfs.h"
#include "tests/lib/fs-test.h"

/* The kernel's own list, read from a securityfs mounted in a private mount namespace
 * (the host need not mount it): an independent answer to compare rt_lsm_active with. */
static void
kernel_lsm_list(char *buf, size_t size)
{
        CHECK(unshare(CLONE_NEWNS) == 0);
        CHECK(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0);
        CHECK(mount("none", base, "securityfs", 0, NULL) == 0);
        char path[128];
        snprintf(path, sizeof path, "%s/lsm", base);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        CHECK(fd >= 0);
        ssize_t n = read(fd, buf, size - 1);
        CHECK(n > 0);
        buf[n] = '\0';
        close(fd);
        CHECK(umount(base) == 0);
        printf("# kernel LSMs: %s\n", buf);
}

static bool
in_list(const char *list, const char *name)
{
        char l[600];
        snprintf(l, sizeof l, ",%s,", list);
        char n[64];
        snprintf(n, sizeof n, ",%s,", name);
        return strstr(l, n) != NULL;
}

static void
test_active(void)
{
        char list[512];
        kernel_lsm_list(list, sizeof list);
        CHECK(rt_lsm_active(RT_LSM_APPARMOR) == in_list(list, "apparmor"));
        CHECK(rt_lsm_active(RT_LSM_SELINUX) == in_list(list, "selinux"));
}

static void
test_refused_when_inactive(void)
{
        oci_process p = { 0 };
        oci_linux lx = { 0 };

        CHECK_OK(rt_lsm_check(&p, &lx, &e), e);
        p.apparmor_profile = "msp-test-profile";
        if (rt_lsm_active(RT_LSM_APPARMOR))
                CHECK_OK(rt_lsm_check(&p, &lx, &e), e);
        else
                CHECK_ERR(rt_lsm_check(&p, &lx, &e), e, ENOTSUP,
                           "process.apparmorProfile 'msp-test-profile': AppArmor is not enabled "
                           "on this host (active LSMs: ");
        p.apparmor_profile = NULL;
        p.selinux_label = "system_u:system_r:container_t:s0";
        if (!rt_lsm_active(RT_LSM_SELINUX))
                CHECK_ERR(rt_lsm_check(&p, &lx, &e), e, ENOTSUP,
                           "process.selinuxLabel 'system_u:system_r:container_t:s0': SELinux is "
                           "not enabled");
        p.selinux_label = NULL;
        lx.mount_label = "system_u:object_r:container_file_t:s0";
        CHECK_ERR(rt_lsm_check(&p, &lx, &e), e, ENOTSUP,
                   "linux.mountLabel 'system_u:object_r:container_file_t:s0': ");
}

/* Through the real handle the write reaches the kernel's attr file: with no LSM to take
 * it the kernel answers EINVAL (a regular file would have taken the bytes). */
static void
test_write_reaches_procfs(void)
{
        oci_process p = { .apparmor_profile = "msp-test-profile" };
        int procfd = CHECK_OK(rt_procfs_open(&e), e);
        msp_err_clear(&e);
        int r = rt_lsm_set_exec_label(procfd, &p, &e);
        printf("# rt_lsm_set_exec_label -> %d '%s'\n", r, e.msg);
        CHECK(r != -EXDEV);
        if (!rt_lsm_active(RT_LSM_APPARMOR) && !rt_lsm_active(RT_LSM_SELINUX)) {
                CHECK(r == -EINVAL);
                CHECK(strstr(e.msg, "process.apparmorProfile 'msp-test-profile': write "
                                    "'/proc/thread-self/attr/") != NULL);
        }
}

/* exec checks the process labels alone, naming where they came from. */
static void
test_exec_check(void)
{
        oci_process p = { 0 };

        CHECK_OK(rt_lsm_check_process("exec", &p, &e), e);
        p.apparmor_profile = "msp-test-profile";
        if (!rt_lsm_active(RT_LSM_APPARMOR))
                CHECK_ERR(rt_lsm_check_process("exec", &p, &e), e, ENOTSUP,
                           "exec: process.apparmorProfile 'msp-test-profile': AppArmor is not "
                           "enabled on this host (active LSMs: ");
        p = (oci_process){ .selinux_label = "system_u:system_r:container_t:s0" };
        if (!rt_lsm_active(RT_LSM_SELINUX))
                CHECK_ERR(rt_lsm_check_process("exec", &p, &e), e, ENOTSUP,
                           "exec: process.selinuxLabel 'system_u:system_r:container_t:s0': "
                           "SELinux is not enabled");
}

/* The exec child writes its label through the runtime's procfs, opened in an ancestor
 * pid namespace: thread-self resolves there too, and the write reaches the child's own
 * attr file (EINVAL from the kernel without an LSM; AppArmor takes "unconfined"). */
static void
test_write_from_child_pidns(void)
{
        int procfd = CHECK_OK(rt_procfs_open(&e), e);
        CHECK(unshare(CLONE_NEWPID) == 0);
        pid_t pid = fork();
        CHECK(pid >= 0);
        if (pid == 0) {
                CHECK(getpid() == 1);
                oci_process p = { .apparmor_profile = "unconfined" };
                msp_err_clear(&e);
                int r = rt_lsm_set_exec_label(procfd, &p, &e);
                printf("# in a child pid namespace: rt_lsm_set_exec_label -> %d '%s'\n", r,
                       e.msg);
                if (rt_lsm_active(RT_LSM_APPARMOR))
                        CHECK(r == 0);
                else
                        CHECK(r == -EINVAL && strstr(e.msg, ": write '/proc/thread-self/attr/"));
                fflush(stdout);
                _exit(0);
        }
        int st = 0;
        CHECK(waitpid(pid, &st, 0) == pid);
        CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* A directory laid out like procfs (what a fake /proc in an image looks like): the label
 * is refused before a byte is written, and the decoy stays empty. */
static void
test_decoy_refused(void)
{
        char path[256];
        CHECK(unshare(CLONE_NEWNS) == 0);
        CHECK(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0);
        CHECK(mount("tmpfs", base, "tmpfs", 0, "mode=0755") == 0);
        snprintf(path, sizeof path, "%s/1/task/1/attr/apparmor", base);
        for (char *s = path + strlen(base) + 1; (s = strchr(s, '/')); s++) {
                *s = '\0';
                CHECK(mkdir(path, 0755) == 0 || errno == EEXIST);
                *s = '/';
        }
        CHECK(mkdir(path, 0755) == 0);
        snprintf(path, sizeof path, "%s/1/task/1/attr/exec", base);
        write_file(path, "");
        snprintf(path, sizeof path, "%s/1/task/1/attr/apparmor/exec", base);
        write_file(path, "");
        snprintf(path, sizeof path, "%s/thread-self", base);
        CHECK(symlink("1/task/1", path) == 0);
        int decoy = open(base, O_PATH | O_DIRECTORY | O_CLOEXEC);
        CHECK(decoy >= 0);

        oci_process p = { .apparmor_profile = "msp-test-profile" };
        CHECK_ERR(rt_lsm_set_exec_label(decoy, &p, &e), e, EXDEV, "not on procfs, refusing");
        p = (oci_process){ .selinux_label = "system_u:system_r:container_t:s0" };
        CHECK_ERR(rt_lsm_set_exec_label(decoy, &p, &e), e, EXDEV, "not on procfs, refusing");
        struct stat st;
        CHECK(stat(path, &st) == 0);
        snprintf(path, sizeof path, "%s/1/task/1/attr/exec", base);
        CHECK(stat(path, &st) == 0 && st.st_size == 0);
        snprintf(path, sizeof path, "%s/1/task/1/attr/apparmor/exec", base);
        CHECK(stat(path, &st) == 0 && st.st_size == 0);
}

int
main(void)
{
        if (require_root())
                return 0;
        fs_run("active LSMs agree with the kernel's securityfs list", test_active);
        fs_run("a label for an inactive LSM is refused naming field and value",
               test_refused_when_inactive);
        fs_run("the exec label is written to the kernel's attr file", test_write_reaches_procfs);
        fs_run("a procfs look-alike is refused, nothing written", test_decoy_refused);
        fs_run("exec: the process labels are checked, the message names the source",
               test_exec_check);
        fs_run("exec: the label is written from a child pid namespace through the ancestor's procfs",
               test_write_from_child_pidns);
        return tap_done();
}
