/* What a virtio driver does, by hand, on any guest RAM and ring layout:
 * the steps of a device's set-up, descriptors and avail entries written
 * into the rings. The one driver of the unit tests (fake_driver.h puts
 * the device tests' fixed layout on top; test_virtqueue.c writes rings
 * with it) and of the device fuzz targets (tests/fuzz/fuzz_virtio.c).
 * It checks nothing itself: callers say what a refusal means to them. */
#ifndef THPVM_FAKE_VIRTIO_H
#define THPVM_FAKE_VIRTIO_H

#include <stdbool.h>
#include <stdint.h>

#include "core/guest_ram.h"
#include "virtio/virtio.h"

/* ACKNOWLEDGE, DRIVER, the features, FEATURES_OK: false when the
 * device did not keep FEATURES_OK (it refused the features). */
bool fake_virtio_negotiate(struct virtio_device *vdev, uint64_t features);
/* Queue q of size entries on the rings at desc, avail and used, its
 * interrupts on vector q, enabled. */
void fake_virtio_queue(struct virtio_device *vdev, unsigned q, uint16_t size,
		       uint64_t desc, uint64_t avail, uint64_t used);
/* DRIVER_OK after fake_virtio_negotiate: false when the device's status
 * is not what the driver wrote. */
bool fake_virtio_driver_ok(struct virtio_device *vdev);

/* Descriptor i of the table at guest-physical table. */
void fake_virtio_desc(const struct guest_ram *ram, uint64_t table,
		      unsigned i, uint64_t addr, uint32_t len, uint16_t flags,
		      uint16_t next);
/* head into the avail ring at avail (of size entries), then the ring's
 * index (*idx, the driver's count, incremented) with release order: a
 * device thread that sees the index sees the entry. */
void fake_virtio_publish(const struct guest_ram *ram, uint64_t avail,
			 uint16_t size, uint16_t *idx, uint16_t head);

#endif
