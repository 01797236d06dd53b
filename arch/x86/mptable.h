/* Intel MultiProcessor Specification 1.4 tables: how x86 guests without
 * ACPI find their CPUs, the IOAPIC and the ISA interrupt routing. */
#ifndef THPVM_X86_MPTABLE_H
#define THPVM_X86_MPTABLE_H

#include <stddef.h>
#include <stdint.h>

/* Bytes needed for nr_cpus processors. */
size_t mptable_size(unsigned nr_cpus);
/* Writes the floating pointer and the configuration table to buf, which
 * the guest will see at guest-physical address gpa. Returns bytes written
 * or -ENOSPC. */
int mptable_write(uint8_t *buf, size_t len, uint32_t gpa, unsigned nr_cpus);

/* The IOAPIC pin the legacy timer (ISA IRQ 0) is wired to; the GSI routing
 * set up in platform.c must agree. */
#define MPTABLE_TIMER_IOAPIC_PIN 2

#endif
