/* The VM's interrupt routing: KVM keeps one GSI routing table that each
 * KVM_SET_GSI_ROUTING replaces whole, so every route lives here and each
 * change commits the full table. The arch adds its interrupt-controller
 * pins at start; devices add MSI routes, each driven by an irqfd. */
#ifndef THPVM_IRQ_ROUTING_H
#define THPVM_IRQ_ROUTING_H

#include <linux/kvm.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

struct irq_routing {
	pthread_mutex_t lock;
	int vm_fd;
	struct kvm_irq_routing *table;
	unsigned cap;
	unsigned next_gsi;	/* first GSI not yet handed out */
	/* MSIs name their requester (KVM_MSI_VALID_DEVID): set by an arch
	 * whose interrupt controller needs it (arm64's GICv3 ITS). */
	bool msi_devid;
	/* This KVM routes no MSIs (powerpc's XICS, which names sources
	 * directly): devices use their wired line. */
	bool no_msi;
};

int irq_routing_init(struct irq_routing *r, int vm_fd);
void irq_routing_free(struct irq_routing *r);

/* An interrupt-controller pin behind gsi; call irq_routing_commit() after
 * the last one. */
int irq_routing_add_irqchip(struct irq_routing *r, unsigned gsi,
			    unsigned chip, unsigned pin);
int irq_routing_commit(struct irq_routing *r);

/* A GSI above every pin, for one MSI source, with an eventfd bound to it
 * through KVM_IRQFD: writing 1 to *irqfd raises the MSI once a route is
 * set. Closing the eventfd is all a device does at teardown: KVM drops
 * the irqfd with the VM. */
int irq_msi_create(struct irq_routing *r, unsigned *gsi, int *irqfd);
/* Points the GSI at an MSI address/data pair from requester devid (a PCI
 * requester ID: bus << 8 | slot << 3 | function) and commits the table. */
int irq_msi_set(struct irq_routing *r, unsigned gsi, uint64_t addr,
		uint32_t data, uint32_t devid);

#endif
