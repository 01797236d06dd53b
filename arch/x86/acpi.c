/* The ACPI tables of x86 guests (acpi.h). Offsets and values are ACPI
 * 6.5's: the RSDP 5.2.5.3, the table header 5.2.6, the XSDT 5.2.8, the
 * FADT 5.2.9 (Table 5.9), the MADT 5.2.12, generic addresses 5.2.3.2. */
#include "arch/x86/acpi.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/x86/acpi_pm.h"
#include "arch/x86/cmos_rtc.h"
#include "arch/x86/i8042.h"
#include "arch/x86/layout.h"
#include "arch/x86/mptable.h"
#include "arch/x86/pci_ports.h"
#include "boot/aml.h"
#include "hw/serial8250.h"
#include "lib/util.h"

#define RSDP_LEN		36
#define RSDP_V1_LEN		20	/* what the first checksum covers */
#define HEADER_LEN		36
#define XSDT_ENTRIES		2	/* FADT, MADT */
#define FADT_LEN		276
#define FADT_REVISION		6
#define FADT_MINOR_REVISION	5
#define DSDT_REVISION		2	/* 64-bit integers */
#define TABLE_ALIGN		16

#define OEM_ID			"THPVM "
#define OEM_TABLE_ID		"THPVM   "
#define CREATOR_ID		"THPV"

/* FADT fields. */
#define FADT_DSDT		40
#define FADT_CENTURY		108
#define FADT_BOOT_ARCH		109
#define FADT_FLAGS		112
#define FADT_RESET_REG		116
#define FADT_RESET_VALUE	128
#define FADT_MINOR		131
#define FADT_X_DSDT		140
#define FADT_SLEEP_CONTROL	244
#define FADT_SLEEP_STATUS	256

#define BOOT_LEGACY_DEVICES	(1u << 0)
#define BOOT_8042		(1u << 1)
#define BOOT_VGA_NOT_PRESENT	(1u << 2)
#define FLAG_RESET_REG_SUP	(1u << 10)
#define FLAG_HW_REDUCED_ACPI	(1u << 20)

#define GAS_LEN			12
#define GAS_SYSTEM_IO		1
#define GAS_ACCESS_BYTE		1

/* MADT. */
#define MADT_PCAT_COMPAT	1	/* the 8259s are there too */
#define MADT_LAPIC		0
#define MADT_IOAPIC		1
#define MADT_ISO		2
#define MADT_LAPIC_NMI		4
#define MADT_LAPIC_LEN		8
#define MADT_IOAPIC_LEN		12
#define MADT_ISO_LEN		10
#define MADT_LAPIC_NMI_LEN	6
#define MADT_LAPIC_ENABLED	1
#define MADT_ALL_PROCESSORS	0xff
#define MADT_NMI_LINT		1

#define MAX_CPUS		254	/* xAPIC IDs, the IOAPIC's after */

#define PCI_CONFIG_PORTS	8	/* 0xcf8-0xcff */
#define VIRTIO_MMIO_HID		"LNRO0005"

static void put_header(uint8_t *t, const char *sig, uint32_t len,
		       uint8_t revision)
{
	memcpy(t, sig, 4);
	put_le32(t + 4, len);
	t[8] = revision;
	memcpy(t + 10, OEM_ID, 6);
	memcpy(t + 16, OEM_TABLE_ID, 8);
	put_le32(t + 24, 1);		/* OEM revision */
	memcpy(t + 28, CREATOR_ID, 4);
	put_le32(t + 32, 1);		/* creator revision */
}

/* The checksum byte, once the table is complete. */
static void seal(uint8_t *t)
{
	uint32_t len = get_le32(t + 4);

	t[9] = 0;
	t[9] = byte_checksum(t, len);
}

/* A generic address of one byte-wide I/O port. */
static void put_io_gas(uint8_t *p, uint16_t port)
{
	p[0] = GAS_SYSTEM_IO;
	p[1] = 8;			/* bit width */
	p[2] = 0;			/* bit offset */
	p[3] = GAS_ACCESS_BYTE;
	put_le64(p + 4, port);
}

static void write_rsdp(uint8_t *p, uint64_t xsdt)
{
	memcpy(p, "RSD PTR ", 8);
	memcpy(p + 9, OEM_ID, 6);
	p[15] = 2;			/* revision: ACPI 2.0 and later */
	put_le32(p + 16, 0);		/* no RSDT: the XSDT replaces it */
	put_le32(p + 20, RSDP_LEN);
	put_le64(p + 24, xsdt);
	p[8] = byte_checksum(p, RSDP_V1_LEN);
	p[32] = byte_checksum(p, RSDP_LEN);
}

static void write_xsdt(uint8_t *t, uint64_t fadt, uint64_t madt)
{
	put_header(t, "XSDT", HEADER_LEN + 8 * XSDT_ENTRIES, 1);
	put_le64(t + HEADER_LEN, fadt);
	put_le64(t + HEADER_LEN + 8, madt);
	seal(t);
}

static void write_fadt(uint8_t *t, uint32_t dsdt)
{
	uint16_t pm = X86_ACPI_PM_PORT;

	put_header(t, "FACP", FADT_LEN, FADT_REVISION);
	/* No FACS: a hardware-reduced platform has no firmware to wake. */
	put_le32(t + FADT_DSDT, dsdt);
	t[FADT_CENTURY] = 0x32;		/* cmos_rtc.c keeps the century */
	put_le16(t + FADT_BOOT_ARCH, BOOT_LEGACY_DEVICES | BOOT_8042 |
				     BOOT_VGA_NOT_PRESENT);
	put_le32(t + FADT_FLAGS, FLAG_HW_REDUCED_ACPI | FLAG_RESET_REG_SUP);
	put_io_gas(t + FADT_RESET_REG, pm + X86_ACPI_RESET);
	t[FADT_RESET_VALUE] = X86_ACPI_RESET_VALUE;
	t[FADT_MINOR] = FADT_MINOR_REVISION;
	put_le64(t + FADT_X_DSDT, dsdt);
	put_io_gas(t + FADT_SLEEP_CONTROL, pm + X86_ACPI_SLEEP_CONTROL);
	put_io_gas(t + FADT_SLEEP_STATUS, pm + X86_ACPI_SLEEP_STATUS);
	seal(t);
}

static size_t madt_len(unsigned nr_cpus)
{
	return HEADER_LEN + 8 + nr_cpus * MADT_LAPIC_LEN + MADT_IOAPIC_LEN +
	       MADT_ISO_LEN + MADT_LAPIC_NMI_LEN;
}

static void write_madt(uint8_t *t, unsigned nr_cpus, bool pics)
{
	uint8_t *p = t + HEADER_LEN;
	unsigned i;

	put_header(t, "APIC", madt_len(nr_cpus), 5);
	put_le32(p, X86_LAPIC_ADDR);
	put_le32(p + 4, pics ? MADT_PCAT_COMPAT : 0);
	p += 8;
	for (i = 0; i < nr_cpus; i++, p += MADT_LAPIC_LEN) {
		p[0] = MADT_LAPIC;
		p[1] = MADT_LAPIC_LEN;
		p[2] = i;		/* processor UID, the DSDT's _UID */
		p[3] = i;		/* APIC ID, as in the MP table */
		put_le32(p + 4, MADT_LAPIC_ENABLED);
	}
	p[0] = MADT_IOAPIC;
	p[1] = MADT_IOAPIC_LEN;
	p[2] = nr_cpus;			/* its ID, after the CPUs' */
	put_le32(p + 4, X86_IOAPIC_ADDR);
	put_le32(p + 8, 0);		/* GSI base */
	p += MADT_IOAPIC_LEN;
	/* The PIT's IRQ 0 on pin 2; flags 0: the ISA bus's own (edge,
	 * active high). The other ISA IRQs are their pins. */
	p[0] = MADT_ISO;
	p[1] = MADT_ISO_LEN;
	p[2] = 0;			/* bus: ISA */
	p[3] = 0;			/* source: IRQ 0 */
	put_le32(p + 4, MPTABLE_TIMER_IOAPIC_PIN);
	put_le16(p + 8, 0);
	p += MADT_ISO_LEN;
	p[0] = MADT_LAPIC_NMI;
	p[1] = MADT_LAPIC_NMI_LEN;
	p[2] = MADT_ALL_PROCESSORS;
	put_le16(p + 3, 0);
	p[5] = MADT_NMI_LINT;
	seal(t);
}

/* Name (_CRS, ResourceTemplate () { ... }) of r. */
static void put_crs(struct aml_writer *w, const struct aml_resources *r)
{
	aml_name(w, "_CRS");
	aml_resources(w, r);
}

static void dsdt_cpus(struct aml_writer *w, unsigned nr_cpus)
{
	char name[16];

	for (unsigned i = 0; i < nr_cpus; i++) {
		snprintf(name, sizeof(name), "C%03X", i);
		aml_device(w, name);
		aml_name(w, "_HID");
		aml_string(w, "ACPI0007");
		aml_name(w, "_UID");
		aml_integer(w, i);
		aml_end(w);
	}
}

static void dsdt_legacy(struct aml_writer *w)
{
	struct aml_resources r;

	aml_device(w, "COM1");
	aml_name(w, "_HID");
	aml_eisaid(w, "PNP0501");
	aml_name(w, "_UID");
	aml_integer(w, 1);
	aml_res_init(&r);
	aml_res_io(&r, X86_COM1_PORT, SERIAL8250_REGS);
	aml_res_irq(&r, X86_COM1_IRQ);
	put_crs(w, &r);
	aml_end(w);

	/* The controller's keyboard line; it has no mouse port to offer. */
	aml_device(w, "KBD");
	aml_name(w, "_HID");
	aml_eisaid(w, "PNP0303");
	aml_res_init(&r);
	aml_res_io(&r, I8042_DATA_PORT, 1);
	aml_res_io(&r, I8042_CMD_PORT, 1);
	aml_res_irq(&r, I8042_IRQ);
	put_crs(w, &r);
	aml_end(w);

	/* cmos_rtc.c raises no interrupt: no IRQ 8 to describe. */
	aml_device(w, "RTC");
	aml_name(w, "_HID");
	aml_eisaid(w, "PNP0B00");
	aml_res_init(&r);
	aml_res_io(&r, CMOS_RTC_PORT, CMOS_RTC_PORTS);
	put_crs(w, &r);
	aml_end(w);
}

static void dsdt_pci(struct aml_writer *w, const struct vm_device *devices)
{
	const struct vm_device *d;
	struct aml_resources r;

	aml_device(w, "PCI0");
	aml_name(w, "_HID");
	aml_eisaid(w, "PNP0A08");
	aml_name(w, "_CID");
	aml_eisaid(w, "PNP0A03");
	aml_name(w, "_SEG");
	aml_integer(w, 0);
	aml_name(w, "_UID");
	aml_integer(w, 0);
	aml_res_init(&r);
	aml_res_bus_numbers(&r, 0, 0);
	aml_res_io(&r, X86_PCI_CONFIG_ADDRESS_PORT, PCI_CONFIG_PORTS);
	aml_res_memory32_window(&r, X86_PCI_MMIO_START, X86_PCI_MMIO_SIZE);
	put_crs(w, &r);
	/* Each function's INTA (pin 0) on its line, a GSI (source 0). */
	aml_name(w, "_PRT");
	aml_package(w);
	for (d = devices; d; d = d->next) {
		if (d->kind != VM_DEVICE_PCI_FUNCTION ||
		    d->irq == VM_DEVICE_NO_IRQ)
			continue;
		aml_package(w);
		aml_integer(w, (uint64_t)d->pci_slot << 16 | 0xffff);
		aml_integer(w, 0);
		aml_integer(w, 0);
		aml_integer(w, d->irq);
		aml_end(w);
	}
	aml_end(w);
	aml_end(w);
}

/* Whether a device other than dev uses dev's line. */
static bool line_shared(const struct vm_device *devices,
			const struct vm_device *dev)
{
	for (const struct vm_device *d = devices; d; d = d->next)
		if (d != dev && d->irq == dev->irq)
			return true;
	return false;
}

static void dsdt_virtio_mmio(struct aml_writer *w,
			     const struct vm_device *devices)
{
	const struct vm_device *d;
	struct aml_resources r;
	unsigned n = 0;
	char name[16];

	for (d = devices; d; d = d->next) {
		if (d->kind != VM_DEVICE_VIRTIO_MMIO)
			continue;
		snprintf(name, sizeof(name), "V%03X", n);
		aml_device(w, name);
		aml_name(w, "_HID");
		aml_string(w, VIRTIO_MMIO_HID);
		aml_name(w, "_UID");
		aml_integer(w, n++);
		aml_res_init(&r);
		if (d->base + d->size > UINT32_MAX + 1ULL)
			r.err = -EINVAL;	/* beyond Memory32Fixed */
		aml_res_memory32_fixed(&r, d->base, d->size);
		aml_res_interrupt(&r, d->irq, AML_IRQ_LEVEL |
				  (line_shared(devices, d) ? AML_IRQ_SHARED : 0));
		put_crs(w, &r);
		aml_end(w);
	}
}

/* The DSDT's AML, in a buffer the caller frees. */
static int build_dsdt(unsigned nr_cpus, const struct vm_device *devices,
		      uint8_t **aml, size_t *len)
{
	struct aml_writer w;

	aml_init(&w);
	aml_scope(&w, "_SB");
	dsdt_cpus(&w, nr_cpus);
	dsdt_legacy(&w);
	dsdt_pci(&w, devices);
	dsdt_virtio_mmio(&w, devices);
	aml_end(&w);
	/* SLP_TYPa and SLP_TYPb (one register here), two reserved. */
	aml_name(&w, "_S5");
	aml_package(&w);
	aml_integer(&w, X86_ACPI_SLP_TYP_S5);
	aml_integer(&w, X86_ACPI_SLP_TYP_S5);
	aml_integer(&w, 0);
	aml_integer(&w, 0);
	aml_end(&w);
	return aml_finish(&w, aml, len);
}

int x86_acpi_write(uint8_t *buf, size_t len, uint32_t gpa, unsigned nr_cpus,
		   bool pics, const struct vm_device *devices)
{
	size_t xsdt, fadt, madt, dsdt, end;
	uint8_t *aml;
	size_t aml_len;
	int err;

	if (nr_cpus == 0 || nr_cpus > MAX_CPUS)
		return -ENOSPC;
	err = build_dsdt(nr_cpus, devices, &aml, &aml_len);
	if (err)
		return err;
	xsdt = ALIGN_UP(RSDP_LEN, TABLE_ALIGN);
	fadt = ALIGN_UP(xsdt + HEADER_LEN + 8 * XSDT_ENTRIES, TABLE_ALIGN);
	madt = ALIGN_UP(fadt + FADT_LEN, TABLE_ALIGN);
	dsdt = ALIGN_UP(madt + madt_len(nr_cpus), TABLE_ALIGN);
	end = dsdt + HEADER_LEN + aml_len;
	if (end > len || gpa + (uint64_t)end > UINT32_MAX) {
		free(aml);
		return -ENOSPC;
	}
	memset(buf, 0, end);
	put_header(buf + dsdt, "DSDT", HEADER_LEN + aml_len, DSDT_REVISION);
	memcpy(buf + dsdt + HEADER_LEN, aml, aml_len);
	free(aml);
	seal(buf + dsdt);
	write_madt(buf + madt, nr_cpus, pics);
	write_fadt(buf + fadt, gpa + dsdt);
	write_xsdt(buf + xsdt, gpa + fadt, gpa + madt);
	write_rsdp(buf, gpa + xsdt);
	return end;
}
