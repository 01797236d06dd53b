/* The machine: the VM, then its virtio devices, each on PCI or MMIO. One
 * table, device_kinds, says which devices the configuration can ask for
 * and in what order they are made, so that guests find them in the same
 * places on every boot; a new device is a row there and its functions. */
#include "machine/machine.h"

#include <errno.h>
#include <linux/virtio_ids.h>
#include <stdlib.h>
#include <string.h>

#include "backend/net_user.h"
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
 * 0xff. Also virtio-9p's, which no class fits. */
#define PCI_CLASS_OTHERS 0x00ff00

struct machine_device;

/* A kind of device the machine can have: a row of device_kinds. */
struct device_kind {
	const char *name;	/* its devices' names without the number */
	size_t size;		/* of its state, which the machine allocates */
	uint32_t pci_class;	/* its class code, when on PCI */
	/* How many of it the configuration asks for. */
	unsigned (*count)(const struct machine_config *cfg);
	/* Makes device d->index of the kind in d->state (zeroed), and sets
	 * d->vdev and d->transport (left DEFAULT: the machine's). Reports
	 * its own errors; on failure, leaves nothing to destroy. */
	int (*create)(struct machine *m, struct machine_device *d);
	/* Undoes create, after which the transport is taken down. */
	void (*destroy)(struct machine *m, struct machine_device *d);
};

/* A device of the machine and how far its set-up got, which is what
 * devices_destroy undoes. */
struct machine_device {
	const struct device_kind *kind;
	unsigned index;		/* among those of its kind: disk i */
	void *state;		/* the kind's: struct virtio_blk, ... */
	struct virtio_device *vdev;	/* in state */
	enum virtio_transport transport;
	union {
		struct virtio_pci pci;
		struct virtio_mmio mmio;
	};
	bool created;		/* the kind's create succeeded */
	bool on_bus;		/* its transport's add ran, even if it failed */
};

struct machine_devices {
	unsigned nr;		/* those whose set-up began */
	struct machine_device dev[];
};

static unsigned disk_count(const struct machine_config *cfg)
{
	return cfg->nr_disks;
}

static int disk_create(struct machine *m, struct machine_device *d)
{
	const struct disk_config *dc = &m->cfg->disks[d->index];
	struct virtio_blk *blk = d->state;
	struct blk_options opts = dc->opts;

	if (!opts.queues)
		opts.queues = MIN(m->cfg->vm.nr_vcpus, BLK_MAX_QUEUES);
	d->vdev = &blk->vdev;
	d->transport = dc->transport;
	return virtio_blk_create(blk, d->index, dc->path, &opts, &m->vm.ram);
}

static void disk_destroy(struct machine *m, struct machine_device *d)
{
	virtio_blk_destroy(d->state);
}

static unsigned net_count(const struct machine_config *cfg)
{
	return cfg->net.mode != NET_NONE;
}

/* The network device and, in user mode, the stack behind it. */
struct machine_net {
	struct virtio_net dev;
	struct net_user *user;
};

static int net_create(struct machine *m, struct machine_device *d)
{
	const struct net_config *nc = &m->cfg->net;
	struct machine_net *mn = d->state;
	char ifname[IFNAMSIZ];
	int fd, err;

	/* The fd the device reads and writes frames on: the device's end
	 * of the user-mode stack's pair, or a tap's. */
	if (nc->mode == NET_USER) {
		err = net_user_open(&mn->user, &nc->user, &fd);
		if (err)
			return err;
	} else {
		fd = tap_open(nc->tapif, ifname);
		if (fd < 0)
			return fd;
	}
	/* It closes fd, even on failure; a failed create is not destroyed. */
	err = virtio_net_create(&mn->dev, fd, nc->mac, &m->vm.ram);
	if (err) {
		net_user_close(mn->user);
		mn->user = NULL;
		return err;
	}
	/* Said by default only when the user cannot know the tap's name. */
	if (nc->mode == NET_TAP)
		log_msg(nc->tapif[0] ? LOG_DEBUG : LOG_INFO,
			"%s: tap %s, MAC %02x:%02x:%02x:%02x:%02x:%02x",
			mn->dev.vdev.name, ifname, nc->mac[0], nc->mac[1],
			nc->mac[2], nc->mac[3], nc->mac[4], nc->mac[5]);
	d->vdev = &mn->dev.vdev;
	d->transport = nc->transport;
	return 0;
}

/* The device first: its thread stops before the stack's end goes. */
static void net_destroy(struct machine *m, struct machine_device *d)
{
	struct machine_net *mn = d->state;

	virtio_net_destroy(&mn->dev);
	net_user_close(mn->user);
}

static unsigned balloon_count(const struct machine_config *cfg)
{
	return cfg->balloon;
}

static int balloon_create(struct machine *m, struct machine_device *d)
{
	const struct balloon_config *bc = &m->cfg->balloon_opts;
	struct virtio_balloon *b = d->state;
	int err;

	err = virtio_balloon_create(b, bc, &m->vm.ram, NULL, NULL);
	if (err)
		return err;
	if (b->release.policy != bc->policy)
		pr_info("%s: hugetlbfs RAM: only whole huge pages can be "
			"released, so the policy is preserve", b->vdev.name);
	d->vdev = &b->vdev;
	d->transport = m->cfg->balloon_transport;
	return 0;
}

static void balloon_destroy(struct machine *m, struct machine_device *d)
{
	virtio_balloon_destroy(d->state);
}

static unsigned rng_count(const struct machine_config *cfg)
{
	return cfg->rng;
}

static int rng_create(struct machine *m, struct machine_device *d)
{
	struct virtio_rng *r = d->state;

	d->vdev = &r->vdev;
	d->transport = m->cfg->rng_transport;
	return virtio_rng_create(r, m->cfg->rng_bytes_per_sec, &m->vm.ram);
}

static void rng_destroy(struct machine *m, struct machine_device *d)
{
	virtio_rng_destroy(d->state);
}

/* The virtio-console and what it replaced as the guest's console. */
struct console_device {
	struct virtio_console con;
	struct vm_console arch_console;
};

static unsigned console_count(const struct machine_config *cfg)
{
	return cfg->virtio_console;
}

/* The guest's console from now on: input goes to it, not to the arch's
 * UART, which stays for early boot messages. Nothing hands the console
 * input before the machine is made, and destroy gives the UART its role
 * back however far the set-up got. */
static int console_create(struct machine *m, struct machine_device *d)
{
	struct console_device *c = d->state;
	int err;

	err = virtio_console_create(&c->con, &m->vm.console_out, &m->vm.ram);
	if (err)
		return err;
	d->vdev = &c->con.vdev;
	c->arch_console = m->vm.console;
	m->vm.console = (struct vm_console){ &virtio_console_ops, &c->con };
	return 0;
}

static void console_destroy(struct machine *m, struct machine_device *d)
{
	struct console_device *c = d->state;

	m->vm.console = c->arch_console;
	virtio_console_destroy(&c->con);
}

static unsigned mem_count(const struct machine_config *cfg)
{
	return cfg->vm.hotplug_size != 0;
}

static int mem_create(struct machine *m, struct machine_device *d)
{
	struct virtio_mem *mem = d->state;

	d->vdev = &mem->vdev;
	d->transport = m->cfg->mem_transport;
	return virtio_mem_create(mem, m->cfg->mem_block, m->cfg->mem_requested,
				 &m->vm.ram);
}

static void mem_destroy(struct machine *m, struct machine_device *d)
{
	virtio_mem_destroy(d->state);
}

static unsigned share_count(const struct machine_config *cfg)
{
	return cfg->nr_shares;
}

static int share_create(struct machine *m, struct machine_device *d)
{
	const struct share_config *sc = &m->cfg->shares[d->index];
	struct virtio_p9 *p9 = d->state;

	d->vdev = &p9->vdev;
	d->transport = sc->transport;
	return virtio_p9_create(p9, d->index, sc->dir, sc->tag, sc->read_only,
				&m->vm.ram);
}

static void share_destroy(struct machine *m, struct machine_device *d)
{
	virtio_p9_destroy(d->state);
}

/* In the order machine.h promises: the devices are made in it (and so
 * take PCI slots, MMIO addresses and interrupt lines in it), and taken
 * down in it too. */
static const struct device_kind device_kinds[] = {
	{ .name = "virtio-blk", .size = sizeof(struct virtio_blk),
	  .pci_class = PCI_CLASS_STORAGE_OTHER,
	  .count = disk_count, .create = disk_create, .destroy = disk_destroy },
	{ .name = "virtio-net", .size = sizeof(struct machine_net),
	  .pci_class = PCI_CLASS_NETWORK_ETHERNET,
	  .count = net_count, .create = net_create, .destroy = net_destroy },
	{ .name = "virtio-balloon", .size = sizeof(struct virtio_balloon),
	  .pci_class = PCI_CLASS_OTHERS, .count = balloon_count,
	  .create = balloon_create, .destroy = balloon_destroy },
	{ .name = "virtio-rng", .size = sizeof(struct virtio_rng),
	  .pci_class = PCI_CLASS_OTHERS,
	  .count = rng_count, .create = rng_create, .destroy = rng_destroy },
	{ .name = "virtio-console", .size = sizeof(struct console_device),
	  .pci_class = PCI_CLASS_COMMUNICATION_OTHER, .count = console_count,
	  .create = console_create, .destroy = console_destroy },
	{ .name = "virtio-mem", .size = sizeof(struct virtio_mem),
	  .pci_class = PCI_CLASS_OTHERS,
	  .count = mem_count, .create = mem_create, .destroy = mem_destroy },
	{ .name = "virtio-9p", .size = sizeof(struct virtio_p9),
	  .pci_class = PCI_CLASS_OTHERS, .count = share_count,
	  .create = share_create, .destroy = share_destroy },
};

/* Device index of a kind: made, put on its transport and started. */
static int device_add(struct machine *m, const struct device_kind *kind,
		      unsigned index)
{
	struct machine_device *d = &m->devices->dev[m->devices->nr++];
	int err;

	d->kind = kind;
	d->index = index;
	d->state = calloc(1, kind->size);
	if (!d->state) {
		pr_err("%s%u: out of memory", kind->name, index);
		return -ENOMEM;
	}
	err = kind->create(m, d);
	if (err)
		return err;
	d->created = true;
	d->transport = d->transport ?: m->cfg->virtio_transport ?:
			VIRTIO_TRANSPORT_PCI;
	if (d->transport == VIRTIO_TRANSPORT_MMIO)
		err = virtio_mmio_add(&m->vm, &d->mmio, d->vdev);
	else
		err = virtio_pci_add(&m->vm, &d->pci, d->vdev, kind->pci_class);
	/* A failed add may have opened irqfds that destroy closes. */
	d->on_bus = true;
	return err ?: virtio_device_start(d->vdev);
}

static int devices_create(struct machine *m)
{
	const struct machine_config *cfg = m->cfg;
	struct machine_devices *devs;
	unsigned k, i, nr = 0;
	int err = 0;

	for (k = 0; k < ARRAY_SIZE(device_kinds); k++)
		nr += device_kinds[k].count(cfg);
	devs = calloc(1, sizeof(*devs) + nr * sizeof(devs->dev[0]));
	if (!devs) {
		pr_err("out of memory for the machine's %u devices", nr);
		return -ENOMEM;
	}
	m->devices = devs;
	for (k = 0; k < ARRAY_SIZE(device_kinds) && !err; k++) {
		const struct device_kind *kind = &device_kinds[k];

		for (i = 0; i < kind->count(cfg) && !err; i++)
			err = device_add(m, kind, i);
	}
	return err;
}

static void devices_destroy(struct machine *m)
{
	struct machine_devices *devs = m->devices;
	unsigned i;

	if (!devs)
		return;
	for (i = 0; i < devs->nr; i++) {
		struct machine_device *d = &devs->dev[i];

		if (d->created)
			d->kind->destroy(m, d);
		/* MMIO holds nothing KVM does not drop with the VM. */
		if (d->on_bus && d->transport == VIRTIO_TRANSPORT_PCI)
			virtio_pci_destroy(&d->pci);
		free(d->state);
	}
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

/* The state of the index-th device with that virtio ID (disk i), once it
 * is on its transport; NULL if there is none. */
static void *device_find(struct machine *m, uint16_t device_id,
			 unsigned index)
{
	struct machine_devices *devs = m->devices;
	unsigned i;

	for (i = 0; devs && i < devs->nr; i++) {
		struct machine_device *d = &devs->dev[i];

		if (d->on_bus && d->vdev->device_id == device_id &&
		    d->index == index)
			return d->state;
	}
	return NULL;
}

struct virtio_balloon *machine_balloon(struct machine *m)
{
	return device_find(m, VIRTIO_ID_BALLOON, 0);
}

struct virtio_blk *machine_disk(struct machine *m, unsigned i)
{
	return device_find(m, VIRTIO_ID_BLOCK, i);
}

struct net_user *machine_net_user(struct machine *m)
{
	struct machine_net *mn = device_find(m, VIRTIO_ID_NET, 0);

	return mn ? mn->user : NULL;
}

struct virtio_p9 *machine_share(struct machine *m, unsigned i)
{
	return device_find(m, VIRTIO_ID_9P, i);
}

struct virtio_rng *machine_rng(struct machine *m)
{
	return device_find(m, VIRTIO_ID_RNG, 0);
}

struct virtio_mem *machine_mem(struct machine *m)
{
	return device_find(m, VIRTIO_ID_MEM, 0);
}
