/* The machine: the VM, then its virtio devices in a fixed order (disks as
 * given with -d, then the network device, the balloon, the rng, the
 * console, virtio-mem), each on PCI or MMIO, so that guests find them in the same
 * places on every boot. */
#include "machine/machine.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "backend/tap.h"
#include "lib/log.h"
#include "lib/util.h"
#include "virtio/blk.h"
#include "virtio/console.h"
#include "virtio/net.h"
#include "virtio/virtio_mmio.h"
#include "virtio/virtio_pci.h"

#define PCI_CLASS_STORAGE_OTHER 0x018000
#define PCI_CLASS_NETWORK_ETHERNET 0x020000
/* As QEMU's virtio-serial-pci. */
#define PCI_CLASS_COMMUNICATION_OTHER 0x078000
/* As QEMU's virtio-balloon-pci, -rng-pci and -mem-pci (its PCI_CLASS_OTHERS,
 * 0xff, is a 16-bit class and subclass): base class 0x00, subclass
 * 0xff. */
#define PCI_CLASS_OTHERS 0x00ff00

/* A device's transport and how far its set-up got, which is what
 * devices_destroy undoes. */
struct device_slot {
	enum virtio_transport transport;
	union {
		struct virtio_pci pci;
		struct virtio_mmio mmio;
	};
	bool created;		/* the device exists */
	bool on_bus;		/* its transport's add ran, even if it failed */
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

struct rng_device {
	struct virtio_rng rng;
	struct device_slot slot;
};

struct mem_device {
	struct virtio_mem mem;
	struct device_slot slot;
};

struct console_device {
	struct virtio_console con;
	struct device_slot slot;
	struct vm_console arch_console;	/* what it replaced as the console */
};

struct machine_devices {
	struct blk_device *blks;
	unsigned nr_blks;
	struct net_device *net;
	struct balloon_device *balloon;
	struct rng_device *rng;
	struct console_device *console;
	struct mem_device *mem;
};

/* Puts a device just created on its transport and starts it; class_code
 * is its PCI class, if it goes there. */
static int device_plug(struct machine *m, struct device_slot *s,
		       enum virtio_transport transport,
		       struct virtio_device *vdev, uint32_t class_code)
{
	int err;

	s->created = true;
	s->transport = transport ?: m->cfg->virtio_transport ?:
			VIRTIO_TRANSPORT_PCI;
	if (s->transport == VIRTIO_TRANSPORT_MMIO)
		err = virtio_mmio_add(&m->vm, &s->mmio, vdev);
	else
		err = virtio_pci_add(&m->vm, &s->pci, vdev, class_code);
	/* A failed add may have opened irqfds that destroy closes. */
	s->on_bus = true;
	return err ?: virtio_device_start(vdev);
}

/* The transport half of device_plug undone, after the device's own
 * destroy (MMIO holds nothing KVM does not drop with the VM). */
static void device_unplug(struct device_slot *s)
{
	if (s->on_bus && s->transport == VIRTIO_TRANSPORT_PCI)
		virtio_pci_destroy(&s->pci);
}

static int add_disk(struct machine *m, unsigned i)
{
	const struct disk_config *dc = &m->cfg->disks[i];
	struct blk_device *d = &m->devices->blks[i];
	struct blk_options opts = dc->opts;
	int err;

	if (!opts.queues)
		opts.queues = MIN(m->cfg->vm.nr_vcpus, BLK_MAX_QUEUES);
	m->devices->nr_blks++;
	err = virtio_blk_create(&d->blk, i, dc->path, &opts, &m->vm.ram);
	if (err)
		return err;
	return device_plug(m, &d->slot, dc->transport, &d->blk.vdev,
			   PCI_CLASS_STORAGE_OTHER);
}

static int add_net(struct machine *m)
{
	const struct net_config *nc = &m->cfg->net;
	char ifname[IFNAMSIZ];
	struct net_device *d;
	int fd, err;

	d = m->devices->net = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	fd = tap_open(nc->tapif, ifname);
	if (fd < 0)
		return fd;
	err = virtio_net_create(&d->net, fd, nc->mac, &m->vm.ram);
	if (err)
		return err;
	/* Said by default only when the user cannot know the name. */
	log_msg(nc->tapif[0] ? LOG_DEBUG : LOG_INFO,
		"%s: tap %s, MAC %02x:%02x:%02x:%02x:%02x:%02x",
		d->net.vdev.name, ifname, nc->mac[0], nc->mac[1], nc->mac[2],
		nc->mac[3], nc->mac[4], nc->mac[5]);
	return device_plug(m, &d->slot, nc->transport, &d->net.vdev,
			   PCI_CLASS_NETWORK_ETHERNET);
}

static int add_balloon(struct machine *m)
{
	const struct balloon_config *bc = &m->cfg->balloon_opts;
	struct balloon_device *d;
	int err;

	d = m->devices->balloon = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	err = virtio_balloon_create(&d->balloon, bc, &m->vm.ram, NULL, NULL);
	if (err)
		return err;
	if (d->balloon.release.policy != bc->policy)
		pr_info("%s: hugetlbfs RAM: only whole huge pages can be "
			"released, so the policy is preserve",
			d->balloon.vdev.name);
	return device_plug(m, &d->slot, m->cfg->balloon_transport,
			   &d->balloon.vdev, PCI_CLASS_OTHERS);
}

static int add_rng(struct machine *m)
{
	struct rng_device *d;
	int err;

	d = m->devices->rng = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	err = virtio_rng_create(&d->rng, m->cfg->rng_bytes_per_sec,
				&m->vm.ram);
	if (err)
		return err;
	return device_plug(m, &d->slot, m->cfg->rng_transport, &d->rng.vdev,
			   PCI_CLASS_OTHERS);
}

static int add_mem(struct machine *m)
{
	struct mem_device *d;
	int err;

	d = m->devices->mem = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	err = virtio_mem_create(&d->mem, m->cfg->mem_block,
				m->cfg->mem_requested, &m->vm.ram);
	if (err)
		return err;
	return device_plug(m, &d->slot, m->cfg->mem_transport, &d->mem.vdev,
			   PCI_CLASS_OTHERS);
}

/* The guest's console from now on: input goes to it, not to the
 * arch's UART, which stays for early boot messages. */
static int add_console(struct machine *m)
{
	struct console_device *d;
	int err;

	d = m->devices->console = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	err = virtio_console_create(&d->con, &m->vm.console_out, &m->vm.ram);
	if (err)
		return err;
	err = device_plug(m, &d->slot, VIRTIO_TRANSPORT_DEFAULT, &d->con.vdev,
			  PCI_CLASS_COMMUNICATION_OTHER);
	if (err)
		return err;
	d->arch_console = m->vm.console;
	m->vm.console = (struct vm_console){ &virtio_console_ops, &d->con };
	return 0;
}

static int devices_create(struct machine *m)
{
	const struct machine_config *cfg = m->cfg;
	unsigned i;
	int err = 0;

	m->devices = calloc(1, sizeof(*m->devices));
	if (!m->devices)
		return -ENOMEM;
	m->devices->blks = calloc(cfg->nr_disks ?: 1,
				  sizeof(*m->devices->blks));
	if (!m->devices->blks)
		return -ENOMEM;
	for (i = 0; i < cfg->nr_disks && !err; i++)
		err = add_disk(m, i);
	if (!err && cfg->net.mode == NET_TAP)
		err = add_net(m);
	if (!err && cfg->balloon)
		err = add_balloon(m);
	if (!err && cfg->rng)
		err = add_rng(m);
	if (!err && cfg->virtio_console)
		err = add_console(m);
	if (!err && cfg->vm.hotplug_size)
		err = add_mem(m);
	return err;
}

static void devices_destroy(struct machine *m)
{
	struct machine_devices *devs = m->devices;
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
	if (devs->rng) {
		if (devs->rng->slot.created)
			virtio_rng_destroy(&devs->rng->rng);
		device_unplug(&devs->rng->slot);
	}
	if (devs->console) {
		if (devs->console->arch_console.ops)
			m->vm.console = devs->console->arch_console;
		if (devs->console->slot.created)
			virtio_console_destroy(&devs->console->con);
		device_unplug(&devs->console->slot);
	}
	if (devs->mem) {
		if (devs->mem->slot.created)
			virtio_mem_destroy(&devs->mem->mem);
		device_unplug(&devs->mem->slot);
	}
	free(devs->mem);
	free(devs->console);
	free(devs->rng);
	free(devs->balloon);
	free(devs->net);
	free(devs->blks);
	free(devs);
	m->devices = NULL;
}

int machine_create(struct machine *m, const struct machine_config *cfg)
{
	int err;

	memset(m, 0, sizeof(*m));
	m->cfg = cfg;
	err = vm_create(&m->vm, &cfg->vm);
	return err ?: devices_create(m);
}

void machine_destroy(struct machine *m)
{
	devices_destroy(m);
	vm_destroy(&m->vm);
}

struct virtio_balloon *machine_balloon(struct machine *m)
{
	struct machine_devices *devs = m->devices;

	return devs && devs->balloon && devs->balloon->slot.on_bus ?
		       &devs->balloon->balloon : NULL;
}

struct virtio_blk *machine_disk(struct machine *m, unsigned i)
{
	struct machine_devices *devs = m->devices;

	return devs && i < devs->nr_blks && devs->blks[i].slot.on_bus ?
		       &devs->blks[i].blk : NULL;
}

struct virtio_rng *machine_rng(struct machine *m)
{
	struct machine_devices *devs = m->devices;

	return devs && devs->rng && devs->rng->slot.on_bus ?
		       &devs->rng->rng : NULL;
}

struct virtio_mem *machine_mem(struct machine *m)
{
	struct machine_devices *devs = m->devices;

	return devs && devs->mem && devs->mem->slot.on_bus ?
		       &devs->mem->mem : NULL;
}
