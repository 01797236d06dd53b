/* Free RAM for device buffers, taken before touch= reuses it. x86's
 * mm.c includes this file rather than linking it (see heap.c). */
#include "guest.h"
#include "lib.h"

/* size bytes of usable RAM, 2 MiB aligned, above the guest's own area and
 * clear of the initrd: device buffers, before touch reuses the RAM.
 * 0 if there is no such run. */
uint64_t free_ram(uint64_t size)
{
	uint64_t ia = boot.initrd_addr, ie = ia + boot.initrd_size;

	for (unsigned i = 0; i < boot.nmem; i++) {
		const struct mem_range *e = &boot.mem[i];
		uint64_t s = MAX(e->addr, kernel_area_end());
		uint64_t end = e->addr + e->size;

		if (e->type != MEM_RAM)
			continue;
		s = ALIGN_UP(s, 2ULL << 20);
		if (s < ie && s + size > ia)
			s = ALIGN_UP(ie, 2ULL << 20);
		if (s + size <= end)
			return s;
	}
	return 0;
}
