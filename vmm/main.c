/* thpvm COMMAND [ARGS]: dispatches to the subcommand (cmd_*.c). */
#include <stdio.h>
#include <string.h>

#include "cmd_util.h"
#include "log.h"

static bool is_help(const char *arg)
{
	return !strcmp(arg, "-h") || !strcmp(arg, "--help");
}

int main(int argc, char **argv)
{
	const struct command *cmd;

	if (argc < 2) {
		command_print_summary(stderr);
		return EXIT_USAGE;
	}
	if (is_help(argv[1])) {
		command_print_summary(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version"))
		argv[1] = "version";
	cmd = command_find(argv[1]);
	if (!cmd) {
		pr_err("unknown command \"%s\" (see thpvm help)", argv[1]);
		return EXIT_USAGE;
	}
	/* `thpvm CMD --help` for every command, whatever options it has. */
	if (argc > 2 && is_help(argv[2])) {
		fputs(cmd->usage, stdout);
		return 0;
	}
	return cmd->main(argc - 1, argv + 1);
}
