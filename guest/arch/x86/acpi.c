/* ACPI MADT: enabled local APICs, the IOAPIC and the GSI of ISA IRQ0 (an
 * interrupt source override, else identity). QEMU generates the MADT itself,
 * while SeaBIOS's MP table lists only the CPUs SeaBIOS managed to start. */
#include "guest.h"
#include "lib.h"

struct sdt_header {
	char sig[4];
	uint32_t length;
	uint8_t rev, checksum;
	char oem[6], oem_table[8];
	uint32_t oem_rev, creator, creator_rev;
} __attribute__((packed));

static uint64_t scan_rsdp(uint64_t start, uint64_t len)
{
	for (uint64_t a = start; a + 20 <= start + len; a += 16)
		if (!memcmp((const void *)a, "RSD PTR ", 8) &&
		    !checksum8((const void *)a, 20))
			return a;
	return 0;
}

static uint64_t find_rsdp(void)
{
	const uint8_t *bda = (const uint8_t *)0x400;
	uint64_t ebda, r = 0;

	if (boot.rsdp)
		return boot.rsdp;
	asm("" : "+r"(bda));	/* hide the constant address from GCC */
	ebda = (uint64_t)*(const uint16_t *)(bda + 0x0e) << 4;
	if (ebda)
		r = scan_rsdp(ebda, 1024);
	return r ? r : scan_rsdp(0xe0000, 0x20000);
}

static const struct sdt_header *find_table(uint64_t rsdp, const char *sig)
{
	const uint8_t *r = (const uint8_t *)rsdp;
	uint32_t rsdt;
	uint64_t xsdt = 0, root;
	unsigned esz;

	memcpy(&rsdt, r + 16, 4);
	if (r[15] >= 2)
		memcpy(&xsdt, r + 24, 8);
	root = xsdt ? xsdt : rsdt;
	esz = xsdt ? 8 : 4;
	if (!root)
		return 0;

	const struct sdt_header *h = (const void *)root;

	for (uint32_t off = sizeof(*h); off + esz <= h->length; off += esz) {
		uint64_t t = 0;

		memcpy(&t, (const uint8_t *)h + off, esz);
		if (t && !memcmp((const void *)t, sig, 4))
			return (const void *)t;
	}
	return 0;
}

bool madt_scan(void)
{
	uint64_t rsdp = find_rsdp();
	const struct sdt_header *madt;
	const uint8_t *e, *end;
	uint32_t irq0_gsi = 0, gsi_base = 0;
	bool have_ioapic = false;

	if (!rsdp || !(madt = find_table(rsdp, "APIC")))
		return false;
	e = (const uint8_t *)madt + sizeof(*madt) + 8;
	end = (const uint8_t *)madt + madt->length;
	mp.ncpus = 0;
	for (; e + 2 <= end && e[1] >= 2; e += e[1]) {
		uint32_t v;

		switch (e[0]) {
		case 0:		/* processor local APIC */
			memcpy(&v, e + 4, 4);
			if ((v & 1) && mp.ncpus < MAX_CPUS)
				mp.apic_ids[mp.ncpus++] = e[3];
			break;
		case 1:		/* IOAPIC: the first one */
			if (!have_ioapic) {
				memcpy(&v, e + 4, 4);
				mp.ioapic_addr = v;
				memcpy(&gsi_base, e + 8, 4);
				have_ioapic = true;
			}
			break;
		case 2:		/* interrupt source override, ISA IRQ0 */
			if (e[2] == 0 && e[3] == 0)
				memcpy(&irq0_gsi, e + 4, 4);
			break;
		}
	}
	mp.ioapic_gsi_base = gsi_base;
	mp.irq0_pin = irq0_gsi - gsi_base;
	mp.found = true;
	mp.source = "madt";
	return true;
}
