/* thpvm help [CMD]: the list of commands, or one command's usage. */
#include <stdio.h>

#include "cli/cmd_util.h"
#include "lib/log.h"

static void write_command(struct json_writer *w, const struct command *cmd,
			  bool usage)
{
	json_write_object_begin(w);
	json_field_string(w, "name", cmd->name);
	json_field_string(w, "summary", cmd->summary);
	if (usage)
		json_field_string(w, "usage", command_usage(cmd));
	json_write_object_end(w);
}

static int help_main(int argc, char **argv)
{
	const struct command *cmd = NULL;
	struct cmd_args args;
	struct json_writer w;
	size_t i;
	int rc;

	rc = cmd_args_parse(&cmd_help, argc, argv, 0, 1, &args);
	if (rc >= 0)
		return rc;
	if (args.argc) {
		cmd = command_find(args.argv[0]);
		if (!cmd) {
			pr_err("unknown command \"%s\" (see thpvm help)",
			       args.argv[0]);
			return EXIT_USAGE;
		}
	}
	if (!args.json) {
		if (cmd)
			fputs(command_usage(cmd), stdout);
		else
			command_print_summary(stdout);
		return 0;
	}
	json_writer_init(&w);
	if (cmd) {
		write_command(&w, cmd, true);
	} else {
		json_write_object_begin(&w);
		json_write_key(&w, "commands");
		json_write_array_begin(&w);
		for (i = 0; i < command_table_len; i++)
			write_command(&w, command_table[i], false);
		json_write_array_end(&w);
		json_write_object_end(&w);
	}
	rc = cmd_print_json(&w);
	json_writer_free(&w);
	return rc;
}

const struct command cmd_help = {
	.name = "help",
	.summary = "List the commands, or show one command's options",
	.usage = "usage: thpvm help [--json] [COMMAND]\n"
		 "\n"
		 "Lists the commands, or prints the usage of COMMAND.\n"
		 "\n"
		 "  --json      print {\"commands\":[{\"name\",\"summary\"}...]}, or\n"
		 "              {\"name\",\"summary\",\"usage\"} for COMMAND\n"
		 "  -h, --help  print this help\n",
	.main = help_main,
};
