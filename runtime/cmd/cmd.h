/* The command layer: one file per verb. Each parses its own flags, calls the library,
 * prints the error once and returns the process exit status. */
#pragma once

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "lib/container.h"
#include "lib/ctx.h"

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

/* Flags shared by create and run; run also takes --detach and --keep. Returns the
 * index of the container ID in argv, or -1 after printing a usage error. */
int cmd_parse_create_opts(const rt_ctx *ctx, const char *cmd, int argc, char **argv,
                          rt_create_opts *o, bool *detach, bool *keep);
/* A single ID operand after the flags. */
int cmd_one_id(const rt_ctx *ctx, const char *cmd, int argc, char **argv, int first,
               const char **ret_id);

/* run and exec: the signals msp forwards to the process it waits for. */
void cmd_forwarded_signals(sigset_t *set);
struct rt_ttyproxy;
struct rt_stdio_relay;
/* Wait for pid (our child), forwarding signals read from sigfd through pidfd, proxying
 * tty and copying through relay when not NULL; returns its exit status, 128+signal when
 * killed. */
int cmd_wait_forwarding(const rt_ctx *ctx, pid_t pid, int pidfd, int sigfd,
                        struct rt_ttyproxy *tty, struct rt_stdio_relay *relay);
