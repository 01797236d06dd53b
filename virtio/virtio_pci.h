/* Virtio 1.x modern PCI transport. BAR0 holds the common configuration,
 * ISR, device configuration and notification areas; BAR2 holds the MSI-X
 * table and pending bits. Notifications are KVM ioeventfds on the notify
 * area (an MMIO exit there does the same); each MSI-X vector is a KVM
 * irqfd routed to the MSI the guest programmed. While MSI-X is off, the
 * device interrupts on its INTA line, which is high while the ISR is not
 * empty (reading the ISR clears it), unless the driver disabled INTx in
 * the command register. There is no legacy (0.9.5) interface. */
#ifndef THPVM_VIRTIO_PCI_H
#define THPVM_VIRTIO_PCI_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/device.h"
#include "core/irq_lines.h"
#include "core/pci.h"
#include "virtio/virtio.h"

struct vm;

#define VIRTIO_PCI_MAX_VECTORS (VIRTIO_MAX_QUEUES + 1)

struct msix_vector {
	uint8_t entry[16];	/* address, data, vector control */
	unsigned gsi;
	int irqfd;
	bool pending;
	bool routed;		/* the GSI points at routed_addr/data */
	uint64_t routed_addr;
	uint32_t routed_data;
};

struct virtio_pci {
	struct pci_device pci;
	struct vm_device reg;	/* in the VM's device registry */
	struct irq_source intx;	/* INTA */
	struct virtio_device *vdev;
	struct vm *vm;
	uint32_t device_feature_select;
	uint32_t driver_feature_select;
	uint16_t queue_select;
	uint8_t msix_cap;	/* configuration space offsets */
	uint8_t cfg_cap;
	pthread_mutex_t msix_lock;
	unsigned nr_vectors;
	struct msix_vector vectors[VIRTIO_PCI_MAX_VECTORS];
};

/* Puts vdev on the VM's PCI bus and in its device registry; class_code
 * as in pci_device_init. */
int virtio_pci_add(struct vm *vm, struct virtio_pci *vp,
		   struct virtio_device *vdev, uint32_t class_code);
/* Closes the irqfds (KVM drops the rest with the VM). */
void virtio_pci_destroy(struct virtio_pci *vp);

#endif
