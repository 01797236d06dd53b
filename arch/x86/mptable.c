/* MP table writer (MultiProcessor Specification 1.4, chapter 4). The
 * layout mirrors what PC firmware provides: one processor entry per vCPU,
 * an ISA bus and a PCI bus, one IOAPIC, ISA IRQs identity-mapped to
 * IOAPIC pins except IRQ 0 (the PIT) on pin 2, the devices' lines (PCI
 * functions' INTA, platform devices'), and LINT0/LINT1 as ExtINT/NMI. */
#include "arch/x86/mptable.h"

#include <errno.h>
#include <string.h>

#include "arch/x86/layout.h"
#include "lib/util.h"

#define MP_SPEC_REV 4

#define MP_ENTRY_PROCESSOR 0
#define MP_ENTRY_BUS 1
#define MP_ENTRY_IOAPIC 2
#define MP_ENTRY_IOINT 3
#define MP_ENTRY_LOCALINT 4

#define MP_INT_TYPE_INT 0
#define MP_INT_TYPE_NMI 1
#define MP_INT_TYPE_EXTINT 3

#define MP_CPU_ENABLED 0x01
#define MP_CPU_BOOT 0x02

/* Linux looks a PCI function's interrupt up by its PCI bus number as the
 * MP bus ID: PCI bus 0 is MP bus 0. */
#define MP_BUS_PCI 0
#define MP_BUS_ISA 1
/* Interrupt flags: polarity active high (bits 0-1), level-triggered
 * (bits 2-3); KVM's IOAPIC takes a raised line as asserted. */
#define MP_IRQ_LEVEL_HIGH 0x0d

#define MP_ISA_IRQS 16
#define MP_FLOATING_SIZE 16
#define MP_HEADER_SIZE 44
#define MP_PROCESSOR_SIZE 20
#define MP_SMALL_ENTRY_SIZE 8
/* 2 buses + IOAPIC + ISA IRQs (minus the cascade IRQ 2) + 2 local ints */
#define MP_FIXED_ENTRIES (3 + (MP_ISA_IRQS - 1) + 2)

size_t mptable_size(unsigned nr_cpus, unsigned nr_irqs)
{
	return MP_FLOATING_SIZE + MP_HEADER_SIZE +
	       (size_t)nr_cpus * MP_PROCESSOR_SIZE +
	       (MP_FIXED_ENTRIES + (size_t)nr_irqs) * MP_SMALL_ENTRY_SIZE;
}

static uint8_t *put_small_entry(uint8_t *p, uint8_t b0, uint8_t b1,
				uint16_t w2, uint8_t b4, uint8_t b5, uint8_t b6,
				uint8_t b7)
{
	p[0] = b0;
	p[1] = b1;
	put_le16(p + 2, w2);
	p[4] = b4;
	p[5] = b5;
	p[6] = b6;
	p[7] = b7;
	return p + MP_SMALL_ENTRY_SIZE;
}

int mptable_write(uint8_t *buf, size_t len, uint32_t gpa, unsigned nr_cpus,
		  const struct mptable_irq *irqs, unsigned nr_irqs)
{
	uint8_t *mpf = buf, *hdr = buf + MP_FLOATING_SIZE, *p;
	uint8_t ioapic_id = nr_cpus;	/* after the LAPIC IDs 0..n-1 */
	unsigned i, entries = 0;

	if (len < mptable_size(nr_cpus, nr_irqs) || nr_cpus == 0 ||
	    nr_cpus > 254 || nr_irqs > MPTABLE_MAX_IRQS)
		return -ENOSPC;
	memset(buf, 0, mptable_size(nr_cpus, nr_irqs));

	p = hdr + MP_HEADER_SIZE;
	for (i = 0; i < nr_cpus; i++, entries++) {
		p[0] = MP_ENTRY_PROCESSOR;
		p[1] = i;		/* LAPIC ID = vCPU index */
		p[2] = 0x14;		/* LAPIC version: integrated */
		p[3] = MP_CPU_ENABLED | (i == 0 ? MP_CPU_BOOT : 0);
		put_le32(p + 4, 0x600);	/* family 6 signature */
		put_le32(p + 8, 0x201);	/* FPU, APIC */
		p += MP_PROCESSOR_SIZE;
	}
	p[0] = MP_ENTRY_BUS;
	p[1] = MP_BUS_PCI;
	memcpy(p + 2, "PCI   ", 6);
	p += MP_SMALL_ENTRY_SIZE;
	p[0] = MP_ENTRY_BUS;
	p[1] = MP_BUS_ISA;
	memcpy(p + 2, "ISA   ", 6);
	p += MP_SMALL_ENTRY_SIZE;
	entries += 2;
	p[0] = MP_ENTRY_IOAPIC;
	p[1] = ioapic_id;
	p[2] = 0x11;			/* IOAPIC version */
	p[3] = 0x01;			/* enabled */
	put_le32(p + 4, X86_IOAPIC_ADDR);
	p += MP_SMALL_ENTRY_SIZE;
	entries++;
	for (i = 0; i < MP_ISA_IRQS; i++) {
		if (i == 2)		/* the 8259 cascade: no IOAPIC pin */
			continue;
		p = put_small_entry(p, MP_ENTRY_IOINT, MP_INT_TYPE_INT, 0,
				    MP_BUS_ISA, i, ioapic_id,
				    i == 0 ? MPTABLE_TIMER_IOAPIC_PIN : i);
		entries++;
	}
	/* A PCI source IRQ is the slot and the pin (INTA = 0); a platform
	 * line is its own number on the ISA bus. */
	for (i = 0; i < nr_irqs; i++, entries++)
		p = put_small_entry(p, MP_ENTRY_IOINT, MP_INT_TYPE_INT,
				    MP_IRQ_LEVEL_HIGH,
				    irqs[i].pci ? MP_BUS_PCI : MP_BUS_ISA,
				    irqs[i].pci ? irqs[i].slot << 2 :
						  irqs[i].ioapic_pin,
				    ioapic_id, irqs[i].ioapic_pin);
	/* Local interrupts of every LAPIC (ID 0xff): LINT0 ExtINT, LINT1 NMI,
	 * from the ISA bus as PC firmware says. */
	p = put_small_entry(p, MP_ENTRY_LOCALINT, MP_INT_TYPE_EXTINT, 0,
			    MP_BUS_ISA, 0, 0xff, 0);
	p = put_small_entry(p, MP_ENTRY_LOCALINT, MP_INT_TYPE_NMI, 0,
			    MP_BUS_ISA, 0, 0xff, 1);
	entries += 2;

	memcpy(hdr, "PCMP", 4);
	put_le16(hdr + 4, p - hdr);	/* base table length */
	hdr[6] = MP_SPEC_REV;
	memcpy(hdr + 8, "THPVM   ", 8);	/* OEM ID */
	memcpy(hdr + 16, "THPVM       ", 12); /* product ID */
	put_le16(hdr + 34, entries);
	put_le32(hdr + 36, X86_LAPIC_ADDR);
	hdr[7] = byte_checksum(hdr, p - hdr);

	memcpy(mpf, "_MP_", 4);
	put_le32(mpf + 4, gpa + MP_FLOATING_SIZE);
	mpf[8] = 1;			/* length in 16-byte units */
	mpf[9] = MP_SPEC_REV;
	mpf[10] = byte_checksum(mpf, MP_FLOATING_SIZE);
	return p - buf;
}
