/* thpvm list: the VMs of this user, found by their control sockets. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd_util.h"
#include "cli/vm_select.h"
#include "control/control_client.h"
#include "lib/log.h"
#include "lib/util.h"

struct list_row {
	char *name;
	char pid[24];
	char state[16];
	char cpus[24];
	char ram[32];
	const char *console;	/* "socket": thpvm console attaches */
};

static void u64_field(const json_t *reply, const char *key, char *buf,
		      size_t len)
{
	uint64_t v;

	if (json_get_u64(reply, key, &v))
		snprintf(buf, len, "%llu", (unsigned long long)v);
	else
		snprintf(buf, len, "?");
}

static void row_fill(struct list_row *row, const json_t *reply)
{
	const char *state = json_string_value(json_object_get(reply, "state"));
	const char *console;
	uint64_t ram;

	u64_field(reply, "pid", row->pid, sizeof(row->pid));
	snprintf(row->state, sizeof(row->state), "%s", state ? state : "?");
	u64_field(reply, "vcpus", row->cpus, sizeof(row->cpus));
	if (json_get_u64(reply, "ram", &ram))
		size_format(ram, row->ram, sizeof(row->ram));
	else
		snprintf(row->ram, sizeof(row->ram), "?");
	console = json_string_value(json_object_get(reply, "console_socket"));
	row->console = console ? "socket" : "-";
}

static void row_unresponsive(struct list_row *row)
{
	strcpy(row->pid, "-");
	strcpy(row->state, "unresponsive");
	strcpy(row->cpus, "-");
	strcpy(row->ram, "-");
	row->console = "-";
}

/* The rows so far, and the JSON array for --json. */
struct list_ctx {
	struct list_row *rows;
	size_t nrows, cap;
	bool json;
	json_t *vms;
	bool oom;
};

/* Adds one VM: a table row or a JSON object. */
static void list_one(void *ctx, const char *name, int err,
		     const struct control_result *res)
{
	struct list_ctx *l = ctx;
	struct list_row *row;

	if (err)
		pr_warn("%s", res->error);
	if (l->json && err) {
		cmd_json_append(&l->vms, json_pack("{s:o, s:s, s:o}",
				"name", json_string_lossy(name),
				"state", "unresponsive",
				"error", json_string_lossy(res->error)));
		return;
	}
	if (l->json) {
		cmd_json_append(&l->vms, cmd_reply_json(res->reply));
		return;
	}
	if (l->nrows == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 16;
		struct list_row *rows = reallocarray(l->rows, cap,
						     sizeof(*rows));

		if (!rows) {
			l->oom = true;
			return;
		}
		l->rows = rows;
		l->cap = cap;
	}
	row = &l->rows[l->nrows++];
	/* The name outlives this call in the row. */
	row->name = strdup(name);
	if (!row->name) {
		l->nrows--;
		l->oom = true;
		return;
	}
	if (err)
		row_unresponsive(row);
	else
		row_fill(row, res->reply);
}

static void table_print(const struct list_row *rows, size_t n)
{
	int width = 4;
	size_t i;

	for (i = 0; i < n; i++)
		width = MAX(width, (int)strlen(rows[i].name));
	printf("%-*s  %-8s %-12s %-4s  %-10s %s\n", width, "NAME", "PID",
	       "STATE", "CPUS", "RAM", "CONSOLE");
	for (i = 0; i < n; i++)
		printf("%-*s  %-8s %-12s %-4s  %-10s %s\n", width, rows[i].name,
		       rows[i].pid, rows[i].state, rows[i].cpus, rows[i].ram,
		       rows[i].console);
}

static int list_take(void *ctx, int opt, const char *arg)
{
	/* -r/--rootfs lists lkvm's root file systems: thpvm makes none. */
	if (opt == 'r') {
		pr_err("list: lkvm's -r/--rootfs is not supported by thpvm "
		       "(it has no rootfs instances)");
		return EXIT_USAGE;
	}
	/* -a, and lkvm's -i/--run: running VMs, all list shows. */
	return 0;
}

static int list_main(int argc, char **argv)
{
	static const struct option options[] = {
		{ "all", no_argument, NULL, 'a' },
		{ "run", no_argument, NULL, 'i' },
		{ "rootfs", no_argument, NULL, 'r' },
		{ NULL, 0, NULL, 0 },
	};
	const struct cmd_options own = { .options = options, .take = list_take };
	struct list_ctx l = { .rows = NULL };
	struct cmd_args args;
	size_t i;
	int rc;

	rc = cmd_args_parse_opts(&cmd_list, argc, argv, 0, 0, &own, &args);
	if (rc >= 0)
		return rc;
	l.json = args.json;
	l.vms = json_array();
	rc = vm_select_list(list_one, &l);
	if (!rc && l.oom) {
		pr_err("%s", strerror(ENOMEM));
		rc = 1;
	} else if (!rc && args.json) {
		rc = cmd_print_json(json_incref(l.vms));
	} else if (!rc) {
		table_print(l.rows, l.nrows);
	}
	json_decref(l.vms);
	for (i = 0; i < l.nrows; i++)
		free(l.rows[i].name);
	free(l.rows);
	return rc;
}

const struct command cmd_list = {
	.name = "list",
	.summary = "List the running VMs",
	.usage = "usage: thpvm list [-a] [--json]\n"
		 "\n"
		 "Lists this user's VMs: NAME PID STATE CPUS RAM CONSOLE "
		 "(socket: its console\nis on a socket, thpvm console NAME "
		 "attaches to it; -: on the terminal it\nwas started on). A VM "
		 "that does not answer is shown as unresponsive.\n"
		 "\n"
		 "  -a, --all   all of them, as without it (lkvm's -i/--run "
		 "too)\n"
		 "  --json      print a JSON array of the VMs' info objects "
		 "(name, pid,\n"
		 "              state, vcpus, ram in bytes, backing, "
		 "console_socket)\n"
		 "  -h, --help  print this help\n",
	.main = list_main,
};
