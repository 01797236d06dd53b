/* thpvm mem NAME [--set SIZE] [--wait]: shows a VM's hotplugged memory
 * (virtio-mem), after asking the guest for a new plugged size if told
 * to. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>

#include "cli/cmd_util.h"
#include "cli/cmd_wait.h"
#include "cli/vm_select.h"
#include "control/control_client.h"
#include "lib/log.h"
#include "lib/util.h"

static int mem_print(const char *name, json_t *reply)
{
	char a[32], b[32];
	uint64_t region, addr;
	int driver_ok;
	double percent;

	if (json_unpack(reply, "{s:b, s:F}", "driver_ok", &driver_ok,
			"huge_percent", &percent) ||
	    !json_get_u64(reply, "region_size", &region) ||
	    !json_get_u64(reply, "addr", &addr)) {
		pr_err("VM \"%s\" sent an incomplete mem reply", name);
		return 1;
	}
	printf("Name: %s\n", name);
	printf("Driver: %s\n", driver_ok ? "ready" : "not started");
	printf("Region: %s at 0x%llx, in blocks of %s\n",
	       size_format(region, a, sizeof(a)), (unsigned long long)addr,
	       size_format(cmd_reply_u64(reply, "block_size"), b, sizeof(b)));
	printf("Requested: %s\n",
	       size_format(cmd_reply_u64(reply, "requested_size"), a,
			   sizeof(a)));
	printf("Plugged: %s\n",
	       size_format(cmd_reply_u64(reply, "plugged_size"), a, sizeof(a)));
	printf("Requests: %llu plugs, %llu unplugs, %llu refused\n",
	       (unsigned long long)cmd_reply_u64(reply, "plugs"),
	       (unsigned long long)cmd_reply_u64(reply, "unplugs"),
	       (unsigned long long)cmd_reply_u64(reply, "refused"));
	printf("Released to the host: %s in %llu calls (blocks the guest "
	       "never touched free no host memory)\n",
	       size_format(cmd_reply_u64(reply, "released"), a, sizeof(a)),
	       (unsigned long long)cmd_reply_u64(reply, "release_calls"));
	printf("Host resident: %s\n",
	       size_format(cmd_reply_u64(reply, "resident"), a, sizeof(a)));
	printf("Huge pages: %s (%.1f%% of what is plugged)\n",
	       size_format(cmd_reply_u64(reply, "huge"), a, sizeof(a)),
	       percent);
	return 0;
}

/* --wait: until the guest has plugged what was requested. */
static const struct cmd_wait mem_wait = {
	.cmd = "mem",
	.target_key = "requested_size",
	.actual_key = "plugged_size",
	.target_words = "the requested size of",
	.actual_word = "plugged",
	.no_driver = "no virtio-mem driver has started",
	.print = mem_print,
};

enum { OPT_SET = CMD_OPT_BASE, OPT_WAIT };

/* A new requested size (key "set") and how long to wait for it. */
static int mem_take_option(void *ctx, int opt, const char *arg)
{
	struct cmd_change_request *req = ctx;
	int rc = vm_select_take(&req->sel, &cmd_mem, opt, arg), err;

	if (rc >= 0)
		return rc;
	if (opt == OPT_WAIT)
		return cmd_wait_parse("mem", arg, &req->change.wait_s);
	/* 0 (or 0M) unplugs everything: zero is a size here. */
	req->change.key = "set";
	req->change.value = 0;
	err = size_parse(arg, &req->change.value);
	if (err && err != -EDOM) {
		pr_err("mem: --set %s: not a size (examples: 0, 512M, 1G; a "
		       "bare number is MiB)", arg);
		return EXIT_USAGE;
	}
	return 0;
}

static int mem_main(int argc, char **argv)
{
	static const struct option options[] = {
		{ "set", required_argument, NULL, OPT_SET },
		{ "wait", optional_argument, NULL, OPT_WAIT },
		VM_SELECT_OPTIONS,
		{ NULL, 0, NULL, 0 },
	};

	return cmd_change_main(&cmd_mem, &mem_wait, options, mem_take_option,
			       argc, argv);
}

const struct command cmd_mem = {
	.name = "mem",
	.summary = "Show or change a VM's hotplugged memory (virtio-mem)",
	.usage = "usage: thpvm mem [--set SIZE] [--wait[=SECONDS]] [--json] "
		 "NAME|-n NAME|-p PID\n"
		 "\n"
		 "Shows the virtio-mem device of the VM (started with "
		 "--mem-hotplug): its\nregion, what the host requests, what "
		 "the guest plugged, what went back\nto the host, and how "
		 "the host backs the region. SIZE: 512 (MiB), 512M,\n1G, "
		 "or 0; a multiple of the device's block.\n"
		 "\n"
		 "  NAME, -n, --name NAME\n"
		 "                  the VM called NAME\n"
		 "  -p, --pid PID   the VM that process PID (its thpvm run) "
		 "runs\n"
		 "  --set SIZE      ask the guest to plug SIZE of the region "
		 "(unplugging\n"
		 "                  what is above it)\n"
		 "  --wait[=SECONDS], --wait SECONDS\n"
		 "                  then wait until the guest has plugged "
		 "SIZE (at most\n"
		 "                  SECONDS, default 60; exit status 1 after); "
		 "a number\n"
		 "                  right after --wait is SECONDS, so name a "
		 "VM called 30\n"
		 "                  with -n 30\n"
		 "  --json          print the VM's reply (sizes in bytes; see\n"
		 "                  docs/control-protocol.md)\n"
		 "  -h, --help      print this help\n",
	.main = mem_main,
};
