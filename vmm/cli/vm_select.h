/* Which VMs a control subcommand acts on: the NAME argument, as thpvm
 * always took it, or lkvm's spellings: -n/--name NAME, -p/--pid PID (the
 * VM whose `thpvm run` has that pid) and, where the command takes it,
 * -a/--all (every running VM). */
#ifndef THPVM_VM_SELECT_H
#define THPVM_VM_SELECT_H

#include <getopt.h>
#include <stdbool.h>

#include "cli/cmd_util.h"
#include "control/control_vms.h"

struct vm_select {
	const char *name;	/* the argument or -n; NULL: not given */
	long pid;		/* -p; 0: not given */
	bool all;		/* -a */
};

/* Entries for a command's own option table. */
#define VM_SELECT_OPTIONS                                   \
	{ "name", required_argument, NULL, 'n' },           \
	{ "pid", required_argument, NULL, 'p' }
#define VM_SELECT_OPTION_ALL { "all", no_argument, NULL, 'a' }

/* For a command's take(): -n, -p or -a into sel. Returns 0, EXIT_USAGE
 * after saying why, or -1 when opt is none of them. */
int vm_select_take(struct vm_select *sel, const struct command *cmd,
		   int opt, const char *arg);

/* cmd_args_parse_opts() for a command that acts on VMs (own's take()
 * hands -n, -p and -a to vm_select_take()): the one argument it may have
 * is the VM's name, and exactly one way of naming VMs must be given.
 * Returns -1 to go on, or the exit status to return now. */
int vm_select_parse(struct vm_select *sel, const struct command *cmd,
		    int argc, char **argv, const struct cmd_options *own,
		    struct cmd_args *args);

/* Calls fn for each VM selected: the one named, the one with the pid, or
 * every running VM in name order (none is fine); info is the VM's info
 * reply where it was listed for -a or -p, else NULL. fn returns an exit
 * status after saying why it is not 0; so does vm_select_each, the
 * highest of them, or 1 when no VM has the pid or the VMs cannot be
 * listed. */
typedef int (*vm_select_fn)(void *ctx, const char *name, json_t *info);
int vm_select_each(const struct vm_select *sel, vm_select_fn fn, void *ctx);

/* control_vms_each(), reporting a directory that cannot be read.
 * Returns 0 or 1. */
int vm_select_list(control_vm_fn fn, void *ctx);

#endif
