/* The compiled-filter cache (seccomp-cache.h).
 *
 * One file per profile: <hash>.bpf, the hash (FNV-1a of the seccomp section as msp
 * parsed it) only picks the name. The file holds a header, the full key, libseccomp's
 * notes (skipped names, for --debug) and the program. The key is compared byte for
 * byte: the section, the build ids of every loaded object (msp with its static
 * libseccomp, a shared libseccomp, libc, the vDSO), libseccomp's version and API
 * level, the native architecture, the kernel (uname) and the bad-arch action probed
 * from it. A new msp or kernel therefore misses and rewrites the same file name.
 *
 * Trust: the directories are created 0700 and opened with O_NOFOLLOW through fds; a
 * directory or file that is not ours (euid), has group/other bits, is not a regular
 * file or has other links is ignored. Files are written to a temporary name and
 * renamed into place, so a reader sees a whole file or none; a temporary file left by
 * a crash between the two is removed by a later write once it is a minute old. */
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <link.h>
#include <linux/filter.h>
#include "lib/rt-libseccomp.h"        /* libseccomp, see there */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "lib/log.h"
#include "oci/oci.h"
#include "lib/seccomp-cache.h"
#include "lib/seccomp-int.h"

#define SCC_MAGIC "MSPSCBPF"
#define SCC_VERSION 1u
#define SCC_MAX_FILE (1u << 20)         /* header + key + notes + program */
#define SCC_MAX_FILES 64                /* distinct profiles; the oldest goes first */
#define SCC_FNV_INIT 0xcbf29ce484222325ULL
#define SCC_TMP_PREFIX ".tmp-"
#define SCC_TMP_MAX_AGE 60              /* seconds */

struct scc_header {
        char magic[8];
        uint32_t version;
        uint32_t key_len;
        uint32_t notes_len;
        uint32_t n_insns;
        uint64_t sum;                   /* FNV-1a of key, notes and program */
};

static uint64_t
scc_fnv(uint64_t h, const void *data, size_t n)
{
        const unsigned char *b = data;

        for (size_t i = 0; i < n; i++) {
                h ^= b[i];
                h *= 0x100000001b3ULL;
        }
        return h;
}

/* ---- the key ---- */

static void
scc_strv(FILE *out, const char *tag, const oci_strv *v)
{
        fprintf(out, "%s %zu\n", tag, v->n);
        for (size_t i = 0; i < v->n; i++)
                fprintf(out, "%zu:%s\n", strlen(v->v[i]), v->v[i]);
}

/* Every field that reaches the compile; listenerPath and listenerMetadata do not.
 * Strings are length-prefixed, so two sections never serialise alike. */
static void
scc_section(FILE *out, const oci_seccomp *s)
{
        fprintf(out, "default %d %d %" PRIu32 "\nflags %" PRIu32 "\n", (int) s->default_action,
                (int) s->has_default_errno_ret, s->default_errno_ret, s->flags);
        scc_strv(out, "arch", &s->architectures);
        fprintf(out, "syscalls %zu\n", s->n_syscalls);
        for (size_t i = 0; i < s->n_syscalls; i++) {
                const oci_seccomp_syscall *sc = &s->syscalls[i];
                fprintf(out, "rule %d %d %" PRIu32 " %zu\n", (int) sc->action,
                        (int) sc->has_errno_ret, sc->errno_ret, sc->n_args);
                scc_strv(out, "names", &sc->names);
                for (size_t k = 0; k < sc->n_args; k++)
                        fprintf(out, "arg %" PRIu32 " %d %" PRIu64 " %" PRIu64 "\n",
                                sc->args[k].index, (int) sc->args[k].op, sc->args[k].value,
                                sc->args[k].value_two);
        }
}

typedef struct scc_ids {
        FILE *out;
        bool main_has_id;
        bool first;
} scc_ids;

/* The GNU build id of each loaded object, from its PT_NOTE segments in memory. */
static int
scc_build_ids(struct dl_phdr_info *info, size_t size, void *data)
{
        scc_ids *ids = data;
        bool is_main = ids->first;

        (void) size;
        ids->first = false;
        for (int i = 0; i < info->dlpi_phnum; i++) {
                const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
                size_t align = ph->p_align == 8 ? 8 : 4;
                if (ph->p_type != PT_NOTE)
                        continue;
                const char *p = (const char *) (info->dlpi_addr + ph->p_vaddr);
                const char *end = p + ph->p_memsz;
                while ((size_t) (end - p) >= sizeof(ElfW(Nhdr))) {
                        const ElfW(Nhdr) *nh = (const void *) p;
                        size_t namesz = (nh->n_namesz + align - 1) & ~(align - 1);
                        size_t descsz = (nh->n_descsz + align - 1) & ~(align - 1);
                        const unsigned char *desc = (const unsigned char *) p + sizeof *nh + namesz;
                        if (namesz + descsz > (size_t) (end - p) - sizeof *nh)
                                break;
                        if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
                            memcmp(p + sizeof *nh, "GNU", 4) == 0 && nh->n_descsz > 0) {
                                fprintf(ids->out, "build '%s' ", info->dlpi_name);
                                for (size_t k = 0; k < nh->n_descsz; k++)
                                        fprintf(ids->out, "%02x", desc[k]);
                                fputc('\n', ids->out);
                                ids->main_has_id |= is_main;
                        }
                        p = (const char *) desc + descsz;
                }
        }
        return 0;
}

/* The key and the file name. -ENOKEY when msp has no build id (nothing would tell
 * two builds' programs apart). */
static int
scc_key(const oci_seccomp *s, char **ret_key, size_t *ret_len, char *name, size_t name_size)
{
        _cleanup_free_ char *sect = NULL, *key = NULL;
        size_t sect_len = 0, key_len = 0;
        const struct scmp_version *v = seccomp_version();
        struct utsname u;
        FILE *m;

        m = open_memstream(&sect, &sect_len);
        if (!m)
                return -ENOMEM;
        scc_section(m, s);
        if (fclose(m) != 0)
                return -ENOMEM;
        if (uname(&u) < 0)
                return -errno;
        m = open_memstream(&key, &key_len);
        if (!m)
                return -ENOMEM;
        scc_ids ids = { .out = m, .first = true };
        fprintf(m, "msp seccomp cache %u\n", SCC_VERSION);
        (void) dl_iterate_phdr(scc_build_ids, &ids);
        fprintf(m, "libseccomp %u.%u.%u api %u\nnative %" PRIu32 " badarch %" PRIu32 "\n"
                "kernel %s %s %s %s\nsection %zu\n", v->major, v->minor, v->micro,
                seccomp_api_get(), seccomp_arch_native(), rt_seccomp_badarch_action(),
                u.sysname, u.release, u.version, u.machine, sect_len);
        fwrite(sect, 1, sect_len, m);
        if (fclose(m) != 0)
                return -ENOMEM;
        if (!ids.main_has_id)
                return -ENOKEY;
        if (key_len > SCC_MAX_FILE / 2)
                return -E2BIG;
        snprintf(name, name_size, "%016" PRIx64 ".bpf", scc_fnv(SCC_FNV_INIT, sect, sect_len));
        *ret_len = key_len;
        *ret_key = TAKE_PTR(key);
        return 0;
}

/* ---- files ---- */

/* Ours: owned by the effective uid, no group or other bits. */
static int
scc_check_owned(int fd, mode_t type)
{
        struct stat st;

        if (fstat(fd, &st) < 0)
                return -errno;
        if ((st.st_mode & S_IFMT) != type || st.st_uid != geteuid() || (st.st_mode & 077))
                return -EPERM;
        if (type == S_IFREG && st.st_nlink != 1)
                return -EPERM;
        return 0;
}

static int
scc_open_dir(int parent, const char *name)
{
        _cleanup_close_ int fd = -1;
        int r;

        if (mkdirat(parent, name, 0700) < 0 && errno != EEXIST)
                return -errno;
        fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        r = scc_check_owned(fd, S_IFDIR);
        if (r < 0)
                return r;
        return TAKE_FD(fd);
}

/* The state root's parent holds the cache: several roots there (Docker's per-namespace
 * ones) share it, as the key decides what a program is for. */
static int
scc_open_cache(int state_root_fd)
{
        _cleanup_close_ int parent = openat(state_root_fd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (parent < 0)
                return -errno;
        _cleanup_close_ int top = scc_open_dir(parent, RT_SECCOMP_CACHE_TOP);

        if (top < 0)
                return top;
        return scc_open_dir(top, "seccomp");
}

typedef struct scc_entry {
        struct sock_filter *insns;      /* owned */
        size_t n;
        char *notes;                    /* owned, NUL-terminated */
} scc_entry;

static int
scc_read(int dirfd, const char *name, const char *key, size_t key_len, scc_entry *ret)
{
        _cleanup_close_ int fd = -1;
        _cleanup_free_ unsigned char *buf = NULL;
        struct scc_header h;
        struct stat st;
        int r;

        fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        r = scc_check_owned(fd, S_IFREG);
        if (r < 0)
                return r;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (st.st_size < (off_t) sizeof h || st.st_size > SCC_MAX_FILE)
                return -EBADMSG;
        size_t size = (size_t) st.st_size;
        buf = malloc(size);
        if (!buf)
                return -ENOMEM;
        ssize_t got = pread(fd, buf, size, 0);
        if (got < 0)
                return -errno;
        if ((size_t) got != size)
                return -EBADMSG;
        memcpy(&h, buf, sizeof h);
        if (memcmp(h.magic, SCC_MAGIC, sizeof h.magic) != 0 || h.version != SCC_VERSION ||
            h.n_insns == 0 || h.n_insns > BPF_MAXINSNS ||
            sizeof h + (uint64_t) h.key_len + h.notes_len +
                    (uint64_t) h.n_insns * sizeof(struct sock_filter) != size)
                return -EBADMSG;
        if (h.key_len != key_len || memcmp(buf + sizeof h, key, key_len) != 0)
                return -ESTALE;
        if (scc_fnv(SCC_FNV_INIT, buf + sizeof h, size - sizeof h) != h.sum)
                return -EBADMSG;
        const unsigned char *notes = buf + sizeof h + key_len;
        ret->n = h.n_insns;
        ret->insns = malloc(ret->n * sizeof(struct sock_filter));
        ret->notes = strndup((const char *) notes, h.notes_len);
        if (!ret->insns || !ret->notes) {
                free(ret->insns);
                free(ret->notes);
                return -ENOMEM;
        }
        memcpy(ret->insns, notes + h.notes_len, ret->n * sizeof(struct sock_filter));
        return 0;
}

/* A .tmp-* file left by a writer that died between write and rename: removed once it is
 * older than SCC_TMP_MAX_AGE (a live writer renames within milliseconds), and only a
 * regular file of ours; anything else in the directory is left alone. */
static void
scc_drop_stale_tmp(int dirfd, const char *name, const struct stat *st,
                   const struct timespec *now)
{
        if (!S_ISREG(st->st_mode) || st->st_uid != geteuid() ||
            st->st_mtim.tv_sec > now->tv_sec - SCC_TMP_MAX_AGE)
                return;
        (void) unlinkat(dirfd, name, 0);
}

/* At most SCC_MAX_FILES programs: before adding one, the least recently written goes,
 * and so do stale temporary files. */
static void
scc_evict(int dirfd, const char *keep)
{
        int fd = fcntl(dirfd, F_DUPFD_CLOEXEC, 3);
        _cleanup_closedir_ DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
        char oldest[256] = "";
        struct timespec oldest_t = { 0 }, now;
        size_t n = 0;
        struct dirent *de;

        if (!d) {
                if (fd >= 0)
                        close(fd);
                return;
        }
        if (clock_gettime(CLOCK_REALTIME, &now) < 0)
                now.tv_sec = 0;         /* no clock: no tmp file counts as stale */
        while ((de = readdir(d))) {
                size_t len = strlen(de->d_name);
                struct stat st;
                if (fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        continue;
                if (strncmp(de->d_name, SCC_TMP_PREFIX, strlen(SCC_TMP_PREFIX)) == 0) {
                        scc_drop_stale_tmp(dirfd, de->d_name, &st, &now);
                        continue;
                }
                if (len < 5 || strcmp(de->d_name + len - 4, ".bpf") != 0 ||
                    strcmp(de->d_name, keep) == 0)
                        continue;
                n++;
                if (!oldest[0] || st.st_mtim.tv_sec < oldest_t.tv_sec ||
                    (st.st_mtim.tv_sec == oldest_t.tv_sec && st.st_mtim.tv_nsec < oldest_t.tv_nsec)) {
                        snprintf(oldest, sizeof oldest, "%s", de->d_name);
                        oldest_t = st.st_mtim;
                }
        }
        if (n >= SCC_MAX_FILES && oldest[0])
                (void) unlinkat(dirfd, oldest, 0);
}

static int
scc_write(int dirfd, const char *name, const char *key, size_t key_len, const char *notes,
          size_t notes_len, const struct sock_filter *insns, size_t n)
{
        struct scc_header h = { .version = SCC_VERSION, .key_len = (uint32_t) key_len,
                                .notes_len = (uint32_t) notes_len, .n_insns = (uint32_t) n };
        struct iovec iov[] = {
                { &h, sizeof h },
                { (void *) key, key_len },
                { (void *) notes, notes_len },
                { (void *) insns, n * sizeof *insns },
        };
        size_t total = 0;
        char tmp[300];
        _cleanup_close_ int fd = -1;

        memcpy(h.magic, SCC_MAGIC, sizeof h.magic);
        h.sum = SCC_FNV_INIT;
        for (size_t i = 1; i < ARRAY_SIZE(iov); i++)
                h.sum = scc_fnv(h.sum, iov[i].iov_base, iov[i].iov_len);
        for (size_t i = 0; i < ARRAY_SIZE(iov); i++)
                total += iov[i].iov_len;
        if (total > SCC_MAX_FILE)
                return -E2BIG;
        scc_evict(dirfd, name);
        snprintf(tmp, sizeof tmp, SCC_TMP_PREFIX "%d-%s", (int) getpid(), name);
        fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0)
                return -errno;
        ssize_t w = writev(fd, iov, (int) ARRAY_SIZE(iov));
        int r = w < 0 ? -errno : (size_t) w != total ? -ENOSPC : 0;
        if (r == 0 && renameat(dirfd, tmp, dirfd, name) < 0)
                r = -errno;
        if (r < 0)
                (void) unlinkat(dirfd, tmp, 0);
        return r;
}

/* ---- public ---- */

static void
scc_entry_done(scc_entry *e)
{
        free(e->insns);
        free(e->notes);
}

int
rt_seccomp_prepare_cached(const rt_ctx *ctx, int state_root_fd, const oci_seccomp *s,
                          rt_seccomp **ret, msp_err *err)
{
        _cleanup_(rt_seccomp_freep) rt_seccomp *f = NULL;
        _cleanup_free_ char *key = NULL, *notes = NULL;
        _cleanup_(scc_entry_done) scc_entry e = { 0 };
        _cleanup_close_ int dirfd = -1;
        size_t key_len = 0, notes_len = 0, n;
        const bool debug = ctx && ctx->debug;
        char name[32];
        int r;

        r = rt_seccomp_check(ctx, s, &f, err);
        if (r < 0)
                return r;
        if (state_root_fd < 0)
                r = -EPERM;
        else
                r = scc_key(s, &key, &key_len, name, sizeof name);
        if (r >= 0)
                r = dirfd = scc_open_cache(state_root_fd);
        if (r >= 0) {
                r = scc_read(dirfd, name, key, key_len, &e);
                if (r >= 0) {
                        if (debug)
                                fputs(e.notes, stderr);
                        rt_seccomp_set_program(f, TAKE_PTR(e.insns), e.n);
                        rt_debug(ctx, "seccomp: cached filter %s (%zu instructions)", name, e.n);
                        *ret = TAKE_PTR(f);
                        return 1;
                }
                rt_debug(ctx, "seccomp: no usable cached filter %s (%s), compiling", name,
                         strerror(-r));
        } else {
                rt_debug(ctx, "seccomp: no filter cache (%s), compiling", strerror(-r));
        }

        /* The notes are kept with the program, so that --debug says the same on a hit. */
        FILE *m = dirfd >= 0 ? open_memstream(&notes, &notes_len) : NULL;
        r = rt_seccomp_compile(s, f, m ? m : debug ? stderr : NULL, err);
        bool store = m && fclose(m) == 0 && notes;
        if (debug && store)
                fputs(notes, stderr);
        if (r < 0)
                return r;
        if (store) {
                const struct sock_filter *insns = rt_seccomp_program(f, &n);
                r = scc_write(dirfd, name, key, key_len, notes, notes_len, insns, n);
                if (r < 0)
                        rt_debug(ctx, "seccomp: filter not cached: %s", strerror(-r));
                else
                        rt_debug(ctx, "seccomp: compiled filter cached as %s (%zu instructions)",
                                 name, n);
        }
        *ret = TAKE_PTR(f);
        return 0;
}
