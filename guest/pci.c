/* PCI bus 0 (docs/test-guest.md): every slot and, on multifunction
 * devices, every function, through ECAM (ecam=ADDR, or on arm64 the
 * device tree's) or else the arch's port mechanism (x86's 0xcf8 /
 * 0xcfc). Memory BARs the firmware left unassigned are placed in a free
 * part of the arch's BAR window. */
#include "guest.h"
#include "io.h"
#include "lib.h"
#include "pci.h"

#define ECAM_BUS_SIZE		(1ULL << 20)
#define ECAM_WINDOW		(256ULL << 20)	/* buses the window may hold */

__attribute__((section(".noinit"))) struct pci_func pci_funcs[PCI_MAX_FUNCS];
unsigned pci_nfuncs;

static uint64_t ecam_addr(const struct pci_func *f, unsigned off)
{
	return params.ecam + ((uint64_t)f->dev << 15 | f->fn << 12 | off);
}

uint8_t pci_read8(const struct pci_func *f, unsigned off)
{
	if (params.ecam)
		return mmio_read8(ecam_addr(f, off));
	return pci_port_read8(f->dev, f->fn, off);
}

uint16_t pci_read16(const struct pci_func *f, unsigned off)
{
	if (params.ecam)
		return mmio_read16(ecam_addr(f, off));
	return pci_port_read16(f->dev, f->fn, off);
}

uint32_t pci_read32(const struct pci_func *f, unsigned off)
{
	if (params.ecam)
		return mmio_read32(ecam_addr(f, off));
	return pci_port_read32(f->dev, f->fn, off);
}

void pci_write16(const struct pci_func *f, unsigned off, uint16_t v)
{
	if (params.ecam)
		mmio_write16(ecam_addr(f, off), v);
	else
		pci_port_write16(f->dev, f->fn, off, v);
}

void pci_write32(const struct pci_func *f, unsigned off, uint32_t v)
{
	if (params.ecam)
		mmio_write32(ecam_addr(f, off), v);
	else
		pci_port_write32(f->dev, f->fn, off, v);
}

void pci_scan(void)
{
	if (params.ecam)
		map_mmio(params.ecam, ECAM_BUS_SIZE);
	pci_nfuncs = 0;
	for (unsigned dev = 0; dev < 32; dev++) {
		unsigned nfn = 1;

		for (unsigned fn = 0; fn < nfn; fn++) {
			struct pci_func f = { .dev = dev, .fn = fn };

			f.vendor = pci_read16(&f, PCI_VENDOR_ID);
			if (f.vendor == 0xffff)
				continue;
			if (fn == 0 && pci_read8(&f, PCI_HEADER_TYPE) & 0x80)
				nfn = 8;
			f.device = pci_read16(&f, PCI_DEVICE_ID);
			f.class = pci_read32(&f, PCI_CLASS_REV) >> 8;
			print("tg: pci bdf=00:%02x.%x id=%04x:%04x "
			      "class=0x%06x\n", dev, fn, f.vendor, f.device,
			      f.class);
			pci_funcs[pci_nfuncs++] = f;
		}
	}
}

/* Offset of the next capability with this id after the one at after
 * (0: from the start of the list), 0 if none. Bounded, so a looping list
 * ends. */
unsigned pci_find_cap(const struct pci_func *f, unsigned after, uint8_t id)
{
	unsigned p;

	if (!(pci_read16(f, PCI_STATUS) & PCI_STATUS_CAPS))
		return 0;
	p = pci_read8(f, after ? after + 1 : PCI_CAP_PTR);
	for (int n = 0; n < 48 && p >= 0x40; n++) {
		p &= 0xfc;
		if (pci_read8(f, p) == id)
			return p;
		p = pci_read8(f, p + 1);
	}
	return 0;
}

static unsigned bar_count(const struct pci_func *f)
{
	switch (pci_read8(f, PCI_HEADER_TYPE) & 0x7f) {
	case 0: return 6;
	case 1: return 2;	/* PCI-to-PCI bridge */
	default: return 0;
	}
}

/* Size of a memory BAR (0 if unimplemented), with decoding off while
 * the all-ones probe is in it. */
static uint64_t bar_size(const struct pci_func *f, unsigned off, bool is64)
{
	uint16_t cmd = pci_read16(f, PCI_COMMAND);
	uint32_t lo = pci_read32(f, off), hi = 0, mlo, mhi = ~0u;
	uint64_t mask;

	pci_write16(f, PCI_COMMAND, cmd & ~(PCI_CMD_MEM | PCI_CMD_IO));
	pci_write32(f, off, ~0u);
	mlo = pci_read32(f, off);
	pci_write32(f, off, lo);
	if (is64) {
		hi = pci_read32(f, off + 4);
		pci_write32(f, off + 4, ~0u);
		mhi = pci_read32(f, off + 4);
		pci_write32(f, off + 4, hi);
	}
	pci_write16(f, PCI_COMMAND, cmd);
	mask = (uint64_t)mhi << 32 | (mlo & ~0xfu);
	return (mlo & ~0xfu) ? -mask : 0;
}

/* Memory BAR n: address (0 if not a memory BAR), 64-bit or not. */
static uint64_t bar_addr(const struct pci_func *f, unsigned n, bool *is64)
{
	unsigned off = PCI_BAR0 + 4 * n;
	uint32_t lo = pci_read32(f, off);

	*is64 = (lo & 7) == 4;
	if (lo & 1 || (*is64 && n == 5))
		return 0;
	return (lo & ~0xfull) |
	       (*is64 ? (uint64_t)pci_read32(f, off + 4) << 32 : 0);
}

/* End of the first thing in use that [a, a + size) overlaps: an e820
 * range, the ECAM window or another memory BAR on bus 0; 0 if free. */
static uint64_t busy_end(uint64_t a, uint64_t size)
{
	for (unsigned i = 0; i < boot.nmem; i++) {
		const struct mem_range *e = &boot.mem[i];

		if (a < e->addr + e->size && a + size > e->addr)
			return e->addr + e->size;
	}
	if (params.ecam && a < params.ecam + ECAM_WINDOW &&
	    a + size > params.ecam)
		return params.ecam + ECAM_WINDOW;
	for (unsigned i = 0; i < pci_nfuncs; i++) {
		const struct pci_func *f = &pci_funcs[i];

		for (unsigned n = 0; n < bar_count(f); n++) {
			bool is64;
			uint64_t b = bar_addr(f, n, &is64), s;

			if (b && (s = bar_size(f, PCI_BAR0 + 4 * n, is64)) &&
			    a < b + s && a + size > b)
				return b + s;
			n += is64;
		}
	}
	return 0;
}

static uint64_t place_bar(uint64_t size)
{
	uint64_t a = PCI_BAR_WINDOW_START, end;

	while ((a = ALIGN_UP(a, size)) + size <= PCI_BAR_WINDOW_END) {
		end = busy_end(a, size);
		if (!end)
			return a;
		a = end;
	}
	return 0;
}

/* Address of memory BAR n, mapped uncached, with memory decoding and bus
 * mastering on and INTx off (drivers here use MSI-X). A BAR left at 0 is
 * placed first. 0 if it is not a usable memory BAR. */
uint64_t pci_bar(const struct pci_func *f, unsigned n, uint64_t *size)
{
	unsigned off = PCI_BAR0 + 4 * n;
	bool is64;
	uint64_t a, s;

	if (n >= bar_count(f) || (pci_read32(f, off) & 1))
		return 0;
	a = bar_addr(f, n, &is64);
	if (is64 && n == 5)
		return 0;
	s = bar_size(f, off, is64);
	if (!s)
		return 0;
	if (!a) {
		a = place_bar(s);
		if (!a)
			return 0;
		pci_write32(f, off, (uint32_t)a | (pci_read32(f, off) & 0xf));
		if (is64)
			pci_write32(f, off + 4, a >> 32);
	}
	map_mmio(a, s);
	pci_write16(f, PCI_COMMAND, pci_read16(f, PCI_COMMAND) | PCI_CMD_MEM |
		    PCI_CMD_MASTER | PCI_CMD_INTX_OFF);
	*size = s;
	return a;
}
