/* The sPAPR guest-physical memory map thpvm gives ppc64le guests: RAM
 * from 0, as PAPR has it, with the boot data (initrd, RTAS, device tree)
 * at the top of its first 256 MiB, the real mode area a guest may count
 * on before its MMU is on. */
#ifndef THPVM_PPC_LAYOUT_H
#define THPVM_PPC_LAYOUT_H

#include "lib/util.h"

#define PPC_RAM_START		0ULL
#define PPC_RMA_SIZE		(256 * MiB)
/* Where the boot data goes, each piece 64 KiB-aligned (the guest's page
 * size on Debian's kernels). */
#define PPC_BOOT_ALIGN		(64 * KiB)
#define PPC_FDT_MAX		(64 * KiB)
#define PPC_RTAS_SIZE		(64 * KiB)
/* The PCI host bridge's window for (32-bit) memory BARs, guest-physical
 * as on the bus, below 4 GiB: RAM past PPC_RAM_LOW_MAX goes above 4 GiB
 * instead. */
#define PPC_PCI_MMIO_START	0xc0000000ULL
#define PPC_PCI_MMIO_SIZE	0x30000000ULL
#define PPC_RAM_LOW_MAX		PPC_PCI_MMIO_START
#define PPC_RAM_HIGH_START	(4 * GiB)
/* The host bridge's bus unit ID: its "reg" and the ID RTAS's PCI
 * configuration calls name it by (QEMU's first sPAPR PHB's). */
#define PPC_PHB_BUID		0x800000020000000ULL
/* The address of the MSIs RTAS programs into functions (their data
 * names the XICS source): beyond RAM and the BAR window, as a PHB's MSI
 * window is. thpvm's devices signal MSIs through irqfds, so nothing is
 * mapped there. */
#define PPC_MSI_ADDR		0x40000000000ULL

/* The vty's unit address ("reg" under /vdevice), which is also its
 * terminal number in H_PUT_TERM_CHAR and H_GET_TERM_CHAR. */
#define PPC_VTY_REG		0x30000000u

#endif
