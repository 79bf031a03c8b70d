/* CVE-2019-5736: when the binary needs no sealed copy (selfexe-rule.h). The facts are
 * those the kernel reports for real files on the test's tmpfs (owner, mode bits, a
 * POSIX ACL set through its xattr); the verdicts those of rt_exe_copy_needed, which the
 * entry point and main() both use. */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include "oci/macros.h"
#include "tests/lib/tap.h"
#include "lib/selfexe.h"

#define OWNER 4000u     /* the file's owner in the tests */
#define CALLER 1000u    /* the caller's euid */

/* A file owned by OWNER with `mode` on a fresh tmpfs over /tmp in a private mount
 * namespace (nothing is left behind); its facts. */
static rt_exe_facts
facts_of(mode_t mode, const void *acl, size_t acl_len)
{
        rt_exe_facts f;
        msp_err e = { 0 };

        CHECK(unshare(CLONE_NEWNS) == 0);
        CHECK(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0);
        CHECK(mount("tmpfs", "/tmp", "tmpfs", 0, "mode=0755") == 0);
        CHECK(chdir("/tmp") == 0);
        int fd = open("msp", O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        CHECK(fd >= 0);
        CHECK(fchown(fd, OWNER, OWNER) == 0);
        CHECK(fchmod(fd, mode) == 0);
        if (acl && fsetxattr(fd, "system.posix_acl_access", acl, acl_len, 0) < 0) {
                if (errno == EOPNOTSUPP)
                        SKIP("this kernel's tmpfs has no POSIX ACLs");
                CHECK(!"fsetxattr");
        }
        CHECK_OK(rt_selfexe_file_facts(fd, &f), e);
        close(fd);
        CHECK(f.uid == OWNER);
        return f;
}

static void
test_owner_unmapped(void)
{
        rt_exe_facts f = facts_of(0755, NULL, 0);
        CHECK(!f.owner_ambiguous);
        /* the file alone allows it; the mappings decide */
        CHECK(!rt_exe_copy_needed(&f, CALLER, RT_EXE_OWNER_UNKNOWN));
        CHECK(!rt_exe_copy_needed(&f, CALLER, RT_EXE_OWNER_UNMAPPED));
        CHECK(rt_exe_copy_needed(&f, CALLER, RT_EXE_OWNER_MAPPED));
}

static void
test_owner_is_caller(void)
{
        rt_exe_facts f = facts_of(0755, NULL, 0);
        CHECK(rt_exe_copy_needed(&f, OWNER, RT_EXE_OWNER_UNKNOWN));
        CHECK(rt_exe_copy_needed(&f, OWNER, RT_EXE_OWNER_UNMAPPED));
}

static void
test_group_writable(void)
{
        rt_exe_facts f = facts_of(0775, NULL, 0);
        CHECK(rt_exe_copy_needed(&f, CALLER, RT_EXE_OWNER_UNKNOWN));
        CHECK(rt_exe_copy_needed(&f, CALLER, RT_EXE_OWNER_UNMAPPED));
}

static void
test_other_writable(void)
{
        rt_exe_facts f = facts_of(0757, NULL, 0);
        CHECK(rt_exe_copy_needed(&f, CALLER, RT_EXE_OWNER_UNKNOWN));
        CHECK(rt_exe_copy_needed(&f, CALLER, RT_EXE_OWNER_UNMAPPED));
}

static void
test_acl_present(void)
{
        /* ACL version 2: user::rwx, user:<CALLER>:rwx, group::r-x, mask::rwx, other::r-x
         * (tag, perm, id; little endian), what `setfacl -m u:1000:rwx` writes. */
        struct __attribute__((packed)) {
                uint32_t version;
                struct __attribute__((packed)) {
                        uint16_t tag, perm;
                        uint32_t id;
                } e[5];
        } acl = { 2, { { 0x01, 7, UINT32_MAX }, { 0x02, 7, CALLER }, { 0x04, 5, UINT32_MAX },
                       { 0x10, 7, UINT32_MAX }, { 0x20, 5, UINT32_MAX } } };
        rt_exe_facts f = facts_of(0755, &acl, sizeof acl);
        CHECK(f.acl > 0);
        CHECK(rt_exe_copy_needed(&f, CALLER, RT_EXE_OWNER_UNKNOWN));
        CHECK(rt_exe_copy_needed(&f, CALLER, RT_EXE_OWNER_UNMAPPED));
}

static void
test_no_acl_probe_result(void)
{
        rt_exe_facts f = facts_of(0755, NULL, 0);
        CHECK(f.acl == -ENODATA || f.acl == -EOPNOTSUPP);
        f.acl = -EOPNOTSUPP;    /* a filesystem without ACLs */
        CHECK(!rt_exe_copy_needed(&f, CALLER, RT_EXE_OWNER_UNMAPPED));
        f.acl = -EACCES;        /* a probe that says nothing */
        CHECK(rt_exe_copy_needed(&f, CALLER, RT_EXE_OWNER_UNMAPPED));
}

static void
test_filesystem_and_ambiguous_owner(void)
{
        rt_exe_facts f = facts_of(0755, NULL, 0);
        f.fs_magic = 0x65735546;        /* FUSE: its daemon decides */
        CHECK(rt_exe_copy_needed(&f, CALLER, RT_EXE_OWNER_UNMAPPED));
        f = facts_of(0755, NULL, 0);
        f.owner_ambiguous = 1;          /* the overflowuid that also names a mapped id */
        CHECK(rt_exe_copy_needed(&f, CALLER, RT_EXE_OWNER_UNMAPPED));
}

int
main(void)
{
        static const tap_fork_test tests[] = {
                { "owner neither the caller nor mapped, 0755, no ACL: no copy", test_owner_unmapped },
                { "owner is the caller: copy", test_owner_is_caller },
                { "group-writable: copy", test_group_writable },
                { "other-writable: copy", test_other_writable },
                { "POSIX access ACL: copy", test_acl_present },
                { "ACL probe: ENODATA and EOPNOTSUPP mean none, other errors copy", test_no_acl_probe_result },
                { "FUSE, or an ambiguous overflowuid owner: copy", test_filesystem_and_ambiguous_owner },
        };
        return tap_run_table(tests, ARRAY_SIZE(tests));
}
