/* The CVE-2019-5736 re-exec before glibc starts (see runtime/lib/selfexe.c for the
 * defence itself). In a static PIE this is the ELF entry point: it runs before glibc's
 * start-up (whose CPU detection costs ~0.4 ms of CPUID exits on a VM) and before the
 * binary relocates itself, so it may use no libc, no pointer tables (they would still
 * be unrelocated), no TLS (no stack protector) and no global writable data. It decides
 * exactly like rt_selfexe_needed(), copies /proc/self/exe into a sealed memfd and
 * execveat()s it; on any failure it falls through to glibc's _start, and main() then
 * does the same through rt_selfexe_ensure() with proper error messages. */
#include <stddef.h>

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
        in = sys3(257 /* openat */, E_AT_FDCWD, (long) "/proc/self/exe", E_O_RDONLY | E_O_CLOEXEC);
        if (in < 0)
                return;
        seals = sys3(72 /* fcntl */, in, E_F_GET_SEALS, 0);
        if (seals >= 0 && (seals & E_SEALS_REQUIRED) == E_SEALS_REQUIRED)
                goto out_in;    /* already the sealed copy */
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
