/* The running VMs of this user: the sockets in the control directory
 * (control_path.h), each asked for its info (docs/control-protocol.md).
 * `thpvm list` shows them; -a/--all and -p/--pid pick from them. */
#ifndef THPVM_CONTROL_VMS_H
#define THPVM_CONTROL_VMS_H

#include "control/control_client.h"

/* One VM: its name, and err 0 with its info reply in res->reply, or the
 * error of a VM that is there but does not answer, with res->error. */
typedef void (*control_vm_fn)(void *ctx, const char *name, int err,
			      const struct control_result *res);

/* Calls fn for each VM in name order. A socket nobody listens on (a VM
 * that died without removing it) is removed and skipped, and so is a VM
 * that went away meanwhile. Returns 0 (also when the directory does not
 * exist yet: no VMs), or -errno when the directory cannot be found or
 * read. */
int control_vms_each(control_vm_fn fn, void *ctx);

#endif
