/* The x86 guest-physical memory map thpvm builds. Low memory holds the
 * boot data; the 32-bit hole below 4 GiB holds MMIO (LAPIC, IOAPIC, and
 * later PCI); RAM beyond the hole's start continues above 4 GiB. */
#ifndef THPVM_X86_LAYOUT_H
#define THPVM_X86_LAYOUT_H

/* Real-mode interrupt vectors and the BIOS data area. */
#define X86_IVT_ADDR		0x0000
#define X86_BDA_ADDR		0x0400
/* GDT used by the 64-bit and PVH entries; above it, to 0x1000, a stack
 * for the 64-bit entry (the protocol promises none, but a kernel that
 * pushes before setting its own should not triple-fault). */
#define X86_BOOT_GDT_ADDR	0x0500
#define X86_BOOT_STACK_TOP	0x1000
/* Identity page tables for the 64-bit entry: PML4, PDPT, 4 PDs (4 GiB). */
#define X86_BOOT_PML4_ADDR	0x1000
#define X86_BOOT_PDPT_ADDR	0x2000
#define X86_BOOT_PD_ADDR	0x3000
/* The zero page (struct boot_params) or, for PVH, struct hvm_start_info
 * followed by its module list and memory map. */
#define X86_ZERO_PAGE_ADDR	0x7000
#define X86_PVH_MODLIST_ADDR	0x7800
#define X86_PVH_MEMMAP_ADDR	0x8000
/* Real-mode setup code of a bzImage for the 16-bit entry (segment 0x1000);
 * its heap and stack run to 0x1ffff. */
#define X86_SETUP_ADDR		0x10000
#define X86_SETUP_SEG		0x1000
#define X86_SETUP_STACK		0xfff0	/* offset in the setup segment */
#define X86_SETUP_HEAP_END	0xfe00
/* Kernel command line. */
#define X86_CMDLINE_ADDR	0x20000
#define X86_CMDLINE_MAX		0x10000
/* Extended BIOS data area, reserved in the e820 map. */
#define X86_EBDA_ADDR		0x9fc00
#define X86_EBDA_SEG		0x9fc0
/* VGA hole and BIOS, reserved; the ACPI tables (RSDP first, where a
 * guest's scan of the BIOS area finds it), then the BIOS segment with our
 * 16-bit BIOS, the e820 table it serves, and the MP table. */
#define X86_LOW_HOLE_START	0xa0000
#define X86_ACPI_ADDR		0xe0000
#define X86_BIOS_ADDR		0xf0000
#define X86_BIOS_SEG		0xf000
#define X86_BIOS_E820_OFFSET	0x0800	/* see bios.S */
#define X86_MPTABLE_ADDR	0xf2000
#define X86_BIOS_END		0x100000
/* Where bzImage protected-mode kernels go unless they prefer otherwise. */
#define X86_KERNEL_DEFAULT_ADDR	0x100000

/* The first serial port, at its PC address and ISA line (the platform
 * creates it, the DSDT describes it). */
#define X86_COM1_PORT		0x3f8
#define X86_COM1_IRQ		4

/* RAM below 4 GiB ends here at most; the rest is MMIO. */
#define X86_MMIO_HOLE_START	0xc0000000ULL
#define X86_4G			0x100000000ULL
/* PCI: BARs from the bottom of the hole, then ECAM for bus 0. */
#define X86_PCI_MMIO_START	0xc0000000ULL
#define X86_PCI_MMIO_SIZE	0x20000000ULL
#define X86_PCI_ECAM_ADDR	0xe0000000ULL
/* Platform devices (virtio-mmio), a page each, up to the IOAPIC. */
#define X86_PLATFORM_MMIO_START	0xfe000000ULL
#define X86_PLATFORM_MMIO_END	0xfec00000ULL
#define X86_IOAPIC_ADDR		0xfec00000ULL
#define X86_LAPIC_ADDR		0xfee00000ULL
/* Memory hotplug (virtio-mem) starts above RAM and 4 GiB on this
 * boundary: Linux adds memory in blocks of 128 MiB up to 2 GiB, and
 * QEMU's device memory is 1 GiB aligned too. Its end stays below 2^39,
 * the fewest physical address bits of x86-64 CPUs KVM runs on. */
#define X86_HOTPLUG_ALIGN	(1ULL << 30)
#define X86_HOTPLUG_LIMIT	(1ULL << 39)
/* Intel VMX needs three pages for its real-mode TSS (KVM_SET_TSS_ADDR). */
#define X86_KVM_TSS_ADDR	0xfffbd000ULL

#endif
