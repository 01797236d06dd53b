/* The balloon command of the control socket (docs/control-protocol.md),
 * which vm_control_register() registers with the VM's other commands. */
#ifndef THPVM_BALLOON_CONTROL_H
#define THPVM_BALLOON_CONTROL_H

#include <stdint.h>

#include "lib/json.h"

/* The members a balloon request may have besides "cmd", for
 * control_server_add_command(): NULL-terminated. */
extern const char *const balloon_control_args[];

/* The control handler (control_handler_fn); opaque is the struct
 * machine.
 * Shows the balloon, after changing its target if asked to. */
int balloon_control_handle(void *opaque, json_t *request, json_t *reply);

/* The balloon size a balloon request asks for (one of "inflate",
 * "deflate" or "set", in bytes; none: target unchanged), given guest
 * RAM and the current balloon target. Returns 0, or fills reply with
 * the error and returns -EINVAL (malformed or not whole 4 KiB pages) or
 * -ERANGE. */
int balloon_control_target(json_t *request, uint64_t ram, uint64_t target,
			   uint64_t *out, json_t *reply);

#endif
