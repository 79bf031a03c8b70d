/* ENOSYS for syscalls newer than the profile (seccomp-int.h).
 *
 * A profile written before a syscall existed cannot name it, so the default action
 * answers it, typically EPERM. libc and language runtimes probe new syscalls (clone3,
 * faccessat2, openat2, close_range ...) and fall back to the old ones only on ENOSYS;
 * EPERM breaks them. runc therefore answers ENOSYS for every syscall number above the
 * highest one the profile names (under any action) on each architecture, and msp does
 * the same: a short program in front of libseccomp's that loads the architecture and
 * the number and either returns ERRNO(ENOSYS) or falls through to the filter.
 *
 * Not added when the default action lets syscalls run (ALLOW, LOG, TRACE: a tracer
 * handles new syscalls itself) or already answers ENOSYS. Per architecture: x86-64 and
 * x32 share one audit value and are told apart by bit 30 of the number; on s390 and
 * s390x a number the kernel does not know reaches the filter as 0 (setup(2), unused
 * since long), which gets ENOSYS too. Unlike runc, the native architecture is covered
 * when the profile lists none (the filter holds it either way). */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include "lib/rt-libseccomp.h"        /* libseccomp, see there */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "lib/seccomp-int.h"

#define EN_X32_BIT 0x40000000u
#define EN_MAX_ARCHES 24
#define EN_MAX_STUB 255                 /* every jump of the stub fits in 8 bits */

typedef struct en_arch {
        uint32_t audit;                 /* AUDIT_ARCH_* as in seccomp_data.arch */
        uint32_t max;                   /* 0: no syscall of this ABI is named */
        uint32_t max_x32;               /* x86-64 only: the x32 ABI's, bit 30 set */
} en_arch;

enum { EN_NEXT, EN_ENOSYS, EN_FILTER };

typedef struct en_prog {
        struct sock_filter insn[EN_MAX_STUB];
        unsigned char jt_to[EN_MAX_STUB], jf_to[EN_MAX_STUB];   /* EN_* labels */
        size_t n;
} en_prog;

static bool
en_default_allows(const oci_seccomp *s)
{
        switch (s->default_action) {
        case OCI_SECCOMP_ALLOW:
        case OCI_SECCOMP_LOG:
        case OCI_SECCOMP_TRACE:
                return true;
        default:
                return s->has_default_errno_ret && s->default_errno_ret == ENOSYS;
        }
}

/* The highest number the profile names for the libseccomp arch token `arch`. */
static uint32_t
en_max_syscall(const oci_seccomp *s, uint32_t arch)
{
        uint32_t max = 0;

        for (size_t i = 0; i < s->n_syscalls; i++)
                for (size_t j = 0; j < s->syscalls[i].names.n; j++) {
                        int nr = seccomp_syscall_resolve_name_arch(arch,
                                                                   s->syscalls[i].names.v[j]);
                        if (nr >= 0 && (uint32_t) nr > max)
                                max = (uint32_t) nr;
                }
        return max;
}

static void
en_add(en_arch *arches, size_t *n, const oci_seccomp *s, uint32_t token)
{
        const bool x32 = token == SCMP_ARCH_X32;
        const uint32_t audit = x32 ? AUDIT_ARCH_X86_64 : token;
        size_t i;

        for (i = 0; i < *n && arches[i].audit != audit; i++)
                ;
        if (i == *n) {
                if (*n == EN_MAX_ARCHES)
                        return;
                arches[(*n)++] = (en_arch) { .audit = audit };
        }
        if (x32)
                arches[i].max_x32 = en_max_syscall(s, token);
        else
                arches[i].max = en_max_syscall(s, token);
}

/* The native architecture and every listed one libseccomp knows. */
static size_t
en_arches(const oci_seccomp *s, en_arch *arches)
{
        size_t n = 0;

        en_add(arches, &n, s, seccomp_arch_native());
        for (size_t i = 0; i < s->architectures.n; i++) {
                const char *name = s->architectures.v[i];
                char lower[32];
                size_t len;

                if (strncmp(name, "SCMP_ARCH_", 10) != 0)
                        continue;
                len = strlen(name + 10);
                if (len == 0 || len >= sizeof lower)
                        continue;
                for (size_t k = 0; k <= len; k++)
                        lower[k] = (char) (name[10 + k] >= 'A' && name[10 + k] <= 'Z'
                                           ? name[10 + k] - 'A' + 'a' : name[10 + k]);
                uint32_t token = seccomp_arch_resolve_name(lower);
                if (token)
                        en_add(arches, &n, s, token);
        }
        return n;
}

static int
en_emit(en_prog *p, uint16_t code, uint32_t k, int jt, int jf)
{
        if (p->n >= EN_MAX_STUB)
                return -E2BIG;
        p->insn[p->n] = (struct sock_filter) { .code = code, .k = k };
        p->jt_to[p->n] = (unsigned char) jt;
        p->jf_to[p->n] = (unsigned char) jf;
        p->n++;
        return 0;
}

/* "number > max: ENOSYS, else the filter"; max 0 (nothing named) always filters. */
static int
en_emit_max(en_prog *p, uint32_t max)
{
        if (max == 0)
                return en_emit(p, BPF_JMP | BPF_JA, 0, EN_FILTER, EN_FILTER);
        return en_emit(p, BPF_JMP | BPF_JGT | BPF_K, max, EN_ENOSYS, EN_FILTER);
}

/* One architecture: a jeq on it that skips the block when it does not match (the
 * accumulator still holds the architecture for the next block), then the number. */
static int
en_emit_arch(en_prog *p, const en_arch *a)
{
        size_t head = p->n;
        int r = en_emit(p, BPF_JMP | BPF_JEQ | BPF_K, a->audit, EN_NEXT, EN_NEXT);

        if (r >= 0)
                r = en_emit(p, BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr),
                            EN_NEXT, EN_NEXT);
        if (r >= 0 && (a->audit == AUDIT_ARCH_S390 || a->audit == AUDIT_ARCH_S390X))
                r = en_emit(p, BPF_JMP | BPF_JEQ | BPF_K, 0, EN_ENOSYS, EN_NEXT);
        if (r >= 0 && a->audit == AUDIT_ARCH_X86_64) {
                /* bit 30 set: x32, the instruction after the next */
                r = en_emit(p, BPF_JMP | BPF_JSET | BPF_K, EN_X32_BIT, EN_NEXT, EN_NEXT);
                if (r >= 0)
                        p->insn[p->n - 1].jt = 1;
                if (r >= 0)
                        r = en_emit_max(p, a->max);
                if (r >= 0)
                        r = en_emit_max(p, a->max_x32);
        } else if (r >= 0) {
                r = en_emit_max(p, a->max);
        }
        if (r >= 0)
                p->insn[head].jf = (unsigned char) (p->n - head - 1);
        return r;
}

/* Resolve the labels: ENOSYS is the stub's last instruction, the filter follows it. */
static void
en_link(en_prog *p)
{
        const size_t enosys = p->n - 1, filter = p->n;

        for (size_t i = 0; i < p->n; i++) {
                struct sock_filter *f = &p->insn[i];
                size_t jt = p->jt_to[i] == EN_ENOSYS ? enosys : filter;
                size_t jf = p->jf_to[i] == EN_ENOSYS ? enosys : filter;

                if (BPF_CLASS(f->code) != BPF_JMP)
                        continue;
                if (BPF_OP(f->code) == BPF_JA) {
                        f->k = (uint32_t) (filter - i - 1);
                        continue;
                }
                if (p->jt_to[i] != EN_NEXT)
                        f->jt = (unsigned char) (jt - i - 1);
                if (p->jf_to[i] != EN_NEXT)
                        f->jf = (unsigned char) (jf - i - 1);
        }
}

int
rt_seccomp_enosys_prepend(const oci_seccomp *s, struct sock_filter **insns, size_t *n,
                          msp_err *err)
{
        en_arch arches[EN_MAX_ARCHES];
        en_prog p = { .n = 0 };
        size_t n_arches;
        int r;

        if (en_default_allows(s))
                return 0;
        n_arches = en_arches(s, arches);
        r = en_emit(&p, BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch),
                    EN_NEXT, EN_NEXT);
        for (size_t i = 0; r >= 0 && i < n_arches; i++)
                if (arches[i].max || arches[i].max_x32)
                        r = en_emit_arch(&p, &arches[i]);
        /* no architecture matched: over the ENOSYS return into the filter */
        if (r >= 0)
                r = en_emit(&p, BPF_JMP | BPF_JA, 0, EN_FILTER, EN_FILTER);
        if (r >= 0)
                r = en_emit(&p, BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS, EN_NEXT, EN_NEXT);
        if (r < 0 || *n + p.n > BPF_MAXINSNS)
                return msp_err_set(err, E2BIG, "seccomp: the filter is too large for the "
                                   "ENOSYS stub (%zu instructions)", *n + p.n);
        en_link(&p);
        struct sock_filter *all = malloc((*n + p.n) * sizeof *all);
        if (!all)
                return msp_err_set(err, ENOMEM, "seccomp: out of memory");
        memcpy(all, p.insn, p.n * sizeof *all);
        memcpy(all + p.n, *insns, *n * sizeof *all);
        free(*insns);
        *insns = all;
        *n += p.n;
        return 0;
}
