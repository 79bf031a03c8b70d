/* The command table: each verb's entry point, its one-line summary, its usage and every
 * option it takes with what the option does. `msp --help`, `msp CMD --help` and the
 * msp(8) manual page (`msp help --man`, written at build time) are all printed from it, so
 * that they cannot disagree. tests/integration/lifecycle.bats checks that every option a
 * command's getopt table accepts is listed here. */
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "lib/rt.h"
#include "oci/oci.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static int cmd_unsupported(rt_ctx *ctx, int argc, char **argv);

/* create's options, shared with run (which adds its own below). */
#define CREATE_OPTIONS                                                                        \
        { "-b, --bundle DIR", "the bundle: the directory holding config.json and the root "   \
          "filesystem it names (default: the current directory)" },                            \
        { "--config FILE", "read the configuration from FILE instead of DIR/config.json" },    \
        { "--pid-file FILE", "write the container process's host pid to FILE (written "       \
          "atomically; /dev/fd/N works)" },                                                    \
        { "--console-socket PATH", "with process.terminal: send the pty master over the unix " \
          "socket at PATH (SCM_RIGHTS), as conmon and containerd's shim expect" },             \
        { "--preserve-fds N", "pass N more fds, 3 to 3+N-1, to the container process (beside " \
          "stdio and LISTEN_FDS socket activation)" },                                         \
        { "--no-pivot", "enter the root with MS_MOVE and chroot instead of pivot_root (for "   \
          "a root on ramfs, where pivot_root fails)" },                                        \
        { "--no-new-keyring", "keep the caller's session keyring instead of a fresh one" },   \
        { "--no-subreaper", "accepted for runc compatibility; has no effect" }

static const rt_option_help create_options[] = { CREATE_OPTIONS, {} };

static const rt_option_help run_options[] = {
        CREATE_OPTIONS,
        { "-d, --detach", "return once the container runs, leaving it running; its stdio "
          "is the caller's (otherwise msp waits, forwards signals and exits with the "
          "container's status)" },
        { "--keep", "do not delete the container when it exits (`msp delete` later)" },
        {},
};

static const rt_option_help kill_options[] = {
        { "-a, --all", "signal every process in the container's cgroup (or, without one, "
          "in its pid namespace), not only its init" },
        {},
};

static const rt_option_help delete_options[] = {
        { "-f, --force", "kill a running or paused container (SIGKILL) and delete it; also "
          "cleans up after a create that failed or crashed half way" },
        {},
};

static const rt_option_help update_options[] = {
        { "-r, --resources FILE", "a JSON object of linux.resources fields to apply (- "
          "reads standard input); the flags below override its fields" },
        { "--memory N", "memory limit in bytes (64k, 512m, 1.5g; -1: unlimited)" },
        { "--memory-reservation N", "memory soft limit" },
        { "--memory-swap N", "memory plus swap limit" },
        { "--kernel-memory N", "kernel memory limit (cgroup v1 only; runc compatibility)" },
        { "--kernel-memory-tcp N", "kernel TCP buffer limit (cgroup v1 only)" },
        { "--pids-limit N", "largest number of processes (-1: unlimited)" },
        { "--cpu-shares N", "relative CPU weight (also --cpu-share)" },
        { "--cpu-quota N", "CPU time in microseconds per period (-1: unlimited)" },
        { "--cpu-period N", "the CFS period in microseconds" },
        { "--cpu-burst N", "CPU time in microseconds a period may borrow" },
        { "--cpu-rt-period N", "real-time scheduling period in microseconds" },
        { "--cpu-rt-runtime N", "real-time runtime in microseconds per period" },
        { "--cpu-idle 0|1", "1: schedule the cgroup as SCHED_IDLE (cgroup v2)" },
        { "--cpuset-cpus S", "the CPUs it may run on (0-3,6)" },
        { "--cpuset-mems S", "the memory nodes it may use" },
        { "--blkio-weight N", "relative block I/O weight (10-1000)" },
        {},
};

static const rt_option_help ps_options[] = {
        { "-f, --format table|json", "table (default) prints ps(1)'s output for the "
          "container's processes; json prints their host pids as an array" },
        { "PS_OPTIONS", "after the ID: options for ps(1), whose rows of the container's "
          "processes are kept" },
        {},
};

static const rt_option_help events_options[] = {
        { "--stats", "print one sample of resource usage and exit" },
        { "--interval DURATION", "time between samples (5s, 500ms; default 5s)" },
        {},
};

static const rt_option_help exec_options[] = {
        { "-p, --process FILE", "the process as a JSON object (the config's process "
          "schema); the flags below override its fields" },
        { "-d, --detach", "return once the process runs; its stdio is the caller's" },
        { "--pid-file FILE", "write the process's host pid to FILE" },
        { "--console-socket PATH", "with --tty: send the pty master over this unix socket" },
        { "-t, --tty", "give the process a terminal (a new pty)" },
        { "--cwd DIR", "working directory inside the container" },
        { "-e, --env KEY=VALUE", "set an environment variable (repeatable)" },
        { "-u, --user UID[:GID]", "run as these numeric ids" },
        { "-g, --additional-gids GID", "a supplementary group (repeatable)" },
        { "-c, --cap CAP", "add a capability, CAP_NET_ADMIN or NET_ADMIN (repeatable)" },
        { "--no-new-privs", "set no_new_privs for the process" },
        { "--preserve-fds N", "pass N more fds, 3 to 3+N-1" },
        { "--cgroup SUBPATH", "join this sub-cgroup of the container's (CONTROLLER:PATH "
          "for one v1 controller; repeatable)" },
        { "--ignore-paused", "exec into a paused container (the process stays frozen)" },
        { "--apparmor PROFILE", "the process's AppArmor profile" },
        { "--process-label LABEL", "the process's SELinux label" },
        {},
};

static const rt_option_help list_options[] = {
        { "-f, --format table|json", "a table (default) or a JSON array of states" },
        { "-q, --quiet", "print the container IDs only" },
        {},
};

static const rt_option_help spec_options[] = {
        { "--rootless", "a configuration for an unprivileged user: a user namespace mapping "
          "only the caller's uid and gid, no network namespace, /sys bound read-only" },
        { "-b, --bundle DIR", "write DIR/config.json (default: ./config.json); an existing "
          "file is not replaced" },
        {},
};

static const rt_option_help no_options[] = { {} };

static const rt_command commands[] = {
        { "create", cmd_create, "create a container (the process waits for start)",
          "[OPTION...] ID", create_options },
        { "start", cmd_start, "start the process of a created container", "ID", no_options },
        { "state", cmd_state, "print the state of a container as JSON", "ID", no_options },
        { "kill", cmd_kill, "send a signal to the container process (default TERM; 0 only "
          "checks that it runs)", "[--all] ID [SIGNAL]", kill_options },
        { "delete", cmd_delete, "delete a container and everything create made",
          "[--force] ID", delete_options },
        { "run", cmd_run, "create and start a container, wait for it and delete it",
          "[OPTION...] ID", run_options },
        { "pause", cmd_pause, "freeze every process of a running container", "ID",
          no_options },
        { "resume", cmd_resume, "thaw a paused container", "ID", no_options },
        { "update", cmd_update, "change the resource limits of a live container (sizes: 64k, "
          "512m, 1.5g; -1 is unlimited)", "[OPTION...] ID", update_options },
        { "ps", cmd_ps, "list the processes in a container's cgroup (PS_OPTIONS: run ps(1) "
          "with them and keep the container's rows)", "[--format table|json] ID [PS_OPTIONS...]",
          ps_options, .options_end_at_id = true },
        { "events", cmd_events, "print resource usage statistics as JSON",
          "[--stats] [--interval DURATION] ID", events_options },
        { "exec", cmd_exec, "run one more process in a live container",
          "[OPTION...] ID [COMMAND [ARG...]]", exec_options, .options_end_at_id = true },
        { "list", cmd_list, "list containers", "[--format table|json] [--quiet]",
          list_options },
        { "spec", cmd_spec, "write a default config.json", "[--rootless] [--bundle DIR]",
          spec_options },
        { "features", cmd_features, "print what this runtime supports as JSON", "",
          no_options },
        { "checkpoint", cmd_unsupported, "not supported: msp cannot checkpoint containers",
          "ID", no_options },
        { "restore", cmd_unsupported, "not supported: msp cannot restore containers", "ID",
          no_options },
};

static const rt_option_help global_options[] = {
        { "--root DIR", "state directory (default /run/msp; rootless $XDG_RUNTIME_DIR/msp)" },
        { "--log PATH", "log file for errors, warnings and debug lines (default stderr)" },
        { "--log-format text|json", "log format (json: one object a line, as runc's)" },
        { "--log-level LEVEL", "debug is --debug; other levels log errors and warnings" },
        { "--debug", "debug logging: each step of create, start, exec and delete" },
        { "--systemd-cgroup", "linux.cgroupsPath is slice:prefix:name (systemd's form)" },
        { "--cgroup-manager cgroupfs|systemd|disabled", "how cgroups are made; disabled: "
          "none" },
        { "--rootless[=true|false|auto]", "rootless mode (default: detected)" },
        { "--version", "print msp's version and the newest runtime-spec version it takes" },
        { "--help", "this text; `msp CMD --help` or `msp help CMD` for one command" },
        {},
};

/* checkpoint and restore: their --help exits 0 as runc's does; running them fails. */
static int
cmd_unsupported(rt_ctx *ctx, int argc, char **argv)
{
        (void) argc;
        rt_log_error(ctx, "%s: not supported: msp cannot checkpoint or restore containers",
                     argv[0]);
        return 1;
}

const rt_command *
cmd_find(const char *name)
{
        for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
                if (strcmp(commands[i].name, name) == 0)
                        return &commands[i];
        return NULL;
}

enum { HELP_WIDTH = 79, HELP_TEXT_COL = 29 };

/* text from column HELP_TEXT_COL, wrapped at spaces to HELP_WIDTH */
static void
print_wrapped(FILE *f, const char *text)
{
        const int room = HELP_WIDTH - HELP_TEXT_COL;

        while (*text) {
                int len = (int) strlen(text), cut = len;
                if (len > room) {
                        cut = room;
                        while (cut > 0 && text[cut] != ' ')
                                cut--;
                        if (cut == 0)
                                cut = room;
                }
                fprintf(f, "%.*s\n", cut, text);
                text += cut;
                while (*text == ' ')
                        text++;
                if (*text)
                        fprintf(f, "%*s", HELP_TEXT_COL, "");
        }
}

static void
print_options(FILE *f, const rt_option_help *o)
{
        for (; o->flag; o++) {
                int w = fprintf(f, "  %s", o->flag);
                if (w < HELP_TEXT_COL - 1)
                        fprintf(f, "%*s", HELP_TEXT_COL - w, "");
                else
                        fprintf(f, "\n%*s", HELP_TEXT_COL, "");
                print_wrapped(f, o->text);
        }
}

void
cmd_usage(const rt_command *c, bool to_stderr)
{
        FILE *f = to_stderr ? stderr : stdout;

        fprintf(f, "Usage: msp [global options] %s %s\n  %s\n", c->name, c->usage, c->summary);
        if (!to_stderr && c->options && c->options->flag) {
                fprintf(f, "\nOptions:\n");
                print_options(f, c->options);
        }
}

void
cmd_usage_all(FILE *f)
{
        fprintf(f, "Usage: msp [global options] COMMAND [options] [ID]\n\n"
                   "msp is an OCI runtime: it runs containers from OCI bundles.\n\n"
                   "Commands:\n");
        for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
                fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
        fprintf(f, "  %-10s %s\n", "help", "show help for a command");
        fprintf(f, "\nGlobal options:\n");
        print_options(f, global_options);
}


static void
man_options(FILE *f, const rt_option_help *o)
{
        for (; o->flag; o++) {
                fputs(".TP\n.B ", f);
                oci_roff_text(f, o->flag);
                fputc('\n', f);
                oci_roff_text(f, o->text);
                fputc('\n', f);
        }
}

void
cmd_man(FILE *f)
{
        fprintf(f, ".TH MSP 8 \"\" \"msp %s\" \"System Administration\"\n", MSP_VERSION);
        fputs(".SH NAME\nmsp \\- an OCI container runtime\n"
              ".SH SYNOPSIS\n.B msp\n[\\fIglobal options\\fR] \\fICOMMAND\\fR [\\fIoptions\\fR] "
              "[\\fIID\\fR]\n"
              ".SH DESCRIPTION\n"
              "msp runs containers from OCI bundles (a config.json and a root filesystem) in "
              "Linux namespaces, cgroups, capabilities, seccomp and Landlock. Its command line "
              "is runc's, so engines such as podman, Docker and containerd can drive it. ",
              f);
        fprintf(f, "It takes runtime-spec versions %s to %s.\n", OCI_VERSION_MIN, OCI_VERSION_MAX);
        fputs(".SH GLOBAL OPTIONS\n", f);
        man_options(f, global_options);
        fputs(".SH COMMANDS\n", f);
        for (size_t i = 0; i < ARRAY_SIZE(commands); i++) {
                const rt_command *c = &commands[i];
                fputs(".SS ", f);
                oci_roff_text(f, c->name);
                fputs(" ", f);
                oci_roff_text(f, c->usage);
                fputc('\n', f);
                oci_roff_text(f, c->summary);
                fputs(".\n", f);
                man_options(f, c->options);
        }
        fputs(".SH EXIT STATUS\n"
              "0 on success, 1 on an error (printed once on stderr, naming the field or "
              "file at fault). \\fBrun\\fR exits with the container process's status "
              "(128+N when a signal N ended it); \\fBexec\\fR with the process's status, "
              "255 when msp itself fails and 1 when its command line does not parse.\n"
              ".SH FILES\n"
              ".TP\n.B /run/msp/ID/\nthe state of a container (root)\n"
              ".TP\n.B $XDG_RUNTIME_DIR/msp/ID/\nthe state of a container (rootless)\n"
              ".SH SEE ALSO\n"
              ".BR msp\\-mcp (1),\n.BR runc (8),\n.BR podman (1)\n",
              f);
}
