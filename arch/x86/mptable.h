/* Intel MultiProcessor Specification 1.4 tables: how x86 guests without
 * ACPI find their CPUs, the IOAPIC and the ISA interrupt routing. */
#ifndef THPVM_X86_MPTABLE_H
#define THPVM_X86_MPTABLE_H

#include <stddef.h>
#include <stdint.h>

/* A PCI function's INTA line: the IOAPIC pin its interrupt reaches. */
struct mptable_pci_irq {
	uint8_t slot;
	uint8_t pin;
};

/* The most PCI interrupts a table describes: one per slot. */
#define MPTABLE_MAX_PCI_IRQS 32

/* Bytes needed for nr_cpus processors and nr_pci PCI interrupts. */
size_t mptable_size(unsigned nr_cpus, unsigned nr_pci);
/* Writes the floating pointer and the configuration table to buf, which
 * the guest will see at guest-physical address gpa: the CPUs, the ISA
 * interrupts and, as level-triggered, active-high interrupts on PCI bus
 * 0, pci[0..nr_pci). Returns bytes written or -ENOSPC. */
int mptable_write(uint8_t *buf, size_t len, uint32_t gpa, unsigned nr_cpus,
		  const struct mptable_pci_irq *pci, unsigned nr_pci);

/* The IOAPIC pin the legacy timer (ISA IRQ 0) is wired to; the GSI routing
 * set up in platform.c must agree. */
#define MPTABLE_TIMER_IOAPIC_PIN 2

#endif
