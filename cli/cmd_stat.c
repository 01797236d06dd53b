/* thpvm stat NAME: a VM's state and how its RAM is backed on the host. */
#include <stdio.h>

#include "cli/cmd_util.h"
#include "control/control_client.h"
#include "lib/log.h"
#include "lib/util.h"

static int stat_print(const char *name, const struct json_value *reply)
{
	uint64_t pid, vcpus, ram, resident, huge;
	const char *state, *backing;
	char ram_s[32], resident_s[32], huge_s[32];
	double percent;

	state = json_get_string(reply, "state");
	backing = json_get_string(reply, "backing");
	if (!state || !backing || !json_get_u64(reply, "pid", &pid) ||
	    !json_get_u64(reply, "vcpus", &vcpus) ||
	    !json_get_u64(reply, "ram", &ram) ||
	    !json_get_u64(reply, "resident", &resident) ||
	    !json_get_u64(reply, "huge", &huge) ||
	    !json_get_double(reply, "huge_percent", &percent)) {
		pr_err("VM \"%s\" sent an incomplete stat reply", name);
		return 1;
	}
	printf("Name: %s\n", name);
	printf("PID: %llu\n", (unsigned long long)pid);
	printf("State: %s\n", state);
	printf("CPUs: %llu\n", (unsigned long long)vcpus);
	printf("RAM: %s\n", size_format(ram, ram_s, sizeof(ram_s)));
	printf("Backing: %s\n", backing);
	printf("Host resident: %s\n",
	       size_format(resident, resident_s, sizeof(resident_s)));
	printf("Huge pages: %s (%.1f%% of RAM)\n",
	       size_format(huge, huge_s, sizeof(huge_s)), percent);
	return 0;
}

static int stat_main(int argc, char **argv)
{
	struct control_result res;
	struct cmd_args args;
	const char *name;
	int rc;

	rc = cmd_args_parse(&cmd_stat, argc, argv, 1, 1, &args);
	if (rc >= 0)
		return rc;
	name = args.argv[0];
	if (!cmd_name_check(name))
		return EXIT_USAGE;
	if (control_client_command(name, "stat", 0, &res)) {
		pr_err("%s", res.error);
		control_result_free(&res);
		return 1;
	}
	rc = args.json ? cmd_print_reply(res.reply) :
			 stat_print(name, res.reply);
	control_result_free(&res);
	return rc;
}

const struct command cmd_stat = {
	.name = "stat",
	.summary = "Show a VM's state and memory backing",
	.usage = "usage: thpvm stat [--json] NAME\n"
		 "\n"
		 "Shows the state of the VM called NAME, its size, and how "
		 "much of its RAM\nthe host backs now, and with huge pages.\n"
		 "\n"
		 "  --json      print the VM's stat reply: name, pid, state, "
		 "vcpus, ram,\n"
		 "              backing, resident, huge, huge_percent (sizes "
		 "in bytes)\n"
		 "  -h, --help  print this help\n",
	.main = stat_main,
};
