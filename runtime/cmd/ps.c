/* ps [--format table|json] ID [PS_OPTIONS...]: the processes in the container's cgroup,
 * as host pids. json is an array of ints, as runc prints it (PS_OPTIONS ignored). table
 * reads /proc for each pid; with PS_OPTIONS it runs ps(1) with them, as runc-ps(8) does,
 * and prints its header and the rows whose PID column is one of the container's. The
 * options end at the ID: `ps ID --format json` hands "--format json" to ps(1), as runc. */
#include <fcntl.h>
#include <getopt.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "lib/rt.h"
#include "oci/oci.h"

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
        /* The container wrote both: no escape sequence or newline reaches the caller. */
        oci_text_clean(cmd);
        printf("%-8u %-8d %-8d %-4c %s\n", (unsigned) st.st_uid, (int) pid, ppid, state, cmd);
}

#define PS_OUTPUT_MAX (16u << 20)

extern char **environ;

/* Run ps(1) with args (NULL-terminated), its stdout and stderr together into *ret. */
static int
run_ps(char **args, char **ret, size_t *ret_len, int *ret_status, msp_err *err)
{
        _cleanup_close_ int rd = -1, wr = -1;
        _cleanup_free_ char *out = NULL;
        posix_spawn_file_actions_t fa;
        size_t len = 0, cap = 0;
        int fds[2], r, status;
        pid_t pid;

        if (pipe2(fds, O_CLOEXEC) < 0)
                return msp_err_sys(err, errno, "pipe");
        rd = fds[0];
        wr = fds[1];
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_adddup2(&fa, wr, STDOUT_FILENO);
        posix_spawn_file_actions_adddup2(&fa, wr, STDERR_FILENO);
        r = posix_spawnp(&pid, "ps", &fa, NULL, args, environ);
        posix_spawn_file_actions_destroy(&fa);
        if (r != 0)
                return msp_err_sys(err, r, "run ps(1)");
        close(TAKE_FD(wr));
        for (;;) {
                if (len + 4096 + 1 > cap) {
                        char *n = cap >= PS_OUTPUT_MAX ? NULL : realloc(out, cap ? cap * 2 : 65536);
                        if (!n)
                                break;  /* too much output: the rest is not read */
                        out = n;
                        cap = cap ? cap * 2 : 65536;
                }
                ssize_t n = read(rd, out + len, cap - len - 1);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        break;
                len += (size_t) n;
        }
        close(TAKE_FD(rd));
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return msp_err_sys(err, errno, "wait for ps(1)");
        if (!out)
                return msp_err_set(err, ENOMEM, "ps(1) output: out of memory");
        out[len] = '\0';
        *ret = TAKE_PTR(out);
        *ret_len = len;
        *ret_status = status;
        return 0;
}

/* Field idx (0-based, split on blanks) of line as a pid; -1 when missing or not one. */
static long
field_pid(const char *line, int idx)
{
        const char *p = line;

        for (int i = 0;; i++) {
                p += strspn(p, " \t");
                if (!*p)
                        return -1;
                if (i == idx) {
                        char *end;
                        long v = strtol(p, &end, 10);
                        return end != p && (*end == '\0' || *end == ' ' || *end == '\t') ? v : -1;
                }
                p += strcspn(p, " \t");
        }
}

/* ps(1) with the caller's options; its header and the rows of the container's pids. */
static int
print_ps_rows(const rt_ctx *ctx, char **ps_opts, int n_opts, const pid_t *pids, size_t n)
{
        _cleanup_free_ char **args = calloc((size_t) n_opts + 2, sizeof *args);
        _cleanup_free_ char *out = NULL;
        msp_err err = { 0 };
        size_t len;
        int status, pid_col = -1;

        if (!args)
                return rt_log_error(ctx, "out of memory"), 1;
        args[0] = (char *) "ps";
        memcpy(args + 1, ps_opts, (size_t) n_opts * sizeof *args);
        if (run_ps(args, &out, &len, &status, &err) < 0)
                return cmd_fail(ctx, &err);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
                rt_log_error(ctx, "ps(1) exited with status %d: %s",
                             WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), out);
                return 1;
        }
        char *save = NULL, *line = strtok_r(out, "\n", &save);
        if (line) {
                char hdr[4096];
                snprintf(hdr, sizeof hdr, "%s", line);
                char *hsave = NULL;
                int i = 0;
                for (char *f = strtok_r(hdr, " \t", &hsave); f; f = strtok_r(NULL, " \t", &hsave), i++)
                        if (strcmp(f, "PID") == 0) {
                                pid_col = i;
                                break;
                        }
        }
        if (pid_col < 0) {
                rt_log_error(ctx, "ps(1) output has no PID column (give ps options that print it)");
                return 1;
        }
        /* ps(1) already prints a control character as '?'; its rows go through the
         * same rule as msp's own table all the same. */
        oci_text_clean(line);
        printf("%s\n", line);
        while ((line = strtok_r(NULL, "\n", &save))) {
                oci_text_clean(line);
                long p = field_pid(line, pid_col);
                if (p < 0) {
                        rt_log_error(ctx, "ps(1) output: no pid in column %d of '%s'", pid_col + 1, line);
                        return 1;
                }
                for (size_t i = 0; i < n; i++)
                        if (pids[i] == (pid_t) p) {
                                printf("%s\n", line);
                                break;
                        }
        }
        return 0;
}

int
cmd_ps(rt_ctx *ctx, int argc, char **argv)
{
        static const struct option opts[] = {
                { "format", required_argument, NULL, 'f' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        _cleanup_container_ rt_container *c = NULL;
        _cleanup_free_ pid_t *pids = NULL;
        msp_err err = { 0 };
        bool json = false;
        const char *id;
        size_t n = 0;
        int opt;

        /* '+': the options end at the ID; what follows it is for ps(1). */
        while ((opt = getopt_long(argc, argv, "+f:h", opts, NULL)) != -1) {
                if (opt == 'h') {
                        cmd_usage(cmd_find("ps"), false);
                        return 0;
                }
                if (opt != 'f')
                        return cmd_usage_error(ctx, "ps", "invalid option");
                if (cmd_parse_format(optarg, &json) < 0)
                        return cmd_usage_error(ctx, "ps", "--format: expected table or json, got '%s'",
                                               optarg);
        }
        if (optind >= argc)
                return cmd_usage_error(ctx, "ps", "a container ID is required");
        id = argv[optind];
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
        if (optind + 1 < argc) {
                int rc = print_ps_rows(ctx, argv + optind + 1, argc - optind - 1, pids, n);
                if (rc != 0) {
                        (void) fflush(stdout);
                        return rc;
                }
                return cmd_flush_stdout(ctx);
        }
        printf("%-8s %-8s %-8s %-4s %s\n", "UID", "PID", "PPID", "STAT", "CMD");
        for (size_t i = 0; i < n; i++)
                print_row(pids[i]);
        return cmd_flush_stdout(ctx);
}
