/* Command-line options of `thpvm run`. */
#ifndef THPVM_RUN_OPTIONS_H
#define THPVM_RUN_OPTIONS_H

#include "vmm/config.h"

/* Default kernel parameters for a user kernel when -p is not given. */
#define RUN_DEFAULT_LINUX_PARAMS \
	"console=ttyS0 earlyprintk=serial reboot=k panic=-1"

enum run_parse_result {
	RUN_PARSE_OK,
	RUN_PARSE_HELP,		/* --help was given and printed */
	RUN_PARSE_ERROR,	/* one message was printed */
};

extern const char run_usage[];

/* Fills cfg from argv (argv[0] is "run"). Uses getopt, so it resets
 * optind itself. */
enum run_parse_result run_options_parse(int argc, char **argv,
					struct vm_config *cfg);

#endif
