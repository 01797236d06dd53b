/* Tests for arch/arm64/fdt.c: the device tree written for a VM made by
 * hand (RAM mapped, no KVM), read back through libfdt, with what Linux
 * looks for at each node. */
#include "arch/arm64/arch_vm.h"
#include "arch/arm64/fdt.h"
#include "arch/arm64/layout.h"
#include "core/vm.h"
#include "lib/util.h"
#include "unit.h"

#include <libfdt.h>
#include <stdlib.h>

#define RAM_SIZE (64 * MiB)
#define MMIO_BASE ARM64_PLATFORM_MMIO_START
#define MMIO_LINE 5
#define PCI_SLOT 2
#define PCI_LINE 7

static struct vm vm;
static struct arch_vm arch;
static uint64_t mpidr[2] = { 0, 1 };
static struct vm_device mmio_dev = {
	.kind = VM_DEVICE_VIRTIO_MMIO, .name = "virtio-blk0",
	.base = MMIO_BASE, .size = 0x200, .irq = MMIO_LINE,
};
static struct vm_device pci_dev = {
	.kind = VM_DEVICE_PCI_FUNCTION, .name = "virtio-net0",
	.pci_slot = PCI_SLOT, .irq = PCI_LINE,
};

static int setup(enum gic_version gic, bool its)
{
	const struct ram_range r = { ARM64_RAM_START, RAM_SIZE };

	memset(&vm, 0, sizeof(vm));
	memset(&arch, 0, sizeof(arch));
	guest_ram_init(&vm.ram);
	if (guest_ram_map(&vm.ram, &r, 1, RAM_BACKING_THP, NULL))
		return -1;
	arch.gic.version = gic;
	arch.gic.its_fd = its ? 100 : -1;	/* only tested against -1 */
	arch.pmu = true;
	arch.mpidr = mpidr;
	arch.uart_irq.line = 0;
	vm.arch = &arch;
	vm.nr_vcpus = 2;
	mmio_dev.next = pci_dev.next = NULL;
	vm_device_add(&vm, &mmio_dev);
	vm_device_add(&vm, &pci_dev);
	return 0;
}

static void *build(const struct arm64_boot_data *boot)
{
	size_t size;
	void *fdt;

	if (arm64_fdt_build(&vm, boot, &fdt, &size))
		return NULL;
	if (fdt_check_header(fdt) || fdt_totalsize(fdt) != size ||
	    size > ARM64_FDT_MAX) {
		free(fdt);
		return NULL;
	}
	return fdt;
}

/* Cell i of property name at path, or ~0 if there is none. */
static uint32_t cell(const void *fdt, const char *path, const char *name,
		     unsigned i)
{
	int node = fdt_path_offset(fdt, path), len;
	const fdt32_t *p;

	if (node < 0)
		return ~0u;
	p = fdt_getprop(fdt, node, name, &len);
	if (!p || (unsigned)len < (i + 1) * 4)
		return ~0u;
	return fdt32_to_cpu(p[i]);
}

static int prop_len(const void *fdt, const char *path, const char *name)
{
	int node = fdt_path_offset(fdt, path), len;

	if (node < 0 || !fdt_getprop(fdt, node, name, &len))
		return -1;
	return len;
}

static const char *string(const void *fdt, const char *path,
			  const char *name)
{
	int node = fdt_path_offset(fdt, path);

	return node < 0 ? NULL : fdt_getprop(fdt, node, name, NULL);
}

static void test_gicv3_its(void)
{
	const struct arm64_boot_data boot = {
		.cmdline = "console=ttyS0 earlycon",
		.initrd_start = 0x42000000, .initrd_end = 0x42001234,
	};
	const char *stdout_path;
	void *fdt;

	CHECK_EQ(setup(GIC_V3, true), 0);
	fdt = build(&boot);
	CHECK(fdt != NULL);
	if (!fdt)
		goto out;
	CHECK_STR(string(fdt, "/chosen", "bootargs"), "console=ttyS0 earlycon");
	CHECK_EQ(cell(fdt, "/chosen", "linux,initrd-start", 1), 0x42000000);
	CHECK_EQ(cell(fdt, "/chosen", "linux,initrd-end", 1), 0x42001234);
	CHECK_EQ(prop_len(fdt, "/chosen", "rng-seed"), 64);
	CHECK_EQ(cell(fdt, "/chosen", "linux,pci-probe-only", 0), 1);
	/* stdout-path names the UART, which earlycon needs to match. */
	stdout_path = string(fdt, "/chosen", "stdout-path");
	CHECK(stdout_path != NULL);
	if (stdout_path)
		CHECK_STR(string(fdt, stdout_path, "compatible"), "ns16550a");
	CHECK_EQ(cell(fdt, "/uart@9000000", "interrupts", 1), 0);
	CHECK(cell(fdt, "/uart@9000000", "clock-frequency", 0) != ~0u);
	/* The exit register the test guest writes its status to. */
	CHECK_STR(string(fdt, "/exit@90c0000", "compatible"), "thpvm,exit");
	CHECK_EQ(cell(fdt, "/exit@90c0000", "reg", 1), ARM64_EXIT_ADDR);
	CHECK_EQ(cell(fdt, "/exit@90c0000", "reg", 3), ARM64_EXIT_SIZE);

	CHECK_STR(string(fdt, "/memory@40000000", "device_type"), "memory");
	CHECK_EQ(cell(fdt, "/memory@40000000", "reg", 1), ARM64_RAM_START);
	CHECK_EQ(cell(fdt, "/memory@40000000", "reg", 3), RAM_SIZE);

	CHECK_STR(string(fdt, "/cpus/cpu@1", "enable-method"), "psci");
	CHECK_EQ(cell(fdt, "/cpus/cpu@1", "reg", 0), 1);
	CHECK(fdt_path_offset(fdt, "/cpus/cpu@0") >= 0);
	CHECK(fdt_path_offset(fdt, "/cpus/cpu@2") < 0);
	CHECK_STR(string(fdt, "/psci", "compatible"), "arm,psci-0.2");
	CHECK_STR(string(fdt, "/psci", "method"), "hvc");

	/* GICv3: distributor, then one redistributor frame pair per
	 * vCPU; every node's interrupts go to it. */
	CHECK_STR(string(fdt, "/intc@8000000", "compatible"), "arm,gic-v3");
	CHECK_EQ(cell(fdt, "/intc@8000000", "reg", 5), ARM64_GICR_ADDR);
	CHECK_EQ(cell(fdt, "/intc@8000000", "reg", 7), 2 * ARM64_GICR_STRIDE);
	CHECK_EQ(cell(fdt, "/", "interrupt-parent", 0),
		 cell(fdt, "/intc@8000000", "phandle", 0));
	CHECK(prop_len(fdt, "/intc@8000000/msi-controller@8080000",
		       "msi-controller") == 0);

	/* Timer PPIs in the binding's order: 13, 14, 11, 10. */
	CHECK_EQ(cell(fdt, "/timer", "interrupts", 1), 13);
	CHECK_EQ(cell(fdt, "/timer", "interrupts", 4), 14);
	CHECK_EQ(cell(fdt, "/timer", "interrupts", 7), 11);
	CHECK_EQ(cell(fdt, "/timer", "interrupts", 10), 10);
	CHECK_EQ(cell(fdt, "/timer", "interrupts", 2), 4);
	CHECK_EQ(cell(fdt, "/pmu", "interrupts", 1), 7);

	CHECK_STR(string(fdt, "/virtio_mmio@a000000", "compatible"),
		  "virtio,mmio");
	CHECK_EQ(cell(fdt, "/virtio_mmio@a000000", "reg", 3), 0x200);
	CHECK_EQ(cell(fdt, "/virtio_mmio@a000000", "interrupts", 0), 0);
	CHECK_EQ(cell(fdt, "/virtio_mmio@a000000", "interrupts", 1),
		 MMIO_LINE);
	CHECK_EQ(prop_len(fdt, "/virtio_mmio@a000000", "dma-coherent"), 0);

	/* PCI: ECAM, INTA of slot 2 on its SPI, MSIs through the ITS. */
	CHECK_STR(string(fdt, "/pcie@3f000000", "compatible"),
		  "pci-host-ecam-generic");
	CHECK_EQ(cell(fdt, "/pcie@3f000000", "interrupt-map", 0),
		 PCI_SLOT << 11);
	CHECK_EQ(cell(fdt, "/pcie@3f000000", "interrupt-map", 3), 1);
	CHECK_EQ(cell(fdt, "/pcie@3f000000", "interrupt-map", 8), PCI_LINE);
	CHECK_EQ(prop_len(fdt, "/pcie@3f000000", "interrupt-map"), 40);
	CHECK_EQ(cell(fdt, "/pcie@3f000000", "msi-map", 1),
		 cell(fdt, "/intc@8000000/msi-controller@8080000", "phandle",
		      0));
	free(fdt);
out:
	guest_ram_unmap(&vm.ram);
}

static void test_gicv2(void)
{
	const struct arm64_boot_data boot = { .cmdline = "" };
	void *fdt;

	CHECK_EQ(setup(GIC_V2, false), 0);
	fdt = build(&boot);
	CHECK(fdt != NULL);
	if (!fdt)
		goto out;
	CHECK_STR(string(fdt, "/intc@8000000", "compatible"),
		  "arm,cortex-a15-gic");
	CHECK_EQ(cell(fdt, "/intc@8000000", "reg", 5), ARM64_GICC_ADDR);
	/* PPIs name their CPUs: two vCPUs, bits 8 and 9. */
	CHECK_EQ(cell(fdt, "/timer", "interrupts", 2), 0x304);
	CHECK_EQ(prop_len(fdt, "/pcie@3f000000", "msi-map"), -1);
	CHECK_EQ(prop_len(fdt, "/chosen", "linux,initrd-start"), -1);
	free(fdt);
out:
	guest_ram_unmap(&vm.ram);
}

/* A command line that cannot fit is an error, not a truncated tree. */
static void test_too_big(void)
{
	struct arm64_boot_data boot;
	char *cmdline = malloc(ARM64_FDT_MAX);
	size_t size;
	void *fdt = NULL;

	CHECK_EQ(setup(GIC_V3, false), 0);
	memset(cmdline, 'x', ARM64_FDT_MAX - 1);
	cmdline[ARM64_FDT_MAX - 1] = '\0';
	boot = (struct arm64_boot_data){ .cmdline = cmdline };
	CHECK(arm64_fdt_build(&vm, &boot, &fdt, &size) < 0);
	free(cmdline);
	guest_ram_unmap(&vm.ram);
}

int main(void)
{
	static const struct unit_test tests[] = {
		UNIT_TEST(test_gicv3_its),
		UNIT_TEST(test_gicv2),
		UNIT_TEST(test_too_big),
	};

	return UNIT_RUN(tests);
}
