/* The control socket of `thpvm run`: in the usual directory under the
 * VM's name, at --control-socket PATH, or none with --no-control. */
#ifndef THPVM_RUN_CONTROL_H
#define THPVM_RUN_CONTROL_H

#include "cli/run_options.h"
#include "control/control_server.h"

/* Listens where opts say; *out is NULL with --no-control. Returns 0, or
 * -errno after one message that names the path and, where another place
 * would do, --control-socket and --no-control. */
int run_control_open(const struct run_options *opts,
		     struct control_server **out);

#endif
