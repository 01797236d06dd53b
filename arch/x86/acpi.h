/* ACPI tables for x86 guests (ACPI 6.5), rendered from the device
 * registry as Firecracker and Cloud Hypervisor do: an RSDP (revision 2)
 * first, then an XSDT naming a FADT and a MADT, and the DSDT the FADT
 * points at.
 *
 * - FADT: hardware-reduced ACPI (no PM1 blocks, no SCI), with the sleep
 *   control, sleep status and reset registers of acpi_pm.h, the i8042
 *   and no VGA in the boot flags, and the CMOS century register.
 * - MADT: a local APIC per vCPU (APIC ID = processor UID = vCPU index),
 *   the IOAPIC with the ID after the last CPU's, ISA IRQ 0 overridden to
 *   GSI 2 and LINT1 as NMI on every CPU: what the MP table says; the
 *   PCAT_COMPAT flag only where the 8259 PICs are there.
 * - DSDT: in \_SB a processor device per vCPU, COM1 (8250 at 0x3f8, IRQ
 *   4), the i8042 (0x60, 0x64, IRQ 1), the CMOS RTC (0x70, no IRQ), the
 *   PCI host bridge (bus 0, ports 0xcf8-0xcff, the BAR window, a _PRT
 *   entry for each function's INTA) and each virtio-mmio device
 *   (LNRO0005, its window and line, level-triggered and active high);
 *   and \_S5, whose SLP_TYP the sleep control register takes.
 */
#ifndef THPVM_X86_ACPI_H
#define THPVM_X86_ACPI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/device.h"

/* Writes the tables to buf, which the guest sees at gpa (the RSDP there,
 * so 16-byte aligned): nr_cpus vCPUs, the 8259 PICs or none, and the
 * devices of the registry.
 * Returns the bytes written, -ENOSPC if they do not fit in len (or
 * nr_cpus is 0 or above 254), -EINVAL or -ENOMEM from the DSDT. */
int x86_acpi_write(uint8_t *buf, size_t len, uint32_t gpa, unsigned nr_cpus,
		   bool pics, const struct vm_device *devices);

#endif
