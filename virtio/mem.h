/* virtio-mem (virtio 1.2, 5.15): memory the guest plugs and unplugs in
 * blocks of a region outside its boot RAM. The host asks for a size
 * (requested_size); the guest's driver plugs or unplugs blocks through
 * the request queue to reach it. Blocks are whole host huge pages, so an
 * unplug gives back whole huge pages and never splits one; the region is
 * guest RAM's hotplug region (core/guest_ram.h), one memslot. */
#ifndef THPVM_VIRTIO_MEM_H
#define THPVM_VIRTIO_MEM_H

#include <linux/virtio_mem.h>
#include <stdbool.h>
#include <stdint.h>

#include "virtio/virtio.h"

#define MEM_QUEUE_SIZE 128

struct virtio_mem {
	struct virtio_device vdev;
	struct virtio_mem_config config;	/* little-endian */
	/* Fixed at creation. */
	uint64_t addr, region_size, block_size, nr_blocks;

	/* Under vdev.lock. */
	uint64_t *plugged;		/* a bit per block */
	uint64_t plugged_size, requested_size;
	uint64_t plugs, unplugs;	/* requests that succeeded */
	uint64_t refused;		/* answered ERROR or NACK */
	uint64_t released;		/* bytes given back to the host */
	uint64_t release_calls, release_errors;
};

struct virtio_mem_info {
	uint64_t addr, region_size, usable_region_size, block_size;
	uint64_t plugged_size, requested_size;
	uint64_t plugs, unplugs, refused;
	uint64_t released, release_calls, release_errors;
	bool driver_ok;
};

/* A device for ram's hotplug region, in blocks of block_size (0: the
 * host's huge page; otherwise a power of two, at least that, dividing
 * the region's size and address), asking the guest for requested bytes
 * from the start (a multiple of the block, at most the region). Reports
 * its own errors. */
int virtio_mem_create(struct virtio_mem *m, uint64_t block_size,
		      uint64_t requested, const struct guest_ram *ram);
void virtio_mem_destroy(struct virtio_mem *m);
/* Asks the guest for bytes of plugged memory: -ERANGE beyond the region,
 * -EINVAL when not a multiple of the block size. */
int virtio_mem_set_requested(struct virtio_mem *m, uint64_t bytes);
void virtio_mem_info(struct virtio_mem *m, struct virtio_mem_info *info);

#endif
