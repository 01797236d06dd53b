/* thpvm stat NAME: a VM's state, how its RAM and hotplug region are
 * backed on the host, what its rng served, its disks, 9p shares and
 * user-mode network. */
#include <stdio.h>
#include <string.h>

#include "cli/cmd_util.h"
#include "cli/vm_select.h"
#include "control/control_client.h"
#include "lib/log.h"
#include "lib/util.h"

/* Only a VM with --mem-hotplug has these. */
static void hotplug_print(const json_t *reply)
{
	uint64_t region, requested, plugged, resident, huge;
	char a[32], b[32], c[32];

	if (!json_get_u64(reply, "hotplug_region", &region) ||
	    !json_get_u64(reply, "hotplug_requested", &requested) ||
	    !json_get_u64(reply, "hotplug_plugged", &plugged) ||
	    !json_get_u64(reply, "hotplug_resident", &resident) ||
	    !json_get_u64(reply, "hotplug_huge", &huge))
		return;
	printf("Hotplug region: %s, %s requested, %s plugged\n",
	       size_format(region, a, sizeof(a)),
	       size_format(requested, b, sizeof(b)),
	       size_format(plugged, c, sizeof(c)));
	printf("Hotplug host resident: %s, huge pages: %s (%.1f%% of what "
	       "is plugged)\n", size_format(resident, a, sizeof(a)),
	       size_format(huge, b, sizeof(b)),
	       plugged ? 100.0 * (double)huge / (double)plugged : 0);
}

/* "Disk virtio-blk0: PATH (qcow2, io_uring, direct, read-only)" for
 * each; raw is not named. */
static void print_disks(const json_t *disks)
{
	json_t *d;
	size_t i;

	json_array_foreach(disks, i, d) {
		const char *name, *path, *engine, *format;
		char fmt[24] = "";
		bool direct, read_only;
		uint64_t queues = 1;
		char multi[32] = "";

		if (json_unpack(d, "{s:s, s:s, s:s}", "name", &name,
				"path", &path, "engine", &engine))
			continue;
		direct = json_is_true(json_object_get(d, "direct"));
		read_only = json_is_true(json_object_get(d, "read_only"));
		format = json_string_value(json_object_get(d, "format"));
		if (format && strcmp(format, "raw"))
			snprintf(fmt, sizeof(fmt), "%s, ", format);
		if (json_get_u64(d, "queues", &queues) && queues > 1)
			snprintf(multi, sizeof(multi), ", %llu queues",
				 (unsigned long long)queues);
		printf("Disk %s: %s (%s%s%s%s%s)\n", name, path, fmt, engine,
		       multi,
		       direct ? ", direct" : "", read_only ? ", read-only" : "");
	}
}

/* "Share virtio-9p0: DIR as TAG (read-only): N requests, N errors, N
 * fids (N open)" for each. */
static void print_shares(const json_t *shares)
{
	uint64_t requests, errors, fids, open;
	const char *name, *tag, *path;
	json_t *sh;
	size_t i;

	json_array_foreach(shares, i, sh) {
		if (json_unpack(sh, "{s:s, s:s, s:s}", "name", &name,
				"tag", &tag, "path", &path) ||
		    !json_get_u64(sh, "requests", &requests) ||
		    !json_get_u64(sh, "errors", &errors) ||
		    !json_get_u64(sh, "fids", &fids) ||
		    !json_get_u64(sh, "open", &open))
			continue;
		printf("Share %s: %s as %s%s: %llu requests, %llu errors, "
		       "%llu fids (%llu open)\n", name, path, tag,
		       json_is_true(json_object_get(sh, "read_only")) ?
		       " (read-only)" : "", (unsigned long long)requests,
		       (unsigned long long)errors, (unsigned long long)fids,
		       (unsigned long long)open);
	}
}

/* "User network: N frames in, N out, N dropped; N TCP, N UDP, N ICMP"
 * and a "Forward ..." line for each host port forwarded. */
static void print_net_user(const json_t *nu)
{
	uint64_t in, out, dropped, tcp, udp, icmp;
	json_t *fwd;
	size_t i;

	if (!json_get_u64(nu, "frames_in", &in) ||
	    !json_get_u64(nu, "frames_out", &out) ||
	    !json_get_u64(nu, "dropped", &dropped) ||
	    !json_get_u64(nu, "tcp", &tcp) || !json_get_u64(nu, "udp", &udp) ||
	    !json_get_u64(nu, "icmp", &icmp))
		return;
	printf("User network: %llu frames in, %llu out, %llu dropped; "
	       "connections: %llu TCP, %llu UDP, %llu ICMP\n",
	       (unsigned long long)in, (unsigned long long)out,
	       (unsigned long long)dropped, (unsigned long long)tcp,
	       (unsigned long long)udp, (unsigned long long)icmp);
	json_array_foreach(json_object_get(nu, "forwards"), i, fwd)
		if (json_is_string(fwd))
			printf("Forward: %s\n", json_string_value(fwd));
}

static int stat_print(const char *name, json_t *reply)
{
	uint64_t pid, vcpus, ram, resident, huge, pending, dropped, filtered;
	uint64_t rng_bytes, rng_requests, rng_rate;
	const char *state, *backing, *vm_name;
	char ram_s[32], resident_s[32], huge_s[32], rng_s[32];
	double percent;

	if (json_unpack(reply, "{s:s, s:s, s:F}", "state", &state,
			"backing", &backing, "huge_percent", &percent) ||
	    !json_get_u64(reply, "pid", &pid) ||
	    !json_get_u64(reply, "vcpus", &vcpus) ||
	    !json_get_u64(reply, "ram", &ram) ||
	    !json_get_u64(reply, "resident", &resident) ||
	    !json_get_u64(reply, "huge", &huge)) {
		pr_err("VM \"%s\" sent an incomplete stat reply", name);
		return 1;
	}
	/* The VM's own name, also when it was reached by its path. */
	vm_name = json_string_value(json_object_get(reply, "name"));
	printf("Name: %s\n", vm_name ? vm_name : name);
	printf("PID: %llu\n", (unsigned long long)pid);
	printf("State: %s\n", state);
	printf("CPUs: %llu\n", (unsigned long long)vcpus);
	printf("RAM: %s\n", size_format(ram, ram_s, sizeof(ram_s)));
	printf("Backing: %s\n", backing);
	printf("Host resident: %s\n",
	       size_format(resident, resident_s, sizeof(resident_s)));
	printf("Huge pages: %s (%.1f%% of RAM)\n",
	       size_format(huge, huge_s, sizeof(huge_s)), percent);
	hotplug_print(reply);
	/* A VM from before these were reported does without the line. */
	if (json_get_u64(reply, "console_pending", &pending) &&
	    json_get_u64(reply, "console_dropped", &dropped)) {
		printf("Console output: %llu bytes waiting for stdout, %llu "
		       "dropped", (unsigned long long)pending,
		       (unsigned long long)dropped);
		/* Only a VM with --console-filter has this. */
		if (json_get_u64(reply, "console_filtered", &filtered))
			printf(", %llu removed by the filter",
			       (unsigned long long)filtered);
		printf("\n");
	}
	/* Only a VM with an rng has these. */
	if (json_get_u64(reply, "rng_bytes", &rng_bytes) &&
	    json_get_u64(reply, "rng_requests", &rng_requests) &&
	    json_get_u64(reply, "rng_bytes_per_sec", &rng_rate))
		printf("RNG: %llu bytes in %llu requests (at most %s a "
		       "second)\n", (unsigned long long)rng_bytes,
		       (unsigned long long)rng_requests,
		       size_format(rng_rate, rng_s, sizeof(rng_s)));
	print_disks(json_object_get(reply, "disks"));
	print_shares(json_object_get(reply, "shares"));
	print_net_user(json_object_get(reply, "net_user"));
	return 0;
}

struct stat_ctx {
	struct vm_select sel;
	bool json;
	json_t *all;		/* with -a and --json: the array */
	unsigned shown;
};

static int stat_take(void *ctx, int opt, const char *arg)
{
	struct stat_ctx *st = ctx;

	/* lkvm's -m/--memory: the memory figures, which thpvm always shows. */
	if (opt == 'm')
		return 0;
	return vm_select_take(&st->sel, &cmd_stat, opt, arg);
}

static int stat_one(void *ctx, const char *name, json_t *info)
{
	struct stat_ctx *st = ctx;
	struct control_result res;
	int rc = 0;

	if (control_client_command(name, "stat", 0, &res)) {
		pr_err("%s", res.error);
		control_result_free(&res);
		return 1;
	}
	if (st->json && st->sel.all) {
		cmd_json_append(&st->all, cmd_reply_json(res.reply));
	} else if (st->json) {
		rc = cmd_print_json(cmd_reply_json(res.reply));
	} else {
		if (st->shown)
			putchar('\n');
		rc = stat_print(name, res.reply);
	}
	st->shown++;
	control_result_free(&res);
	return rc;
}

static int stat_main(int argc, char **argv)
{
	static const struct option options[] = {
		{ "memory", no_argument, NULL, 'm' },
		VM_SELECT_OPTIONS,
		VM_SELECT_OPTION_ALL,
		{ NULL, 0, NULL, 0 },
	};
	struct stat_ctx st = { .sel = { NULL } };
	const struct cmd_options own = {
		.options = options, .take = stat_take, .ctx = &st,
	};
	struct cmd_args args;
	int rc;

	rc = vm_select_parse(&st.sel, &cmd_stat, argc, argv, &own, &args);
	if (rc >= 0)
		return rc;
	st.json = args.json;
	st.all = json_array();
	rc = vm_select_each(&st.sel, stat_one, &st);
	if (st.json && st.sel.all) {
		int out = cmd_print_json(st.all);

		rc = MAX(rc, out);
	} else {
		json_decref(st.all);
	}
	return rc;
}

const struct command cmd_stat = {
	.name = "stat",
	.summary = "Show a VM's state and memory backing",
	.usage = "usage: thpvm stat [-m] [--json] NAME|-n NAME|-p PID|-a\n"
		 "\n"
		 "Shows the state of the VM, its size, how much of its "
		 "RAM the host\nbacks now, and with huge pages, the "
		 "guest's console output that\nwaits for thpvm's stdout or "
		 "was dropped because stdout was not read,\nfor a VM "
		 "with --mem-hotplug, its hotplug region likewise, for "
		 "a VM\nwith --rng, what its rng served, and its disks and "
		 "9p shares.\n"
		 "\n"
		 "  NAME, -n, --name NAME\n"
		 "                 the VM called NAME\n"
		 "  -p, --pid PID  the VM that process PID (its thpvm run) "
		 "runs\n"
		 "  -a, --all      every running VM, one after the other "
		 "(none is fine)\n"
		 "  -m, --memory   the memory figures (lkvm's spelling; "
		 "thpvm shows them\n"
		 "                 with or without it)\n"
		 "  --json         print the VM's stat reply: name, pid, "
		 "state, vcpus, ram,\n"
		 "                 backing, resident, huge, huge_percent, "
		 "console_pending,\n"
		 "                 console_dropped (sizes in bytes), and "
		 "with --rng rng_bytes,\n"
		 "                 rng_requests, rng_bytes_per_sec; with "
		 "--mem-hotplug\n"
		 "                 hotplug_region, hotplug_requested, "
		 "hotplug_plugged,\n"
		 "                 hotplug_resident, hotplug_huge; disks "
		 "and shares (each\n"
		 "                 9p share's requests, errors, fids, "
		 "open); with -a, an\n"
		 "                 array of them\n"
		 "  -h, --help     print this help\n",
	.main = stat_main,
};
