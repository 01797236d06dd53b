/* The sPAPR device tree, in the shape Linux's pseries code reads: a
 * "chrp" root, cpus with the properties that pick its features, the
 * memory, /rtas with its tokens and the hypercalls offered, the vty
 * under /vdevice, the PCI host bridge with its functions, and /chosen. */
#include "arch/powerpc/fdt.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include "arch/powerpc/arch_vm.h"
#include "arch/powerpc/layout.h"
#include "arch/powerpc/rtas.h"
#include "arch/powerpc/xics.h"
#include "boot/fdt_writer.h"
#include "core/pci.h"
#include "core/vm.h"
#include "lib/log.h"
#include "lib/util.h"

#define PHANDLE_XICS	1
#define RNG_SEED_BYTES	64
/* Any non-zero processor frequency; Linux uses the timebase for time. */
#define CPU_CLOCK_HZ	1000000000u
#define CACHE_SIZE	(32 * 1024)	/* L1, each of i and d */
/* ISA 3.0's process identifier width. */
#define MMU_PID_BITS	20

/* ibm,pa-features (PAPR's processor attributes): the number of attribute
 * bytes, their type (0), then the bytes, most significant bit first.
 * What Linux reads of them: byte 0, MMU, FPU, SLB, run latch, DABR,
 * no-execute; byte 5, true little-endian; byte 22, transactional memory
 * (left clear: nested KVM HV does not offer it); byte 40, the radix
 * MMU. */
#define PA_BYTES	41
static const uint8_t pa_features[2 + PA_BYTES] = {
	PA_BYTES, 0,
	[2 + 0] = 0xf6, [2 + 5] = 0x80, [2 + 40] = 0x80,
};

/* The radix MMU's page sizes, each its AP field (bits 0-2) and shift:
 * 4 KiB, 64 KiB, 2 MiB, 1 GiB. Without them Linux has no huge pages. */
static const uint32_t radix_page_sizes[] = {
	0x0000000c, 0xa0000010, 0x20000015, 0x4000001e,
};

/* /chosen's ibm,architecture-vec-5: option vector 5 as a client
 * architecture negotiation would have left it (byte 0 its length):
 * byte 24, the MMU, 0x40 radix only; byte 26, 0x40, the guest may
 * invalidate translations itself (GTSE). */
#define OV5_BYTES	26
static const uint8_t arch_vec5[1 + OV5_BYTES] = {
	OV5_BYTES,
	[24] = 0x40, [26] = 0x40,
};

/* The hypercall sets Linux's pseries code looks for (its firmware
 * features): shared-processor LPAR calls (KVM serves them) and
 * H_SET_MODE. */
static const char *const hypertas[] = {
	"hcall-splpar", "hcall-set-mode", NULL,
};

static void root_props(struct fdt_writer *w)
{
	/* What Linux's pseries platform probes for. */
	fdtw_string(w, "device_type", "chrp");
	fdtw_string(w, "model", "thpvm");
	fdtw_string(w, "compatible", "thpvm,pseries");
	fdtw_u32(w, "#address-cells", 2);
	fdtw_u32(w, "#size-cells", 2);
	fdtw_u32(w, "interrupt-parent", PHANDLE_XICS);
}

static void chosen_node(struct fdt_writer *w,
			const struct ppc_boot_data *boot, const char *vty)
{
	uint32_t seed[RNG_SEED_BYTES / 4];

	fdtw_begin(w, "chosen");
	fdtw_string(w, "bootargs", boot->cmdline);
	fdtw_string(w, "linux,stdout-path", vty);
	fdtw_string(w, "stdout-path", vty);
	if (boot->initrd_end > boot->initrd_start) {
		fdtw_u64(w, "linux,initrd-start", boot->initrd_start);
		fdtw_u64(w, "linux,initrd-end", boot->initrd_end);
	}
	fdtw_bytes(w, "ibm,architecture-vec-5", arch_vec5, sizeof(arch_vec5));
	/* No IOMMU: devices reach guest RAM at its guest-physical address,
	 * so the host bridge has no DMA window and Linux no TCE tables. */
	fdtw_empty(w, "linux,iommu-off");
	if (getrandom(seed, sizeof(seed), GRND_NONBLOCK) == sizeof(seed))
		fdtw_cells(w, "rng-seed", seed, ARRAY_SIZE(seed));
	fdtw_end(w);
}

static void cpu_nodes(struct fdt_writer *w, const struct vm *vm)
{
	const struct arch_vm *a = vm->arch;
	unsigned i;

	fdtw_begin(w, "cpus");
	fdtw_u32(w, "#address-cells", 1);
	fdtw_u32(w, "#size-cells", 0);
	for (i = 0; i < vm->nr_vcpus; i++) {
		fdtw_begin_at(w, "PowerPC,POWER9", i);
		fdtw_string(w, "device_type", "cpu");
		fdtw_u32(w, "reg", i);
		fdtw_u32(w, "ibm,ppc-interrupt-server#s", i);
		fdtw_u32(w, "clock-frequency", CPU_CLOCK_HZ);
		fdtw_u32(w, "timebase-frequency", a->timebase_hz);
		fdtw_u32(w, "d-cache-block-size", a->dcache_block);
		fdtw_u32(w, "d-cache-line-size", a->dcache_block);
		fdtw_u32(w, "i-cache-block-size", a->icache_block);
		fdtw_u32(w, "i-cache-line-size", a->icache_block);
		fdtw_u32(w, "d-cache-size", CACHE_SIZE);
		fdtw_u32(w, "i-cache-size", CACHE_SIZE);
		/* Vector and VSX, decimal floating point. */
		fdtw_u32(w, "ibm,vmx", 2);
		fdtw_u32(w, "ibm,dfp", 1);
		fdtw_u32(w, "ibm,mmu-pid-bits", MMU_PID_BITS);
		fdtw_cells(w, "ibm,processor-radix-AP-encodings",
			   radix_page_sizes, ARRAY_SIZE(radix_page_sizes));
		fdtw_bytes(w, "ibm,pa-features", pa_features,
			   sizeof(pa_features));
		fdtw_string(w, "status", "okay");
		fdtw_end(w);
	}
	fdtw_end(w);
}

static void rtas_node(struct fdt_writer *w, const struct ppc_boot_data *boot)
{
	const struct rtas_token *t;

	fdtw_begin(w, "rtas");
	fdtw_u32(w, "linux,rtas-base", (uint32_t)boot->rtas_base);
	fdtw_u32(w, "linux,rtas-entry", (uint32_t)boot->rtas_base);
	fdtw_u32(w, "rtas-size", (uint32_t)boot->rtas_size);
	fdtw_strings(w, "ibm,hypertas-functions", hypertas);
	/* ibm,os-term returns, so Linux calls it on panic. */
	fdtw_empty(w, "ibm,extended-os-term");
	for (t = spapr_rtas_tokens; t->name; t++)
		fdtw_u32(w, t->name, t->token);
	for (t = xics_rtas_tokens; t->name; t++)
		fdtw_u32(w, t->name, t->token);
	fdtw_end(w);
}

/* The presentation controller (the sources are RTAS's, in /rtas): one
 * interrupt server per vCPU. */
static void xics_node(struct fdt_writer *w, const struct vm *vm)
{
	const uint32_t servers[] = { 0, vm->nr_vcpus };

	fdtw_begin(w, "interrupt-controller");
	fdtw_string(w, "device_type",
		    "PowerPC-External-Interrupt-Presentation");
	fdtw_string(w, "compatible", "IBM,ppc-xicp");
	fdtw_empty(w, "interrupt-controller");
	fdtw_cells(w, "ibm,interrupt-server-ranges", servers,
		   ARRAY_SIZE(servers));
	/* Source number and sense (0: edge, 1: level). */
	fdtw_u32(w, "#interrupt-cells", 2);
	fdtw_u32(w, "phandle", PHANDLE_XICS);
	fdtw_end(w);
}

/* PCI addresses: 3 cells, phys.hi the space and bus/devfn/register. */
#define PCI_SPACE_CONFIG	0x00000000u
#define PCI_SPACE_MEM32		0x02000000u
#define PCI_NON_RELOCATABLE	0x80000000u
#define PCI_DEVFN_SHIFT		8
#define XICS_SENSE_LEVEL	1

/* A function's node: Linux's pseries code takes PCI devices from the
 * tree (it does not scan the bus), with their IDs, BARs and interrupt. */
static void pci_function_node(struct fdt_writer *w, const struct vm *vm,
			      const struct vm_device *d)
{
	const struct pci_device *dev = vm->pci.slots[d->pci_slot];
	uint32_t devfn = d->pci_slot << 3, reg[5 * (1 + PCI_NUM_BARS)];
	uint32_t assigned[5 * PCI_NUM_BARS];
	unsigned i, nr_reg = 5, nr_assigned = 0, msis;
	const uint8_t *cfg = dev->cfg;

	memset(reg, 0, sizeof(reg));
	reg[0] = PCI_SPACE_CONFIG | devfn << PCI_DEVFN_SHIFT;
	for (i = 0; i < PCI_NUM_BARS; i++) {
		const struct pci_bar *b = &dev->bars[i];
		uint32_t hi = PCI_SPACE_MEM32 | devfn << PCI_DEVFN_SHIFT |
			      (PCI_BAR0 + 4 * i);

		if (!b->size)
			continue;
		reg[nr_reg] = hi;
		reg[nr_reg + 3] = (uint32_t)(b->size >> 32);
		reg[nr_reg + 4] = (uint32_t)b->size;
		nr_reg += 5;
		assigned[nr_assigned] = hi | PCI_NON_RELOCATABLE;
		assigned[nr_assigned + 1] = (uint32_t)(b->addr >> 32);
		assigned[nr_assigned + 2] = (uint32_t)b->addr;
		assigned[nr_assigned + 3] = (uint32_t)(b->size >> 32);
		assigned[nr_assigned + 4] = (uint32_t)b->size;
		nr_assigned += 5;
	}
	fdtw_begin_at(w, "pci", d->pci_slot);
	fdtw_cells(w, "reg", reg, nr_reg);
	if (nr_assigned)
		fdtw_cells(w, "assigned-addresses", assigned, nr_assigned);
	fdtw_u32(w, "vendor-id", cfg[PCI_VENDOR_ID] |
				 cfg[PCI_VENDOR_ID + 1] << 8);
	fdtw_u32(w, "device-id", cfg[PCI_DEVICE_ID] |
				 cfg[PCI_DEVICE_ID + 1] << 8);
	fdtw_u32(w, "revision-id", cfg[PCI_REVISION_ID]);
	fdtw_u32(w, "class-code", cfg[PCI_CLASS_PROG] |
				  cfg[PCI_CLASS_PROG + 1] << 8 |
				  cfg[PCI_CLASS_PROG + 2] << 16);
	fdtw_u32(w, "subsystem-vendor-id", cfg[PCI_SUBSYSTEM_VENDOR_ID] |
				cfg[PCI_SUBSYSTEM_VENDOR_ID + 1] << 8);
	fdtw_u32(w, "subsystem-id", cfg[PCI_SUBSYSTEM_ID] |
				    cfg[PCI_SUBSYSTEM_ID + 1] << 8);
	if (d->irq != VM_DEVICE_NO_IRQ) {
		const uint32_t irq[] = { XICS_IRQ_BASE + d->irq,
					 XICS_SENSE_LEVEL };

		fdtw_cells(w, "interrupts", irq, ARRAY_SIZE(irq));
	}
	/* How many MSI-X vectors ibm,change-msi can give it: without this
	 * Linux asks for none. */
	msis = MIN(pci_msix_table_size(dev), XICS_MSIS_PER_FN);
	if (msis)
		fdtw_u32(w, "ibm,req#msi-x", msis);
	fdtw_end(w);
}

/* The host bridge, its bus unit ID as its address, with the one
 * memory window, identity-mapped. Without #interrupt-cells of its own,
 * its functions' interrupts are XICS's, through the root. */
static void phb_node(struct fdt_writer *w, const struct vm *vm)
{
	const uint32_t ranges[] = {
		PCI_SPACE_MEM32, (uint32_t)(PPC_PCI_MMIO_START >> 32),
		(uint32_t)PPC_PCI_MMIO_START,
		(uint32_t)(PPC_PCI_MMIO_START >> 32),
		(uint32_t)PPC_PCI_MMIO_START,
		(uint32_t)(PPC_PCI_MMIO_SIZE >> 32),
		(uint32_t)PPC_PCI_MMIO_SIZE,
	};
	const uint32_t bus_range[] = { 0, 0 };
	const struct vm_device *d;
	unsigned nr_functions = 0;

	fdtw_begin_at(w, "pci", PPC_PHB_BUID);
	fdtw_string(w, "device_type", "pci");
	fdtw_string(w, "compatible", "IBM,Logical_PHB");
	fdtw_u32(w, "#address-cells", 3);
	fdtw_u32(w, "#size-cells", 2);
	fdtw_reg(w, PPC_PHB_BUID, 0);
	fdtw_cells(w, "bus-range", bus_range, ARRAY_SIZE(bus_range));
	fdtw_cells(w, "ranges", ranges, ARRAY_SIZE(ranges));
	/* Extended configuration space through RTAS. */
	fdtw_u32(w, "ibm,pci-config-space-type", 1);
	for (d = vm->devices; d; d = d->next)
		nr_functions += d->kind == VM_DEVICE_PCI_FUNCTION;
	/* The MSIs of the bridge's one partitionable endpoint, which Linux
	 * shares out evenly: each function's block of sources. */
	fdtw_u32(w, "ibm,pe-total-#msi", nr_functions * XICS_MSIS_PER_FN);
	for (d = vm->devices; d; d = d->next)
		if (d->kind == VM_DEVICE_PCI_FUNCTION)
			pci_function_node(w, vm, d);
	fdtw_end(w);
}

/* H_RANDOM's node: Linux hooks its arch random seed to the call when
 * it finds "ibm,random", and its pseries-rng hwrng driver binds to the
 * node as a platform-facilities device. */
static void platform_facilities_node(struct fdt_writer *w)
{
	fdtw_begin(w, "ibm,platform-facilities");
	fdtw_string(w, "device_type", "ibm,platform-facilities");
	fdtw_u32(w, "#address-cells", 1);
	fdtw_u32(w, "#size-cells", 0);
	fdtw_begin(w, "ibm,random-v1");
	fdtw_string(w, "compatible", "ibm,random");
	fdtw_end(w);
	fdtw_end(w);
}

static void vdevice_node(struct fdt_writer *w)
{
	static const char *const hvterm[] = { "hvterm1", NULL };

	fdtw_begin(w, "vdevice");
	fdtw_string(w, "device_type", "vdevice");
	fdtw_string(w, "compatible", "IBM,vdevice");
	fdtw_u32(w, "#address-cells", 1);
	fdtw_u32(w, "#size-cells", 0);
	fdtw_begin_at(w, "vty", PPC_VTY_REG);
	fdtw_string(w, "device_type", "serial");
	fdtw_strings(w, "compatible", hvterm);
	fdtw_u32(w, "reg", PPC_VTY_REG);
	fdtw_end(w);
	fdtw_end(w);
}

int ppc_fdt_build(const struct vm *vm, const struct ppc_boot_data *boot,
		  void **fdt, size_t *size)
{
	const struct fdt_reservation rsv = { boot->rtas_base,
					     boot->rtas_size };
	struct fdt_writer w;
	char vty[32];
	int err;

	snprintf(vty, sizeof(vty), "/vdevice/vty@%x", PPC_VTY_REG);
	fdtw_init(&w, PPC_FDT_MAX, &rsv, 1);
	root_props(&w);
	chosen_node(&w, boot, vty);
	fdtw_memory_nodes(&w, &vm->ram);
	cpu_nodes(&w, vm);
	rtas_node(&w, boot);
	xics_node(&w, vm);
	vdevice_node(&w);
	platform_facilities_node(&w);
	phb_node(&w, vm);
	err = fdtw_finish(&w, fdt, size);
	if (err)
		pr_err("cannot write the device tree: %s%s", strerror(-err),
		       err == -ENOSPC ? " (more than 64 KiB)" : "");
	return err;
}
