/* The arm64 guest-physical memory map, in the style of QEMU's virt
 * machine (so guests and people who know it find things where they
 * expect): devices in the first GiB, RAM from 1 GiB up. */
#ifndef THPVM_ARM64_LAYOUT_H
#define THPVM_ARM64_LAYOUT_H

/* GICv3: distributor, ITS, then one 128 KiB redistributor frame pair
 * per vCPU up to the UART. GICv2: distributor and CPU interface. */
#define ARM64_GICD_ADDR		0x08000000ULL
#define ARM64_GICD_SIZE		0x10000ULL
#define ARM64_GITS_ADDR		0x08080000ULL
#define ARM64_GITS_SIZE		0x20000ULL
#define ARM64_GICR_ADDR		0x080a0000ULL
#define ARM64_GICR_SIZE		0x00f60000ULL
#define ARM64_GICR_STRIDE	0x20000ULL
#define ARM64_GICC_ADDR		0x08010000ULL
#define ARM64_GICC_SIZE		0x2000ULL

/* The console: an 8250 with byte-wide registers. */
#define ARM64_UART_ADDR		0x09000000ULL
#define ARM64_UART_SIZE		0x1000ULL

/* The exit register (fdt.c, "thpvm,exit"): a guest ends the VM with the
 * status it writes there, as x86 guests do through port 0x501. At a
 * place QEMU's virt machine leaves free. */
#define ARM64_EXIT_ADDR		0x090c0000ULL
#define ARM64_EXIT_SIZE		0x1000ULL

/* Platform devices (virtio-mmio), a page each. */
#define ARM64_PLATFORM_MMIO_START 0x0a000000ULL
#define ARM64_PLATFORM_MMIO_END	0x0b000000ULL

/* PCI: BARs in a 32-bit window, then ECAM for bus 0. */
#define ARM64_PCI_MMIO_START	0x10000000ULL
#define ARM64_PCI_MMIO_SIZE	0x2eff0000ULL
#define ARM64_PCI_ECAM_ADDR	0x3f000000ULL

#define ARM64_RAM_START		0x40000000ULL
/* The memory hotplug region (virtio-mem), above RAM, starts at a
 * multiple of this. */
#define ARM64_HOTPLUG_ALIGN	0x40000000ULL

/* Where the boot data go, from the top of RAM down: the device tree in
 * its own 2 MiB (Linux maps it within one 2 MiB block), then the
 * initrd. */
#define ARM64_FDT_MAX		0x10000ULL
#define ARM64_FDT_ALIGN		0x200000ULL

#endif
