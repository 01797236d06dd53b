/* Command-line options of `thpvm run`. */
#ifndef THPVM_RUN_OPTIONS_H
#define THPVM_RUN_OPTIONS_H

#include <stdbool.h>

#include "machine/machine.h"

enum run_parse_result {
	RUN_PARSE_OK,
	RUN_PARSE_HELP,		/* --help was given: the caller prints
				 * its command's usage */
	RUN_PARSE_ERROR,	/* one message was printed */
};

/* Room for the kernel command line: as much as any x86 kernel takes
 * (64 KiB through PVH; a bzImage's own limit is checked at boot). */
#define RUN_CMDLINE_MAX 65536

/* What `thpvm run` was asked to do. */
struct run_options {
	struct machine_config machine;	/* its cmdline points to cmdline */
	char cmdline[RUN_CMDLINE_MAX];
	bool json;		/* report the end as JSON on stderr */
	const char *params;	/* -p, or NULL */
	const char *control_socket;	/* --control-socket PATH, or NULL */
	bool no_control;	/* --no-control: no control socket */
	bool detach;		/* --detach, --daemonize */
	const char *console_socket;	/* --console-socket PATH, or NULL */
	bool no_seccomp;	/* --seccomp=off: no seccomp filters */
	const char *user;	/* --user NAME, or NULL */
	bool nodefaults;	/* lkvm's --nodefaults: -p is all the
				 * kernel command line */
	bool root_share;	/* lkvm's -d DIR: the root on 9p */
};

/* The help text of `thpvm run`, made from its option table once. */
const char *run_usage(void);

/* Fills opts from argv (argv[0] is "run"), all of which must be
 * options, and checks them together. Uses getopt, so it resets optind
 * itself. */
enum run_parse_result run_options_parse(int argc, char **argv,
					struct run_options *opts);

/* For a command that takes run's options and then arguments of its own
 * (argv[0], "sandbox", names it in messages): fills opts from the options
 * up to the first argument or "--", whose index goes in *first_arg.
 * run_options_finish() then checks them together, once the command has
 * added what it adds. */
enum run_parse_result run_options_parse_args(int argc, char **argv,
					     struct run_options *opts,
					     int *first_arg);
/* 0, or -errno after one message. */
int run_options_finish(struct run_options *opts);

#endif
