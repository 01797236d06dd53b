/* Translation: an identity map with 4 KiB granules and 48-bit addresses.
 * RAM is normal write-back memory, device windows Device-nGnRE; both
 * readable and writable at EL0, which runs the workloads and writes
 * notify registers, and so never executable at EL1 (the architecture
 * makes EL0-writable memory privileged-execute-never anyway). The image's
 * code and read-only data are read-only at both levels and executable at
 * both, mapped in 4 KiB pages; everything else in 2 MiB blocks where it
 * can be. Device windows the drivers find later are added by map_mmio. */
#include "guest.h"
#include "io.h"
#include "lib.h"

#define PAGE		4096ULL
#define BLOCK		(2ULL << 20)
#define DESC_VALID	1ULL
#define DESC_BLOCK	1ULL		/* levels 1-2 */
#define DESC_TABLE	3ULL		/* levels 0-2; a page at level 3 */
#define DESC_TYPE	3ULL
#define ADDR_MASK	0x0000fffffffff000ULL
#define ATTR_NORMAL	(0ULL << 2)	/* MAIR index 0 */
#define ATTR_DEVICE	(1ULL << 2)	/* MAIR index 1 */
#define AP_EL0		(1ULL << 6)
#define AP_RO		(1ULL << 7)
#define SH_INNER	(3ULL << 8)
#define AF		(1ULL << 10)
#define PXN		(1ULL << 53)
#define UXN		(1ULL << 54)

#define RAM_ATTRS	(ATTR_NORMAL | SH_INNER | AF | AP_EL0 | PXN | UXN)
#define CODE_ATTRS	(ATTR_NORMAL | SH_INNER | AF | AP_EL0 | AP_RO)
#define DEV_ATTRS	(ATTR_DEVICE | AF | AP_EL0 | PXN | UXN)

/* Normal inner/outer write-back read/write-allocate; Device-nGnRE. */
#define MAIR		(0xffULL | 0x04ULL << 8)
/* 48-bit VA (T0SZ 16), walks write-back inner shareable, 4 KiB granule,
 * no TTBR1 walks; IPS from the CPU's physical address size. */
#define TCR		(16ULL | 1ULL << 8 | 1ULL << 10 | 3ULL << 12 | \
			 1ULL << 23)
#define TCR_IPS_SHIFT	32
#define PARANGE_48	5
/* M, C, SA, SA0, I; the rest are RES1 in Armv8.0 (SPAN among them: PAN
 * is not set on exceptions, so EL1 may touch EL0's memory). */
#define SCTLR		0x30d0181dULL

/* struct mmu_regs: what mmu_enable (head.S) and the secondary CPUs
 * (smp.c) load; the field order is theirs. */
struct mmu_regs mmu;

extern char __image_start[], __rw_start[], __heap_end[];
void mmu_enable(const struct mmu_regs *r);

static uint64_t *root;
static uint64_t pa_limit;

static uint64_t *next_table(uint64_t *entry)
{
	if (!(*entry & DESC_VALID)) {
		uint64_t *t = alloc_pages(1);

		memset(t, 0, PAGE);
		*entry = (uint64_t)t | DESC_TABLE;
	}
	return (uint64_t *)(*entry & ADDR_MASK);
}

/* Maps [start, end) (page aligned) one to one; what is mapped already
 * keeps its mapping. */
static void map(uint64_t start, uint64_t end, uint64_t attrs)
{
	for (uint64_t a = start; a < end;) {
		uint64_t *l1 = next_table(&root[a >> 39 & 511]);
		uint64_t *l2 = next_table(&l1[a >> 30 & 511]);
		uint64_t *e = &l2[a >> 21 & 511];

		if (!(a & (BLOCK - 1)) && end - a >= BLOCK &&
		    !(*e & DESC_VALID)) {
			*e = a | attrs | DESC_BLOCK;
			a += BLOCK;
			continue;
		}
		if ((*e & DESC_TYPE) == DESC_BLOCK) {
			a = ALIGN_DOWN(a, BLOCK) + BLOCK;
			continue;
		}
		e = &next_table(e)[a >> 12 & 511];
		if (!(*e & DESC_VALID))
			*e = a | attrs | DESC_TABLE;
		a += PAGE;
	}
}

/* Device registers at [addr, addr + size). Tables written after the
 * MMU is on are seen by the walker once the stores complete. */
void map_mmio(uint64_t addr, uint64_t size)
{
	if (addr + size > pa_limit || addr + size < addr) {
		report(false, "mm", "mmio=0x%lx size=0x%lx "
		       "reason=beyond-physical-address-size", addr, size);
		return;
	}
	map(ALIGN_DOWN(addr, PAGE), ALIGN_UP(addr + size, PAGE), DEV_ATTRS);
	asm volatile("dsb ishst; isb" : : : "memory");
}

/* The CPU's physical address size, capped at 48 bits (52-bit output
 * addresses need other descriptors); false if it has no 4 KiB granule. */
static bool address_size(unsigned *ips)
{
	static const unsigned bits[] = { 32, 36, 40, 42, 44, 48 };
	uint64_t mmfr0 = sysreg_read(id_aa64mmfr0_el1);

	if ((mmfr0 >> 28 & 0xf) == 0xf)
		return false;
	*ips = MIN(mmfr0 & 0xf, (uint64_t)PARANGE_48);
	pa_limit = 1ULL << bits[*ips];
	return true;
}

void mm_init(void)
{
	unsigned ips;

	if (!address_size(&ips)) {
		report(false, "mm", "reason=no-4k-granule");
		guest_exit(1);
	}
	root = alloc_pages(1);
	memset(root, 0, PAGE);
	map((uint64_t)__image_start, (uint64_t)__rw_start, CODE_ATTRS);
	map((uint64_t)__rw_start, ALIGN_UP((uint64_t)__heap_end, PAGE),
	    RAM_ATTRS);
	for (unsigned i = 0; i < boot.nmem; i++) {
		const struct mem_range *m = &boot.mem[i];

		if (m->addr + m->size > pa_limit) {
			report(false, "mm", "start=0x%lx end=0x%lx "
			       "reason=beyond-physical-address-size", m->addr,
			       m->addr + m->size);
			continue;
		}
		map(m->addr, m->addr + m->size, RAM_ATTRS);
	}
	map_mmio(plat.uart, PAGE);
	if (plat.exit_dev)
		map_mmio(plat.exit_dev, PAGE);
	mmu.mair = MAIR;
	mmu.tcr = TCR | (uint64_t)ips << TCR_IPS_SHIFT;
	mmu.ttbr0 = (uint64_t)root;
	mmu.sctlr = SCTLR;
	mmu.inval_start = (uint64_t)__image_start;
	mmu.inval_end = (uint64_t)__heap_end;
	mmu_enable(&mmu);
}
