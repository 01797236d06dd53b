/* Virtio over MMIO (virtio 1.x, 4.2), the modern register layout
 * (Version 2) only: a register file of VIRTIO_MMIO_SIZE bytes whose device
 * configuration starts at 0x100; queue notifications through KVM
 * ioeventfds on QueueNotify, one per queue matched on its index (an MMIO
 * exit there does the same); and one wired interrupt line, high while
 * InterruptStatus is not empty, lowered once the driver has acknowledged
 * every bit through InterruptACK. Where the guest finds it (a device
 * tree node, a kernel command line entry) is the arch's to say, from the
 * device registry. */
#ifndef THPVM_VIRTIO_MMIO_H
#define THPVM_VIRTIO_MMIO_H

#include <stdint.h>

#include "core/device.h"
#include "core/irq_lines.h"
#include "virtio/virtio.h"

struct vm;

#define VIRTIO_MMIO_SIZE 0x200

struct virtio_mmio {
	struct virtio_device *vdev;
	struct irq_lines *lines;
	struct irq_source irq;
	struct vm_device reg;		/* in the VM's device registry */
	uint32_t device_features_sel;
	uint32_t driver_features_sel;
	uint32_t queue_sel;
};

/* Places vdev in the VM's platform MMIO window, takes an interrupt line,
 * and adds it to the device registry. */
int virtio_mmio_add(struct vm *vm, struct virtio_mmio *m,
		    struct virtio_device *vdev);
/* What virtio_mmio_add sets up without a VM: the registers and the
 * interrupt, for tests. */
void virtio_mmio_init(struct virtio_mmio *m, struct virtio_device *vdev,
		      struct irq_lines *lines, const struct irq_source *irq);
/* The register file (io_bus handler, opaque = m). */
void virtio_mmio_access(void *m, uint64_t offset, uint8_t *data,
			uint32_t len, bool is_write);

#endif
