/* The /etc paths a language's files name (sysdeps.h). */
#include "sandbox/sysdeps.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox/bundle.h"
#include "oci/oci.h"
#include "sandbox/sysview.h"

#define MAX_FILES 768                   /* ELF and source files per scan */
#define MAX_SECTION (8u << 20)          /* larger read-only data is data, not paths (ICU) */
#define MAX_SOURCE (1u << 20)
#define TREE_DEPTH 3
#define LINK_DEPTH 2                    /* links followed in a home and one level below */
#define RUNPATH_MAX 512                /* a RUNPATH entry, and the linking file's directory */
#define TREE_BUDGET 20000               /* directory entries per home */
#define LD_CACHE "/etc/ld.so.cache"
#define BASELINE "/bin/sh"
#define LD_CACHE_MAGIC "glibc-ld.so.cache1.1"

struct mcp_sysdeps {
        mcp_hostview *view;
        size_t n_seen;
        struct { dev_t dev; ino_t ino; } seen[MAX_FILES];
        const char *cache;              /* the loader's cache, mapped; NULL: none */
        size_t cache_size;
        bool baseline;                  /* recording the shell's files, joining nothing */
        size_t n_names;                 /* libraries already looked up by name */
        char *names[MAX_FILES];
};

typedef struct {
        uint32_t nlibs, len_strings;
        uint8_t flags, pad[3];
        uint32_t extension_offset, unused[3];
} cache_header;                         /* after LD_CACHE_MAGIC */

typedef struct {
        int32_t flags;
        uint32_t key, value, osversion;
        uint64_t hwcap;
} cache_entry;

static void scan_elf(mcp_sysdeps *d, const char *path, uint16_t machine);

mcp_sysdeps *
mcp_sysdeps_new(mcp_hostview *view)
{
        mcp_sysdeps *d = calloc(1, sizeof *d);
        if (!d)
                return NULL;
        d->view = view;
        _cleanup_close_ int fd = open(LD_CACHE, O_RDONLY | O_CLOEXEC);
        struct stat st;
        if (fd >= 0 && fstat(fd, &st) == 0 && st.st_size > 0) {
                void *p = mmap(NULL, (size_t) st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
                if (p != MAP_FAILED) {
                        d->cache = p;
                        d->cache_size = (size_t) st.st_size;
                }
        }
        /* What the shell loads (the C library) every program loads: what it names is the
         * system's, which the fixed selection and the synthesized files cover. */
        d->baseline = true;
        scan_elf(d, BASELINE, 0);
        d->baseline = false;
        return d;
}

void
mcp_sysdeps_free(mcp_sysdeps *d)
{
        if (!d)
                return;
        for (size_t i = 0; i < d->n_names; i++)
                free(d->names[i]);
        if (d->cache)
                munmap((void *) d->cache, d->cache_size);
        free(d);
}

/* First time this file is scanned (and the budget allows): remember it. */
static bool
first_visit(mcp_sysdeps *d, const struct stat *st)
{
        for (size_t i = 0; i < d->n_seen; i++)
                if (d->seen[i].dev == st->st_dev && d->seen[i].ino == st->st_ino)
                        return false;
        if (d->n_seen == MAX_FILES)
                return false;
        d->seen[d->n_seen].dev = st->st_dev;
        d->seen[d->n_seen].ino = st->st_ino;
        d->n_seen++;
        return true;
}

static bool
path_char(char c)
{
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '/' || c == '.' || c == '_' || c == '-' || c == '+' || c == '@';
}

/* Every "/etc/..." in buf that starts a string (not ".../usr/local/etc/..."), resolved into
 * the view when it exists. */
static void
scan_bytes(mcp_sysdeps *d, const char *buf, size_t len)
{
        if (d->baseline)
                return;
        const char *p = buf, *end = buf + len;
        /* memchr is the fast search here (memmem's is several times slower on MBs). */
        while ((p = memchr(p, '/', (size_t) (end - p)))) {
                const char *start = p++;
                if ((size_t) (end - start) < 5 || memcmp(start, "/etc/", 5) != 0 ||
                    (start > buf && path_char(start[-1])))
                        continue;
                char path[MCP_SYSVIEW_PATH];
                size_t n = 0;
                for (const char *q = start; q < end && path_char(*q) && n < sizeof path - 1; q++)
                        path[n++] = *q;
                while (n > 5 && path[n - 1] == '/')
                        n--;
                path[n] = '\0';
                struct stat st;
                char why[PATH_MAX + 64];
                if (n > 5 && lstat(path, &st) == 0)
                        (void) mcp_sysview_resolve(d->view, path, true, why, sizeof why);
        }
}

/* The ELF image at map (size bytes), checked as far as it is read. */
typedef struct {
        const unsigned char *map;
        size_t size;
        const Elf64_Ehdr *eh;
        const Elf64_Shdr *sh;
} elf;

static bool
elf_open(elf *e, const void *map, size_t size)
{
        e->map = map;
        e->size = size;
        e->eh = map;
        if (size < sizeof(Elf64_Ehdr) || memcmp(e->eh->e_ident, ELFMAG, SELFMAG) != 0 ||
            e->eh->e_ident[EI_CLASS] != ELFCLASS64 || e->eh->e_shentsize != sizeof(Elf64_Shdr) ||
            e->eh->e_shoff > size || e->eh->e_shnum > (size - e->eh->e_shoff) / sizeof(Elf64_Shdr) ||
            e->eh->e_shstrndx >= e->eh->e_shnum)
                return false;
        e->sh = (const Elf64_Shdr *) (const void *) (e->map + e->eh->e_shoff);
        return true;
}

/* Section i's bytes, or NULL when it lies outside the file. */
static const char *
elf_section(const elf *e, size_t i, size_t *len)
{
        const Elf64_Shdr *s = &e->sh[i];
        if (s->sh_type == SHT_NOBITS || s->sh_offset > e->size || s->sh_size > e->size - s->sh_offset)
                return NULL;
        *len = s->sh_size;
        return (const char *) e->map + s->sh_offset;
}

/* A NUL-terminated string at off in the string section i. */
static const char *
elf_string(const elf *e, size_t i, size_t off)
{
        size_t len;
        const char *s = i < e->eh->e_shnum ? elf_section(e, i, &len) : NULL;
        if (!s || off >= len || !memchr(s + off, '\0', len - off))
                return NULL;
        return s + off;
}

/* First time a library is looked up by this name (most are linked by many files). */
static bool
first_name(mcp_sysdeps *d, const char *name)
{
        for (size_t i = 0; i < d->n_names; i++)
                if (strcmp(d->names[i], name) == 0)
                        return false;
        if (d->n_names == MAX_FILES || !(d->names[d->n_names] = strdup(name)))
                return false;
        d->n_names++;
        return true;
}

/* A library the loader would find by name: its RUNPATH, then its cache (the first entry of
 * our machine). A name is looked up once: the first linking file's RUNPATH wins. */
static void
scan_needed(mcp_sysdeps *d, const char *name, uint16_t machine, char runpath[][RUNPATH_MAX],
            size_t n_runpath)
{
        if (!first_name(d, name))
                return;
        char path[PATH_MAX];
        for (size_t i = 0; i < n_runpath; i++) {
                snprintf(path, sizeof path, "%s/%s", runpath[i], name);
                if (access(path, R_OK) == 0) {
                        scan_elf(d, path, machine);
                        return;
                }
        }
        size_t m = sizeof LD_CACHE_MAGIC - 1;
        const char *start = d->cache ? memmem(d->cache, d->cache_size, LD_CACHE_MAGIC, m) : NULL;
        if (!start || (size_t) (start - d->cache) + m + sizeof(cache_header) > d->cache_size)
                return;
        cache_header h;
        memcpy(&h, start + m, sizeof h);
        size_t room = d->cache_size - (size_t) (start - d->cache) - m - sizeof h;
        const char *entries = start + m + sizeof h;
        size_t left = d->cache_size - (size_t) (start - d->cache);
        for (uint32_t i = 0; i < h.nlibs && (i + 1) * sizeof(cache_entry) <= room; i++) {
                cache_entry ce;
                memcpy(&ce, entries + i * sizeof ce, sizeof ce);
                /* Offsets count from the new format's magic. */
                if (ce.key >= left || ce.value >= left ||
                    !memchr(start + ce.key, '\0', left - ce.key) ||
                    !memchr(start + ce.value, '\0', left - ce.value) ||
                    strcmp(start + ce.key, name) != 0)
                        continue;
                scan_elf(d, start + ce.value, machine);
                return;
        }
}

/* The DT_NEEDED libraries and the RUNPATH (or RPATH) of the .dynamic section i. */
static void
scan_dynamic(mcp_sysdeps *d, const elf *e, size_t i, const char *path)
{
        size_t len;
        const Elf64_Dyn *dyn = (const Elf64_Dyn *) (const void *) elf_section(e, i, &len);
        if (!dyn || e->sh[i].sh_link >= e->eh->e_shnum)
                return;
        size_t n = len / sizeof *dyn, strtab = e->sh[i].sh_link;
        char runpath[4][RUNPATH_MAX], origin[RUNPATH_MAX];
        size_t n_runpath = 0;
        snprintf(origin, sizeof origin, "%s", path);
        *strrchr(origin, '/') = '\0';
        for (size_t k = 0; k < n && dyn[k].d_tag != DT_NULL; k++) {
                if (dyn[k].d_tag != DT_RUNPATH && dyn[k].d_tag != DT_RPATH)
                        continue;
                const char *rp = elf_string(e, strtab, dyn[k].d_un.d_val);
                while (rp && *rp && n_runpath < ARRAY_SIZE(runpath)) {
                        size_t l = strcspn(rp, ":");
                        int w = -1;
                        if (strncmp(rp, "$ORIGIN", 7) == 0)
                                w = snprintf(runpath[n_runpath], RUNPATH_MAX, "%s%.*s", origin,
                                             (int) (l - 7), rp + 7);
                        else if (rp[0] == '/')
                                w = snprintf(runpath[n_runpath], RUNPATH_MAX, "%.*s", (int) l, rp);
                        if (w > 0 && w < RUNPATH_MAX)
                                n_runpath++;
                        rp += l + (rp[l] == ':');
                }
        }
        for (size_t k = 0; k < n && dyn[k].d_tag != DT_NULL; k++) {
                const char *name = dyn[k].d_tag == DT_NEEDED
                                           ? elf_string(e, strtab, dyn[k].d_un.d_val) : NULL;
                if (name && !strchr(name, '/'))
                        scan_needed(d, name, e->eh->e_machine, runpath, n_runpath);
        }
}

/* machine: what the linking file runs on (0: anything, the scan's root). */
static void
scan_elf(mcp_sysdeps *d, const char *path, uint16_t machine)
{
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
            !first_visit(d, &st))
                return;
        void *map = mmap(NULL, (size_t) st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (map == MAP_FAILED)
                return;
        elf e;
        if (elf_open(&e, map, (size_t) st.st_size) && (!machine || e.eh->e_machine == machine)) {
                for (size_t i = 0; i < e.eh->e_shnum; i++) {
                        const Elf64_Shdr *s = &e.sh[i];
                        const char *name = elf_string(&e, e.eh->e_shstrndx, s->sh_name);
                        size_t len;
                        const char *bytes;
                        if (s->sh_type == SHT_DYNAMIC)
                                scan_dynamic(d, &e, i, path);
                        else if (s->sh_type == SHT_PROGBITS && name &&
                                 strncmp(name, ".rodata", 7) == 0 && s->sh_size <= MAX_SECTION &&
                                 (bytes = elf_section(&e, i, &len)))
                                scan_bytes(d, bytes, len);
                }
        }
        munmap(map, (size_t) st.st_size);
}

static void
scan_text(mcp_sysdeps *d, const char *path)
{
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > MAX_SOURCE ||
            !first_visit(d, &st))
                return;
        char *buf = malloc((size_t) st.st_size + 1);
        ssize_t n = buf ? read(fd, buf, (size_t) st.st_size) : -1;
        if (n > 0)
                scan_bytes(d, buf, (size_t) n);
        free(buf);
}

void
mcp_sysdeps_file(mcp_sysdeps *d, const char *path, bool text)
{
        if (text)
                scan_text(d, path);
        else
                scan_elf(d, path, 0);
}

static bool
shared_object(const char *name)
{
        size_t n = strlen(name);
        return (n > 3 && strcmp(name + n - 3, ".so") == 0) || strstr(name, ".so.");
}

/* A directory holding a source file is a package: its own subpackages are not scanned
 * (a package names its configuration at its top, as matplotlib does). */
static void
tree(mcp_sysdeps *d, int dfd, const char *path, int depth, const char *source, size_t *budget)
{
        _cleanup_closedir_ DIR *dir = fdopendir(dfd);
        if (!dir) {
                close(dfd);
                return;
        }
        bool package = source && faccessat(dirfd(dir), source, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
        struct dirent *de;
        while ((de = readdir(dir)) && *budget > 0) {
                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                        continue;
                (*budget)--;
                char child[PATH_MAX];
                if (snprintf(child, sizeof child, "%s/%s", path, de->d_name) >= (int) sizeof child)
                        continue;
                struct stat st;
                if (de->d_type == DT_UNKNOWN &&
                    fstatat(dirfd(dir), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0)
                        de->d_type = S_ISLNK(st.st_mode) ? DT_LNK
                                     : S_ISDIR(st.st_mode) ? DT_DIR : DT_REG;
                if (de->d_type == DT_LNK && depth <= LINK_DEPTH) {
                        char why[PATH_MAX + 64];
                        (void) mcp_sysview_resolve(d->view, child, true, why, sizeof why);
                } else if (de->d_type == DT_DIR && depth < TREE_DEPTH && !package) {
                        int fd = openat(dirfd(dir), de->d_name,
                                        O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                        if (fd >= 0)
                                tree(d, fd, child, depth + 1, source, budget);
                } else if (de->d_type == DT_REG && source && strcmp(de->d_name, source) == 0) {
                        scan_text(d, child);
                } else if (de->d_type == DT_REG && shared_object(de->d_name)) {
                        scan_elf(d, child, 0);
                }
        }
}

void
mcp_sysdeps_tree(mcp_sysdeps *d, const char *dir, const char *source)
{
        int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        size_t budget = TREE_BUDGET;
        if (fd >= 0)
                tree(d, fd, dir, 1, source, &budget);
}
