/* A VM as `thpvm run` makes it: the core VM with its arch's platform,
 * and the devices its configuration asks for, each on its transport. */
#ifndef THPVM_VMM_MACHINE_H
#define THPVM_VMM_MACHINE_H

#include <linux/if_ether.h>
#include <net/if.h>
#include <stdbool.h>
#include <stdint.h>

#include "backend/net_user_config.h"
#include "core/vm.h"
#include "virtio/balloon.h"
#include "virtio/mem.h"
#include "virtio/blk.h"
#include "virtio/p9.h"
#include "virtio/rng.h"

#define MACHINE_MAX_DISKS 16
#define MACHINE_MAX_SHARES 8
#define DISK_PATH_MAX 4096

/* Where a virtio device sits; DEFAULT takes the machine's. */
enum virtio_transport {
	VIRTIO_TRANSPORT_DEFAULT,
	VIRTIO_TRANSPORT_PCI,
	VIRTIO_TRANSPORT_MMIO,
};

struct disk_config {
	char path[DISK_PATH_MAX];
	/* opts.queues 0: one per vCPU (up to BLK_MAX_QUEUES), which the
	 * machine works out when it adds the disk */
	struct blk_options opts;
	enum virtio_transport transport;
};

/* A host directory shared over virtio-9p. */
struct share_config {
	char dir[DISK_PATH_MAX];
	char tag[P9_TAG_MAX + 1];
	bool read_only;
	enum virtio_transport transport;
};

enum net_mode {
	NET_NONE,
	NET_TAP,	/* virtio-net on a tap interface */
	NET_USER,	/* virtio-net on libslirp (backend/net_user.h) */
};

struct net_config {
	enum net_mode mode;
	char tapif[IFNAMSIZ];	/* NET_TAP; empty: the kernel picks thpvmN */
	struct net_user_config user;	/* NET_USER */
	uint8_t mac[ETH_ALEN];
	enum virtio_transport transport;
};

struct machine_config {
	struct vm_config vm;
	const char *kernel_path;	/* NULL: the embedded test guest */
	const char *initrd_path;
	const char *cmdline;
	const char *dump_dtb;		/* --dump-dtb FILE, or NULL */
	bool no_acpi;			/* --no-acpi */
	unsigned boot_entry;		/* in arch_boot_entries */
	struct disk_config disks[MACHINE_MAX_DISKS];
	unsigned nr_disks;
	struct share_config shares[MACHINE_MAX_SHARES];
	unsigned nr_shares;
	struct net_config net;
	bool balloon;			/* a virtio-balloon with ... */
	struct balloon_config balloon_opts;	/* ... these options */
	enum virtio_transport balloon_transport;
	bool rng;			/* a virtio-rng serving at most ... */
	uint64_t rng_bytes_per_sec;	/* ... this many bytes a second */
	enum virtio_transport rng_transport;
	/* A virtio-mem over the hotplug region (vm.hotplug_size, not 0):
	 * blocks of mem_block bytes (0: the host's huge page), asking for
	 * mem_requested of them at boot. */
	uint64_t mem_block;
	uint64_t mem_requested;
	enum virtio_transport mem_transport;
	/* --console virtio: a virtio-console is the guest's console (on
	 * the machine's transport) and gets the input. */
	bool virtio_console;
	/* Where the console is attached to (thpvm console), or NULL: the
	 * terminal thpvm runs on. */
	const char *console_socket;
	/* For devices that name none (DEFAULT here: PCI). */
	enum virtio_transport virtio_transport;
};

struct machine_devices;

struct machine {
	struct vm vm;
	const struct machine_config *cfg;
	struct machine_devices *devices;	/* machine.c's own */
};

/* The VM, then its devices: disks as given, then the network device,
 * the balloon, the rng, the console, virtio-mem and the 9p shares as
 * given, each on its transport, so that guests find them in the same
 * places (PCI slots, MMIO addresses) on every boot. On failure, having said why, it leaves
 * machine_destroy to undo what was made. */
int machine_create(struct machine *m, const struct machine_config *cfg);
/* After vm_stop: the devices, then the VM. */
void machine_destroy(struct machine *m);
/* The balloon, or NULL when the VM has none. */
struct virtio_balloon *machine_balloon(struct machine *m);
/* The rng, or NULL when the VM has none. */
struct virtio_rng *machine_rng(struct machine *m);
/* The virtio-mem device, or NULL when the VM has none. */
struct virtio_mem *machine_mem(struct machine *m);
/* The i-th disk, in -d order; NULL past the last. */
struct virtio_blk *machine_disk(struct machine *m, unsigned i);
/* The user-mode network's stack, or NULL when the VM has none. */
struct net_user *machine_net_user(struct machine *m);
/* The i-th 9p share, in --9p order; NULL past the last. */
struct virtio_p9 *machine_share(struct machine *m, unsigned i);

#endif
