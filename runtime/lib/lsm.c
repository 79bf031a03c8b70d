/* LSM labels of the container process (lsm.h).
 *
 * Decision (docs/SECURITY_MODEL.md): a label whose LSM is not active is refused at
 * create, for AppArmor as runc does and for SELinux too (runc and crun ignore an SELinux
 * label on a host without SELinux; msp would rather fail than run a process unconfined
 * that its caller meant to confine). Podman only puts labels in the config when the host
 * has the LSM, so it is not affected. */
#include "lib/lsm.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "oci/oci.h"
#include "lib/procfs.h"

#ifndef SYS_lsm_list_modules
#define SYS_lsm_list_modules 461
#endif
#ifndef SELINUX_MAGIC
#define SELINUX_MAGIC 0xf97cff8c
#endif

/* include/uapi/linux/lsm.h (6.8); the header is newer than the build host's. */
static const char *const lsm_names[] = {
        "capability", "selinux", "smack", "tomoyo", "apparmor", "yama", "loadpin",
        "safesetid", "lockdown", "bpf", "landlock", "ima", "evm", "ipe",
};
#define LSM_ID_FIRST 100

static const char *const lsm_self[] = { [RT_LSM_SELINUX] = "selinux", [RT_LSM_APPARMOR] = "apparmor" };

/* The active LSMs as "a,b,c" in buf; 0, or -errno when the kernel cannot say. */
static int
lsm_list(char *buf, size_t size)
{
        uint64_t ids[32];
        uint32_t n = sizeof ids;

        buf[0] = '\0';
        long r = syscall(SYS_lsm_list_modules, ids, &n, 0);
        if (r >= 0) {
                size_t off = 0;
                for (long i = 0; i < r && i < 32; i++) {
                        uint64_t k = ids[i] - LSM_ID_FIRST;
                        char num[24];
                        const char *name = ids[i] >= LSM_ID_FIRST &&
                                                           k < sizeof lsm_names / sizeof lsm_names[0]
                                                   ? lsm_names[k]
                                                   : (snprintf(num, sizeof num, "lsm%llu",
                                                               (unsigned long long) ids[i]),
                                                      num);
                        int w = snprintf(buf + off, size - off, "%s%s", off ? "," : "", name);
                        if (w < 0 || (size_t) w >= size - off)
                                return -ENAMETOOLONG;
                        off += (size_t) w;
                }
                return 0;
        }
        /* Before 6.8: securityfs, when the host mounted it. */
        _cleanup_close_ int fd = open("/sys/kernel/security/lsm", O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        ssize_t l = read(fd, buf, size - 1);
        if (l < 0)
                return -errno;
        buf[l] = '\0';
        buf[strcspn(buf, "\n")] = '\0';
        return 0;
}

static bool
list_has(const char *list, const char *name)
{
        size_t len = strlen(name);

        for (const char *p = list; *p; p += strcspn(p, ",") + (p[strcspn(p, ",")] == ',')) {
                if (strncmp(p, name, len) == 0 && (p[len] == ',' || p[len] == '\0'))
                        return true;
        }
        return false;
}

/* Without lsm_list_modules or securityfs: the switches runc and libselinux read. */
static int
lsm_active_fallback(enum rt_lsm lsm)
{
        if (lsm == RT_LSM_APPARMOR) {
                char c = 0;
                _cleanup_close_ int fd = open("/sys/module/apparmor/parameters/enabled",
                                              O_RDONLY | O_CLOEXEC);
                return fd >= 0 && read(fd, &c, 1) == 1 && c == 'Y';
        }
        struct statfs sfs;
        return statfs("/sys/fs/selinux", &sfs) == 0 && sfs.f_type == SELINUX_MAGIC;
}

int
rt_lsm_active(enum rt_lsm lsm)
{
        char list[512];

        if (lsm_list(list, sizeof list) < 0)
                return lsm_active_fallback(lsm);
        return list_has(list, lsm_self[lsm]);
}

static int
refuse_inactive(const char *source, const char *field, const char *value, enum rt_lsm lsm,
                msp_err *err)
{
        char list[512];

        if (lsm_list(list, sizeof list) < 0)
                snprintf(list, sizeof list, "unknown");
        return msp_err_set(err, ENOTSUP,
                           "%s: %s '%s': %s is not enabled on this host (active LSMs: %s)",
                           source, field, value, lsm == RT_LSM_APPARMOR ? "AppArmor" : "SELinux",
                           list[0] ? list : "none");
}

int
rt_lsm_check_process(const char *source, const oci_process *p, msp_err *err)
{
        if (p && p->apparmor_profile && *p->apparmor_profile &&
            rt_lsm_active(RT_LSM_APPARMOR) != 1)
                return refuse_inactive(source, "process.apparmorProfile", p->apparmor_profile,
                                       RT_LSM_APPARMOR, err);
        if (p && p->selinux_label && *p->selinux_label && rt_lsm_active(RT_LSM_SELINUX) != 1)
                return refuse_inactive(source, "process.selinuxLabel", p->selinux_label,
                                       RT_LSM_SELINUX, err);
        return 0;
}

int
rt_lsm_check(const oci_process *p, const oci_linux *lx, msp_err *err)
{
        int r = rt_lsm_check_process("config.json", p, err);
        if (r < 0)
                return r;
        if (lx && lx->mount_label && *lx->mount_label) {
                if (rt_lsm_active(RT_LSM_SELINUX) != 1)
                        return refuse_inactive("config.json", "linux.mountLabel",
                                               lx->mount_label, RT_LSM_SELINUX, err);
                /* The context= mount option is not passed yet: refusing is better than
                 * mounts with the wrong label. */
                return msp_err_set(err, ENOTSUP,
                                   "config.json: linux.mountLabel '%s': not supported by msp yet",
                                   lx->mount_label);
        }
        return 0;
}

int
rt_lsm_set_exec_label(int procfd, const oci_process *p, msp_err *err)
{
        char data[4096];
        int r;

        if (p->apparmor_profile && *p->apparmor_profile) {
                if ((size_t) snprintf(data, sizeof data, "exec %s", p->apparmor_profile) >=
                    sizeof data)
                        return msp_err_set(err, ENAMETOOLONG, "process.apparmorProfile: too long");
                /* The AppArmor-specific file (Linux 5.1, LSM stacking); attr/exec
                 * belongs to whichever major LSM comes first. */
                const char *path = "thread-self/attr/apparmor/exec";
                _cleanup_close_ int dir = rt_procfs_openat(procfd, "thread-self/attr/apparmor",
                                                           O_PATH | O_DIRECTORY, err);
                /* (ENOENT from the write itself is AppArmor's "no such profile".) */
                if (dir == -ENOENT)
                        path = "thread-self/attr/exec";
                else if (dir < 0)
                        return msp_err_prefix(err, "process.apparmorProfile '%s'",
                                              p->apparmor_profile);
                r = rt_procfs_write(procfd, path, data, err);
                if (r < 0)
                        return msp_err_prefix(err, "process.apparmorProfile '%s'",
                                              p->apparmor_profile);
        }
        if (p->selinux_label && *p->selinux_label) {
                r = rt_procfs_write(procfd, "thread-self/attr/exec", p->selinux_label, err);
                /* The session keyring the init creates next gets the process's label too,
                 * as with runc. */
                if (r >= 0)
                        r = rt_procfs_write(procfd, "thread-self/attr/keycreate", p->selinux_label,
                                            err);
                if (r < 0)
                        return msp_err_prefix(err, "process.selinuxLabel '%s'", p->selinux_label);
        }
        return 0;
}
