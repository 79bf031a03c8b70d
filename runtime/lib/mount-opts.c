/* OCI mount option parsing: one table, one pass, last option wins (as with mount(8)). */
#include "lib/mount-opts.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>

#include "oci/oci.h"

typedef enum opt_kind {
        OPT_SET,                /* set MS_* */
        OPT_CLR,                /* clear MS_* */
        OPT_PROPAGATION,        /* MS_SHARED... (| MS_REC) */
        OPT_REC_SET,            /* r*: set MOUNT_ATTR_* recursively */
        OPT_REC_CLR,            /* r*: clear MOUNT_ATTR_* recursively */
        OPT_REC_ATIME,          /* r*atime: select the recursive atime mode */
        OPT_BIND,
        OPT_RBIND,
        OPT_TMPCOPYUP,
        OPT_NOTMPCOPYUP,
        OPT_IDMAP,
        OPT_RIDMAP,
        OPT_DATA,               /* fs-specific flag without '=': passed in data */
        OPT_IGNORE,
} opt_kind;

typedef struct opt_def {
        const char *name;
        opt_kind kind;
        unsigned long value;
} opt_def;

static const opt_def opt_table[] = {
        { "defaults", OPT_IGNORE, 0 },
        { "ro", OPT_SET, MS_RDONLY },
        { "rw", OPT_CLR, MS_RDONLY },
        { "nosuid", OPT_SET, MS_NOSUID },
        { "suid", OPT_CLR, MS_NOSUID },
        { "nodev", OPT_SET, MS_NODEV },
        { "dev", OPT_CLR, MS_NODEV },
        { "noexec", OPT_SET, MS_NOEXEC },
        { "exec", OPT_CLR, MS_NOEXEC },
        { "sync", OPT_SET, MS_SYNCHRONOUS },
        { "async", OPT_CLR, MS_SYNCHRONOUS },
        { "dirsync", OPT_SET, MS_DIRSYNC },
        { "remount", OPT_SET, MS_REMOUNT },
        { "mand", OPT_SET, MS_MANDLOCK },
        { "nomand", OPT_CLR, MS_MANDLOCK },
        { "noatime", OPT_SET, MS_NOATIME },
        { "atime", OPT_CLR, MS_NOATIME },
        { "nodiratime", OPT_SET, MS_NODIRATIME },
        { "diratime", OPT_CLR, MS_NODIRATIME },
        { "relatime", OPT_SET, MS_RELATIME },
        { "norelatime", OPT_CLR, MS_RELATIME },
        { "strictatime", OPT_SET, MS_STRICTATIME },
        { "nostrictatime", OPT_CLR, MS_STRICTATIME },
        { "lazytime", OPT_SET, MS_LAZYTIME },
        { "nolazytime", OPT_CLR, MS_LAZYTIME },
        { "silent", OPT_SET, MS_SILENT },
        { "loud", OPT_CLR, MS_SILENT },
        { "iversion", OPT_SET, MS_I_VERSION },
        { "noiversion", OPT_CLR, MS_I_VERSION },
        { "nosymfollow", OPT_SET, MS_NOSYMFOLLOW },
        { "symfollow", OPT_CLR, MS_NOSYMFOLLOW },
        { "bind", OPT_BIND, 0 },
        { "rbind", OPT_RBIND, 0 },
        { "shared", OPT_PROPAGATION, MS_SHARED },
        { "rshared", OPT_PROPAGATION, MS_SHARED | MS_REC },
        { "slave", OPT_PROPAGATION, MS_SLAVE },
        { "rslave", OPT_PROPAGATION, MS_SLAVE | MS_REC },
        { "private", OPT_PROPAGATION, MS_PRIVATE },
        { "rprivate", OPT_PROPAGATION, MS_PRIVATE | MS_REC },
        { "unbindable", OPT_PROPAGATION, MS_UNBINDABLE },
        { "runbindable", OPT_PROPAGATION, MS_UNBINDABLE | MS_REC },
        { "rro", OPT_REC_SET, MOUNT_ATTR_RDONLY },
        { "rrw", OPT_REC_CLR, MOUNT_ATTR_RDONLY },
        { "rnosuid", OPT_REC_SET, MOUNT_ATTR_NOSUID },
        { "rsuid", OPT_REC_CLR, MOUNT_ATTR_NOSUID },
        { "rnodev", OPT_REC_SET, MOUNT_ATTR_NODEV },
        { "rdev", OPT_REC_CLR, MOUNT_ATTR_NODEV },
        { "rnoexec", OPT_REC_SET, MOUNT_ATTR_NOEXEC },
        { "rexec", OPT_REC_CLR, MOUNT_ATTR_NOEXEC },
        { "rnodiratime", OPT_REC_SET, MOUNT_ATTR_NODIRATIME },
        { "rdiratime", OPT_REC_CLR, MOUNT_ATTR_NODIRATIME },
        { "rnosymfollow", OPT_REC_SET, MOUNT_ATTR_NOSYMFOLLOW },
        { "rsymfollow", OPT_REC_CLR, MOUNT_ATTR_NOSYMFOLLOW },
        { "rnoatime", OPT_REC_ATIME, MOUNT_ATTR_NOATIME },
        { "rstrictatime", OPT_REC_ATIME, MOUNT_ATTR_STRICTATIME },
        { "rrelatime", OPT_REC_ATIME, MOUNT_ATTR_RELATIME },
        /* Like their legacy counterparts: leaving noatime/strictatime means relatime. */
        { "ratime", OPT_REC_ATIME, MOUNT_ATTR_RELATIME },
        { "rnostrictatime", OPT_REC_ATIME, MOUNT_ATTR_RELATIME },
        { "rnorelatime", OPT_REC_ATIME, MOUNT_ATTR_RELATIME },
        { "tmpcopyup", OPT_TMPCOPYUP, 0 },
        { "notmpcopyup", OPT_NOTMPCOPYUP, 0 },
        { "idmap", OPT_IDMAP, 0 },
        { "ridmap", OPT_RIDMAP, 0 },
        /* Filesystem flags without a value that configs commonly carry. */
        { "newinstance", OPT_DATA, 0 },         /* devpts */
        { "userxattr", OPT_DATA, 0 },           /* overlay */
        { "volatile", OPT_DATA, 0 },            /* overlay */
        { "noswap", OPT_DATA, 0 },              /* tmpfs */
        { "inode32", OPT_DATA, 0 },             /* tmpfs */
        { "inode64", OPT_DATA, 0 },             /* tmpfs */
        { "nouuid", OPT_DATA, 0 },              /* xfs */
        { "acl", OPT_DATA, 0 },
        { "noacl", OPT_DATA, 0 },
        { "user_xattr", OPT_DATA, 0 },
        { "nouser_xattr", OPT_DATA, 0 },
        /* Hints for the engine (SELinux relabel, chown), already acted upon by it. */
        { "z", OPT_IGNORE, 0 },
        { "Z", OPT_IGNORE, 0 },
        { "U", OPT_IGNORE, 0 },
};

static const opt_def *
opt_lookup(const char *name)
{
        for (size_t i = 0; i < ARRAY_SIZE(opt_table); i++)
                if (strcmp(opt_table[i].name, name) == 0)
                        return &opt_table[i];
        return NULL;
}

static int
data_append(char **data, const char *opt)
{
        size_t old = *data ? strlen(*data) : 0;
        size_t add = strlen(opt);
        char *n = realloc(*data, old + add + 2);
        if (!n)
                return -ENOMEM;
        if (old > 0)
                n[old++] = ',';
        memcpy(n + old, opt, add + 1);
        *data = n;
        return 0;
}

static void
opt_apply(const opt_def *d, rt_mount_opts *o)
{
        switch (d->kind) {
        case OPT_SET:
                o->flags_set |= d->value;
                o->flags_clr &= ~d->value;
                break;
        case OPT_CLR:
                o->flags_clr |= d->value;
                o->flags_set &= ~d->value;
                break;
        case OPT_PROPAGATION:
                o->propagation = d->value;
                break;
        case OPT_REC_SET:
                o->rec_attr_set |= d->value;
                o->rec_attr_clr &= ~(uint64_t) d->value;
                break;
        case OPT_REC_CLR:
                o->rec_attr_clr |= d->value;
                o->rec_attr_set &= ~(uint64_t) d->value;
                break;
        case OPT_REC_ATIME:
                /* The atime modes are an enum inside MOUNT_ATTR__ATIME, not bits. */
                o->rec_attr_clr |= MOUNT_ATTR__ATIME;
                o->rec_attr_set = (o->rec_attr_set & ~(uint64_t) MOUNT_ATTR__ATIME) | d->value;
                break;
        case OPT_BIND:
                o->bind = true;
                o->rbind = false;
                break;
        case OPT_RBIND:
                o->bind = o->rbind = true;
                break;
        case OPT_TMPCOPYUP:
                o->tmpcopyup = true;
                break;
        case OPT_NOTMPCOPYUP:
                o->tmpcopyup = false;
                break;
        case OPT_IDMAP:
                o->idmap = true;
                o->ridmap = false;
                break;
        case OPT_RIDMAP:
                o->idmap = o->ridmap = true;
                break;
        case OPT_DATA:
        case OPT_IGNORE:
                break;
        }
}

static bool
has_prefix(const char *s, const char *prefix)
{
        return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* One option: a table entry, a data item, or an error naming it. */
static int
parse_one(const char *opt, const char *dest, rt_mount_opts *o, msp_err *err)
{
        if (opt[0] == '\0')
                return msp_err_set(err, EINVAL, "mount '%s': empty mount option", dest);
        if (strchr(opt, ',') && !strchr(opt, '='))
                return msp_err_set(err, EINVAL, "mount '%s': mount option '%s' contains ','",
                                   dest, opt);
        /* "idmap=uids=0-1000-10;gids=..." carries its own mapping (crun's syntax). */
        if (has_prefix(opt, "idmap=") || has_prefix(opt, "ridmap=")) {
                opt_apply(opt_lookup(opt[0] == 'r' ? "ridmap" : "idmap"), o);
                return 0;
        }
        if (has_prefix(opt, "x-"))
                return 0;       /* mount(8) userspace hints, never for the kernel */
        if (strchr(opt, '='))
                return data_append(&o->data, opt) < 0 ? msp_err_sys(err, ENOMEM, "mount '%s'", dest)
                                                      : 0;

        const opt_def *d = opt_lookup(opt);
        if (!d)
                return msp_err_set(err, EINVAL, "mount '%s': unknown mount option '%s'", dest,
                                   opt);
        if (d->kind == OPT_DATA && data_append(&o->data, opt) < 0)
                return msp_err_sys(err, ENOMEM, "mount '%s'", dest);
        opt_apply(d, o);
        return 0;
}

int
rt_mount_opts_parse(const oci_strv *opts, const char *dest, rt_mount_opts *ret, msp_err *err)
{
        rt_mount_opts o = { 0 };

        for (size_t i = 0; opts && i < opts->n; i++) {
                int r = parse_one(opts->v[i], dest, &o, err);
                if (r < 0) {
                        rt_mount_opts_done(&o);
                        return r;
                }
        }
        *ret = o;
        return 0;
}

void
rt_mount_opts_done(rt_mount_opts *o)
{
        free(o->data);
        o->data = NULL;
}

static const struct {
        unsigned long ms;
        uint64_t attr;
} attr_map[] = {
        { MS_RDONLY, MOUNT_ATTR_RDONLY },
        { MS_NOSUID, MOUNT_ATTR_NOSUID },
        { MS_NODEV, MOUNT_ATTR_NODEV },
        { MS_NOEXEC, MOUNT_ATTR_NOEXEC },
        { MS_NODIRATIME, MOUNT_ATTR_NODIRATIME },
        { MS_NOSYMFOLLOW, MOUNT_ATTR_NOSYMFOLLOW },
};

void
rt_mount_opts_attr(const rt_mount_opts *o, uint64_t *ret_set, uint64_t *ret_clr)
{
        const unsigned long atime_flags = MS_NOATIME | MS_STRICTATIME | MS_RELATIME;
        uint64_t set = 0, clr = 0;
        int64_t atime = -1;

        for (size_t i = 0; i < ARRAY_SIZE(attr_map); i++) {
                if (o->flags_set & attr_map[i].ms)
                        set |= attr_map[i].attr;
                if (o->flags_clr & attr_map[i].ms)
                        clr |= attr_map[i].attr;
        }
        /* mount(2) gives noatime precedence over strictatime, and relatime is the rest. */
        if (o->flags_set & MS_NOATIME)
                atime = MOUNT_ATTR_NOATIME;
        else if (o->flags_set & MS_STRICTATIME)
                atime = MOUNT_ATTR_STRICTATIME;
        else if ((o->flags_set | o->flags_clr) & atime_flags)
                atime = MOUNT_ATTR_RELATIME;
        if (atime >= 0) {
                clr |= MOUNT_ATTR__ATIME;
                set |= (uint64_t) atime;
        }
        *ret_set = set;
        *ret_clr = clr;
}

int
rt_mount_opts_sb_flags(const rt_mount_opts *o, const char **names, int max)
{
        static const struct {
                unsigned long ms;
                const char *name;
        } sb_map[] = {
                { MS_SYNCHRONOUS, "sync" },
                { MS_DIRSYNC, "dirsync" },
                { MS_LAZYTIME, "lazytime" },
                { MS_MANDLOCK, "mand" },
        };
        int n = 0;

        for (size_t i = 0; i < ARRAY_SIZE(sb_map) && n < max; i++)
                if (o->flags_set & sb_map[i].ms)
                        names[n++] = sb_map[i].name;
        return n;
}
