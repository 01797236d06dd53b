/* The power-management registers of thpvm's hardware-reduced ACPI
 * platform (ACPI 6.5, 4.8.3.7 and 4.8.3.6), which the FADT points at:
 * one byte each on the port bus at X86_ACPI_PM_PORT.
 *
 * - sleep control (write): SLP_TYPx in bits 2-4, SLP_EN in bit 5. S5,
 *   the only sleep state the DSDT's \_S5 offers, ends the VM as a
 *   power-off (status 0, reason "reset", as an i8042 reset and arm64's
 *   PSCI SYSTEM_OFF do); other types are ignored, as states the guest
 *   was never offered.
 * - sleep status: reads 0 (WAK_STS never set: nothing wakes from S5);
 *   writes, which clear WAK_STS, change nothing.
 * - reset: X86_ACPI_RESET_VALUE ends the VM as a reset (Linux's
 *   reboot=acpi); other values are ignored.
 * Wider accesses act on the byte at their offset; reads give zeros. */
#ifndef THPVM_X86_ACPI_PM_H
#define THPVM_X86_ACPI_PM_H

#include <stdbool.h>
#include <stdint.h>

#define X86_ACPI_PM_PORT	0x600
#define X86_ACPI_PM_PORTS	3
#define X86_ACPI_SLEEP_CONTROL	0	/* offsets from X86_ACPI_PM_PORT */
#define X86_ACPI_SLEEP_STATUS	1
#define X86_ACPI_RESET		2

#define X86_ACPI_SLP_TYP_S5	5	/* \_S5's value for SLP_TYPx */
#define X86_ACPI_RESET_VALUE	1

/* An io_bus handler; opaque is the struct vm. */
void x86_acpi_pm_access(void *vm, uint64_t offset, uint8_t *data,
			uint32_t len, bool is_write);

#endif
