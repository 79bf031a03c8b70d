#include <dirent.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "oci/oci.h"
#include "lib/rt.h"

#define LIST_MAX 4096

/* Reads without taking the per-container locks: state.json is replaced atomically, and
 * a long create or run must not block `list`. */
static int
collect(const rt_ctx *ctx, oci_state **states, size_t *n, msp_err *err)
{
        _cleanup_close_ int rootfd = -1;
        _cleanup_closedir_ DIR *d = NULL;
        struct dirent *de;
        int r = rt_state_root_open(ctx, false, &rootfd, err);

        *n = 0;
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        d = fdopendir(dup(rootfd));
        if (!d)
                return msp_err_sys(err, errno, "read '%s'", ctx->state_root);
        while ((de = readdir(d)) && *n < LIST_MAX) {
                _cleanup_close_ int dirfd = -1;
                if (de->d_name[0] == '.' || rt_id_validate(de->d_name, NULL) < 0)
                        continue;
                dirfd = openat(rootfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (dirfd < 0)
                        continue;
                if (rt_state_load(dirfd, de->d_name, &states[*n], NULL) < 0)
                        continue;
                rt_state_refresh(states[*n], dirfd);
                (*n)++;
        }
        return 0;
}

static int
by_id(const void *a, const void *b)
{
        return strcmp((*(oci_state *const *) a)->id, (*(oci_state *const *) b)->id);
}

int
cmd_list(rt_ctx *ctx, int argc, char **argv)
{
        static const struct option opts[] = {
                { "format", required_argument, NULL, 'f' },
                { "quiet", no_argument, NULL, 'q' },
                {},
        };
        _cleanup_free_ oci_state **states = calloc(LIST_MAX, sizeof *states);
        msp_err err = { 0 };
        bool json = false, quiet = false;
        size_t n = 0;
        int opt, rc = 0;

        while ((opt = getopt_long(argc, argv, "f:q", opts, NULL)) != -1) {
                if (opt == 'q')
                        quiet = true;
                else if (opt != 'f' || cmd_parse_format(optarg, &json) < 0)
                        return cmd_usage_error(ctx, "list", "--format: expected table or json");
        }
        if (optind < argc)
                return cmd_usage_error(ctx, "list", "unexpected argument '%s'", argv[optind]);
        if (!states)
                return 1;
        if (collect(ctx, states, &n, &err) < 0)
                return cmd_fail(ctx, &err);
        /* Sorted by id, as runc lists its state directory. */
        qsort(states, n, sizeof *states, by_id);
        if (json) {
                _cleanup_free_ char *out = NULL;
                size_t len;
                if (oci_state_list_to_json((const oci_state *const *) states, n, &out, &len, &err) < 0)
                        rc = cmd_fail(ctx, &err);
                else
                        rc = cmd_print(ctx, out, len);
        } else if (quiet) {
                for (size_t i = 0; i < n; i++)
                        printf("%s\n", states[i]->id);
        } else {
                printf("%-20s %-8s %-10s %-40s %-31s %s\n", "ID", "PID", "STATUS", "BUNDLE", "CREATED",
                       "OWNER");
                for (size_t i = 0; i < n; i++) {
                        /* the caller's bundle path and user name: printable only */
                        oci_text_clean(states[i]->bundle);
                        if (states[i]->owner)
                                oci_text_clean(states[i]->owner);
                        printf("%-20s %-8d %-10s %-40s %-31s %s\n", states[i]->id, (int) states[i]->pid,
                               states[i]->status, states[i]->bundle, states[i]->created,
                               states[i]->owner ? states[i]->owner : "");
                }
        }
        for (size_t i = 0; i < n; i++)
                oci_state_free(states[i]);
        return rc;
}
