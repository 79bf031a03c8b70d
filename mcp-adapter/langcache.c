/* Probe verdicts kept across starts (langcache.h).
 *
 * The file: one line per verdict, "KEY<TAB>ok<TAB>" or "KEY<TAB>broken<TAB>WHY", the
 * newest first, at most CACHE_LINES; rewritten whole through a temporary file and rename. */
#include "langcache.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox/sandbox.h"
#include "base/base.h"
#include "langprobe.h"
#include "oci/oci.h"

#define CACHE_LINES 64
#define CACHE_MAX (256u * 1024u)
#define KEY_MAX 1536

void
mcp_langcache_path(char *buf, size_t size)
{
        const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
        if (geteuid() == 0)
                snprintf(buf, size, "/var/cache/msp-mcp/languages");
        else if (xdg && xdg[0] == '/')
                snprintf(buf, size, "%s/msp-mcp/languages", xdg);
        else if (home && home[0] == '/')
                snprintf(buf, size, "%s/.cache/msp-mcp/languages", home);
        else
                buf[0] = '\0';
}

/* "path:dev:ino:size:mtime" of a file, "path:-" when it cannot be seen. */
static size_t
ident(char *buf, size_t size, const char *path)
{
        struct stat st;
        if (!path || stat(path, &st) < 0)
                return (size_t) snprintf(buf, size, "%s:- ", path ? path : "built-in");
        return (size_t) snprintf(buf, size, "%s:%llx:%llu:%lld:%lld.%09ld ", path,
                                 (unsigned long long) st.st_dev, (unsigned long long) st.st_ino,
                                 (long long) st.st_size, (long long) st.st_mtim.tv_sec,
                                 st.st_mtim.tv_nsec);
}

/* What every language's key shares: the programs and policy of the sandbox. */
static void
common_key(const mcp_config *cfg, char *buf, size_t size)
{
        char exe[4096];
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        exe[n > 0 ? n : 0] = '\0';
        size_t len = (size_t) snprintf(buf, size, "uid:%u ", (unsigned) geteuid());
        const char *const files[] = { exe, cfg->runtime_path, cfg->init_path, cfg->userns_hook,
                                      cfg->seccomp_profile, cfg->landlock_profile };
        for (size_t i = 0; i < ARRAY_SIZE(files) && len < size; i++)
                len += ident(buf + len, size - len, files[i]);
        for (char *c = buf; *c; c++)            /* the line format's separators */
                if (*c == '\t' || *c == '\n')
                        *c = ' ';
}

static char *
read_cache(const char *path)
{
        _cleanup_close_ int fd = path[0] ? open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC) : -1;
        char *buf = NULL;
        size_t len;
        msp_err err = { 0 };
        if (fd >= 0 && mcp_read_fd(fd, CACHE_MAX, &buf, &len, &err) == 0)
                return buf;
        return strdup("");
}

/* The cached line of key: its verdict and why (NUL-terminated copies). */
static bool
lookup(const char *cache, const char *key, bool *broken, char *why, size_t why_size)
{
        size_t klen = strlen(key);
        for (const char *line = cache; line && *line;) {
                size_t len = strcspn(line, "\n");
                if (len > klen && strncmp(line, key, klen) == 0 && line[klen] == '\t') {
                        const char *v = line + klen + 1, *end = line + len;
                        const char *tab = memchr(v, '\t', (size_t) (end - v));
                        if (tab) {
                                *broken = (size_t) (tab - v) == 6 && strncmp(v, "broken", 6) == 0;
                                snprintf(why, why_size, "%.*s", (int) (end - tab - 1), tab + 1);
                                return true;
                        }
                }
                line += len + (line[len] == '\n');
        }
        return false;
}

typedef struct probe_job {
        const mcp_config *cfg;
        const mcp_host *host;
} probe_job;

/* The misses' programs in a child: namespaces the probe engine enters stay in it. */
static int
probe(void *data, void *out, msp_err *err)
{
        const probe_job *job = data;
        const mcp_config *cfg = job->cfg;
        mcp_langprobe *probes = out;
        mcp_config mine = *cfg;
        /* Its programs need no cgroup, and it cannot make one: it shares the server's
         * cgroup, which a delegated one must hold alone (rootless-cgroup.h). */
        mine.require_cgroups = false;
        size_t n = 0;
        while (n < MCP_LANG_MAX && probes[n].name)
                n++;
        return mcp_langprobe_run(&mine, job->host, probes, n, err);
}

static int
probe_in_child(const mcp_config *cfg, const mcp_host *host, mcp_langprobe *probes, msp_err *err)
{
        probe_job job = { cfg, host };
        int r = mcp_child_call(probe, &job, probes, MCP_LANG_MAX * sizeof *probes, err);
        return r < 0 ? msp_err_prefix(err, "language programs") : 0;
}

static void
write_cache(const char *path, const char *old, char (*lines)[KEY_MAX + 400], size_t n,
            mcp_lang_verdicts *ret)
{
        char tmp[4200], dir[4200];
        snprintf(dir, sizeof dir, "%s", path);
        char *slash = strrchr(dir, '/');
        if (slash && slash != dir) {
                *slash = '\0';
                msp_err e = { 0 };
                (void) mcp_mkdir_parents(dir, 0700, &e);
        }
        snprintf(tmp, sizeof tmp, "%s.%d.tmp", path, (int) getpid());
        _cleanup_fclose_ FILE *f = fopen(tmp, "wex");
        if (!f) {
                snprintf(ret->note, sizeof ret->note, "cannot write %.200s: %s", tmp, strerror(errno));
                return;
        }
        size_t kept = 0;
        for (size_t i = 0; i < n; i++, kept++)
                fprintf(f, "%s\n", lines[i]);
        /* Older lines of other keys (another policy, the other uid) stay, up to the cap. */
        for (const char *line = old; line && *line && kept < CACHE_LINES;) {
                size_t len = strcspn(line, "\n");
                const char *tab = memchr(line, '\t', len);
                bool dup = false;
                for (size_t i = 0; tab && i < n && !dup; i++)
                        dup = strncmp(lines[i], line, (size_t) (tab - line) + 1) == 0;
                if (tab && !dup) {
                        fprintf(f, "%.*s\n", (int) len, line);
                        kept++;
                }
                line += len + (line[len] == '\n');
        }
        if (fflush(f) != 0 || ferror(f) || rename(tmp, path) < 0) {
                snprintf(ret->note, sizeof ret->note, "cannot write %.200s: %s", path, strerror(errno));
                (void) unlink(tmp);
        }
}

int
mcp_langcache_verdicts(const mcp_config *cfg, const mcp_host *host, const char *cache_path,
                       mcp_lang_verdicts *ret, msp_err *err)
{
        *ret = (mcp_lang_verdicts) { 0 };
        const mcp_languages *l = &host->langs;
        int r;

        char common[KEY_MAX - 700];
        common_key(cfg, common, sizeof common);
        _cleanup_free_ char *cache = read_cache(cache_path);
        _cleanup_free_ char (*keys)[KEY_MAX] = calloc(MCP_LANG_MAX, sizeof *keys);
        _cleanup_free_ mcp_langprobe *miss = calloc(MCP_LANG_MAX, sizeof *miss);
        _cleanup_free_ char (*lines)[KEY_MAX + 400] = calloc(MCP_LANG_MAX, sizeof *lines);
        if (!cache || !keys || !miss || !lines)
                return msp_err_set(err, ENOMEM, "out of memory");
        size_t n_miss = 0;
        for (size_t i = 0; i < l->n; i++) {
                char id[600];
                ident(id, sizeof id, l->interp[i]);
                snprintf(keys[i], KEY_MAX, "%.16s %.600s%s", l->names[i], id, common);
                bool broken;
                char why[320];
                if (!lookup(cache, keys[i], &broken, why, sizeof why))
                        miss[n_miss++].name = l->names[i];
                else if (broken) {
                        ret->broken[ret->n_broken] = l->names[i];
                        snprintf(ret->why[ret->n_broken++], sizeof ret->why[0], "%s", why);
                }
        }
        if (n_miss == 0)
                return 0;
        ret->n_probed = n_miss;
        if ((r = probe_in_child(cfg, host, miss, err)) < 0)
                return r;
        size_t n_lines = 0;
        for (size_t i = 0; i < n_miss; i++) {
                const mcp_langprobe *p = &miss[i];
                if (!p->ran && p->conclusive) {
                        ret->broken[ret->n_broken] = p->name;
                        snprintf(ret->why[ret->n_broken++], sizeof ret->why[0],
                                 "its program fails in the sandbox: %.280s", p->why);
                }
                if (!p->conclusive) {
                        snprintf(ret->note, sizeof ret->note, "%s untried: %.280s", p->name,
                                 p->why);
                        continue;
                }
                const char *key = keys[mcp_language_find(l, p->name)];
                snprintf(lines[n_lines++], sizeof lines[0], "%s\t%s\t%s", key,
                         p->ran ? "ok" : "broken",
                         p->ran ? "" : ret->why[ret->n_broken - 1]);
        }
        if (cache_path[0] && n_lines)
                write_cache(cache_path, cache, lines, n_lines, ret);
        return 0;
}
