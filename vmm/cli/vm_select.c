/* -n/--name, -p/--pid, -a/--all and the NAME argument (vm_select.h). */
#include "cli/vm_select.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "control/control_path.h"
#include "lib/log.h"
#include "lib/util.h"

int vm_select_take(struct vm_select *sel, const struct command *cmd,
		   int opt, const char *arg)
{
	unsigned long pid;

	switch (opt) {
	case 'n':
		if (sel->name) {
			cmd_usage_error(cmd, "a second -n", arg);
			return EXIT_USAGE;
		}
		sel->name = arg;
		return cmd_name_check(arg) ? 0 : EXIT_USAGE;
	case 'p':
		if (uint_parse(arg, INT_MAX, &pid) || !pid) {
			pr_err("%s: -p %s: expected the process ID of a "
			       "`thpvm run`", cmd->name, arg);
			return EXIT_USAGE;
		}
		sel->pid = (long)pid;
		return 0;
	case 'a':
		sel->all = true;
		return 0;
	}
	return -1;
}

/* The NAME argument, if any, joins the options; exactly one way. */
static int vm_select_finish(struct vm_select *sel, const struct command *cmd,
			    const struct cmd_args *args)
{
	if (args->argc) {
		if (sel->name) {
			cmd_usage_error(cmd, "unexpected argument",
					args->argv[0]);
			return EXIT_USAGE;
		}
		if (!cmd_name_check(args->argv[0]))
			return EXIT_USAGE;
		sel->name = args->argv[0];
	}
	if (!!sel->name + !!sel->pid + sel->all != 1) {
		cmd_usage_error(cmd, sel->name || sel->pid || sel->all ?
				"name the VM one way only" :
				"missing VM name", NULL);
		return EXIT_USAGE;
	}
	return -1;
}

int vm_select_parse(struct vm_select *sel, const struct command *cmd,
		    int argc, char **argv, const struct cmd_options *own,
		    struct cmd_args *args)
{
	int rc = cmd_args_parse_opts(cmd, argc, argv, 0, 1, own, args);

	return rc < 0 ? vm_select_finish(sel, cmd, args) : rc;
}

int vm_select_list(control_vm_fn fn, void *ctx)
{
	char dir[CONTROL_PATH_MAX];
	int err = control_vms_each(fn, ctx);

	if (!err)
		return 0;
	if (control_path_dir(dir, sizeof(dir)))
		pr_err("cannot find the control socket directory: neither "
		       "XDG_RUNTIME_DIR nor HOME is an absolute path");
	else
		pr_err("cannot read the control socket directory %s: %s", dir,
		       strerror(-err));
	return 1;
}

/* What vm_select_each's listing callback needs. */
struct each_ctx {
	const struct vm_select *sel;
	vm_select_fn fn;
	void *ctx;
	int status;
	bool found;
};

static void each_vm(void *ctx, const char *name, int err,
		    const struct control_result *res)
{
	struct each_ctx *e = ctx;
	uint64_t pid;
	int status;

	if (e->sel->pid) {
		if (e->found || err || !json_get_u64(res->reply, "pid", &pid) ||
		    pid != (uint64_t)e->sel->pid)
			return;
		e->found = true;
	} else if (err) {
		pr_err("%s", res->error);
		e->status = MAX(e->status, 1);
		return;
	}
	status = e->fn(e->ctx, name, res->reply);
	e->status = MAX(e->status, status);
}

int vm_select_each(const struct vm_select *sel, vm_select_fn fn, void *ctx)
{
	struct each_ctx e = { .sel = sel, .fn = fn, .ctx = ctx };

	if (sel->name)
		return fn(ctx, sel->name, NULL);
	if (vm_select_list(each_vm, &e))
		return 1;
	if (sel->pid && !e.found) {
		pr_err("no VM runs in process %ld (see thpvm list)",
		       sel->pid);
		return 1;
	}
	return e.status;
}
