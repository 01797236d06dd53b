/* Helpers shared by the subcommands (see cmd_util.h). */
#include "cli/cmd_util.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "control/control_path.h"
#include "lib/log.h"
#include "lib/util.h"

const struct command *const command_table[] = {
	&cmd_run, &cmd_sandbox, &cmd_list, &cmd_stat, &cmd_balloon, &cmd_mem,
	&cmd_console, &cmd_pause, &cmd_resume, &cmd_stop, &cmd_version,
	&cmd_help,
};
const size_t command_table_len = ARRAY_SIZE(command_table);

const struct command *command_find(const char *name)
{
	size_t i;

	for (i = 0; i < command_table_len; i++)
		if (!strcmp(command_table[i]->name, name))
			return command_table[i];
	return NULL;
}

const char *command_usage(const struct command *cmd)
{
	return cmd->usage_make ? cmd->usage_make() : cmd->usage;
}

void command_print_summary(FILE *f)
{
	size_t i;

	fprintf(f, "usage: thpvm COMMAND [OPTIONS] [ARGS]\n\n"
		   "Runs Linux guests on KVM, backed by transparent huge "
		   "pages.\n\nCommands:\n");
	for (i = 0; i < command_table_len; i++)
		fprintf(f, "  %-9s %s\n", command_table[i]->name,
			command_table[i]->summary);
	fprintf(f, "\n'thpvm help COMMAND' or 'thpvm COMMAND --help' shows "
		   "a command's options.\n");
}

/* The synopsis: the usage text's first line without "usage: ". */
void cmd_usage_error(const struct command *cmd, const char *what,
		     const char *arg)
{
	const char *usage = command_usage(cmd);
	int len;

	if (!strncmp(usage, "usage: ", 7))
		usage += 7;
	len = (int)strcspn(usage, "\n");
	if (arg)
		pr_err("%s: %s \"%s\" (usage: %.*s)", cmd->name, what, arg,
		       len, usage);
	else
		pr_err("%s: %s (usage: %.*s)", cmd->name, what, len, usage);
}

int cmd_args_parse(const struct command *cmd, int argc, char **argv, int min,
		   int max, struct cmd_args *args)
{
	return cmd_args_parse_opts(cmd, argc, argv, min, max, NULL, args);
}

/* The entry of own whose val is opt, or NULL. */
static const struct option *own_find(const struct cmd_options *own, int opt)
{
	unsigned i;

	for (i = 0; own && own->options[i].name; i++)
		if (own->options[i].val == opt)
			return &own->options[i];
	return NULL;
}

/* getopt's short options: ':' first (to tell a missing value from an
 * unknown option), -h, and each own option that has a letter. */
static void short_options(const struct cmd_options *own, char *buf)
{
	unsigned i;

	buf += sprintf(buf, ":h");
	for (i = 0; own && own->options[i].name; i++) {
		const struct option *o = &own->options[i];

		if (o->val >= 256)
			continue;
		*buf++ = (char)o->val;
		if (o->has_arg != no_argument)
			*buf++ = ':';
		if (o->has_arg == optional_argument)
			*buf++ = ':';
	}
	*buf = '\0';
}

static bool is_number(const char *s)
{
	return s && *s && strspn(s, "0123456789") == strlen(s);
}

int cmd_args_parse_opts(const struct command *cmd, int argc, char **argv,
			int min, int max, const struct cmd_options *own,
			struct cmd_args *args)
{
	enum { OPT_JSON = 256 };	/* long only: no short letter */
	struct option options[CMD_MAX_OPTIONS + 3] = {
		{ "json", no_argument, NULL, OPT_JSON },
		{ "help", no_argument, NULL, 'h' },
	};
	char shortopt[3] = { '-', 0, 0 };
	char shortopts[3 + 3 * CMD_MAX_OPTIONS];
	const struct option *o;
	const char *arg;
	unsigned i;
	int c, rc;

	for (i = 0; own && own->options[i].name; i++) {
		if (i == CMD_MAX_OPTIONS)
			abort();	/* a bug in the command's table */
		options[2 + i] = own->options[i];
	}
	short_options(own, shortopts);
	args->json = false;
	opterr = 0;	/* errors are reported here, in thpvm's format */
	optind = 0;	/* a fresh scan, also when called again */
	while ((c = getopt_long(argc, argv, shortopts, options, NULL)) != -1) {
		switch (c) {
		case OPT_JSON:
			args->json = true;
			continue;
		case 'h':
			fputs(command_usage(cmd), stdout);
			return 0;
		case ':':
			cmd_usage_error(cmd, "missing value for",
					argv[optind - 1]);
			return EXIT_USAGE;
		}
		o = c != '?' ? own_find(own, c) : NULL;
		if (!o) {
			shortopt[1] = (char)optopt;
			cmd_usage_error(cmd, "unknown option",
					optopt > 0 && optopt < 256 ?
						shortopt : argv[optind - 1]);
			return EXIT_USAGE;
		}
		arg = optarg;
		if (!arg && o->has_arg == optional_argument && optind < argc &&
		    is_number(argv[optind]))
			arg = argv[optind++];
		rc = own->take(own->ctx, c, arg);
		if (rc)
			return rc;
	}
	args->argc = argc - optind;
	args->argv = argv + optind;
	if (args->argc < min) {
		cmd_usage_error(cmd, "missing argument", NULL);
		return EXIT_USAGE;
	}
	if (args->argc > max) {
		cmd_usage_error(cmd, "unexpected argument", args->argv[max]);
		return EXIT_USAGE;
	}
	return -1;
}

bool cmd_name_check(const char *name)
{
	if (control_path_name_valid(name) || control_path_is_path(name))
		return true;
	pr_err("invalid VM name \"%s\" (%s; or the path of a control socket, "
	       "with a '/')", name, CONTROL_NAME_RULE);
	return false;
}

json_t *cmd_reply_json(json_t *reply)
{
	json_object_del(reply, "ok");
	return json_incref(reply);
}

void cmd_json_append(json_t **array, json_t *item)
{
	if (json_array_append_new(*array, item)) {
		json_decref(*array);
		*array = NULL;
	}
}

int cmd_print_json(json_t *doc)
{
	char *text = doc ? json_encode(doc) : NULL;

	json_decref(doc);
	if (!text) {
		pr_err("cannot build the JSON output: %s", strerror(ENOMEM));
		return 1;
	}
	puts(text);
	free(text);
	return 0;
}

uint64_t cmd_reply_u64(const json_t *reply, const char *key)
{
	uint64_t v = 0;

	json_get_u64(reply, key, &v);
	return v;
}
