/* A hand-driven virtio driver for device unit tests (see fake_driver.h). */
#include "fake_driver.h"

#include <linux/virtio_config.h>
#include <string.h>

#include "lib/util.h"
#include "unit.h"

struct guest_ram ram;
static uint16_t avail_idx[VIRTIO_MAX_QUEUES];
static unsigned irqs[CONFIG_VECTOR + 1];
static unsigned isr_clears;

bool fake_driver_map_ram(void)
{
	return fake_driver_map_ram_size(RAM_SIZE);
}

bool fake_driver_map_ram_size(uint64_t size)
{
	const struct ram_range r[] = { { 0, size } };

	memset(irqs, 0, sizeof(irqs));
	isr_clears = 0;
	return guest_ram_map(&ram, r, 1, RAM_BACKING_NO_THP, NULL) == 0;
}

uint8_t *gpa(uint64_t a)
{
	return guest_ram_ptr(&ram, a, 1);
}

void count_irq(void *transport, uint16_t vector)
{
	if (vector <= CONFIG_VECTOR)
		__atomic_add_fetch(&irqs[vector], 1, __ATOMIC_SEQ_CST);
}

void count_isr_cleared(void *transport)
{
	__atomic_add_fetch(&isr_clears, 1, __ATOMIC_SEQ_CST);
}

unsigned isr_clear_count(void)
{
	return __atomic_load_n(&isr_clears, __ATOMIC_SEQ_CST);
}

unsigned irq_count(unsigned vector)
{
	return __atomic_load_n(&irqs[vector], __ATOMIC_SEQ_CST);
}

void driver_start(struct virtio_device *vdev, uint64_t features,
		  unsigned nr_queues)
{
	uint8_t s = VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER;
	unsigned q;

	virtio_set_status(vdev, VIRTIO_CONFIG_S_ACKNOWLEDGE);
	virtio_set_status(vdev, s);
	virtio_set_driver_features(vdev, 0, features);
	virtio_set_driver_features(vdev, 1, features >> 32);
	virtio_set_status(vdev, s |= VIRTIO_CONFIG_S_FEATURES_OK);
	CHECK(virtio_get_status(vdev) & VIRTIO_CONFIG_S_FEATURES_OK);
	virtio_set_config_vector(vdev, CONFIG_VECTOR);
	for (q = 0; q < nr_queues; q++) {
		memset(gpa(RING_GPA(q)), 0, 0x3000);
		avail_idx[q] = 0;
		virtio_queue_write(vdev, q, VQ_REG_SIZE, QSIZE);
		virtio_queue_write(vdev, q, VQ_REG_VECTOR, q);
		virtio_queue_write(vdev, q, VQ_REG_DESC, RING_GPA(q));
		virtio_queue_write(vdev, q, VQ_REG_AVAIL, AVAIL_GPA(q));
		virtio_queue_write(vdev, q, VQ_REG_USED, USED_GPA(q));
		virtio_queue_write(vdev, q, VQ_REG_ENABLE, 1);
	}
	virtio_set_status(vdev, s | VIRTIO_CONFIG_S_DRIVER_OK);
	CHECK_EQ(virtio_get_status(vdev), s | VIRTIO_CONFIG_S_DRIVER_OK);
}

void set_desc(unsigned q, unsigned i, uint64_t addr, uint32_t len,
	      uint16_t flags, uint16_t next)
{
	uint8_t *d = gpa(RING_GPA(q) + 16 * i);

	put_le64(d, addr);
	put_le32(d + 8, len);
	put_le16(d + 12, flags);
	put_le16(d + 14, next);
}

void publish(unsigned q, uint16_t head)
{
	put_le16(gpa(AVAIL_GPA(q) + 4 + 2 * (avail_idx[q] % QSIZE)), head);
	__atomic_store_n((uint16_t *)gpa(AVAIL_GPA(q) + 2), ++avail_idx[q],
			 __ATOMIC_RELEASE);
}

uint16_t used_idx(unsigned q)
{
	return __atomic_load_n((uint16_t *)gpa(USED_GPA(q) + 2),
			       __ATOMIC_ACQUIRE);
}

uint32_t used_id(unsigned q, unsigned i)
{
	return get_le32(gpa(USED_GPA(q) + 4 + 8 * (i % QSIZE)));
}

uint32_t used_len(unsigned q, unsigned i)
{
	return get_le32(gpa(USED_GPA(q) + 8 + 8 * (i % QSIZE)));
}
