/* thpvm stop|pause|resume: one control request to each VM named (or to
 * all, with -a), which prints nothing on success. */
#include <stdio.h>
#include <string.h>

#include "cli/cmd_util.h"
#include "cli/vm_select.h"
#include "control/control_client.h"
#include "lib/log.h"

struct lifecycle {
	const struct command *cmd;
	unsigned flags;		/* for control_client_command() */
	struct vm_select sel;
};

static int lifecycle_take(void *ctx, int opt, const char *arg)
{
	struct lifecycle *l = ctx;

	return vm_select_take(&l->sel, l->cmd, opt, arg);
}

/* Whether -a leaves this VM as it is: pause skips a paused VM and resume
 * a VM that is not, as lkvm's --all does. */
static bool lifecycle_done(const struct lifecycle *l, json_t *info)
{
	const char *state = json_string_value(json_object_get(info, "state"));

	if (!l->sel.all || !state)
		return false;
	if (l->cmd == &cmd_pause)
		return !strcmp(state, "paused");
	if (l->cmd == &cmd_resume)
		return strcmp(state, "paused") != 0;
	return false;
}

static int lifecycle_one(void *ctx, const char *name, json_t *info)
{
	const struct lifecycle *l = ctx;
	struct control_result res;
	int rc;

	if (lifecycle_done(l, info))
		return 0;
	rc = control_client_command(name, l->cmd->name, l->flags, &res);
	control_result_free(&res);
	if (rc) {
		pr_err("%s", res.error);
		return 1;
	}
	return 0;
}

static int lifecycle_main(const struct command *cmd, unsigned flags,
			  int argc, char **argv)
{
	static const struct option options[] = {
		VM_SELECT_OPTIONS,
		VM_SELECT_OPTION_ALL,
		{ NULL, 0, NULL, 0 },
	};
	struct lifecycle l = { .cmd = cmd, .flags = flags };
	const struct cmd_options own = {
		.options = options, .take = lifecycle_take, .ctx = &l,
	};
	struct cmd_args args;
	int rc;

	rc = vm_select_parse(&l.sel, cmd, argc, argv, &own, &args);
	if (rc >= 0)
		return rc;
	rc = vm_select_each(&l.sel, lifecycle_one, &l);
	if (!rc && args.json)
		puts("{\"ok\":true}");
	return rc;
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
	"  NAME, -n, --name NAME\n"                                     \
	"                 the VM called NAME\n"                         \
	"  -p, --pid PID  the VM that process PID (its thpvm run) runs\n" \
	"  -a, --all      every running VM (none is fine); pause and\n"  \
	"                 resume pass over those already so\n"         \
	"  --json         print {\"ok\":true} on success\n"             \
	"  -h, --help     print this help\n"

const struct command cmd_stop = {
	.name = "stop",
	.summary = "Stop a VM",
	.usage = "usage: thpvm stop [--json] NAME|-n NAME|-p PID|-a\n"
		 "\n"
		 "Ends the VM (as if its guest powered off) and waits until "
		 "it has gone.\n" LIFECYCLE_OPTIONS,
	.main = stop_main,
};

const struct command cmd_pause = {
	.name = "pause",
	.summary = "Pause a VM's vCPUs",
	.usage = "usage: thpvm pause [--json] NAME|-n NAME|-p PID|-a\n"
		 "\n"
		 "Stops the VM's vCPUs until `thpvm resume`.\n"
		 LIFECYCLE_OPTIONS,
	.main = pause_main,
};

const struct command cmd_resume = {
	.name = "resume",
	.summary = "Resume a paused VM",
	.usage = "usage: thpvm resume [--json] NAME|-n NAME|-p PID|-a\n"
		 "\n"
		 "Lets the vCPUs of the paused VM run again.\n"
		 LIFECYCLE_OPTIONS,
	.main = resume_main,
};
