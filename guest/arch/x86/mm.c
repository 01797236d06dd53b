/* The heap (heap.c, included) and the final page tables: 2 MiB identity
 * pages, U/S at every level so ring 3 can run the workloads, for the
 * first GiB, every GiB with usable RAM, and 3-4 GiB for the LAPIC/IOAPIC;
 * device windows elsewhere (ECAM, 64-bit BARs) are added on demand. */
#include "guest.h"
#include "io.h"
#include "lib.h"

#define PAGE 4096ULL
#define PTE_P 0x1ULL
#define PTE_W 0x2ULL
#define PTE_U 0x4ULL
#define PTE_PWT 0x8ULL
#define PTE_PCD 0x10ULL
#define PTE_PS 0x80ULL
#define GIB (1ULL << 30)
#define BIG_PAGE (2ULL << 20)
#define PTE_ADDR 0x000ffffffffff000ULL

uint64_t page_table_root;

#include "heap.c"

static bool gib_has_ram(uint64_t gib)
{
	for (unsigned i = 0; i < boot.nmem; i++) {
		const struct mem_range *e = &boot.mem[i];

		if (e->type == MEM_RAM && e->addr < (gib + 1) * GIB &&
		    e->addr + e->size > gib * GIB)
			return true;
	}
	return false;
}

void mm_init(void)
{
	uint64_t top = 4 * GIB, low_ram_end = 0;
	uint64_t *pml4, *pdpt;
	unsigned ngib, npdpt;

	for (unsigned i = 0; i < boot.nmem; i++) {
		const struct mem_range *e = &boot.mem[i];
		uint64_t end = e->addr + e->size;

		if (e->type != MEM_RAM)
			continue;
		top = MAX(top, end);
		if (end <= 4 * GIB)
			low_ram_end = MAX(low_ram_end, end);
	}
	ngib = ALIGN_UP(top, GIB) / GIB;
	npdpt = (ngib + 511) / 512;
	pml4 = alloc_pages(1);
	pdpt = alloc_pages(npdpt);
	memset(pml4, 0, PAGE);
	memset(pdpt, 0, npdpt * PAGE);
	for (unsigned i = 0; i < npdpt; i++)
		pml4[i] = (uint64_t)&pdpt[i * 512] | PTE_P | PTE_W | PTE_U;
	for (uint64_t g = 0; g < ngib; g++) {
		uint64_t *pd;

		if (g != 0 && g != 3 && !gib_has_ram(g))
			continue;
		pd = alloc_pages(1);
		for (uint64_t j = 0; j < 512; j++) {
			uint64_t a = g * GIB + (j << 21);
			uint64_t f = PTE_P | PTE_W | PTE_U | PTE_PS;

			/* The 32-bit MMIO hole is uncached. */
			if (a >= 3 * GIB && a < 4 * GIB && a >= low_ram_end)
				f |= PTE_PCD | PTE_PWT;
			pd[j] = a | f;
		}
		pdpt[g] = (uint64_t)pd | PTE_P | PTE_W | PTE_U;
	}
	page_table_root = (uint64_t)pml4;
	write_cr3(page_table_root);
}

static uint64_t *next_table(uint64_t *entry)
{
	if (!(*entry & PTE_P)) {
		uint64_t *t = alloc_pages(1);

		memset(t, 0, PAGE);
		*entry = (uint64_t)t | PTE_P | PTE_W | PTE_U;
	}
	return (uint64_t *)(*entry & PTE_ADDR);
}

static void map_identity(uint64_t addr, uint64_t size, uint64_t flags)
{
	uint64_t *pml4 = (uint64_t *)page_table_root;

	for (uint64_t a = ALIGN_DOWN(addr, BIG_PAGE); a < addr + size;
	     a += BIG_PAGE) {
		uint64_t *pdpt = next_table(&pml4[a >> 39 & 511]);
		uint64_t *pd = next_table(&pdpt[a >> 30 & 511]);

		pd[a >> 21 & 511] = a | PTE_P | PTE_W | PTE_U | PTE_PS | flags;
	}
	write_cr3(page_table_root);
}

/* Identity-maps [addr, addr + size) uncached; U/S too, as ring 3 writes
 * virtio notify registers. */
void map_mmio(uint64_t addr, uint64_t size)
{
	map_identity(addr, size, PTE_PCD | PTE_PWT);
}

/* Hotplugged RAM: cached, and U/S as ring 3's workloads use it. */
void map_ram(uint64_t addr, uint64_t size)
{
	map_identity(addr, size, 0);
}

#include "free_ram.c"
