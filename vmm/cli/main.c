/* thpvm COMMAND [ARGS]: dispatches to the subcommand (cmd_*.c). */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cmd_util.h"
#include "lib/log.h"

static bool is_help(const char *arg)
{
	return !strcmp(arg, "-h") || !strcmp(arg, "--help");
}

/* A closed stdin, stdout or stderr would be handed out by the next open()
 * (/dev/kvm, say) and then used as the console: fill them with /dev/null. */
static void std_fds_ensure_open(void)
{
	int fd;

	do {
		fd = open("/dev/null", O_RDWR);
	} while (fd >= 0 && fd <= STDERR_FILENO);
	if (fd > STDERR_FILENO)
		close(fd);
}

int main(int argc, char **argv)
{
	const struct command *cmd;

	std_fds_ensure_open();
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
		fputs(command_usage(cmd), stdout);
		return 0;
	}
	return cmd->main(argc - 1, argv + 1);
}
