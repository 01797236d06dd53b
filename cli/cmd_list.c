/* thpvm list: the VMs of this user, found by their control sockets. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd_util.h"
#include "control/control_client.h"
#include "control/control_path.h"
#include "core/vm.h"
#include "lib/log.h"
#include "lib/util.h"

#define SUFFIX_LEN (sizeof(CONTROL_SOCKET_SUFFIX) - 1)

struct list_row {
	const char *name;
	char pid[24];
	char state[16];
	char cpus[24];
	char ram[32];
};

/* scandir() filter: <valid name>.sock */
static int is_socket_name(const struct dirent *d)
{
	char name[VM_NAME_MAX + 1];
	size_t len = strlen(d->d_name);

	if (len <= SUFFIX_LEN || len - SUFFIX_LEN > VM_NAME_MAX ||
	    strcmp(d->d_name + len - SUFFIX_LEN, CONTROL_SOCKET_SUFFIX))
		return 0;
	memcpy(name, d->d_name, len - SUFFIX_LEN);
	name[len - SUFFIX_LEN] = '\0';
	return control_path_name_valid(name);
}

static void u64_field(const struct json_value *reply, const char *key,
		      char *buf, size_t len)
{
	uint64_t v;

	if (json_get_u64(reply, key, &v))
		snprintf(buf, len, "%llu", (unsigned long long)v);
	else
		snprintf(buf, len, "?");
}

static void row_fill(struct list_row *row, const struct json_value *reply)
{
	const char *state = json_get_string(reply, "state");
	uint64_t ram;

	u64_field(reply, "pid", row->pid, sizeof(row->pid));
	snprintf(row->state, sizeof(row->state), "%s", state ? state : "?");
	u64_field(reply, "vcpus", row->cpus, sizeof(row->cpus));
	if (json_get_u64(reply, "ram", &ram))
		size_format(ram, row->ram, sizeof(row->ram));
	else
		snprintf(row->ram, sizeof(row->ram), "?");
}

static void row_unresponsive(struct list_row *row)
{
	strcpy(row->pid, "-");
	strcpy(row->state, "unresponsive");
	strcpy(row->cpus, "-");
	strcpy(row->ram, "-");
}

/* Asks one VM for its info: adds a table row or a JSON object; a stale
 * socket is removed and skipped. Returns whether a row was added. */
static bool list_one(const char *name, struct json_writer *w,
		     struct list_row *row)
{
	struct control_result res;
	int err;

	err = control_client_command(name, "info", 0, &res);
	if (err == -ECONNREFUSED || err == -ENOENT) {
		/* Gone, or died without removing its socket. */
		control_result_free(&res);
		if (err == -ECONNREFUSED)
			control_client_remove_stale(name);
		return false;
	}
	row->name = name;
	if (err) {
		pr_warn("%s", res.error);
		row_unresponsive(row);
		if (w) {
			json_write_object_begin(w);
			json_field_string(w, "name", name);
			json_field_string(w, "state", "unresponsive");
			json_field_string(w, "error", res.error);
			json_write_object_end(w);
		}
	} else if (w) {
		cmd_write_reply(w, res.reply);
	} else {
		row_fill(row, res.reply);
	}
	control_result_free(&res);
	return true;
}

static void table_print(const struct list_row *rows, size_t n)
{
	int width = 4;
	size_t i;

	for (i = 0; i < n; i++)
		width = MAX(width, (int)strlen(rows[i].name));
	printf("%-*s  %-8s %-12s %-4s  %s\n", width, "NAME", "PID", "STATE",
	       "CPUS", "RAM");
	for (i = 0; i < n; i++)
		printf("%-*s  %-8s %-12s %-4s  %s\n", width, rows[i].name,
		       rows[i].pid, rows[i].state, rows[i].cpus, rows[i].ram);
}

static int list_main(int argc, char **argv)
{
	struct list_row *rows = NULL;
	struct dirent **entries = NULL;
	char dir[CONTROL_PATH_MAX];
	struct json_writer w;
	size_t nrows = 0;
	struct cmd_args args;
	int i, n, rc, err;

	rc = cmd_args_parse(&cmd_list, argc, argv, 0, 0, &args);
	if (rc >= 0)
		return rc;
	rc = 0;
	err = control_path_dir(dir, sizeof(dir));
	if (err) {
		pr_err("cannot find the control socket directory: %s",
		       strerror(-err));
		return 1;
	}
	n = scandir(dir, &entries, is_socket_name, alphasort);
	if (n < 0 && errno != ENOENT) {
		pr_err("cannot read %s: %s", dir, strerror(errno));
		return 1;
	}
	n = MAX(n, 0);
	rows = calloc((size_t)n + 1, sizeof(*rows));
	if (!rows) {
		pr_err("%s", strerror(ENOMEM));
		rc = 1;
		goto out;
	}
	json_writer_init(&w);
	json_write_array_begin(&w);
	for (i = 0; i < n; i++) {
		entries[i]->d_name[strlen(entries[i]->d_name) - SUFFIX_LEN] =
			'\0';
		if (list_one(entries[i]->d_name, args.json ? &w : NULL,
			     &rows[nrows]))
			nrows++;
	}
	json_write_array_end(&w);
	if (args.json)
		rc = cmd_print_json(&w);
	else
		table_print(rows, nrows);
	json_writer_free(&w);
out:
	for (i = 0; i < n; i++)
		free(entries[i]);
	free(entries);
	free(rows);
	return rc;
}

const struct command cmd_list = {
	.name = "list",
	.summary = "List the running VMs",
	.usage = "usage: thpvm list [--json]\n"
		 "\n"
		 "Lists this user's VMs: NAME PID STATE CPUS RAM. A VM that "
		 "does not answer\nis shown as unresponsive.\n"
		 "\n"
		 "  --json      print a JSON array of the VMs' info objects "
		 "(name, pid,\n"
		 "              state, vcpus, ram in bytes, backing)\n"
		 "  -h, --help  print this help\n",
	.main = list_main,
};
