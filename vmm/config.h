/* What `thpvm run` was asked to do, after option parsing. */
#ifndef THPVM_CONFIG_H
#define THPVM_CONFIG_H

#include <linux/if_ether.h>
#include <net/if.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/balloon_release.h"
#include "core/guest_ram.h"

enum boot_mode {
	BOOT_AUTO,	/* pick per image (see docs/booting.md) */
	BOOT_PVH,	/* PVH entry: ELF, or a bzImage unpacked on the host */
	BOOT_64,	/* bzImage 64-bit entry (in-guest decompressor) */
	BOOT_16,	/* bzImage real-mode setup entry */
};

#define VM_NAME_MAX 64
#define VM_MAX_DISKS 16
#define DISK_PATH_MAX 4096

struct disk_config {
	char path[DISK_PATH_MAX];
	bool read_only;
	bool direct;		/* O_DIRECT: bypass the host page cache */
};
enum net_mode {
	NET_NONE,
	NET_TAP,	/* virtio-net on a tap interface */
};

struct net_config {
	enum net_mode mode;
	char tapif[IFNAMSIZ];	/* empty: the kernel picks thpvmN */
	uint8_t mac[ETH_ALEN];
};

/* --balloon[=OPTIONS]; defaults and why in docs/balloon.md. */
struct balloon_config {
	bool enabled;
	unsigned stats_interval;	/* seconds; 0: no stats queue */
	bool deflate_on_oom;
	bool reporting;			/* free page reporting */
	bool cont_pages;		/* VIRTIO_BALLOON_F_CONT_PAGES */
	enum balloon_policy policy;
};

#define BALLOON_DEFAULT_STATS_INTERVAL 5
#define BALLOON_MAX_STATS_INTERVAL 3600

#define VM_DEFAULT_RAM (256ULL << 20)
#define VM_MIN_RAM (16ULL << 20)

struct vm_config {
	const char *kernel_path;	/* NULL: the embedded test guest */
	const char *initrd_path;
	const char *cmdline;
	uint64_t ram_size;
	unsigned nr_vcpus;
	char name[VM_NAME_MAX + 1];
	enum ram_backing ram_backing;
	const char *hugetlbfs_dir;
	enum boot_mode boot_mode;
	bool json;		/* report the end as JSON on stderr */
	struct disk_config disks[VM_MAX_DISKS];
	unsigned nr_disks;
	struct net_config net;
	struct balloon_config balloon;
};

#endif
