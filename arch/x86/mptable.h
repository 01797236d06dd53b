/* Intel MultiProcessor Specification 1.4 tables: how x86 guests without
 * ACPI find their CPUs, the IOAPIC and the ISA interrupt routing. */
#ifndef THPVM_X86_MPTABLE_H
#define THPVM_X86_MPTABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A device interrupt beyond the ISA IRQs, level-triggered and active
 * high: a PCI function's INTA, or a platform device's line (virtio-mmio),
 * which Linux without ACPI finds only through such an entry. */
struct mptable_irq {
	bool pci;		/* on PCI bus 0, from slot; else on the ISA bus */
	uint8_t slot;
	uint8_t ioapic_pin;
};

/* The most device interrupts a table describes: one per PCI slot, one
 * per other IOAPIC pin. */
#define MPTABLE_MAX_IRQS 64

/* Bytes needed for nr_cpus processors and nr_irqs device interrupts. */
size_t mptable_size(unsigned nr_cpus, unsigned nr_irqs);
/* Writes the floating pointer and the configuration table to buf, which
 * the guest will see at guest-physical address gpa: the CPUs, the ISA
 * interrupts and irqs[0..nr_irqs). Returns bytes written or -ENOSPC. */
int mptable_write(uint8_t *buf, size_t len, uint32_t gpa, unsigned nr_cpus,
		  const struct mptable_irq *irqs, unsigned nr_irqs);

/* The IOAPIC pin the legacy timer (ISA IRQ 0) is wired to; the GSI routing
 * set up in platform.c must agree. */
#define MPTABLE_TIMER_IOAPIC_PIN 2

#endif
