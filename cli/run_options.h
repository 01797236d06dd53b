/* Command-line options of `thpvm run`. */
#ifndef THPVM_RUN_OPTIONS_H
#define THPVM_RUN_OPTIONS_H

#include <stdbool.h>

#include "vmm/machine.h"

enum run_parse_result {
	RUN_PARSE_OK,
	RUN_PARSE_HELP,		/* --help was given and printed */
	RUN_PARSE_ERROR,	/* one message was printed */
};

/* What `thpvm run` was asked to do. */
struct run_options {
	struct machine_config machine;
	bool json;		/* report the end as JSON on stderr */
	bool nodefaults;	/* lkvm's --nodefaults: -p is all the
				 * kernel command line */
};

extern const char run_usage[];

/* Fills opts from argv (argv[0] is "run"). Uses getopt, so it resets
 * optind itself. */
enum run_parse_result run_options_parse(int argc, char **argv,
					struct run_options *opts);

#endif
