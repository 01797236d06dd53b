/* The hand-made driver at the device unit tests' layout (fake_driver.h). */
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
	unsigned q;

	CHECK(fake_virtio_negotiate(vdev, features));
	virtio_set_config_vector(vdev, CONFIG_VECTOR);
	for (q = 0; q < nr_queues; q++) {
		memset(gpa(RING_GPA(q)), 0, 0x3000);
		avail_idx[q] = 0;
		fake_virtio_queue(vdev, q, QSIZE, RING_GPA(q), AVAIL_GPA(q),
				  USED_GPA(q));
	}
	CHECK(fake_virtio_driver_ok(vdev));
}

bool needs_reset(struct virtio_device *vdev)
{
	return virtio_get_status(vdev) & VIRTIO_CONFIG_S_NEEDS_RESET;
}

void set_desc(unsigned q, unsigned i, uint64_t addr, uint32_t len,
	      uint16_t flags, uint16_t next)
{
	fake_virtio_desc(&ram, RING_GPA(q), i, addr, len, flags, next);
}

void publish(unsigned q, uint16_t head)
{
	fake_virtio_publish(&ram, AVAIL_GPA(q), QSIZE, &avail_idx[q], head);
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
