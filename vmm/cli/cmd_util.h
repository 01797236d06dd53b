/* What the subcommands share: the command table, the options all but
 * `run` take (--json, -h/--help), and JSON output. */
#ifndef THPVM_CMD_UTIL_H
#define THPVM_CMD_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cli/commands.h"
#include "lib/json.h"

/* A reply's unsigned figure, or 0 where it has none: for printing. */
uint64_t cmd_reply_u64(const json_t *reply, const char *key);

extern const struct command *const command_table[];
extern const size_t command_table_len;

const struct command *command_find(const char *name);
/* The command's full usage text. */
const char *command_usage(const struct command *cmd);
/* The list of commands, for `thpvm`, `thpvm help` and `thpvm --help`. */
void command_print_summary(FILE *f);

struct cmd_args {
	bool json;
	int argc;		/* the positional arguments */
	char **argv;
};

/* Parses argv (argv[0] is the command name) for --json and -h/--help and
 * expects min..max positional arguments. Returns -1 to go on, or the exit
 * status to return now: 0 after printing the usage for --help, EXIT_USAGE
 * after reporting a usage error. */
int cmd_args_parse(const struct command *cmd, int argc, char **argv, int min,
		   int max, struct cmd_args *args);

/* A command's own options, besides --json and --help: getopt entries
 * whose val is a short letter (-n and --name) or, for a long-only option,
 * a value from CMD_OPT_BASE on, ending with a zero entry, and the function
 * that takes each one; it returns 0, or EXIT_USAGE after saying why. An
 * optional value may also come as the next argument when that is a whole
 * number (`--wait 30` as well as `--wait=30`). */
#define CMD_OPT_BASE 257
#define CMD_MAX_OPTIONS 8
struct option;
struct cmd_options {
	const struct option *options;
	int (*take)(void *ctx, int opt, const char *arg);
	void *ctx;
};
/* cmd_args_parse() with the command's own options too. */
int cmd_args_parse_opts(const struct command *cmd, int argc, char **argv,
			int min, int max, const struct cmd_options *own,
			struct cmd_args *args);
/* Reports a usage error as every command does: what, the argument it is
 * about (or NULL), and the command's synopsis. */
void cmd_usage_error(const struct command *cmd, const char *what,
		     const char *arg);
/* Reports an invalid VM name as a usage error; a path (with a '/') names
 * a VM by its control socket (thpvm run --control-socket). */
bool cmd_name_check(const char *name);

/* reply without its "ok" member, for --json: a new reference to reply,
 * which loses the member. */
json_t *cmd_reply_json(json_t *reply);
/* Appends item to *array, taking item's reference; when that fails, drops
 * the array (*array = NULL), for cmd_print_json() to report. */
void cmd_json_append(json_t **array, json_t *item);
/* Prints doc and a newline to stdout, taking doc's reference (NULL:
 * building it failed). Returns the exit status. */
int cmd_print_json(json_t *doc);

#endif
