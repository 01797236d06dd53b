/* The device registry (see device.h). */
#include "core/device.h"

#include "core/vm.h"

void vm_device_add(struct vm *vm, struct vm_device *dev)
{
	struct vm_device **p = &vm->devices;

	/* Kept in the order added: the arch describes them so. */
	while (*p)
		p = &(*p)->next;
	dev->next = NULL;
	*p = dev;
}

/* The registry does not change once the vCPUs run: no lock. */
static void call_each(struct vm *vm, bool pause)
{
	struct vm_device *d;

	for (d = vm->devices; d; d = d->next) {
		void (*fn)(void *) = pause ? d->pause : d->resume;

		if (fn)
			fn(d->opaque);
	}
}

void vm_devices_pause(struct vm *vm)
{
	call_each(vm, true);
}

void vm_devices_resume(struct vm *vm)
{
	call_each(vm, false);
}
