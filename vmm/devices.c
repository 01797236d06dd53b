/* Virtio devices on the PCI bus, in a fixed order: disks as given with
 * -d, so that guests see the same slots on every boot. */
#include "devices.h"

#include <errno.h>
#include <stdlib.h>

#include "blk.h"
#include "virtio_pci.h"
#include "vm.h"

#define PCI_CLASS_STORAGE_OTHER 0x018000

struct blk_device {
	struct virtio_blk blk;
	struct virtio_pci pci;
	bool created;
	bool on_bus;
};

struct vm_devices {
	struct blk_device *blks;
	unsigned nr_blks;
};

static int add_disk(struct vm *vm, unsigned i)
{
	const struct disk_config *dc = &vm->cfg->disks[i];
	struct blk_device *d = &vm->devices->blks[i];
	int err;

	vm->devices->nr_blks++;
	err = virtio_blk_create(&d->blk, i, dc->path, dc->read_only,
				dc->direct, &vm->ram);
	if (err)
		return err;
	d->created = true;
	err = virtio_pci_add(vm, &d->pci, &d->blk.vdev,
			     PCI_CLASS_STORAGE_OTHER);
	d->on_bus = true;
	return err ?: virtio_device_start(&d->blk.vdev);
}

int devices_create(struct vm *vm)
{
	unsigned i;
	int err = 0;

	vm->devices = calloc(1, sizeof(*vm->devices));
	if (!vm->devices)
		return -ENOMEM;
	vm->devices->blks = calloc(vm->cfg->nr_disks ?: 1,
				   sizeof(*vm->devices->blks));
	if (!vm->devices->blks)
		return -ENOMEM;
	for (i = 0; i < vm->cfg->nr_disks && !err; i++)
		err = add_disk(vm, i);
	return err;
}

void devices_destroy(struct vm *vm)
{
	struct vm_devices *devs = vm->devices;
	unsigned i;

	if (!devs)
		return;
	for (i = 0; i < devs->nr_blks; i++) {
		struct blk_device *d = &devs->blks[i];

		if (d->created)
			virtio_blk_destroy(&d->blk);
		if (d->on_bus)
			virtio_pci_destroy(&d->pci);
	}
	free(devs->blks);
	free(devs);
	vm->devices = NULL;
}
