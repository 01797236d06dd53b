/* The mem command of the control socket (docs/control-protocol.md):
 * shows the VM's virtio-mem device, after changing its requested size
 * if asked to. vm_control_register() registers it. */
#ifndef THPVM_MEM_CONTROL_H
#define THPVM_MEM_CONTROL_H

#include "lib/json.h"

/* The members a mem request may have besides "cmd": NULL-terminated. */
extern const char *const mem_control_args[];

/* The control handler (control_handler_fn); opaque is the struct
 * machine. */
int mem_control_handle(void *opaque, json_t *request, json_t *reply);

#endif
