/* thpvm balloon NAME [--inflate SIZE|--deflate SIZE|--set SIZE] [--wait]:
 * shows a VM's balloon, after changing its target if asked to. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/cmd_util.h"
#include "cli/cmd_wait.h"
#include "cli/vm_select.h"
#include "control/control_client.h"
#include "lib/log.h"
#include "lib/util.h"

static const char *fmt_size(uint64_t bytes, char *buf)
{
	return size_format(bytes, buf, 32);
}

static int balloon_print(const char *name, json_t *reply)
{
	json_t *stats = json_object_get(reply, "stats"), *v;
	char a[32], b[32];
	const char *policy, *key;
	uint64_t ram;
	int driver_ok;
	double age, percent;

	if (json_unpack(reply, "{s:s, s:b, s:F}", "policy", &policy,
			"driver_ok", &driver_ok, "huge_percent", &percent) ||
	    !json_get_u64(reply, "ram", &ram)) {
		pr_err("VM \"%s\" sent an incomplete balloon reply", name);
		return 1;
	}
	printf("Name: %s\n", name);
	printf("Driver: %s\n", driver_ok ? "ready" : "not started");
	printf("RAM: %s\n", fmt_size(ram, a));
	printf("Target: %s in the balloon, %s for the guest\n",
	       fmt_size(cmd_reply_u64(reply, "target"), a),
	       fmt_size(cmd_reply_u64(reply, "guest_target"), b));
	printf("Actual: %s in the balloon\n",
	       fmt_size(cmd_reply_u64(reply, "actual"), a));
	printf("Policy: %s\n", policy);
	/* What was given back, resident or not: an operator comparing it
	 * with Host resident must know that untouched pages free nothing. */
	printf("Released to the host: %s in %llu calls (pages the guest "
	       "never touched free no host memory)\n",
	       fmt_size(cmd_reply_u64(reply, "released"), a),
	       (unsigned long long)cmd_reply_u64(reply, "release_calls"));
	printf("Partial blocks: %llu, holding %s\n",
	       (unsigned long long)cmd_reply_u64(reply, "partial_blocks"),
	       fmt_size(cmd_reply_u64(reply, "held"), a));
	printf("Host resident: %s\n",
	       fmt_size(cmd_reply_u64(reply, "resident"), a));
	printf("Huge pages: %s (%.1f%% of RAM)\n",
	       fmt_size(cmd_reply_u64(reply, "huge"), a), percent);
	if (!json_is_object(stats) ||
	    json_unpack(reply, "{s:F}", "stats_age", &age)) {
		printf("Guest stats: none yet\n");
		return 0;
	}
	printf("Guest stats (%.1f s old):\n", age);
	json_object_foreach(stats, key, v) {
		uint64_t n = cmd_reply_u64(stats, key);

		/* Counters are counts; the rest are sizes in bytes. */
		if (strstr(key, "faults") || strstr(key, "hugetlb"))
			printf("  %s: %llu\n", key, (unsigned long long)n);
		else
			printf("  %s: %s\n", key, fmt_size(n, a));
	}
	return 0;
}

/* SIZE of --inflate, --deflate or --set (opt): the message says what
 * each sizes, as --set is the guest's memory, not the balloon's. */
static int parse_size(const char *opt, const char *arg, uint64_t *out)
{
	const char *what =
		!strcmp(opt, "inflate") ? "the memory to take from the guest" :
		!strcmp(opt, "deflate") ? "the memory to give back to the guest" :
		"the memory to leave the guest (its size, not the balloon's)";

	if (size_parse(arg, out)) {
		pr_err("balloon: --%s %s: expected %s, above 0 (examples: 600, "
		       "512M, 1G; a bare number is MiB)", opt, arg, what);
		return -EINVAL;
	}
	return 0;
}

/* -i and -d are lkvm's letters. */
enum { OPT_INFLATE = 'i', OPT_DEFLATE = 'd', OPT_SET = CMD_OPT_BASE,
       OPT_WAIT };

/* --wait: until the balloon holds what the host asked for. */
static const struct cmd_wait balloon_wait = {
	.cmd = "balloon",
	.target_key = "target",
	.actual_key = "actual",
	.target_words = "the target of",
	.actual_word = "actual",
	.no_driver = "no balloon driver has started",
	.print = balloon_print,
};

/* A new target (key: inflate, deflate or set) and how long to wait for
 * it. */
static int balloon_take_option(void *ctx, int opt, const char *arg)
{
	struct cmd_change_request *req = ctx;
	int rc = vm_select_take(&req->sel, &cmd_balloon, opt, arg);

	if (rc >= 0)
		return rc;
	if (opt == OPT_WAIT)
		return cmd_wait_parse("balloon", arg, &req->change.wait_s);
	if (req->change.key) {
		pr_err("balloon: --inflate, --deflate and --set exclude each "
		       "other");
		return EXIT_USAGE;
	}
	req->change.key = opt == OPT_INFLATE ? "inflate" :
			  opt == OPT_DEFLATE ? "deflate" : "set";
	return parse_size(req->change.key, arg, &req->change.value) ?
		       EXIT_USAGE : 0;
}

static int balloon_main(int argc, char **argv)
{
	static const struct option options[] = {
		{ "inflate", required_argument, NULL, OPT_INFLATE },
		{ "deflate", required_argument, NULL, OPT_DEFLATE },
		{ "set", required_argument, NULL, OPT_SET },
		{ "wait", optional_argument, NULL, OPT_WAIT },
		VM_SELECT_OPTIONS,
		{ NULL, 0, NULL, 0 },
	};

	return cmd_change_main(&cmd_balloon, &balloon_wait, options,
			       balloon_take_option, argc, argv);
}

const struct command cmd_balloon = {
	.name = "balloon",
	.summary = "Show or change a VM's memory balloon",
	.usage = "usage: thpvm balloon [-i|-d|--set SIZE] [--wait[=SECONDS]] "
		 "[--json] NAME|-n NAME|-p PID\n"
		 "\n"
		 "Shows the balloon of the VM (started with --balloon): its "
		 "target, what\nthe guest gave up, what went back to the "
		 "host, and the guest's latest\nstatistics. SIZE: 600 (MiB, "
		 "as lkvm and QEMU count), 512M, 1G.\n"
		 "\n"
		 "  NAME, -n, --name NAME\n"
		 "                  the VM called NAME\n"
		 "  -p, --pid PID   the VM that process PID (its thpvm run) "
		 "runs\n"
		 "  -i, --inflate SIZE\n"
		 "                  take SIZE more from the guest\n"
		 "  -d, --deflate SIZE\n"
		 "                  give SIZE back to the guest\n"
		 "  --set SIZE      leave the guest SIZE of memory: the "
		 "guest's size after,\n"
		 "                  not the balloon's\n"
		 "  --wait[=SECONDS], --wait SECONDS\n"
		 "                  then wait until the guest's balloon holds "
		 "the target\n"
		 "                  (at most SECONDS, default 60; exit status 1 "
		 "after);\n"
		 "                  a number right after --wait is SECONDS, "
		 "so name a\n"
		 "                  VM called 30 with -n 30\n"
		 "  --json          print the VM's reply (sizes in bytes; see\n"
		 "                  docs/control-protocol.md)\n"
		 "  -h, --help      print this help\n",
	.main = balloon_main,
};
