/* The x86 guest-physical memory map: where RAM goes, and the e820 map that
 * describes it to the guest. */
#include <errno.h>
#include <string.h>

#include "arch/x86/e820.h"
#include "arch/x86/layout.h"
#include "core/arch.h"
#include "lib/log.h"
#include "lib/util.h"

int arch_ram_layout(uint64_t ram_size, uint64_t align,
		    struct ram_range *ranges)
{
	if (!ram_size || !IS_ALIGNED(ram_size, align) ||
	    !IS_ALIGNED(X86_MMIO_HOLE_START, align))
		return -EINVAL;
	ranges[0].gpa = 0;
	ranges[0].size = MIN(ram_size, X86_MMIO_HOLE_START);
	if (ram_size <= X86_MMIO_HOLE_START)
		return 1;
	ranges[1].gpa = X86_4G;
	ranges[1].size = ram_size - X86_MMIO_HOLE_START;
	return 2;
}

int arch_hotplug_base(const struct guest_ram *ram, uint64_t size,
		      uint64_t *gpa)
{
	uint64_t end = X86_4G;
	struct ram_range r;
	unsigned i;

	for (i = 0; guest_ram_range(ram, i, &r); i++)
		end = MAX(end, r.gpa + r.size);
	*gpa = ALIGN_UP(end, X86_HOTPLUG_ALIGN);
	if (size > X86_HOTPLUG_LIMIT || *gpa > X86_HOTPLUG_LIMIT - size) {
		pr_err("--mem-hotplug: %llu MiB above %llu MiB of RAM ends "
		       "beyond the %llu GiB of guest-physical space x86 "
		       "guests are sure to address",
		       (unsigned long long)(size >> 20),
		       (unsigned long long)(ram->total >> 20),
		       X86_HOTPLUG_LIMIT >> 30);
		return -ERANGE;
	}
	return 0;
}

static int e820_add(struct boot_e820_entry *map, unsigned max, unsigned *nr,
		    uint64_t start, uint64_t end, uint32_t type)
{
	if (*nr >= max)
		return -ENOSPC;
	map[*nr] = (struct boot_e820_entry){
		.addr = start, .size = end - start, .type = type,
	};
	(*nr)++;
	return 0;
}

int x86_e820_build(const struct guest_ram *ram, struct boot_e820_entry *map,
		   unsigned max)
{
	struct ram_range r;
	unsigned i, nr = 0;
	int err = 0;

	for (i = 0; guest_ram_range(ram, i, &r) && !err; i++) {
		uint64_t start = r.gpa;
		uint64_t end = start + r.size;

		if (start == 0) {
			/* Conventional memory, EBDA, then the VGA/BIOS hole
			 * (not RAM for the guest even though our memslot
			 * covers it), as on a PC: the ACPI tables and the
			 * BIOS segment reserved. */
			err = e820_add(map, max, &nr, 0, X86_EBDA_ADDR,
				       E820_TYPE_RAM) ?:
			      e820_add(map, max, &nr, X86_EBDA_ADDR,
				       X86_LOW_HOLE_START, E820_TYPE_RESERVED) ?:
			      e820_add(map, max, &nr, X86_ACPI_ADDR,
				       X86_BIOS_END, E820_TYPE_RESERVED);
			start = X86_BIOS_END;
		}
		if (!err && end > start)
			err = e820_add(map, max, &nr, start, end,
				       E820_TYPE_RAM);
	}
	return err ? err : (int)nr;
}
