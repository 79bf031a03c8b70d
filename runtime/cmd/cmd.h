/* The command layer: one file per verb, the table and help in commands.c, what several
 * verbs share in common.c. Each verb parses its own flags, calls the library, prints the
 * error once and returns the process exit status. */
#pragma once

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "lib/rt.h"

/* One option of a command as help and the manual page print it. */
typedef struct rt_option_help {
        const char *flag;               /* "-b, --bundle DIR"; NULL ends a list */
        const char *text;
} rt_option_help;

typedef struct rt_command {
        const char *name;
        int (*run)(rt_ctx *ctx, int argc, char **argv);
        const char *summary;
        const char *usage;              /* after "msp [global options] <name> " */
        const rt_option_help *options;  /* every option the command takes */
        /* Options end at the container ID: what follows it is the process's command
         * (exec) or ps(1)'s options (ps), as runc's SkipArgReorder commands. Every other
         * command takes its options anywhere before "--", before or after the ID. */
        bool options_end_at_id;
} rt_command;

int cmd_create(rt_ctx *ctx, int argc, char **argv);
int cmd_start(rt_ctx *ctx, int argc, char **argv);
int cmd_state(rt_ctx *ctx, int argc, char **argv);
int cmd_kill(rt_ctx *ctx, int argc, char **argv);
int cmd_delete(rt_ctx *ctx, int argc, char **argv);
int cmd_run(rt_ctx *ctx, int argc, char **argv);
int cmd_list(rt_ctx *ctx, int argc, char **argv);
int cmd_spec(rt_ctx *ctx, int argc, char **argv);
int cmd_features(rt_ctx *ctx, int argc, char **argv);
int cmd_pause(rt_ctx *ctx, int argc, char **argv);
int cmd_resume(rt_ctx *ctx, int argc, char **argv);
int cmd_update(rt_ctx *ctx, int argc, char **argv);
int cmd_ps(rt_ctx *ctx, int argc, char **argv);
int cmd_events(rt_ctx *ctx, int argc, char **argv);
int cmd_exec(rt_ctx *ctx, int argc, char **argv);

/* The command table (commands.c). */
const rt_command *cmd_find(const char *name);
/* "Usage: ..." for one command to stdout (help, with its options) or stderr (misuse). */
void cmd_usage(const rt_command *c, bool to_stderr);
/* `msp --help`: the commands and the global options. */
void cmd_usage_all(FILE *f);
/* The msp(8) manual page, in roff, from the same table. */
void cmd_man(FILE *f);

/* Flags shared by create and run (create.c); run also takes --detach and --keep. Returns
 * the index of the container ID in argv, or -1 after printing a usage error. */
int cmd_parse_create_opts(const rt_ctx *ctx, const char *cmd, int argc, char **argv,
                          rt_create_opts *o, bool *detach, bool *keep);

/* ---- shared by the commands (common.c) ---- */

/* A usage error: prints "msp: <cmd>: <msg>" plus the usage line; returns 1 as runc does. */
int cmd_usage_error(const rt_ctx *ctx, const char *cmd, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
/* Print err once and return 1. */
int cmd_fail(const rt_ctx *ctx, const msp_err *err);
/* "--help"/"-h" anywhere before "--" (options_end_at_id commands parse it themselves):
 * print usage and return true. */
bool cmd_wants_help(const char *name, int argc, char **argv);
/* Print a JSON document followed by a newline to stdout; returns 0 or 1. */
int cmd_print(const rt_ctx *ctx, const char *json, size_t len);
/* Flush stdout; on failure print "write to stdout failed" and return 1, else 0. */
int cmd_flush_stdout(const rt_ctx *ctx);

/* A single ID operand at argv[first], the last one; -1 after printing a usage error. */
int cmd_one_id(const rt_ctx *ctx, const char *cmd, int argc, char **argv, int first,
               const char **ret_id);
/* --preserve-fds N (create, run, exec): decimal, 0 to 65536; -EINVAL otherwise. */
int cmd_parse_fd_count(const char *s, int *ret);
/* --format table|json (list, ps): *ret_json set; -EINVAL for anything else. */
int cmd_parse_format(const char *s, bool *ret_json);

/* A verb that takes only an ID (start, pause, resume): load the container, locked, and
 * run action on it; the exit status. */
int cmd_on_container(rt_ctx *ctx, const char *cmd, int argc, char **argv,
                     int (*action)(const rt_ctx *ctx, rt_container *c, msp_err *err));

/* run and exec: block the signals msp forwards to the process it waits for (before the
 * process exists, so that none is lost) and return a signalfd for them; -errno after
 * printing the error. */
int cmd_block_forwarded_signals(const rt_ctx *ctx);
struct rt_ttyproxy;
struct rt_stdio_relay;
/* Wait for pid (our child), forwarding signals read from sigfd through pidfd, proxying
 * tty and copying through relay when not NULL; returns its exit status, 128+signal when
 * killed. */
int cmd_wait_forwarding(const rt_ctx *ctx, pid_t pid, int pidfd, int sigfd,
                        struct rt_ttyproxy *tty, struct rt_stdio_relay *relay);
