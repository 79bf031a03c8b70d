/* ps [--format table|json] ID: the processes in the container's cgroup, as host pids.
 * json is an array of ints, as runc prints it; table reads /proc for each pid
 * (no external ps). */
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "log.h"

/* Read /proc/<pid>/<file> into buf (NUL-terminated); the length or -1. */
static ssize_t
read_proc(pid_t pid, const char *file, char *buf, size_t bufsz)
{
        char path[64];
        size_t o = 0;

        snprintf(path, sizeof path, "/proc/%d/%s", (int) pid, file);
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -1;
        while (o + 1 < bufsz) {
                ssize_t n = read(fd, buf + o, bufsz - 1 - o);
                if (n <= 0)
                        break;
                o += (size_t) n;
        }
        buf[o] = '\0';
        return (ssize_t) o;
}

/* One table row; a process that exited meanwhile is skipped. */
static void
print_row(pid_t pid)
{
        char line[1024], cmd[4096], path[64];
        struct stat st;
        int ppid = 0;
        char state = '?';

        snprintf(path, sizeof path, "/proc/%d", (int) pid);
        if (stat(path, &st) < 0 || read_proc(pid, "stat", line, sizeof line) <= 0)
                return;
        /* "pid (comm) S ppid ...": comm may hold spaces and parentheses. */
        char *rp = strrchr(line, ')');
        char *lp = strchr(line, '(');
        if (!rp || !lp || sscanf(rp + 1, " %c %d", &state, &ppid) != 2)
                return;
        ssize_t n = read_proc(pid, "cmdline", cmd, sizeof cmd);
        if (n > 0) {
                for (ssize_t i = 0; i < n - 1; i++)
                        if (cmd[i] == '\0')
                                cmd[i] = ' ';
        } else {
                /* Kernel threads and zombies have no command line. */
                snprintf(cmd, sizeof cmd, "[%.*s]", (int) (rp - lp - 1), lp + 1);
        }
        printf("%-8u %-8d %-8d %-4c %s\n", (unsigned) st.st_uid, (int) pid, ppid, state, cmd);
}

int
cmd_ps(rt_ctx *ctx, int argc, char **argv)
{
        static const struct option opts[] = {
                { "format", required_argument, NULL, 'f' },
                {},
        };
        _cleanup_container_ rt_container *c = NULL;
        _cleanup_free_ pid_t *pids = NULL;
        msp_err err = { 0 };
        bool json = false;
        const char *id;
        size_t n = 0;
        int opt;

        while ((opt = getopt_long(argc, argv, "+f:", opts, NULL)) != -1) {
                if (opt == 'f' && (strcmp(optarg, "json") == 0 || strcmp(optarg, "table") == 0))
                        json = strcmp(optarg, "json") == 0;
                else if (opt == 'f')
                        return cmd_usage_error(ctx, "ps", "--format: expected table or json, got '%s'",
                                               optarg);
                else
                        return cmd_usage_error(ctx, "ps", "invalid option");
        }
        if (cmd_one_id(ctx, "ps", argc, argv, optind, &id) < 0)
                return 1;
        if (rt_container_load(ctx, id, false, &c, &err) < 0 ||
            rt_container_pids(ctx, c, &pids, &n, &err) < 0)
                return cmd_fail(ctx, &err);
        if (json) {
                _cleanup_free_ char *out = NULL;
                size_t len;
                if (oci_pid_list_to_json(pids, n, &out, &len, &err) < 0)
                        return cmd_fail(ctx, &err);
                return cmd_print(ctx, out, len);
        }
        printf("%-8s %-8s %-8s %-4s %s\n", "UID", "PID", "PPID", "STAT", "CMD");
        for (size_t i = 0; i < n; i++)
                print_row(pids[i]);
        if (fflush(stdout) != 0) {
                rt_log_error(ctx, "write to stdout failed");
                return 1;
        }
        return 0;
}
