/* The machine as the device tree describes it: RAM, the command line
 * and initrd, the console, CPUs and PSCI, the GIC, the timers, the
 * virtio-mmio devices, the PCI host bridge and thpvm's exit register.
 * Runs before there is a console, so what is wrong is noted here and
 * printed by dt_report() once there is one; a node that is wrong is left
 * out, the rest still read. */
#include "fdt.h"
#include "guest.h"
#include "lib.h"
#include "pci.h"

#define MAX_PROBLEMS	8
#define MPIDR_AFF_MASK	0xff00ffffffULL
#define PCI_SPACE_MEM32	2
#define SPI_MAX		988	/* INTIDs 32-1019 */

__attribute__((section(".noinit"))) struct boot_info boot;
struct platform plat;

static struct {
	const char *node, *why;
} problems[MAX_PROBLEMS];
static unsigned nproblems;

/* Notes what is wrong with a node; false, for the caller to return. */
static bool problem(int node, const char *why)
{
	if (nproblems < MAX_PROBLEMS) {
		problems[nproblems].node = node >= 0 ? fdt_name(node) : "";
		problems[nproblems].why = why;
	}
	nproblems++;
	return false;
}

/* The cell counts a node gives its children's reg: 1 or 2 address
 * cells, 0 to 2 size cells (the specification's defaults 2 and 1). */
static bool child_cells(int node, unsigned *ac, unsigned *sc)
{
	uint32_t a = 2, s = 1;

	if (fdt_prop(node, "#address-cells", &(uint32_t){ 0 }) &&
	    !fdt_prop_u32(node, "#address-cells", &a))
		return problem(node, "bad-address-cells");
	if (fdt_prop(node, "#size-cells", &(uint32_t){ 0 }) &&
	    !fdt_prop_u32(node, "#size-cells", &s))
		return problem(node, "bad-size-cells");
	if (a < 1 || a > 2 || s > 2)
		return problem(node, "unsupported-cells");
	*ac = a;
	*sc = s;
	return true;
}

/* Entry i of a node's reg, in its parent's cells; the range must not
 * wrap. */
static bool reg(int node, unsigned ac, unsigned sc, unsigned i,
		uint64_t *addr, uint64_t *size)
{
	uint32_t len, n = ac + sc;
	const void *p = fdt_prop(node, "reg", &len);

	if (!p || len % (4 * n) || (i + 1) * n * 4 > len)
		return problem(node, "bad-reg");
	*addr = fdt_cells(p, i * n, ac);
	*size = sc ? fdt_cells(p, i * n + ac, sc) : 0;
	if (*addr + *size < *addr)
		return problem(node, "reg-wraps");
	return true;
}

/* A 32- or 64-bit number property. */
static bool number(int node, const char *name, uint64_t *v)
{
	uint32_t len;
	const void *p = fdt_prop(node, name, &len);

	if (!p || (len != 4 && len != 8))
		return false;
	*v = fdt_cells(p, 0, len / 4);
	return true;
}

/* Interrupt specifier i of a node (the GIC's three cells: type, number,
 * flags) as an INTID: type 0 an SPI, 1 a PPI. */
static bool interrupt(int node, unsigned i, unsigned *intid)
{
	uint32_t len, type, n;
	const void *p = fdt_prop(node, "interrupts", &len);

	if (!p || len % 12 || (i + 1) * 12 > len)
		return problem(node, "bad-interrupts");
	type = fdt_cell(p, 3 * i);
	n = fdt_cell(p, 3 * i + 1);
	if (type == 0 && n < SPI_MAX)
		*intid = 32 + n;
	else if (type == 1 && n < 16)
		*intid = 16 + n;
	else
		return problem(node, "bad-interrupt-number");
	return true;
}

static void memory_node(int node, unsigned ac, unsigned sc)
{
	uint32_t len;
	unsigned n;

	if (!fdt_prop(node, "reg", &len) || !len || len % (4 * (ac + sc))) {
		problem(node, "bad-reg");
		return;
	}
	n = len / (4 * (ac + sc));
	for (unsigned i = 0; i < n; i++) {
		struct mem_range m = { .type = MEM_RAM };

		if (!reg(node, ac, sc, i, &m.addr, &m.size))
			return;
		if (!m.size)
			continue;
		if ((m.addr | m.size) & 0xfff) {
			problem(node, "not-page-aligned");
			continue;
		}
		if (boot.nmem == MEM_MAX) {
			problem(node, "too-many-ranges");
			return;
		}
		boot.mem[boot.nmem++] = m;
	}
}

/* Sorted by address, for the memory check and the workloads. */
static void sort_memory(void)
{
	for (unsigned i = 1; i < boot.nmem; i++)
		for (unsigned j = i; j && boot.mem[j].addr < boot.mem[j - 1].addr;
		     j--) {
			struct mem_range t = boot.mem[j];

			boot.mem[j] = boot.mem[j - 1];
			boot.mem[j - 1] = t;
		}
}

static void chosen(void)
{
	int node = fdt_path("/chosen");
	const char *args = fdt_prop_str(node, "bootargs");
	uint64_t start, end;
	size_t n = 0;

	while (args && n < CMDLINE_MAX - 1 && args[n])
		n++;
	memcpy(boot.cmdline, args, n);
	boot.cmdline[n] = 0;
	boot.initrd_addr = boot.initrd_size = 0;
	if (!number(node, "linux,initrd-start", &start) ||
	    !number(node, "linux,initrd-end", &end))
		return;
	if (end < start)
		problem(node, "initrd-end-before-start");
	else if (end > start) {
		boot.initrd_addr = start;
		boot.initrd_size = end - start;
	}
}

/* The node stdout-path names (an alias or a path, options after ':'),
 * and its parent's cells. */
static int stdout_node(unsigned *ac, unsigned *sc)
{
	const char *path = fdt_prop_str(fdt_path("/chosen"), "stdout-path");
	char buf[128];
	size_t n = 0, slash = 0;
	int parent;

	if (!path)
		return -1;
	while (path[n] && path[n] != ':' && n < sizeof(buf) - 1) {
		buf[n] = path[n];
		n++;
	}
	buf[n] = 0;
	if (buf[0] != '/') {
		path = fdt_prop_str(fdt_path("/aliases"), buf);
		for (n = 0; path && path[n] && n < sizeof(buf) - 1; n++)
			buf[n] = path[n];
		buf[n] = 0;
		if (buf[0] != '/')
			return -1;
	}
	for (size_t i = 0; i < n; i++)
		if (buf[i] == '/')
			slash = i;
	buf[slash] = 0;
	parent = slash ? fdt_path(buf) : fdt_root();
	buf[slash] = '/';
	if (parent < 0 || !child_cells(parent, ac, sc))
		return -1;
	return fdt_path(buf);
}

static void console(void)
{
	unsigned ac, sc;
	int node = stdout_node(&ac, &sc);
	uint64_t size;
	uint32_t shift = 0, width = 1;

	if (node < 0 || !reg(node, ac, sc, 0, &plat.uart, &size))
		return;
	if (fdt_prop_has(node, "compatible", "arm,pl011")) {
		plat.uart_kind = UART_PL011;
		return;
	}
	if (!fdt_prop_has(node, "compatible", "ns16550a") &&
	    !fdt_prop_has(node, "compatible", "ns16550") &&
	    !fdt_prop_has(node, "compatible", "ns8250"))
		return;
	if (fdt_prop(node, "reg-shift", &(uint32_t){ 0 }) &&
	    (!fdt_prop_u32(node, "reg-shift", &shift) || shift > 2))
		return;
	if (fdt_prop(node, "reg-io-width", &(uint32_t){ 0 }) &&
	    (!fdt_prop_u32(node, "reg-io-width", &width) ||
	     (width != 1 && width != 4)))
		return;
	plat.uart_kind = UART_8250;
	plat.uart_shift = shift;
	plat.uart_width = width;
}

static void cpus(void)
{
	int node = fdt_path("/cpus"), c = -1;
	uint32_t ac = 0;

	if (node < 0) {
		problem(node, "no-cpus");
		return;
	}
	if (!fdt_prop_u32(node, "#address-cells", &ac) || ac < 1 || ac > 2) {
		problem(node, "bad-address-cells");
		return;
	}
	while ((c = fdt_child(node, c)) >= 0) {
		const char *type = fdt_prop_str(c, "device_type");
		uint64_t mpidr, size;

		if (!type || strlen(type) != 3 || memcmp(type, "cpu", 3))
			continue;
		if (!reg(c, ac, 0, 0, &mpidr, &size))
			continue;
		if (mpidr & ~MPIDR_AFF_MASK) {
			problem(c, "bad-mpidr");
			continue;
		}
		if (plat.ncpus == MAX_CPUS) {
			problem(c, "too-many-cpus");
			return;
		}
		plat.mpidr[plat.ncpus++] = mpidr;
	}
}

static void psci(int node)
{
	const char *method = fdt_prop_str(node, "method");

	if (!fdt_prop_has(node, "compatible", "arm,psci-0.2") &&
	    !fdt_prop_has(node, "compatible", "arm,psci-1.0"))
		return;
	if (method && !memcmp(method, "hvc", 4))
		plat.psci = true;
	else if (method && !memcmp(method, "smc", 4))
		plat.psci = plat.psci_smc = true;
	else
		problem(node, "bad-psci-method");
}

/* The GICv3's ITS, a child of it in its own cells. */
static void its(int gic)
{
	unsigned ac, sc;
	uint64_t size;
	int c = -1;

	while ((c = fdt_child(gic, c)) >= 0)
		if (fdt_prop_has(c, "compatible", "arm,gic-v3-its") &&
		    child_cells(gic, &ac, &sc) &&
		    reg(c, ac, sc, 0, &plat.its, &size))
			return;
}

static void gic(int node, unsigned ac, unsigned sc)
{
	unsigned version = 0;
	uint64_t size;

	if (fdt_prop_has(node, "compatible", "arm,gic-v3"))
		version = 3;
	else if (fdt_prop_has(node, "compatible", "arm,cortex-a15-gic") ||
		 fdt_prop_has(node, "compatible", "arm,gic-400"))
		version = 2;
	if (!version || plat.gic_version)
		return;
	if (!reg(node, ac, sc, 0, &plat.gicd, &size))
		return;
	if (version == 3 &&
	    !reg(node, ac, sc, 1, &plat.gicr, &plat.gicr_size))
		return;
	if (version == 2 && !reg(node, ac, sc, 1, &plat.gicc, &size))
		return;
	if (version == 3)
		its(node);
	plat.gic_version = version;
}

/* Interrupts in the binding's order: secure and non-secure physical,
 * virtual, hypervisor; each a PPI. */
static void timer(int node)
{
	unsigned p, v;

	if (!fdt_prop_has(node, "compatible", "arm,armv8-timer"))
		return;
	if (!interrupt(node, 1, &p) || !interrupt(node, 2, &v))
		return;
	if (p >= 32 || v >= 32) {
		problem(node, "timer-not-ppi");
		return;
	}
	plat.ptimer_intid = p;
	plat.vtimer_intid = v;
}

static void virtio_mmio(int node, unsigned ac, unsigned sc)
{
	struct mmio_param *m = &params.mmio[params.nmmio];
	unsigned intid;

	if (!fdt_prop_has(node, "compatible", "virtio,mmio"))
		return;
	if (params.nmmio == MMIO_MAX_DEVS) {
		problem(node, "too-many-virtio-mmio");
		return;
	}
	if (!reg(node, ac, sc, 0, &m->base, &m->size) ||
	    !interrupt(node, 0, &intid))
		return;
	if (intid < 32) {
		problem(node, "interrupt-not-spi");
		return;
	}
	m->gsi = intid - 32;
	params.nmmio++;
}

/* A child of the root by its phandle, or -1 (interrupt parents are
 * root children in the trees this guest meets). */
static int root_child_by_phandle(uint32_t phandle)
{
	int c = -1;
	uint32_t v;

	while ((c = fdt_child(fdt_root(), c)) >= 0)
		if (fdt_prop_u32(c, "phandle", &v) && v == phandle)
			return c;
	return -1;
}

/* interrupt-map: each entry is the child's address (3 cells, the
 * device in phys.hi) and pin, the parent's phandle, address and
 * interrupt; entries onto a GIC SPI are kept, with interrupt-map-mask
 * (all ones where absent) to match functions against them. */
static void pci_interrupt_map(int node)
{
	const uint32_t *map, *mask;
	uint32_t len, mlen, i = 0, pac, pic, type, spi;
	struct pci_imap *e;
	int parent;

	map = fdt_prop(node, "interrupt-map", &len);
	mask = fdt_prop(node, "interrupt-map-mask", &mlen);
	plat.pci_imap_mask_hi = mask && mlen == 16 ? fdt_cell(mask, 0) : ~0u;
	plat.pci_imap_mask_pin = mask && mlen == 16 ? fdt_cell(mask, 3) : ~0u;
	while (map && i + 5 <= len / 4) {
		parent = root_child_by_phandle(fdt_cell(map, i + 4));
		if (parent < 0 ||
		    !fdt_prop_u32(parent, "#interrupt-cells", &pic) ||
		    pic != 3) {
			problem(node, "interrupt-map-parent");
			return;
		}
		if (!fdt_prop_u32(parent, "#address-cells", &pac))
			pac = 0;
		if (pac > 3 || i + 5 + pac + pic > len / 4) {
			problem(node, "bad-interrupt-map");
			return;
		}
		type = fdt_cell(map, i + 5 + pac);
		spi = fdt_cell(map, i + 6 + pac);
		if (type == 0 /* SPI */ && spi < SPI_MAX &&
		    plat.pci_imap_n < PCI_IMAP_MAX) {
			e = &plat.pci_imap[plat.pci_imap_n++];
			e->hi = fdt_cell(map, i) & plat.pci_imap_mask_hi;
			e->pin = fdt_cell(map, i + 3) & plat.pci_imap_mask_pin;
			e->spi = spi;
		}
		i += 5 + pac + pic;
	}
}

bool pci_intx_line(const struct pci_func *f, unsigned *spi)
{
	uint32_t hi = ((uint32_t)f->dev << 11 | (uint32_t)f->fn << 8) &
		      plat.pci_imap_mask_hi;
	uint32_t pin = 1 & plat.pci_imap_mask_pin;	/* INTA */

	for (unsigned i = 0; i < plat.pci_imap_n; i++) {
		if (plat.pci_imap[i].hi == hi && plat.pci_imap[i].pin == pin) {
			*spi = plat.pci_imap[i].spi;
			return true;
		}
	}
	return false;
}

/* ECAM for bus 0 and the window BARs go in: a 32-bit memory range of
 * ranges, at the same address on both sides. */
static void pcie(int node, unsigned ac, unsigned sc)
{
	const uint32_t *r, *bus, *map;
	uint32_t len, blen, mlen;
	uint64_t size;

	if (!fdt_prop_has(node, "compatible", "pci-host-ecam-generic"))
		return;
	bus = fdt_prop(node, "bus-range", &blen);
	if (bus && (blen != 8 || fdt_cell(bus, 0) != 0)) {
		problem(node, "bus-range-not-from-0");
		return;
	}
	/* MSIs: <rid-base its msi-base length>, for all of bus 0. */
	map = fdt_prop(node, "msi-map", &mlen);
	if (map && (mlen != 16 || fdt_cell(map, 0) ||
		    fdt_cell(map, 3) < 0x100)) {
		problem(node, "unsupported-msi-map");
	} else if (map) {
		plat.pci_msi = true;
		plat.pci_msi_base = fdt_cell(map, 2);
	}
	pci_interrupt_map(node);
	r = fdt_prop(node, "ranges", &len);
	if (!r || len % (4 * (3 + ac + 2))) {
		problem(node, "bad-ranges");
		return;
	}
	if (!reg(node, ac, sc, 0, &params.ecam, &size))
		return;
	if (size < 1 << 20) {
		params.ecam = 0;
		problem(node, "ecam-too-small");
		return;
	}
	for (uint32_t i = 0; i < len / 4; i += 3 + ac + 2) {
		uint64_t child = fdt_cells(r, i + 1, 2);
		uint64_t parent = fdt_cells(r, i + 3, ac);
		uint64_t n = fdt_cells(r, i + 3 + ac, 2);

		if ((fdt_cell(r, i) >> 24 & 3) != PCI_SPACE_MEM32 ||
		    child != parent || parent + n < parent ||
		    parent + n > 1ULL << 32)
			continue;
		plat.pci_mem = parent;
		plat.pci_mem_end = parent + n;
	}
}

static void exit_dev(int node, unsigned ac, unsigned sc)
{
	uint64_t size;

	if (fdt_prop_has(node, "compatible", "thpvm,exit"))
		reg(node, ac, sc, 0, &plat.exit_dev, &size);
}

/* Each child of the root by what it is. */
static void root_children(unsigned ac, unsigned sc)
{
	int c = -1;

	while ((c = fdt_child(fdt_root(), c)) >= 0) {
		const char *type = fdt_prop_str(c, "device_type");

		if (type && strlen(type) == 6 && !memcmp(type, "memory", 6))
			memory_node(c, ac, sc);
		psci(c);
		gic(c, ac, sc);
		timer(c);
		virtio_mmio(c, ac, sc);
		pcie(c, ac, sc);
		exit_dev(c, ac, sc);
	}
}

bool dt_parse(uint64_t dtb)
{
	unsigned ac, sc;

	boot.nmem = 0;
	boot.cmdline[0] = 0;
	if (!fdt_open(dtb) || fdt_root() < 0)
		return false;
	console();
	chosen();
	if (child_cells(fdt_root(), &ac, &sc))
		root_children(ac, sc);
	sort_memory();
	cpus();
	return plat.uart_kind != UART_NONE;
}

/* What was wrong, one line each (counted as failures). */
void dt_report(void)
{
	for (unsigned i = 0; i < nproblems && i < MAX_PROBLEMS; i++)
		report(false, "dt", "node=%s reason=%s", problems[i].node,
		       problems[i].why);
	if (nproblems > MAX_PROBLEMS)
		report(false, "dt", "more=%u", nproblems - MAX_PROBLEMS);
	if (fdt_error.what)
		report(false, "dt", "offset=0x%x reason=%s", fdt_error.offset,
		       fdt_error.what);
	if (!plat.gic_version)
		report(false, "dt", "reason=no-gic");
	if (!plat.psci)
		report(false, "dt", "reason=no-psci");
	if (!plat.vtimer_intid)
		report(false, "dt", "reason=no-timer");
}
