/* A virtio driver session for the device fuzz targets (its steps are
 * tests/unit/fake_virtio.c's), taking everything from the input: the
 * features it accepts, the queue size, writes to the device
 * configuration, and which queues it notifies in which order; the rest
 * of the input is guest RAM from guest-physical 0, where queue q's
 * descriptor table lies at q * 0x800 and its avail ring at q * 0x800 +
 * 0x400 (used rings lie at FUZZ_USED_GPA(q)). The device's notification
 * thread is not started: each notification runs its queue handler on the
 * calling thread, then waits for the requests it took, so that one input
 * always does the same thing. Every input ends with a device reset. */
#ifndef THPVM_FUZZ_VIRTIO_H
#define THPVM_FUZZ_VIRTIO_H

#include "fuzz.h"
#include "virtio/blk.h"
#include "virtio/virtio.h"

#define FUZZ_DESC_GPA(q) ((uint64_t)(q) * 0x800)
#define FUZZ_AVAIL_GPA(q) (FUZZ_DESC_GPA(q) + 0x400)
#define FUZZ_USED_GPA(q) (0x8000 + (uint64_t)(q) * 0x800)
#define FUZZ_QUEUE_MAX 64	/* what fits in 0x400 bytes of descriptors */

/* Before each notification of queue q (kick is the input's byte that
 * chose it): the host side's part, such as a packet arriving on the tap;
 * it may take bytes of its own from in. NULL: none. */
typedef void (*fuzz_host_fn)(struct virtio_device *vdev, unsigned q,
			     uint8_t kick, struct fuzz_input *in);

/* Gives vdev (created, not started) interrupt callbacks that do nothing. */
void fuzz_virtio_attach(struct virtio_device *vdev);
/* One input's driver session on vdev, from set-up to reset. */
void fuzz_virtio_run(struct virtio_device *vdev, const uint8_t *data,
		     size_t size, fuzz_host_fn host);
/* vdev's queue handler for q, then a wait for what it took. */
void fuzz_virtio_kick(struct virtio_device *vdev, unsigned q);

/* A virtio-blk with the given engine on a scratch image of
 * FUZZ_DISK_SIZE bytes in /tmp, whose name is gone once the device has
 * it open (aborts on failure); and its image emptied again, for the
 * next input. */
#define FUZZ_DISK_SIZE (64 * 1024)
void fuzz_blk_create(struct virtio_blk *blk, enum blk_engine engine,
		     const struct guest_ram *ram);
void fuzz_blk_clear(const struct virtio_blk *blk);

#endif
