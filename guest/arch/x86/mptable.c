/* Intel MP specification 1.4 tables: CPUs (enabled processor entries),
 * the IOAPIC, and the IOAPIC pin ISA IRQ0 is wired to. */
#include "guest.h"
#include "lib.h"

struct mp_info mp;

struct mp_fp {
	char sig[4];		/* "_MP_" */
	uint32_t config;
	uint8_t length, rev, checksum, feature1;
	uint8_t feature2[4];
} __attribute__((packed));

struct mp_config {
	char sig[4];		/* "PCMP" */
	uint16_t length;
	uint8_t rev, checksum;
	char oem[20];
	uint32_t oem_table;
	uint16_t oem_size, count;
	uint32_t lapic;
	uint16_t ext_length;
	uint8_t ext_checksum, reserved;
} __attribute__((packed));

uint8_t checksum8(const void *p, unsigned n)
{
	const uint8_t *b = p;
	uint8_t s = 0;

	while (n--)
		s += *b++;
	return s;
}

static const struct mp_fp *scan(uint64_t start, uint64_t len)
{
	for (uint64_t a = start; a + 16 <= start + len; a += 16) {
		const struct mp_fp *fp = (const void *)a;

		if (!memcmp(fp->sig, "_MP_", 4) && fp->length == 1 &&
		    !checksum8(fp, 16))
			return fp;
	}
	return 0;
}

static const struct mp_fp *find_fp(void)
{
	const uint8_t *bda = (const uint8_t *)0x400;
	const struct mp_fp *fp = 0;
	uint64_t ebda, basemem;

	/* Hide the constant address from GCC's bounds checking. */
	asm("" : "+r"(bda));
	ebda = (uint64_t)*(const uint16_t *)(bda + 0x0e) << 4;
	basemem = (uint64_t)*(const uint16_t *)(bda + 0x13) << 10;

	if (ebda)
		fp = scan(ebda, 1024);
	if (!fp && basemem >= 1024)
		fp = scan(basemem - 1024, 1024);
	if (!fp)
		fp = scan(0xf0000, 0x10000);
	return fp;
}

void mptable_scan(void)
{
	const struct mp_fp *fp = find_fp();
	const struct mp_config *c;
	const uint8_t *e, *end;
	uint8_t isa_bus = 0xff;
	int irq0_ioapic = -1, ioapic_id = -1;

	if (!fp || !fp->config)
		return;
	c = (const void *)(uint64_t)fp->config;
	if (memcmp(c->sig, "PCMP", 4) || checksum8(c, c->length))
		return;
	mp.found = true;
	mp.source = "mptable";
	/* Two passes: IO interrupt entries refer to buses listed anywhere. */
	for (int pass = 0; pass < 2; pass++) {
		e = (const uint8_t *)(c + 1);
		end = (const uint8_t *)c + c->length;
		while (e < end) {
			switch (e[0]) {
			case 0:		/* processor */
				if (pass == 0 && (e[3] & 1) &&
				    mp.ncpus < MAX_CPUS)
					mp.apic_ids[mp.ncpus++] = e[1];
				e += 20;
				continue;
			case 1:		/* bus */
				if (pass == 0 && !memcmp(e + 2, "ISA", 3))
					isa_bus = e[1];
				break;
			case 2:		/* IOAPIC */
				if (pass == 1 && (e[3] & 1) &&
				    (ioapic_id < 0 || e[1] == irq0_ioapic)) {
					ioapic_id = e[1];
					memcpy(&mp.ioapic_addr, e + 4, 4);
				}
				break;
			case 3:		/* IO interrupt: INT, ISA IRQ 0 */
				if (pass == 0 && e[1] == 0 && e[4] == isa_bus &&
				    e[5] == 0) {
					mp.irq0_pin = e[7];
					irq0_ioapic = e[6] == 0xff ? -1 : e[6];
				}
				break;
			}
			e += 8;
		}
	}
}
