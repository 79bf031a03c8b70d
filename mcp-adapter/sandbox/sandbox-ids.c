/* The host ids of msp-mcp's sandboxes (sandbox-ids.h). */
#include "sandbox/sandbox-ids.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oci/oci.h"

/* As root: container ids 0..65535 are host MCP_SANDBOX_ROOT_BASE.. ; run by a user,
 * rootless.c sets the map when it enters its own user namespace. */
mcp_sandbox_ids mcp_sandbox_map = { .host_id = MCP_SANDBOX_ROOT_BASE, .size = 65536u };

/* The pool a claim settled (base 0: none): the host check and the engine both claim at
 * start, and the accounts, groups and subordinate ranges are read for the first only. */
static unsigned long settled_base;
static unsigned settled_slices;

unsigned
mcp_sandbox_slices_needed(unsigned max_concurrent, unsigned max_sessions)
{
        /* Counted wide: two options near UINT_MAX must not wrap to a pool of a few. */
        unsigned long long n = 2ull * (max_concurrent ? max_concurrent : 1) + max_sessions;
        return n < MCP_SANDBOX_SLICES_MAX ? (unsigned) n : MCP_SANDBOX_SLICES_MAX;
}

bool
mcp_subid_parse(const char *line, size_t *who_len, unsigned long *start, unsigned long *count)
{
        const char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        char *end;
        if (!c2 || c2 == c1 + 1)
                return false;
        *start = strtoul(c1 + 1, &end, 10);
        if (end != c2)
                return false;
        *count = strtoul(c2 + 1, &end, 10);
        if (end == c2 + 1 || end[strspn(end, " \t\r\n")] != '\0')
                return false;
        *who_len = (size_t) (c1 - line);
        return true;
}

/* The first line of FILE whose range meets [lo, hi]; "" when none. */
static void
subid_overlap(const char *file, unsigned long lo, unsigned long hi, char *line, size_t size)
{
        _cleanup_fclose_ FILE *f = fopen(file, "re");
        char buf[512];
        line[0] = '\0';
        while (f && fgets(buf, sizeof buf, f)) {
                size_t who_len;
                unsigned long start, count;
                if (!mcp_subid_parse(buf, &who_len, &start, &count) || count == 0 || start > hi ||
                    start + count - 1 < lo)
                        continue;
                buf[strcspn(buf, "\n")] = '\0';
                snprintf(line, size, "%s", buf);
                return;
        }
}

int
mcp_sandbox_ids_claim(unsigned long base, unsigned slices, msp_err *err)
{
        const unsigned long size = 65536u;
        const unsigned long long span = (unsigned long long) size * (1ull + slices);
        const unsigned long long hi = base + span - 1;
        if (settled_base && base == settled_base && slices == settled_slices)
                return 0;
        if (base == 0 || hi > 4294967294ull)
                return msp_err_set(err, ERANGE, "sandbox-ids %lu: the %llu ids from it (%u "
                                                "sandboxes' and the images') must lie within "
                                                "1..4294967294", base, span, slices);
        static const char *const files[] = { "/etc/subuid", "/etc/subgid" };
        for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
                char line[512];
                subid_overlap(files[i], base, hi, line, sizeof line);
                if (line[0])
                        return msp_err_set(err, EEXIST,
                                           "sandbox-ids %lu..%llu: %s grants them to a user "
                                           "('%s'), who could then act as a sandbox's ids; "
                                           "name a free range with --sandbox-ids START",
                                           base, hi, files[i], line);
        }
        /* Accounts with an id in the range (NSS: local files and any directory service). */
        const char *who = NULL;
        unsigned long id = 0;
        setpwent();
        for (struct passwd *pw; !who && (pw = getpwent());)
                if (pw->pw_uid >= base && pw->pw_uid <= hi)
                        who = "user", id = pw->pw_uid;
        endpwent();
        setgrent();
        for (struct group *gr; !who && (gr = getgrent());)
                if (gr->gr_gid >= base && gr->gr_gid <= hi)
                        who = "group", id = gr->gr_gid;
        endgrent();
        if (who)
                return msp_err_set(err, EEXIST, "sandbox-ids %lu..%llu: the host has a %s with "
                                                "id %lu in them; name a free range with "
                                                "--sandbox-ids START", base, hi, who, id);
        mcp_sandbox_map = (mcp_sandbox_ids){ .host_id = (unsigned) base, .size = (unsigned) size,
                                             .slices = slices };
        settled_base = base;
        settled_slices = slices;
        return 0;
}
