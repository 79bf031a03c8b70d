/* events [--stats] [--interval DURATION] ID: resource usage of a container as runc
 * prints it, {"type":"stats","id":...,"data":{...}}, one JSON object a line.
 * --stats prints one sample and exits. Without it, a sample every interval (default
 * 5s) and {"type":"oom","id":...} when the OOM kill count rises, until the container
 * stops. */
#include <getopt.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lib/cgroup/cgroup.h"
#include "cmd/cmd.h"
#include "lib/rt.h"

/* "5s", "500ms", "1m", "1h", or plain seconds; at least 1 ms. */
static int
parse_interval(const char *s, int *ret_ms)
{
        char *end;
        long v;

        if (*s < '0' || *s > '9')
                return -EINVAL;
        errno = 0;
        v = strtol(s, &end, 10);
        if (errno || v > 24L * 3600 * 1000)
                return -EINVAL;
        if (strcmp(end, "ms") == 0)
                ;
        else if (!*end || strcmp(end, "s") == 0)
                v *= 1000;
        else if (strcmp(end, "m") == 0)
                v *= 60 * 1000;
        else if (strcmp(end, "h") == 0)
                v *= 3600 * 1000;
        else
                return -EINVAL;
        if (v < 1 || v > 24L * 3600 * 1000)
                return -EINVAL;
        *ret_ms = (int) v;
        return 0;
}

static int
print_stats(const rt_ctx *ctx, const oci_stats *s, msp_err *err)
{
        _cleanup_free_ char *json = NULL;
        size_t len;

        if (oci_stats_to_json(s, &json, &len, err) < 0)
                return -1;
        return cmd_print(ctx, json, len) == 0 ? 0 : -EIO;
}

/* The streaming form. The container's lock is not held meanwhile (delete must not
 * wait for us): the loop ends when the init exits or the cgroup is gone. */
static int
stream(const rt_ctx *ctx, const char *id, const char *cgroup, int pidfd, int interval_ms)
{
        uint64_t ooms = 0, now;
        msp_err err = { 0 };

        (void) rt_cgroup_oom_kills(cgroup, &ooms);
        for (;;) {
                oci_stats s = { .id = id };
                if (rt_cgroup_stats(cgroup, &s, &err) < 0)
                        return 0;
                if (print_stats(ctx, &s, &err) < 0)
                        return err.msg[0] ? cmd_fail(ctx, &err) : 1;
                if (rt_cgroup_oom_kills(cgroup, &now) == 0 && now > ooms) {
                        _cleanup_free_ char *json = NULL;
                        size_t len;
                        ooms = now;
                        if (oci_event_to_json("oom", id, &json, &len, &err) < 0)
                                return cmd_fail(ctx, &err);
                        if (cmd_print(ctx, json, len) != 0)
                                return 1;
                }
                struct pollfd p = { .fd = pidfd, .events = POLLIN };
                int r = poll(&p, 1, interval_ms);
                if (r < 0 && errno != EINTR)
                        return 1;
                if (r > 0)
                        return 0;
        }
}

int
cmd_events(rt_ctx *ctx, int argc, char **argv)
{
        static const struct option opts[] = {
                { "stats", no_argument, NULL, 's' },
                { "interval", required_argument, NULL, 'i' },
                {},
        };
        _cleanup_container_ rt_container *c = NULL;
        _cleanup_free_ char *cgroup = NULL;
        _cleanup_close_ int pidfd = -1;
        msp_err err = { 0 };
        bool once = false;
        int opt, interval_ms = 5000;
        const char *id;

        while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
                if (opt == 's')
                        once = true;
                else if (opt == 'i') {
                        if (parse_interval(optarg, &interval_ms) < 0)
                                return cmd_usage_error(ctx, "events", "--interval: expected a duration "
                                                       "such as 5s or 500ms, got '%s'", optarg);
                } else
                        return cmd_usage_error(ctx, "events", "invalid option");
        }
        if (cmd_one_id(ctx, "events", argc, argv, optind, &id) < 0)
                return 1;
        if (rt_container_load(ctx, id, false, &c, &err) < 0)
                return cmd_fail(ctx, &err);
        oci_stats s;
        if (rt_container_stats(ctx, c, &s, &err) < 0)
                return cmd_fail(ctx, &err);
        if (once)
                return print_stats(ctx, &s, &err) < 0 ? cmd_fail(ctx, &err) : 0;

        pidfd = (int) syscall(SYS_pidfd_open, c->state->pid, 0);
        /* Checked after the open, so that a reused pid is never watched. */
        if (pidfd < 0 || !rt_pid_alive(c->state->pid, c->state->pid_start_time))
                return 0;
        cgroup = strdup(c->state->cgroup_path);
        if (!cgroup)
                return 1;
        _cleanup_free_ char *cid = strdup(c->id);
        if (!cid)
                return 1;
        c = rt_container_free(c);
        return stream(ctx, cid, cgroup, pidfd, interval_ms);
}
