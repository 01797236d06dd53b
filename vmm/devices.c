/* Virtio devices on the PCI bus, in a fixed order: disks as given with
 * -d, then the network device, then the balloon, so that guests see the
 * same slots on every boot. */
#include "vmm/devices.h"

#include <errno.h>
#include <stdlib.h>

#include "backend/tap.h"
#include "core/vm.h"
#include "lib/log.h"
#include "virtio/balloon.h"
#include "virtio/blk.h"
#include "virtio/net.h"
#include "virtio/virtio_pci.h"

#define PCI_CLASS_STORAGE_OTHER 0x018000
#define PCI_CLASS_NETWORK_ETHERNET 0x020000
/* As QEMU's virtio-balloon-pci (its PCI_CLASS_OTHERS, 0xff, is a
 * 16-bit class and subclass): base class 0x00, subclass 0xff. */
#define PCI_CLASS_OTHERS 0x00ff00

/* A device's PCI function and how far its set-up got, which is what
 * devices_destroy undoes. */
struct device_slot {
	struct virtio_pci pci;
	bool created;		/* the device exists */
	bool on_bus;		/* virtio_pci_add ran, even if it failed */
};

struct blk_device {
	struct virtio_blk blk;
	struct device_slot slot;
};

struct net_device {
	struct virtio_net net;
	struct device_slot slot;
};

struct balloon_device {
	struct virtio_balloon balloon;
	struct device_slot slot;
};

struct vm_devices {
	struct blk_device *blks;
	unsigned nr_blks;
	struct net_device *net;
	struct balloon_device *balloon;
};

/* Puts a device just created on the bus and starts it. */
static int device_plug(struct vm *vm, struct device_slot *s,
		       struct virtio_device *vdev, uint32_t class_code)
{
	int err;

	s->created = true;
	err = virtio_pci_add(vm, &s->pci, vdev, class_code);
	/* A failed add may have opened irqfds that destroy closes. */
	s->on_bus = true;
	return err ?: virtio_device_start(vdev);
}

/* The bus half of device_plug undone, after the device's own destroy. */
static void device_unplug(struct device_slot *s)
{
	if (s->on_bus)
		virtio_pci_destroy(&s->pci);
}

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
	return device_plug(vm, &d->slot, &d->blk.vdev, PCI_CLASS_STORAGE_OTHER);
}

static int add_net(struct vm *vm)
{
	const struct net_config *nc = &vm->cfg->net;
	char ifname[IFNAMSIZ];
	struct net_device *d;
	int fd, err;

	d = vm->devices->net = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	fd = tap_open(nc->tapif, ifname);
	if (fd < 0)
		return fd;
	err = virtio_net_create(&d->net, fd, nc->mac, &vm->ram);
	if (err)
		return err;
	/* Said by default only when the user cannot know the name. */
	log_msg(nc->tapif[0] ? LOG_DEBUG : LOG_INFO,
		"%s: tap %s, MAC %02x:%02x:%02x:%02x:%02x:%02x",
		d->net.vdev.name, ifname, nc->mac[0], nc->mac[1], nc->mac[2],
		nc->mac[3], nc->mac[4], nc->mac[5]);
	return device_plug(vm, &d->slot, &d->net.vdev,
			   PCI_CLASS_NETWORK_ETHERNET);
}

static int add_balloon(struct vm *vm)
{
	const struct balloon_config *bc = &vm->cfg->balloon;
	struct balloon_device *d;
	int err;

	d = vm->devices->balloon = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	err = virtio_balloon_create(&d->balloon, bc, &vm->ram, NULL, NULL);
	if (err)
		return err;
	if (d->balloon.release.policy != bc->policy)
		pr_info("%s: hugetlbfs RAM: only whole huge pages can be "
			"released, so the policy is preserve",
			d->balloon.vdev.name);
	return device_plug(vm, &d->slot, &d->balloon.vdev, PCI_CLASS_OTHERS);
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
	if (!err && vm->cfg->net.mode == NET_TAP)
		err = add_net(vm);
	if (!err && vm->cfg->balloon.enabled)
		err = add_balloon(vm);
	return err;
}

/* fn on every virtio device that exists, in creation order. */
static void for_each_device(struct vm *vm, void (*fn)(struct virtio_device *))
{
	struct vm_devices *devs = vm->devices;
	unsigned i;

	if (!devs)
		return;
	for (i = 0; i < devs->nr_blks; i++)
		if (devs->blks[i].slot.created)
			fn(&devs->blks[i].blk.vdev);
	if (devs->net && devs->net->slot.created)
		fn(&devs->net->net.vdev);
	if (devs->balloon && devs->balloon->slot.created)
		fn(&devs->balloon->balloon.vdev);
}

void devices_pause(struct vm *vm)
{
	for_each_device(vm, virtio_device_pause);
}

void devices_resume(struct vm *vm)
{
	for_each_device(vm, virtio_device_resume);
}

void devices_destroy(struct vm *vm)
{
	struct vm_devices *devs = vm->devices;
	unsigned i;

	if (!devs)
		return;
	for (i = 0; i < devs->nr_blks; i++) {
		struct blk_device *d = &devs->blks[i];

		if (d->slot.created)
			virtio_blk_destroy(&d->blk);
		device_unplug(&d->slot);
	}
	if (devs->net) {
		if (devs->net->slot.created)
			virtio_net_destroy(&devs->net->net);
		device_unplug(&devs->net->slot);
	}
	if (devs->balloon) {
		if (devs->balloon->slot.created)
			virtio_balloon_destroy(&devs->balloon->balloon);
		device_unplug(&devs->balloon->slot);
	}
	free(devs->balloon);
	free(devs->net);
	free(devs->blks);
	free(devs);
	vm->devices = NULL;
}

struct virtio_balloon *devices_balloon(struct vm *vm)
{
	struct vm_devices *devs = vm->devices;

	return devs && devs->balloon && devs->balloon->slot.on_bus ?
		       &devs->balloon->balloon : NULL;
}
