/* The arm64 device tree. Interrupt specifiers are the GIC's three cells:
 * type (0 SPI, 1 PPI), number within the type, flags (4: level high). */
#include "arch/arm64/fdt.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "arch/arm64/arch_vm.h"
#include "arch/arm64/layout.h"
#include "boot/fdt_writer.h"
#include "core/vm.h"
#include "lib/log.h"
#include "lib/util.h"

#define PHANDLE_GIC	1
#define PHANDLE_ITS	2

#define IRQ_TYPE_SPI	0
#define IRQ_TYPE_PPI	1
#define IRQ_LEVEL_HIGH	4
/* GICv2 PPIs name the CPUs they go to, one bit each, from bit 8. */
#define GICV2_PPI_CPUS_SHIFT 8

#define UART_CLOCK_HZ	1843200
#define RNG_SEED_BYTES	64

/* PCI: 3 address cells (phys.hi: space and bus/dev/fn), INTx pin cell. */
#define PCI_SPACE_MEM32	0x02000000u
#define PCI_DEVFN_SHIFT	11
#define PCI_INTX_PIN_A	1
#define PCI_RID_SPACE	0x10000u

static void root_props(struct fdt_writer *w)
{
	fdtw_string(w, "compatible", "linux,dummy-virt");
	fdtw_string(w, "model", "thpvm");
	fdtw_u32(w, "#address-cells", 2);
	fdtw_u32(w, "#size-cells", 2);
	fdtw_u32(w, "interrupt-parent", PHANDLE_GIC);
}

static void chosen_node(struct fdt_writer *w,
			const struct arm64_boot_data *boot)
{
	uint32_t seed[RNG_SEED_BYTES / 4];
	char stdout_path[32];

	snprintf(stdout_path, sizeof(stdout_path), "/uart@%llx",
		 (unsigned long long)ARM64_UART_ADDR);
	fdtw_begin(w, "chosen");
	fdtw_string(w, "bootargs", boot->cmdline);
	fdtw_string(w, "stdout-path", stdout_path);
	/* BARs stay where thpvm put them (core/pci.c does not move them),
	 * as on x86; otherwise Linux on a device tree assigns them anew. */
	fdtw_u32(w, "linux,pci-probe-only", 1);
	if (boot->initrd_end > boot->initrd_start) {
		fdtw_u64(w, "linux,initrd-start", boot->initrd_start);
		fdtw_u64(w, "linux,initrd-end", boot->initrd_end);
	}
	/* Seeds the guest's random pool at once: it has no other entropy
	 * source this early (and none at all without virtio-rng). */
	if (getrandom(seed, sizeof(seed), GRND_NONBLOCK) == sizeof(seed))
		fdtw_cells(w, "rng-seed", seed, ARRAY_SIZE(seed));
	fdtw_end(w);
}

static void cpu_nodes(struct fdt_writer *w, const struct vm *vm)
{
	unsigned i;

	fdtw_begin(w, "cpus");
	fdtw_u32(w, "#address-cells", 1);
	fdtw_u32(w, "#size-cells", 0);
	for (i = 0; i < vm->nr_vcpus; i++) {
		fdtw_begin_at(w, "cpu", vm->arch->mpidr[i]);
		fdtw_string(w, "device_type", "cpu");
		fdtw_string(w, "compatible", "arm,arm-v8");
		fdtw_string(w, "enable-method", "psci");
		fdtw_u32(w, "reg", vm->arch->mpidr[i]);
		fdtw_end(w);
	}
	fdtw_end(w);
	fdtw_begin(w, "psci");
	fdtw_string(w, "compatible", "arm,psci-0.2");
	fdtw_string(w, "method", "hvc");
	fdtw_end(w);
}

static void gic_node(struct fdt_writer *w, const struct vm *vm)
{
	const struct gic *gic = &vm->arch->gic;

	fdtw_begin_at(w, "intc", ARM64_GICD_ADDR);
	fdtw_u32(w, "#interrupt-cells", 3);
	fdtw_empty(w, "interrupt-controller");
	fdtw_u32(w, "#address-cells", 2);
	fdtw_u32(w, "#size-cells", 2);
	fdtw_empty(w, "ranges");
	fdtw_u32(w, "phandle", PHANDLE_GIC);
	if (gic->version == GIC_V3) {
		const uint32_t reg[] = {
			0, ARM64_GICD_ADDR, 0, ARM64_GICD_SIZE,
			0, ARM64_GICR_ADDR, 0, vm->nr_vcpus * ARM64_GICR_STRIDE,
		};

		fdtw_string(w, "compatible", "arm,gic-v3");
		fdtw_cells(w, "reg", reg, ARRAY_SIZE(reg));
		if (gic->its_fd >= 0) {
			fdtw_begin_at(w, "msi-controller", ARM64_GITS_ADDR);
			fdtw_string(w, "compatible", "arm,gic-v3-its");
			fdtw_empty(w, "msi-controller");
			fdtw_u32(w, "#msi-cells", 1);
			fdtw_reg(w, ARM64_GITS_ADDR, ARM64_GITS_SIZE);
			fdtw_u32(w, "phandle", PHANDLE_ITS);
			fdtw_end(w);
		}
	} else {
		const uint32_t reg[] = {
			0, ARM64_GICD_ADDR, 0, ARM64_GICD_SIZE,
			0, ARM64_GICC_ADDR, 0, ARM64_GICC_SIZE,
		};

		fdtw_string(w, "compatible", "arm,cortex-a15-gic");
		fdtw_cells(w, "reg", reg, ARRAY_SIZE(reg));
	}
	fdtw_end(w);
}

/* PPI flags: GICv2 also names the CPUs that receive them. */
static uint32_t ppi_flags(const struct vm *vm)
{
	if (vm->arch->gic.version == GIC_V3)
		return IRQ_LEVEL_HIGH;
	return ((1u << vm->nr_vcpus) - 1) << GICV2_PPI_CPUS_SHIFT |
	       IRQ_LEVEL_HIGH;
}

static void timer_pmu_nodes(struct fdt_writer *w, const struct vm *vm)
{
	const uint32_t f = ppi_flags(vm);
	/* The order the binding gives: secure, non-secure physical,
	 * virtual, hypervisor. */
	const uint32_t timer[] = {
		IRQ_TYPE_PPI, GIC_PPI_SEC_TIMER - GIC_PPI_BASE, f,
		IRQ_TYPE_PPI, GIC_PPI_PHYS_TIMER - GIC_PPI_BASE, f,
		IRQ_TYPE_PPI, GIC_PPI_VIRT_TIMER - GIC_PPI_BASE, f,
		IRQ_TYPE_PPI, GIC_PPI_HYP_TIMER - GIC_PPI_BASE, f,
	};
	const uint32_t pmu[] = { IRQ_TYPE_PPI, GIC_PPI_PMU - GIC_PPI_BASE, f };

	fdtw_begin(w, "timer");
	fdtw_string(w, "compatible", "arm,armv8-timer");
	fdtw_cells(w, "interrupts", timer, ARRAY_SIZE(timer));
	fdtw_empty(w, "always-on");
	fdtw_end(w);
	if (!vm->arch->pmu)
		return;
	fdtw_begin(w, "pmu");
	fdtw_string(w, "compatible", "arm,armv8-pmuv3");
	fdtw_cells(w, "interrupts", pmu, ARRAY_SIZE(pmu));
	fdtw_end(w);
}

static void spi(struct fdt_writer *w, unsigned line)
{
	const uint32_t cells[] = { IRQ_TYPE_SPI, line, IRQ_LEVEL_HIGH };

	fdtw_cells(w, "interrupts", cells, ARRAY_SIZE(cells));
}

static void uart_node(struct fdt_writer *w, const struct vm *vm)
{
	fdtw_begin_at(w, "uart", ARM64_UART_ADDR);
	fdtw_string(w, "compatible", "ns16550a");
	fdtw_reg(w, ARM64_UART_ADDR, ARM64_UART_SIZE);
	spi(w, vm->arch->uart_irq.line);
	fdtw_u32(w, "clock-frequency", UART_CLOCK_HZ);
	fdtw_end(w);
}

/* thpvm's exit register (platform.c); Linux has no driver for it. */
static void exit_node(struct fdt_writer *w)
{
	fdtw_begin_at(w, "exit", ARM64_EXIT_ADDR);
	fdtw_string(w, "compatible", "thpvm,exit");
	fdtw_reg(w, ARM64_EXIT_ADDR, ARM64_EXIT_SIZE);
	fdtw_end(w);
}

static void virtio_mmio_nodes(struct fdt_writer *w, const struct vm *vm)
{
	const struct vm_device *d;

	for (d = vm->devices; d; d = d->next) {
		if (d->kind != VM_DEVICE_VIRTIO_MMIO)
			continue;
		fdtw_begin_at(w, "virtio_mmio", d->base);
		fdtw_string(w, "compatible", "virtio,mmio");
		fdtw_reg(w, d->base, d->size);
		spi(w, d->irq);
		fdtw_empty(w, "dma-coherent");
		fdtw_end(w);
	}
}

/* INTA of each PCI function, as the GIC SPI its line is. */
static int pci_interrupt_map(struct fdt_writer *w, const struct vm *vm)
{
	enum { CELLS = 10 };	/* child addr 3, pin, phandle, parent 2+3 */
	static const uint32_t mask[] = { 0xf800, 0, 0, 7 };
	const struct vm_device *d;
	uint32_t *map, *e;
	unsigned nr = 0;

	for (d = vm->devices; d; d = d->next)
		nr += d->kind == VM_DEVICE_PCI_FUNCTION &&
		      d->irq != VM_DEVICE_NO_IRQ;
	if (!nr)
		return 0;
	e = map = calloc(nr * CELLS, sizeof(*map));
	if (!map)
		return -ENOMEM;
	for (d = vm->devices; d; d = d->next) {
		if (d->kind != VM_DEVICE_PCI_FUNCTION ||
		    d->irq == VM_DEVICE_NO_IRQ)
			continue;
		e[0] = d->pci_slot << PCI_DEVFN_SHIFT;
		e[3] = PCI_INTX_PIN_A;
		e[4] = PHANDLE_GIC;
		e[7] = IRQ_TYPE_SPI;
		e[8] = d->irq;
		e[9] = IRQ_LEVEL_HIGH;
		e += CELLS;
	}
	fdtw_cells(w, "interrupt-map", map, nr * CELLS);
	fdtw_cells(w, "interrupt-map-mask", mask, ARRAY_SIZE(mask));
	free(map);
	return 0;
}

static int pci_node(struct fdt_writer *w, const struct vm *vm)
{
	const uint32_t ranges[] = {
		PCI_SPACE_MEM32, 0, ARM64_PCI_MMIO_START,
		0, ARM64_PCI_MMIO_START, 0, ARM64_PCI_MMIO_SIZE,
	};
	const uint32_t bus_range[] = { 0, 0 };
	const uint32_t msi_map[] = { 0, PHANDLE_ITS, 0, PCI_RID_SPACE };
	int err;

	fdtw_begin_at(w, "pcie", ARM64_PCI_ECAM_ADDR);
	fdtw_string(w, "compatible", "pci-host-ecam-generic");
	fdtw_string(w, "device_type", "pci");
	fdtw_u32(w, "#address-cells", 3);
	fdtw_u32(w, "#size-cells", 2);
	fdtw_u32(w, "#interrupt-cells", 1);
	fdtw_reg(w, ARM64_PCI_ECAM_ADDR, PCI_ECAM_BUS_SIZE);
	fdtw_cells(w, "bus-range", bus_range, ARRAY_SIZE(bus_range));
	fdtw_cells(w, "ranges", ranges, ARRAY_SIZE(ranges));
	fdtw_u32(w, "linux,pci-domain", 0);
	fdtw_empty(w, "dma-coherent");
	if (vm->arch->gic.its_fd >= 0)
		fdtw_cells(w, "msi-map", msi_map, ARRAY_SIZE(msi_map));
	err = pci_interrupt_map(w, vm);
	fdtw_end(w);
	return err;
}

int arm64_fdt_build(struct vm *vm, const struct arm64_boot_data *boot,
		    void **fdt, size_t *size)
{
	struct fdt_writer w;
	int err;

	fdtw_init(&w, ARM64_FDT_MAX, NULL, 0);
	root_props(&w);
	chosen_node(&w, boot);
	fdtw_memory_nodes(&w, &vm->ram);
	cpu_nodes(&w, vm);
	gic_node(&w, vm);
	timer_pmu_nodes(&w, vm);
	uart_node(&w, vm);
	exit_node(&w);
	virtio_mmio_nodes(&w, vm);
	err = pci_node(&w, vm);
	if (err) {
		free(w.fdt);
		return err;
	}
	err = fdtw_finish(&w, fdt, size);
	if (err)
		pr_err("cannot write the device tree: %s%s", strerror(-err),
		       err == -ENOSPC ? " (the command line is too long?)" :
					"");
	return err;
}
