/* The VM's device registry. Every device that the guest finds (or that
 * must stop when the VM pauses) is added once, before the vCPUs start,
 * saying what it is, where it sits in guest-physical or port space and
 * which interrupt line it raises. The arch renders the registry into
 * what its guests read (x86: the MP table and the kernel command line;
 * arm64 and powerpc: a device tree), and the core pauses and resumes
 * the devices through it. */
#ifndef THPVM_CORE_DEVICE_H
#define THPVM_CORE_DEVICE_H

#include <stdbool.h>
#include <stdint.h>

struct vm;

enum vm_device_kind {
	VM_DEVICE_PCI_FUNCTION,	/* on the PCI bus: pci_slot, INTx line */
	VM_DEVICE_VIRTIO_MMIO,	/* registers at base, size; a line */
};

#define VM_DEVICE_NO_IRQ (-1)

struct vm_device {
	enum vm_device_kind kind;
	const char *name;
	uint64_t base, size;		/* guest-physical, where it has any */
	unsigned pci_slot;		/* VM_DEVICE_PCI_FUNCTION */
	int irq;			/* interrupt line, or VM_DEVICE_NO_IRQ */
	/* Optional, for devices with threads of their own: the VM is
	 * pausing (its vCPUs parked), so finish what was taken and take
	 * nothing new until resume. */
	void (*pause)(void *opaque);
	void (*resume)(void *opaque);
	void *opaque;
	struct vm_device *next;		/* the registry's */
};

/* Adds dev, which the caller owns and keeps until vm_destroy; before
 * vm_start only. */
void vm_device_add(struct vm *vm, struct vm_device *dev);
/* Pauses, then resumes, every device in the registry that has threads of
 * its own, in the order they were added. */
void vm_devices_pause(struct vm *vm);
void vm_devices_resume(struct vm *vm);

#endif
