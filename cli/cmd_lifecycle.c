/* thpvm stop|pause|resume NAME: one control request each, that prints
 * nothing on success. */
#include <stdio.h>

#include "cli/cmd_util.h"
#include "control/control_client.h"
#include "lib/log.h"

static int lifecycle_main(const struct command *cmd, unsigned flags,
			  int argc, char **argv)
{
	struct control_result res;
	struct cmd_args args;
	int rc;

	rc = cmd_args_parse(cmd, argc, argv, 1, 1, &args);
	if (rc >= 0)
		return rc;
	if (!cmd_name_check(args.argv[0]))
		return EXIT_USAGE;
	rc = control_client_command(args.argv[0], cmd->name, flags, &res);
	control_result_free(&res);
	if (rc) {
		pr_err("%s", res.error);
		return 1;
	}
	if (args.json)
		puts("{\"ok\":true}");
	return 0;
}

static int stop_main(int argc, char **argv)
{
	/* Return once the VM has gone, so that `thpvm list` agrees. */
	return lifecycle_main(&cmd_stop, CONTROL_WAIT_CLOSE, argc, argv);
}

static int pause_main(int argc, char **argv)
{
	return lifecycle_main(&cmd_pause, 0, argc, argv);
}

static int resume_main(int argc, char **argv)
{
	return lifecycle_main(&cmd_resume, 0, argc, argv);
}

#define LIFECYCLE_OPTIONS                                               \
	"\n"                                                            \
	"  --json      print {\"ok\":true} on success\n"                \
	"  -h, --help  print this help\n"

const struct command cmd_stop = {
	.name = "stop",
	.summary = "Stop a VM",
	.usage = "usage: thpvm stop [--json] NAME\n"
		 "\n"
		 "Ends the VM called NAME (as if its guest powered off) and "
		 "waits until it\nhas gone.\n" LIFECYCLE_OPTIONS,
	.main = stop_main,
};

const struct command cmd_pause = {
	.name = "pause",
	.summary = "Pause a VM's vCPUs",
	.usage = "usage: thpvm pause [--json] NAME\n"
		 "\n"
		 "Stops the vCPUs of the VM called NAME until `thpvm resume`.\n"
		 LIFECYCLE_OPTIONS,
	.main = pause_main,
};

const struct command cmd_resume = {
	.name = "resume",
	.summary = "Resume a paused VM",
	.usage = "usage: thpvm resume [--json] NAME\n"
		 "\n"
		 "Lets the vCPUs of the paused VM called NAME run again.\n"
		 LIFECYCLE_OPTIONS,
	.main = resume_main,
};
