/* Puts bios.S into guest RAM with the vectors pointing at it. */
#include "arch/x86/bios.h"

#include <asm/bootparam.h>
#include <errno.h>
#include <string.h>

#include "arch/x86/layout.h"
#include "lib/util.h"

extern const uint8_t x86_bios_start[], x86_bios_end[], x86_bios_int15[];
extern const uint8_t x86_bios_e820_count[], x86_bios_e820_table[];

#define IVT_VECTORS 256
#define BDA_EBDA_SEG 0x0e	/* offsets in the BIOS data area */
#define BDA_BASE_MEM_KB 0x13

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = v;
	p[1] = v >> 8;
}

int x86_bios_setup(struct vm *vm, const struct boot_e820_entry *map,
		   unsigned nr)
{
	size_t bios_size = x86_bios_end - x86_bios_start;
	uint8_t *bios = guest_ram_ptr(&vm->ram, X86_BIOS_ADDR, bios_size);
	uint8_t *ivt = guest_ram_ptr(&vm->ram, X86_IVT_ADDR, IVT_VECTORS * 4);
	uint8_t *bda = guest_ram_ptr(&vm->ram, X86_BDA_ADDR, 0x100);
	uint32_t count = nr;
	unsigned i;

	if (!bios || !ivt || !bda || nr > BIOS_E820_MAX_ENTRIES)
		return -EINVAL;
	memcpy(bios, x86_bios_start, bios_size);
	memcpy(bios + (x86_bios_e820_count - x86_bios_start), &count,
	       sizeof(count));
	memcpy(bios + (x86_bios_e820_table - x86_bios_start), map,
	       nr * sizeof(*map));
	for (i = 0; i < IVT_VECTORS; i++) {
		uint16_t off = i == 0x15 ? x86_bios_int15 - x86_bios_start : 0;

		put16(ivt + i * 4, off);
		put16(ivt + i * 4 + 2, X86_BIOS_SEG);
	}
	put16(bda + BDA_EBDA_SEG, X86_EBDA_SEG);
	put16(bda + BDA_BASE_MEM_KB, X86_EBDA_ADDR / 1024);
	return 0;
}
