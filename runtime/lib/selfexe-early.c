/* CVE-2019-5736, at the ELF entry point of the static PIE, before glibc starts (whose
 * CPU detection costs ~0.4 ms of CPUID exits on a VM) and before the binary relocates
 * itself, so it may use no libc, no pointer tables (they would still be unrelocated), no
 * TLS (no stack protector) and no global writable data. For the commands
 * rt_selfexe_needed() names it makes /proc/self/exe a detached, read-only bind mount of
 * the binary (e_swap_exe; docs/SECURITY_MODEL.md) without an exec; where that fails
 * (a user without CAP_SYS_ADMIN) and the file alone already keeps every container from
 * writing it (selfexe-rule.h) it leaves /proc/self/exe as it is, for main() to confirm
 * once the container's mappings are known; otherwise it copies the binary into a
 * sealed memfd and execveat()s it; where that fails too it falls through to glibc's
 * _start, and main() then does the copy through rt_selfexe_ensure() with proper error
 * messages. */
#include <stddef.h>

#include "lib/selfexe-rule.h"

#if defined(__x86_64__)

#define E_AT_FDCWD (-100)
#define E_O_RDONLY 0
#define E_O_CLOEXEC 02000000
#define E_MFD_CLOEXEC 1
#define E_MFD_ALLOW_SEALING 2
#define E_MFD_EXEC 0x10
#define E_F_ADD_SEALS 1033
#define E_F_GET_SEALS 1034
#define E_SEALS_REQUIRED (0x1 | 0x2 | 0x4 | 0x8)   /* SEAL|SHRINK|GROW|WRITE */
#define E_F_SEAL_EXEC 0x20
#define E_SEEK_END 2
#define E_AT_EMPTY_PATH 0x1000
#define E_EINVAL 22
#define E_EINTR 4

static inline long
sys3(long n, long a, long b, long c)
{
        long r;
        __asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
        return r;
}

static inline long
sys5(long n, long a, long b, long c, long d, long e)
{
        long r;
        register long r10 __asm__("r10") = d;
        register long r8 __asm__("r8") = e;
        __asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8)
                         : "rcx", "r11", "memory");
        return r;
}

static int
e_streq(const char *a, const char *b)
{
        while (*a && *a == *b) {
                a++;
                b++;
        }
        return *a == *b;
}

static int
e_has(const char *s, char c)
{
        for (; *s; s++)
                if (*s == c)
                        return 1;
        return 0;
}

/* Arrays of arrays, not of pointers: no relocation needed. Keep in step with selfexe.c. */
static const char e_with_arg[][20] = { "--root", "--log", "--log-format", "--log-level",
                                        "--cgroup-manager" };
static const char e_enters[][8] = { "create", "run", "exec" };


static int
e_needed(long argc, char **argv)
{
        for (long i = 1; i < argc; i++) {
                const char *a = argv[i];
                if (e_streq(a, "--")) {
                        a = i + 1 < argc ? argv[i + 1] : NULL;
                        if (!a)
                                return 0;
                } else if (a[0] == '-') {
                        if (a[1] == '-' && !e_has(a, '='))
                                for (size_t k = 0; k < sizeof e_with_arg / sizeof e_with_arg[0]; k++)
                                        if (e_streq(a, e_with_arg[k])) {
                                                i++;
                                                break;
                                        }
                        continue;
                }
                for (size_t k = 0; k < sizeof e_enters / sizeof e_enters[0]; k++)
                        if (e_streq(a, e_enters[k]))
                                return 1;
                return 0;
        }
        return 0;
}

/* The ELF header of this binary, placed by the linker; hidden, so its address is
 * computed PC-relative and needs no relocation. */
extern const char __ehdr_start[] __attribute__((visibility("hidden")));

struct e_phdr {
        unsigned int p_type, p_flags;
        unsigned long p_offset, p_vaddr, p_paddr, p_filesz, p_memsz, p_align;
};

struct e_mount_attr {
        unsigned long attr_set, attr_clr, propagation, userns_fd;
};

static inline long
sys6(long n, long a, long b, long c, long d, long e, long f)
{
        long r;
        register long r10 __asm__("r10") = d;
        register long r8 __asm__("r8") = e;
        register long r9 __asm__("r9") = f;
        __asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8),
                         "r"(r9) : "rcx", "r11", "memory");
        return r;
}

#define E_OPEN_TREE_CLONE 1
#define E_MOUNT_ATTR_RDONLY 0x1
#define E_MOUNT_ATTR_NOSUID 0x2
#define E_MOUNT_ATTR_NODEV 0x4
#define E_PROT_READ 1
#define E_PROT_WRITE 2
#define E_PROT_EXEC 4
#define E_MAP_PRIVATE 2
#define E_MAP_FIXED 0x10
#define E_PR_SET_MM 35
#define E_PR_SET_MM_MAP 14
#define E_PAGE 4096UL

struct e_mm_map {
        unsigned long start_code, end_code, start_data, end_data, start_brk, brk, start_stack;
        unsigned long arg_start, arg_end, env_start, env_end;
        unsigned long *auxv;
        unsigned int auxv_size, exe_fd;
};

/* PR_SET_MM_MAP (CRIU's interface) with every field as the kernel set it at exec, so that
 * only the exe changes. It needs CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE, where the
 * single-field PR_SET_MM_EXE_FILE needs CAP_SYS_RESOURCE, which container hosts often
 * withhold from root. The values are computed the way load_elf_binary() does. */
static long
e_set_exe(long *sp, const struct e_phdr *ph, unsigned short phnum, unsigned long base, long fd)
{
        struct e_mm_map m = { .start_code = ~0UL, .exe_fd = (unsigned int) fd };
        char **argv = (char **) (sp + 1);
        char **envp = argv + sp[0] + 1;
        const char *e;

        for (unsigned short i = 0; i < phnum; i++) {
                if (ph[i].p_type != 1)
                        continue;
                unsigned long k = base + ph[i].p_vaddr, end = k + ph[i].p_filesz;
                if ((ph[i].p_flags & 1) && k < m.start_code)
                        m.start_code = k;
                if ((ph[i].p_flags & 1) && end > m.end_code)
                        m.end_code = end;
                if (k > m.start_data)
                        m.start_data = k;
                if (end > m.end_data)
                        m.end_data = end;
        }
        m.start_brk = m.brk = (unsigned long) sys3(12 /* brk */, 0, 0, 0);
        m.start_stack = (unsigned long) sp;
        /* The kernel lays the argument strings and then the environment strings out
         * back to back; the pointers still point at them. */
        m.arg_start = (unsigned long) argv[0];
        for (e = argv[sp[0] - 1]; *e; e++)
                ;
        m.arg_end = m.env_start = m.env_end = (unsigned long) e + 1;
        if (envp[0]) {
                long n = 0;
                while (envp[n + 1])
                        n++;
                m.env_start = (unsigned long) envp[0];
                for (e = envp[n]; *e; e++)
                        ;
                m.env_end = (unsigned long) e + 1;
        }
        return sys5(157 /* prctl */, E_PR_SET_MM, E_PR_SET_MM_MAP, (long) &m, sizeof m, 0);
}

/* The cheap form of the defence: make /proc/self/exe a detached, read-only bind mount of
 * the same file instead of a sealed copy. The segments are mapped again from that mount
 * (same inode, same page-cache pages, the same bytes the kernel mapped: nothing has been
 * relocated or written yet) so that no mapping of the old path is left, which the kernel
 * requires before it changes the exe. Returns 0 when /proc/self/exe is the read-only view. */
static long
e_swap_exe(long *sp)
{
        const unsigned short phnum = *(const unsigned short *) (__ehdr_start + 56);
        const struct e_phdr *ph =
                (const struct e_phdr *) (__ehdr_start + *(const unsigned long *) (__ehdr_start + 32));
        struct e_mount_attr attr = { E_MOUNT_ATTR_RDONLY | E_MOUNT_ATTR_NOSUID | E_MOUNT_ATTR_NODEV,
                                     0, 0, 0 };
        static const char prefix[] = "/proc/self/fd/";
        char path[32];
        unsigned long base = (unsigned long) __ehdr_start;
        long tree, fd, r = -1;
        int n = 0;

        for (unsigned short i = 0; i < phnum; i++)
                if (ph[i].p_type == 1 && ph[i].p_offset == 0)
                        base -= ph[i].p_vaddr;
        tree = sys3(428 /* open_tree */, E_AT_FDCWD, (long) "/proc/self/exe",
                    E_OPEN_TREE_CLONE | E_O_CLOEXEC);
        if (tree < 0)
                return tree;
        if (sys5(442 /* mount_setattr */, tree, (long) "", E_AT_EMPTY_PATH, (long) &attr,
                 sizeof attr) < 0)
                goto out_tree;
        {
                char digits[12];
                int k = 0;
                /* Byte by byte: an array initialiser may become a memcpy call, and
                 * glibc's memcpy is an IFUNC that is not resolved yet. */
                while (prefix[n]) {
                        path[n] = prefix[n];
                        n++;
                }
                long v = tree;
                do
                        digits[k++] = (char) ('0' + v % 10);
                while ((v /= 10) > 0);
                while (k > 0)
                        path[n++] = digits[--k];
                path[n] = 0;
        }
        fd = sys3(257, E_AT_FDCWD, (long) path, E_O_RDONLY | E_O_CLOEXEC);
        if (fd < 0)
                goto out_tree;
        for (unsigned short i = 0; i < phnum; i++) {
                const struct e_phdr *p = &ph[i];
                if (p->p_type != 1 /* PT_LOAD */ || p->p_filesz == 0)
                        continue;
                unsigned long start = base + (p->p_vaddr & ~(E_PAGE - 1));
                unsigned long end = base + p->p_vaddr + p->p_filesz;
                long prot = ((p->p_flags & 4) ? E_PROT_READ : 0) | ((p->p_flags & 2) ? E_PROT_WRITE : 0) |
                            ((p->p_flags & 1) ? E_PROT_EXEC : 0);
                long m = sys6(9 /* mmap */, (long) start, (long) (((end + E_PAGE - 1) & ~(E_PAGE - 1)) - start),
                              prot, E_MAP_PRIVATE | E_MAP_FIXED, fd, (long) (p->p_offset & ~(E_PAGE - 1)));
                /* A failed MAP_FIXED may leave the range unmapped; for the text that
                 * ends the process (a crash, never a run without the protection). */
                if (m != (long) start)
                        goto out_fd;
                /* The kernel zeroed the rest of the last file page (the start of .bss). */
                if ((p->p_flags & 2) && p->p_memsz > p->p_filesz)
                        for (volatile char *z = (volatile char *) end; (unsigned long) z & (E_PAGE - 1); z++)
                                *z = 0;
        }
        r = e_set_exe(sp, ph, phnum, base, fd);
out_fd:
        sys3(3, fd, 0, 0);
out_tree:
        sys3(3, tree, 0, 0);
        return r;
}

struct e_stat {
        unsigned long st_dev, st_ino, st_nlink;
        unsigned int st_mode, st_uid, st_gid, pad;
        unsigned long rest[13];  /* to the 144 bytes of the x86-64 struct stat */
};

/* The file alone keeps containers from writing it (selfexe-rule.h, before the mappings
 * are known): fstat, fstatfs and the ACL probe, three syscalls. */
static int
e_file_unwritable(long fd)
{
        struct e_stat st;
        long sfs[15];
        rt_exe_facts f = { 0 };

        if (sys3(5 /* fstat */, fd, (long) &st, 0) < 0 || sys3(138 /* fstatfs */, fd, (long) sfs, 0) < 0)
                return 0;
        f.uid = st.st_uid;
        f.mode = st.st_mode;
        f.fs_magic = (unsigned long) sfs[0];
        f.acl = sys5(193 /* fgetxattr */, fd, (long) "system.posix_acl_access", 0, 0, 0);
        return !rt_exe_copy_needed(&f, (unsigned int) sys3(107 /* geteuid */, 0, 0, 0),
                                   RT_EXE_OWNER_UNKNOWN);
}

__attribute__((used)) static void
msp_early(long *sp)
{
        long argc = sp[0];
        char **argv = (char **) (sp + 1);
        char **envp = argv + argc + 1;
        long in, mfd, size, seals;
        long off = 0;

        if (!e_needed(argc, argv))
                return;
        if (e_swap_exe(sp) == 0)
                return;
        in = sys3(257 /* openat */, E_AT_FDCWD, (long) "/proc/self/exe", E_O_RDONLY | E_O_CLOEXEC);
        if (in < 0)
                return;
        seals = sys3(72 /* fcntl */, in, E_F_GET_SEALS, 0);
        if (seals >= 0 && (seals & E_SEALS_REQUIRED) == E_SEALS_REQUIRED)
                goto out_in;    /* already the sealed copy */
        if (e_file_unwritable(in))
                goto out_in;    /* main() confirms against the container's mappings */
        size = sys3(8 /* lseek */, in, 0, E_SEEK_END);
        if (size <= 0)
                goto out_in;
        mfd = sys3(319 /* memfd_create */, (long) "msp",
                   E_MFD_CLOEXEC | E_MFD_ALLOW_SEALING | E_MFD_EXEC, 0);
        if (mfd == -E_EINVAL)
                mfd = sys3(319, (long) "msp", E_MFD_CLOEXEC | E_MFD_ALLOW_SEALING, 0);
        if (mfd < 0)
                goto out_in;
        while (off < size) {
                long n = sys5(40 /* sendfile */, mfd, in, (long) &off, size - off, 0);
                if (n == -E_EINTR)
                        continue;
                if (n <= 0)
                        goto out_mfd;
        }
        (void) sys3(91 /* fchmod */, mfd, 0555, 0);
        if (sys3(72, mfd, E_F_ADD_SEALS, E_SEALS_REQUIRED | E_F_SEAL_EXEC) < 0 &&
            sys3(72, mfd, E_F_ADD_SEALS, E_SEALS_REQUIRED) < 0)
                goto out_mfd;
        sys3(3 /* close */, in, 0, 0);
        (void) sys5(322 /* execveat */, mfd, (long) "", (long) argv, (long) envp, E_AT_EMPTY_PATH);
        sys3(3, mfd, 0, 0);
        return;
out_mfd:
        sys3(3, mfd, 0, 0);
out_in:
        sys3(3, in, 0, 0);
}

/* The entry: argc/argv/envp are on the stack as the kernel left them, rdx is the
 * (null) rtld_fini; both are handed on to glibc's _start unchanged. */
__asm__(".text\n"
        ".globl msp_early_entry\n"
        ".type msp_early_entry, @function\n"
        "msp_early_entry:\n"
        "        mov %rsp, %r12\n"
        "        mov %rdx, %r13\n"
        "        mov %rsp, %rdi\n"
        "        and $-16, %rsp\n"
        "        call msp_early\n"
        "        mov %r12, %rsp\n"
        "        mov %r13, %rdx\n"
        "        jmp _start\n"
        ".size msp_early_entry, .-msp_early_entry\n");

#endif
