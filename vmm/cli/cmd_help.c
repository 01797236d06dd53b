/* thpvm help [CMD]: the list of commands, or one command's usage. */
#include <stdio.h>

#include "cli/cmd_util.h"
#include "lib/log.h"

static json_t *command_json(const struct command *cmd, bool usage)
{
	return json_pack("{s:s, s:s, s:s*}", "name", cmd->name,
			 "summary", cmd->summary,
			 "usage", usage ? command_usage(cmd) : NULL);
}

static int help_main(int argc, char **argv)
{
	const struct command *cmd = NULL;
	struct cmd_args args;
	json_t *list;
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
	if (cmd)
		return cmd_print_json(command_json(cmd, true));
	list = json_array();
	for (i = 0; i < command_table_len; i++)
		cmd_json_append(&list, command_json(command_table[i], false));
	/* A list that failed is NULL, which fails the pack. */
	return cmd_print_json(json_pack("{s:o}", "commands", list));
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
