/* The hand-made virtio driver (fake_virtio.h) laid out for device unit
 * tests that run without KVM: guest RAM of the test's own, each queue's
 * rings at fixed guest addresses, interrupts counted per vector instead
 * of sent. */
#ifndef THPVM_FAKE_DRIVER_H
#define THPVM_FAKE_DRIVER_H

#include <stdbool.h>
#include <stdint.h>

#include "core/guest_ram.h"
#include "fake_virtio.h"
#include "lib/util.h"
#include "virtio/virtio.h"
#include "unit.h"

#define QSIZE 16
#define RAM_SIZE (8ULL << 20)
#define RING_GPA(q) (0x10000 + (q) * 0x4000)	/* desc, avail, used */
#define AVAIL_GPA(q) (RING_GPA(q) + 0x1000)
#define USED_GPA(q) (RING_GPA(q) + 0x2000)
#define CONFIG_VECTOR VIRTIO_MAX_QUEUES	/* queue q uses vector q */

extern struct guest_ram ram;

/* Maps RAM_SIZE of guest RAM at 0 and clears the interrupt counts. */
bool fake_driver_map_ram(void);
/* The same with size bytes (a multiple of 2 MiB, at least RAM_SIZE):
 * for a test that needs more pages than RAM_SIZE has. */
bool fake_driver_map_ram_size(uint64_t size);
uint8_t *gpa(uint64_t a);

/* vdev->notify and vdev->isr_cleared for the device under test. */
void count_irq(void *transport, uint16_t vector);
void count_isr_cleared(void *transport);
unsigned irq_count(unsigned vector);
/* How often the ISR went back to 0. */
unsigned isr_clear_count(void);

/* Status, features (FEATURES_OK must stick), nr_queues queues of QSIZE
 * with their rings cleared, DRIVER_OK. */
void driver_start(struct virtio_device *vdev, uint64_t features,
		  unsigned nr_queues);
/* The device found the driver at fault and waits for a reset. */
bool needs_reset(struct virtio_device *vdev);
void set_desc(unsigned q, unsigned i, uint64_t addr, uint32_t len,
	      uint16_t flags, uint16_t next);
/* Makes head available on q (no notification). */
void publish(unsigned q, uint16_t head);
uint16_t used_idx(unsigned q);
uint32_t used_id(unsigned q, unsigned i);
uint32_t used_len(unsigned q, unsigned i);

#endif
