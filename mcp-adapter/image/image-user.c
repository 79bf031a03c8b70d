/* An image's User in its own account files (image-user.h). */
#include "image/image-user.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/base.h"
#include "oci/oci.h"

#define ACCOUNTS_MAX (1u << 20)         /* more of /etc/passwd or /etc/group is not read */
#define ID_MAX 0x7fffffffu

/* The file beneath the rootfs (symlinks resolved inside it), NUL-terminated; "" when the
 * image has none. */
static int
read_accounts(int rootfs_fd, const char *name, char **ret, msp_err *err)
{
        struct open_how how = { .flags = O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC,
                                .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS };
        _cleanup_close_ int fd = (int) syscall(SYS_openat2, rootfs_fd, name, &how, sizeof how);
        if (fd < 0 && errno != ENOENT)
                return msp_err_sys(err, errno, "the image's /%s", name);
        if (fd < 0) {
                *ret = strdup("");
                return *ret ? 0 : msp_err_set(err, ENOMEM, "out of memory");
        }
        size_t len;
        int r = mcp_read_fd(fd, ACCOUNTS_MAX, ret, &len, err);
        return r < 0 ? msp_err_prefix(err, "the image's /%s", name) : 0;
}

/* A decimal id; false for anything else. */
static bool
parse_id(const char *s, size_t len, unsigned *ret)
{
        unsigned long v = 0;
        if (len == 0 || len > 10)
                return false;
        for (size_t i = 0; i < len; i++) {
                if (s[i] < '0' || s[i] > '9')
                        return false;
                v = v * 10 + (unsigned long) (s[i] - '0');
        }
        if (v > ID_MAX)
                return false;
        *ret = (unsigned) v;
        return true;
}

/* The field `idx` (0-based, ':'-separated) of a line, as pointer and length. */
static bool
field(const char *line, size_t line_len, unsigned idx, const char **ret, size_t *ret_len)
{
        const char *p = line, *end = line + line_len;
        for (unsigned i = 0; i < idx; i++) {
                const char *c = memchr(p, ':', (size_t) (end - p));
                if (!c)
                        return false;
                p = c + 1;
        }
        const char *c = memchr(p, ':', (size_t) (end - p));
        *ret = p;
        *ret_len = (size_t) ((c ? c : end) - p);
        return true;
}

/* The line whose field key_idx is key (by name) or whose field id_idx is the id key
 * (by_id): the ids in fields id_idx and, for passwd, gid_idx. */
static bool
find_entry(const char *file, const char *key, size_t key_len, bool by_id, unsigned id_idx,
           int gid_idx, unsigned *ret_id, unsigned *ret_gid)
{
        unsigned want = 0;
        if (by_id && !parse_id(key, key_len, &want))
                return false;
        for (const char *line = file; *line;) {
                size_t len = strcspn(line, "\n");
                const char *f, *g;
                size_t flen, glen;
                unsigned id, gid = 0;
                bool ok = field(line, len, id_idx, &f, &flen) && parse_id(f, flen, &id) &&
                          (gid_idx < 0 || (field(line, len, (unsigned) gid_idx, &g, &glen) &&
                                           parse_id(g, glen, &gid)));
                const char *name;
                size_t nlen;
                if (ok && by_id)
                        ok = id == want;
                else if (ok)
                        ok = field(line, len, 0, &name, &nlen) && nlen == key_len &&
                             memcmp(name, key, key_len) == 0;
                if (ok) {
                        *ret_id = id;
                        if (ret_gid)
                                *ret_gid = gid;
                        return true;
                }
                line += len + (line[len] == '\n');
        }
        return false;
}

int
mcp_image_user_resolve(int rootfs_fd, const char *user, unsigned *ret_uid, unsigned *ret_gid,
                       msp_err *err)
{
        const char *colon = strchr(user, ':');
        size_t ulen = colon ? (size_t) (colon - user) : strlen(user);
        const char *group = colon ? colon + 1 : NULL;
        if (ulen == 0 || (group && !*group))
                return msp_err_set(err, EINVAL, "User \"%.100s\": expected USER[:GROUP]", user);
        _cleanup_free_ char *passwd = NULL;
        int r = read_accounts(rootfs_fd, "etc/passwd", &passwd, err);
        if (r < 0)
                return r;
        unsigned uid, gid = 0, pw_gid;
        if (parse_id(user, ulen, &uid)) {
                if (find_entry(passwd, user, ulen, true, 2, 3, &uid, &pw_gid))
                        gid = pw_gid;
        } else if (!find_entry(passwd, user, ulen, false, 2, 3, &uid, &gid))
                return msp_err_set(err, ENOENT, "User \"%.100s\": no user \"%.*s\" in the image's "
                                   "/etc/passwd", user, (int) (ulen > 100 ? 100 : ulen), user);
        if (group && !parse_id(group, strlen(group), &gid)) {
                _cleanup_free_ char *groups = NULL;
                if ((r = read_accounts(rootfs_fd, "etc/group", &groups, err)) < 0)
                        return r;
                if (!find_entry(groups, group, strlen(group), false, 2, -1, &gid, NULL))
                        return msp_err_set(err, ENOENT, "User \"%.100s\": no group \"%.100s\" in "
                                           "the image's /etc/group", user, group);
        }
        *ret_uid = uid;
        *ret_gid = gid;
        return 0;
}
