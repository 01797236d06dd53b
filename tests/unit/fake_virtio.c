/* A hand-driven virtio driver on any layout (see fake_virtio.h). */
#include "fake_virtio.h"

#include <linux/virtio_config.h>

#include "lib/util.h"

#define S_NEGOTIATED (VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER | \
		      VIRTIO_CONFIG_S_FEATURES_OK)

bool fake_virtio_negotiate(struct virtio_device *vdev, uint64_t features)
{
	virtio_set_status(vdev, VIRTIO_CONFIG_S_ACKNOWLEDGE);
	virtio_set_status(vdev, VIRTIO_CONFIG_S_ACKNOWLEDGE |
				VIRTIO_CONFIG_S_DRIVER);
	virtio_set_driver_features(vdev, 0, features);
	virtio_set_driver_features(vdev, 1, features >> 32);
	virtio_set_status(vdev, S_NEGOTIATED);
	return virtio_get_status(vdev) & VIRTIO_CONFIG_S_FEATURES_OK;
}

void fake_virtio_queue(struct virtio_device *vdev, unsigned q, uint16_t size,
		       uint64_t desc, uint64_t avail, uint64_t used)
{
	virtio_queue_write(vdev, q, VQ_REG_SIZE, size);
	virtio_queue_write(vdev, q, VQ_REG_VECTOR, q);
	virtio_queue_write(vdev, q, VQ_REG_DESC, desc);
	virtio_queue_write(vdev, q, VQ_REG_AVAIL, avail);
	virtio_queue_write(vdev, q, VQ_REG_USED, used);
	virtio_queue_write(vdev, q, VQ_REG_ENABLE, 1);
}

bool fake_virtio_driver_ok(struct virtio_device *vdev)
{
	virtio_set_status(vdev, S_NEGOTIATED | VIRTIO_CONFIG_S_DRIVER_OK);
	return virtio_get_status(vdev) ==
	       (S_NEGOTIATED | VIRTIO_CONFIG_S_DRIVER_OK);
}

void fake_virtio_desc(const struct guest_ram *ram, uint64_t table,
		      unsigned i, uint64_t addr, uint32_t len, uint16_t flags,
		      uint16_t next)
{
	uint8_t *d = guest_ram_ptr(ram, table + 16 * i, 16);

	put_le64(d, addr);
	put_le32(d + 8, len);
	put_le16(d + 12, flags);
	put_le16(d + 14, next);
}

void fake_virtio_publish(const struct guest_ram *ram, uint64_t avail,
			 uint16_t size, uint16_t *idx, uint16_t head)
{
	put_le16(guest_ram_ptr(ram, avail + 4 + 2 * (*idx % size), 2), head);
	/* Sequentially consistent: a driver reads the device's
	 * suppression after it, as its barrier orders them. */
	__atomic_store_n((uint16_t *)guest_ram_ptr(ram, avail + 2, 2), ++*idx,
			 __ATOMIC_SEQ_CST);
}
