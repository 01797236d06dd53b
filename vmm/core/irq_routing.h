/* The VM's interrupt routing: KVM keeps one GSI routing table that each
 * KVM_SET_GSI_ROUTING replaces whole, so every route lives here and each
 * change commits the full table. The arch adds its interrupt-controller
 * pins at start; devices add MSI routes, each driven by an irqfd.
 * Where KVM has no MSI routes (powerpc, whose XICS takes interrupt
 * source numbers), the arch sets msi_source instead: an MSI's irqfd is
 * then bound straight to the source its message names. */
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
	/* The source an MSI message names, negative for none (the message
	 * then goes nowhere); NULL where KVM routes MSIs. */
	int (*msi_source)(uint64_t addr, uint32_t data);
	/* With msi_source: each MSI's irqfd and the source it is bound to
	 * (-1: none), by GSI - first_msi_gsi. */
	struct irq_msi_binding {
		int fd;
		int source;
	} *bindings;
	unsigned nr_bindings, first_msi_gsi;
};

int irq_routing_init(struct irq_routing *r, int vm_fd);
void irq_routing_free(struct irq_routing *r);

/* An interrupt-controller pin behind gsi; call irq_routing_commit() after
 * the last one. */
int irq_routing_add_irqchip(struct irq_routing *r, unsigned gsi,
			    unsigned chip, unsigned pin);
int irq_routing_commit(struct irq_routing *r);
/* GSIs below nr are the arch's own (x86's split irqchip routes its
 * IOAPIC pins as MSIs there, with irq_msi_set): devices' MSIs start
 * above them. Before the first irq_msi_create. */
void irq_routing_reserve(struct irq_routing *r, unsigned nr);

/* A GSI above every pin, for one MSI source, with an eventfd bound to it
 * through KVM_IRQFD: writing 1 to *irqfd raises the MSI once a route is
 * set. Closing the eventfd is all a device does at teardown: KVM drops
 * the irqfd with the VM. (With msi_source, the GSI only names the MSI
 * here, and the eventfd is bound once irq_msi_set names a source.)
 * Reports its own errors. */
int irq_msi_create(struct irq_routing *r, unsigned *gsi, int *irqfd);
/* Points the GSI at an MSI address/data pair from requester devid (a PCI
 * requester ID: bus << 8 | slot << 3 | function) and commits the table. */
int irq_msi_set(struct irq_routing *r, unsigned gsi, uint64_t addr,
		uint32_t data, uint32_t devid);

#endif
