/* The guest's exit register or port (debug_exit.h). */
#include "hw/debug_exit.h"

#include <string.h>

#include "core/vm.h"

void debug_exit_access(void *vm, uint64_t offset, uint8_t *data, uint32_t len,
		       bool is_write)
{
	if (!is_write) {
		memset(data, 0xff, len);
		return;
	}
	/* Any width, like QEMU's iosize; the status is the low byte. */
	if (offset == 0)
		vm_request_exit(vm, data[0], VM_EXIT_GUEST);
}
